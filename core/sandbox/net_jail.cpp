#include "core/sandbox/net_jail.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>

#include "core/sandbox/network.h"
#include "core/sandbox/relay.h"

namespace hydra::core::sandbox {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kForwarderConnections = 64;
constexpr std::chrono::minutes kForwarderIdle{10};

int fail(const std::string& what, int code = 126) {
  std::cerr << "hydra: network: " << what << "\n";
  return code;
}

bool writeFile(const char* path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// A network namespace of this process's own; loopback up. False, with
// errno, when the kernel refuses.
bool enterOwnNetwork(std::string& why) {
  if (::geteuid() == 0) {
    if (::unshare(CLONE_NEWNET) != 0) {
      why = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
      return false;
    }
  } else {
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
      why = std::string("unshare(CLONE_NEWUSER | CLONE_NEWNET): ") + std::strerror(errno) +
            " (are unprivileged user namespaces disabled?)";
      return false;
    }
    if (!writeFile("/proc/self/setgroups", "deny") ||
        !writeFile("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n") ||
        !writeFile("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n")) {
      why = "cannot map the user into its own user namespace";
      return false;
    }
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = ::ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  if (up) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
    up = ::ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  }
  if (!up) why = std::string("cannot bring loopback up: ") + std::strerror(errno);
  ::close(fd);
  return up;
}

// Listening on 127.0.0.1:kProxyPort, or -1 with `why`.
int listenForAgent(std::string& why) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(kProxyPort);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 64) != 0) {
    why = "cannot listen on 127.0.0.1:" + std::to_string(kProxyPort) + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

// The forwarder: every connection to `listener` relayed to the proxy's socket.
class Forwarder : public std::enable_shared_from_this<Forwarder> {
 public:
  Forwarder(asio::io_context& io, int listener, fs::path proxy)
      : io_(io), acceptor_(io, asio::ip::tcp::v4(), listener), proxy_(std::move(proxy)) {}

  void accept() {
    auto self = shared_from_this();
    acceptor_.async_accept([self](const boost::system::error_code& ec, asio::ip::tcp::socket agent) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) self->forward(std::move(agent));
      self->accept();
    });
  }

 private:
  void forward(asio::ip::tcp::socket agent) {
    std::erase_if(live_, [](const auto& weak) { return weak.expired(); });
    if (live_.size() >= kForwarderConnections) return;  // closed: the proxy would answer 503 anyway
    auto proxy = std::make_shared<asio::local::stream_protocol::socket>(io_);
    auto client = std::make_shared<asio::ip::tcp::socket>(std::move(agent));
    auto self = shared_from_this();
    proxy->async_connect(proxy_.string(), [self, proxy, client](const boost::system::error_code& ec) {
      if (ec) return;  // both close: the agent sees its connection end
      auto relay = std::make_shared<Relay<asio::ip::tcp::socket, asio::local::stream_protocol::socket>>(
          std::move(*client), std::move(*proxy), kForwarderIdle);
      self->live_.push_back(relay);
      relay->start({});
    });
  }

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  fs::path proxy_;
  std::vector<std::weak_ptr<Closable>> live_;
};

// The forwarder, in the process hydra started, while `agent` (its child)
// runs: signals hydra sends are passed on to the agent, and once the agent
// ends this process ends the same way, so nothing of the forwarder outlives
// it and hydra sees the agent's own exit status.
[[noreturn]] void forwardWhileAgentRuns(int listener, const fs::path& proxy, pid_t agent) {
  // The agent's stdin and stdout are its own (ACP agents speak over them).
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
  }
  ::signal(SIGPIPE, SIG_IGN);
  int status = 0;
  try {
    asio::io_context io;
    auto forwarder = std::make_shared<Forwarder>(io, listener, proxy);
    forwarder->accept();
    asio::signal_set signals(io, SIGCHLD, SIGTERM, SIGINT);
    signals.add(SIGHUP);
    std::function<void(const boost::system::error_code&, int)> onSignal =
        [&](const boost::system::error_code& ec, int signal) {
          if (ec) return;
          if (signal != SIGCHLD) {
            ::kill(agent, signal);
          } else if (::waitpid(agent, &status, WNOHANG) == agent) {
            io.stop();
            return;
          }
          signals.async_wait(onSignal);
        };
    signals.async_wait(onSignal);
    sigset_t held;
    sigemptyset(&held);
    for (int signal : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&held, signal);
    ::sigprocmask(SIG_UNBLOCK, &held, nullptr);
    // It may have ended before the handler was in place.
    if (::waitpid(agent, &status, WNOHANG) != agent) io.run();
  } catch (...) {
    ::kill(agent, SIGKILL);
    ::waitpid(agent, &status, 0);
  }
  if (WIFSIGNALED(status)) {
    ::signal(WTERMSIG(status), SIG_DFL);
    ::raise(WTERMSIG(status));
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

[[noreturn]] void execute(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  ::_exit(fail("cannot run '" + command.front() + "': " + std::strerror(errno), 127));
}

}  // namespace

int runNetJail(const NetJailOptions& options) {
  if (options.command.empty()) return fail("net-jail: no command given", 127);
  std::string why;
  if (options.unshare && !enterOwnNetwork(why)) {
    return fail("cannot give the agent a network namespace of its own: " + why +
                "; run it in the sandbox (bubblewrap), or set network = \"open\"");
  }
  if (options.proxySocket) {
    const int listener = listenForAgent(why);
    if (listener < 0) return fail("no forwarder to the proxy: " + why);
    // Signals that arrive before the forwarder listens for them are held.
    sigset_t held;
    sigemptyset(&held);
    for (int signal : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&held, signal);
    sigset_t previous;
    ::sigprocmask(SIG_BLOCK, &held, &previous);
    const pid_t parent = ::getpid();
    const pid_t agent = ::fork();
    if (agent < 0) return fail(std::string("no forwarder to the proxy: fork: ") + std::strerror(errno));
    if (agent == 0) {
      ::sigprocmask(SIG_SETMASK, &previous, nullptr);
      // No forwarder, no network: the agent ends with it.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(126);
      execute(options.command);
    }
    forwardWhileAgentRuns(listener, *options.proxySocket, agent);
  }
  execute(options.command);
}

ProcessSpec inNetJail(ProcessSpec spec, const fs::path& hydra, bool unshare, const std::optional<fs::path>& proxySocket) {
  std::string program = spec.program;
  if (program.find('/') != std::string::npos) {
    if (fs::path(program).is_relative() && !spec.cwd.empty()) program = (spec.cwd / program).lexically_normal().string();
  } else {
    std::string path;
    if (auto it = spec.env.find("PATH"); it != spec.env.end()) {
      path = it->second;
    } else if (const char* inherited = std::getenv("PATH")) {
      path = inherited;
    }
    if (auto found = findExecutable(program, path)) program = fs::absolute(*found).string();
  }
  std::vector<std::string> args = {"net-jail"};
  if (unshare) args.push_back("--unshare");
  if (proxySocket) args.insert(args.end(), {"--proxy", proxySocket->string()});
  args.push_back("--");
  args.push_back(program);
  args.insert(args.end(), spec.args.begin(), spec.args.end());
  spec.program = hydra.string();
  spec.args = std::move(args);
  return spec;
}

fs::path hydraBinary() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::system_error(ec, "cannot find the hydra binary (/proc/self/exe)");
  return self;
}

}  // namespace hydra::core::sandbox
