#include "tests/e2e/hydra_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace hydra::test {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

std::filesystem::path HydraProcess::binary() { return HYDRA_BINARY; }

HydraProcess::HydraProcess(std::vector<std::string> args, std::filesystem::path cwd,
                           std::vector<std::string> extraEnv) {
  // Writing to a server that has gone must fail with EPIPE, not kill the test.
  ::signal(SIGPIPE, SIG_IGN);
  int inPipe[2], outPipe[2];
  if (::pipe2(inPipe, O_CLOEXEC) != 0 || ::pipe2(outPipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  char tmpl[] = "/tmp/hydra-e2e-stderr-XXXXXX";
  int errFd = ::mkstemp(tmpl);
  if (errFd < 0) throw std::runtime_error("mkstemp failed");
  stderrPath_ = tmpl;

  std::vector<std::string> argv{binary().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.insert(env.end(), extraEnv.begin(), extraEnv.end());
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::dup2(inPipe[0], STDIN_FILENO);
    ::dup2(outPipe[1], STDOUT_FILENO);
    ::dup2(errFd, STDERR_FILENO);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execve(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  ::close(inPipe[0]);
  ::close(outPipe[1]);
  ::close(errFd);
  in_ = inPipe[1];
  out_ = outPipe[0];
}

HydraProcess::~HydraProcess() {
  closeStdin();
  if (!waitExit(std::chrono::seconds(5))) {
    ::kill(pid_, SIGKILL);
    waitExit(std::chrono::seconds(5));
  }
  closeStdout();
  std::error_code ec;
  std::filesystem::remove(stderrPath_, ec);
}

bool HydraProcess::sendRaw(std::string_view bytes) {
  while (!bytes.empty()) {
    if (in_ < 0) return false;
    ssize_t n = ::write(in_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool HydraProcess::send(const json::value& message) { return sendRaw(protocol::encodeFrame(json::serialize(message))); }

bool HydraProcess::request(std::int64_t id, std::string_view method, json::value params) {
  return send(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
}

bool HydraProcess::notify(std::string_view method, json::value params) {
  return send(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

std::optional<json::object> HydraProcess::receive(std::chrono::milliseconds timeout) {
  auto body = receiveBody(timeout);
  if (!body) return std::nullopt;
  return json::parse(*body).as_object();
}

std::optional<std::string> HydraProcess::receiveBody(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    if (auto r = decoder_.next()) {
      if (auto* f = std::get_if<protocol::Frame>(&*r)) return std::move(f->body);
      throw std::runtime_error("server sent a bad frame: " + std::get<protocol::FrameError>(*r).message);
    }
    if (eof_ || out_ < 0) return std::nullopt;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd p{out_, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return std::nullopt;
    char buf[65536];
    ssize_t n = ::read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    decoder_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }
}

std::optional<json::object> HydraProcess::responseTo(std::int64_t id, std::chrono::milliseconds timeout) {
  // Responses may arrive in any order: one may already be waiting.
  for (auto it = skipped.begin(); it != skipped.end(); ++it) {
    const json::value* mid = it->if_contains("id");
    if (!it->contains("method") && mid && mid->is_int64() && mid->get_int64() == id) {
      json::object found = std::move(*it);
      skipped.erase(it);
      return found;
    }
  }
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto m = receive(left);
    if (!m) return std::nullopt;
    const json::value* mid = m->if_contains("id");
    if (!m->contains("method") && mid && mid->is_int64() && mid->get_int64() == id) return m;
    skipped.push_back(std::move(*m));
  }
  return std::nullopt;
}

void HydraProcess::closeStdin() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

void HydraProcess::closeStdout() {
  if (out_ >= 0) ::close(out_);
  out_ = -1;
}

std::optional<int> HydraProcess::waitExit(std::chrono::milliseconds timeout) {
  if (exitCode_) return exitCode_;
  auto deadline = Clock::now() + timeout;
  for (;;) {
    int status = 0;
    struct rusage usage {};
    pid_t r = ::wait4(pid_, &status, WNOHANG, &usage);
    if (r == pid_) {
      peakRssKiB_ = usage.ru_maxrss;
      exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exitCode_;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::optional<long> HydraProcess::statusKiB(const std::string& field) const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return std::nullopt;
}

std::string HydraProcess::stderrText() const {
  std::ifstream in(stderrPath_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace hydra::test
