// [agents.NAME] network, raced by the real `hydra serve` with a scripted
// agent that tries every way out seen in an attack: two loopback HTTP
// servers (one standing in for the model's API, allowed; one forbidden), an
// abstract unix socket the test binds on the host, and a listener the agent
// opens on 0.0.0.0 that the test tries to connect to while the agent runs.
// Each mode with the sandbox on and off; "open" is the control that shows
// every probe does reach when nothing stops it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

// A loopback HTTP server answering every GET with `body`, in a python3
// process of its own; ended with the test.
class HttpServer {
 public:
  HttpServer(const TestRepo& repo, const std::string& name, const std::string& body) {
    const fs::path portFile = repo.scratch() / (name + ".port");
    const fs::path script = repo.scratch() / (name + ".py");
    std::ofstream(script) << "import http.server, sys\n"
                             "class H(http.server.BaseHTTPRequestHandler):\n"
                             "    def do_GET(self):\n"
                             "        b = sys.argv[2].encode()\n"
                             "        self.send_response(200)\n"
                             "        self.send_header('Content-Length', str(len(b)))\n"
                             "        self.end_headers()\n"
                             "        self.wfile.write(b)\n"
                             "    def log_message(self, *a): pass\n"
                             "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
                             "open(sys.argv[1] + '.tmp', 'w').write(str(s.server_address[1]))\n"
                             "import os; os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
                             "s.serve_forever()\n";
    pid_ = std::stoi(sh("/usr/bin/python3 " + shellQuote(script.string()) + " " + shellQuote(portFile.string()) +
                        " " + shellQuote(body) + " >/dev/null 2>&1 & echo $!"));
    for (int i = 0; i < 100 && !fs::exists(portFile); ++i) std::this_thread::sleep_for(50ms);
    port_ = std::stoi(readFile(portFile));
  }
  ~HttpServer() { ::kill(pid_, SIGKILL); }
  int port() const { return port_; }

 private:
  pid_t pid_ = 0;
  int port_ = 0;
};

// An abstract unix socket listening on the host, in the test's network namespace.
class AbstractListener {
 public:
  explicit AbstractListener(std::string name) : name_(std::move(name)) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path + 1, name_.data(), name_.size());
    const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name_.size());
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 || ::listen(fd_, 8) != 0) {
      throw std::runtime_error("cannot bind the abstract socket");
    }
  }
  ~AbstractListener() { ::close(fd_); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  int fd_ = -1;
};

int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool connects(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

// The agent: every probe's outcome, one line each, in net.txt of its worktree.
const char* kProbes = R"SH(
probe() {  # NAME CURL-ARGS...
  local name=$1; shift
  local out rc=0
  out=$(curl -sS -m 5 -w ' status=%{http_code}' "$@" 2>&1) || rc=$?
  echo "$name rc=$rc $out" | tr '\n' ' ' >> net.txt; echo >> net.txt
}
probe allowed "$ALLOWED_URL"
probe forbidden "$FORBIDDEN_URL"
probe allowed-tunnel -p "$ALLOWED_URL"
probe forbidden-tunnel https://forbidden.invalid/
/usr/bin/python3 - >> net.txt <<'EOF'
import os, socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('\0' + os.environ['ABSTRACT'])
    print('abstract connected')
except OSError as e:
    print('abstract failed', e.errno)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', int(os.environ['LISTEN_PORT'])))
s.listen(4)
s.settimeout(6)
try:
    s.accept()
    print('listener accepted')
except socket.timeout:
    print('listener nobody')
)SH";

struct Case {
  std::string network;
  std::string sandbox;
};

void PrintTo(const Case& c, std::ostream* out) { *out << "network = " << c.network << ", sandbox = " << c.sandbox; }

class NetworkPolicyTest : public ::testing::TestWithParam<Case> {
 protected:
  // Races the probing agent; net.txt as it committed it.
  std::string race(const std::string& networkKeys) {
    const fs::path agent = repo_.script("probe.sh", std::string(kProbes) + "EOF\n");
    const std::string env = "env = { ALLOWED_URL = \"http://localhost:" + std::to_string(allowed_.port()) +
                            "/\", FORBIDDEN_URL = \"http://127.0.0.1:" + std::to_string(forbidden_.port()) +
                            "/\", ABSTRACT = \"" + abstract_.name() + "\", LISTEN_PORT = \"" +
                            std::to_string(listenPort_) + "\" }\n";
    repo_.writeConfig("[general]\nsandbox = \"" + GetParam().sandbox + "\"\ntimeout_seconds = 60\n\n" +
                      TestRepo::commandAgent("net", agent) + env + networkKeys);
    repo_.git("add hydra.toml");
    repo_.git("commit -q -m config");
    RpcClient client(repo_.root());
    client.initialize(repo_.uri());
    raceId_ = std::string(
        client.call("hydra/race", json::object{{"task", "t"}, {"agents", json::array{"net"}}}).at("raceId").as_string());
    // While the agent listens, knock from the host.
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (!hostReachedListener_ && std::chrono::steady_clock::now() < until) {
      client.drain(100ms);
      if (!client.notifications("hydra/agentFinished").empty()) break;
      hostReachedListener_ = connects(listenPort_);
    }
    client.waitFor("hydra/raceFinished", raceId_, 0, 120s);
    finished_ = json::object();
    for (const auto& n : client.notifications("hydra/agentFinished")) finished_ = n.at("params").as_object();
    try {
      return repo_.git("show hydra/net-" + raceId_ + ":net.txt");
    } catch (const std::exception& e) {
      ADD_FAILURE() << "no net.txt: " << e.what() << "\n" << json::serialize(finished_);
      return {};
    }
  }

  std::string log(bool stderrStream) const {
    return sh("cd " + shellQuote(repo_.root().string()) + " && '" HYDRA_BINARY "' log " + raceId_ + " net " +
              (stderrStream ? "--stderr " : "") + "--no-pager 2>&1");
  }

  TestRepo repo_;
  HttpServer allowed_{repo_, "allowed", "ALLOWED-BODY"};
  HttpServer forbidden_{repo_, "forbidden", "FORBIDDEN-BODY"};
  AbstractListener abstract_{"hydra-net-test-" + std::to_string(::getpid()) + "-" + std::to_string(freePort())};
  int listenPort_ = freePort();
  std::string raceId_;
  json::object finished_;
  bool hostReachedListener_ = false;
};

std::string line(const std::string& text, const std::string& name) {
  const auto at = text.find(name + " rc=");
  if (at == std::string::npos) return "(no line " + name + ")";
  return text.substr(at, text.find('\n', at) - at);
}

TEST_P(NetworkPolicyTest, TheAgentReachesWhatItsModeAllowsAndNothingElse) {
  const Case& c = GetParam();
  std::string keys = "network = \"" + c.network + "\"\n";
  if (c.network == "allowlist") keys += "allowed_hosts = [\"localhost:" + std::to_string(allowed_.port()) + "\"]\n";
  const std::string net = race(keys);
  SCOPED_TRACE(net + "\n" + json::serialize(finished_));
  EXPECT_EQ(finished_.at("status"), json::value("completed"));

  if (c.network == "open") {
    EXPECT_THAT(line(net, "allowed"), HasSubstr("ALLOWED-BODY status=200"));
    EXPECT_THAT(line(net, "forbidden"), HasSubstr("FORBIDDEN-BODY status=200"));
    EXPECT_THAT(net, HasSubstr("abstract connected"));
    EXPECT_TRUE(hostReachedListener_) << "the host could not reach what the agent listened on";
    return;
  }
  // No way out but the proxy, in both other modes.
  EXPECT_THAT(net, HasSubstr("abstract failed"));
  EXPECT_FALSE(hostReachedListener_) << "the host reached a listener of the agent";
  EXPECT_THAT(net, Not(HasSubstr("FORBIDDEN-BODY")));
  if (c.network == "none") {
    EXPECT_THAT(line(net, "allowed"), Not(HasSubstr("rc=0")));
    EXPECT_THAT(line(net, "allowed"), Not(HasSubstr("ALLOWED-BODY")));
    EXPECT_THAT(line(net, "forbidden"), Not(HasSubstr("rc=0")));
    EXPECT_THAT(line(net, "forbidden-tunnel"), Not(HasSubstr("rc=0")));
    return;
  }
  // allowlist: the allowed host through the proxy, plain and tunnelled; the
  // others refused by the proxy, and the refusals in its log and warnings.
  const std::string forbiddenHost = "127.0.0.1:" + std::to_string(forbidden_.port());
  EXPECT_THAT(line(net, "allowed"), HasSubstr("rc=0 ALLOWED-BODY status=200"));
  EXPECT_THAT(line(net, "allowed-tunnel"), HasSubstr("rc=0 ALLOWED-BODY status=200"));
  EXPECT_THAT(line(net, "forbidden"), HasSubstr("status=403"));
  EXPECT_THAT(line(net, "forbidden"),
              HasSubstr("hydra: network: refused request to " + forbiddenHost + " (not in allowed_hosts)"));
  EXPECT_THAT(line(net, "forbidden-tunnel"), Not(HasSubstr("rc=0")));
  const std::string stderrLog = log(true);
  EXPECT_THAT(stderrLog, HasSubstr("network: refused request to " + forbiddenHost + " (not in allowed_hosts)"));
  EXPECT_THAT(stderrLog, HasSubstr("network: refused connect to forbidden.invalid:443 (not in allowed_hosts)"));
  EXPECT_THAT(json::serialize(finished_.at("warnings")),
              HasSubstr("network: refused connect to forbidden.invalid:443 (not in allowed_hosts)"));
  // The forwarder hydra started beside the agent is hydra's, not something
  // the agent left. (Confined, the reaper may still count one process while
  // bubblewrap's namespace is torn down: see ForwarderLifetimeTest.)
  if (c.sandbox == "off") {
    EXPECT_THAT(json::serialize(finished_.at("warnings")), Not(HasSubstr("left running")));
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, NetworkPolicyTest,
                         ::testing::Values(Case{"open", "bubblewrap"}, Case{"open", "off"}, Case{"none", "bubblewrap"},
                                           Case{"none", "off"}, Case{"allowlist", "bubblewrap"},
                                           Case{"allowlist", "off"}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.network + "_" + (info.param.sandbox == "off" ? "unconfined" : "confined");
                         });

// The forwarder stays as the process hydra started, the agent its child: the
// agent's exit status is what hydra sees, a timeout ends both, and nothing
// of either is left.
class ForwarderLifetimeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ForwarderLifetimeTest, TheAgentsExitStatusAndTimeoutPassThrough) {
  TestRepo repo;
  const fs::path exits = repo.script("exits.sh", "echo done\nexit 3\n");
  const fs::path sleeps = repo.script("sleeps.sh", "sleep 300\n");
  repo.writeConfig("[general]\nsandbox = \"" + GetParam() + "\"\nmax_concurrent_agents = 2\n\n" +
                   TestRepo::commandAgent("exits", exits) + "network = \"allowlist\"\nallowed_hosts = [\"localhost\"]\n\n" +
                   TestRepo::commandAgent("sleeps", sleeps) +
                   "network = \"allowlist\"\nallowed_hosts = [\"localhost\"]\ntimeout_seconds = 2\n");
  repo.git("add hydra.toml");
  repo.git("commit -q -m config");
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string id(client.call("hydra/race", json::object{{"task", "t"}, {"agents", json::array{"exits", "sleeps"}}})
                           .at("raceId")
                           .as_string());
  client.waitFor("hydra/raceFinished", id, 0, 60s);
  std::map<std::string, json::object> finished;
  for (const auto& n : client.notifications("hydra/agentFinished")) {
    finished[std::string(n.at("params").at("agentId").as_string())] = n.at("params").as_object();
  }
  SCOPED_TRACE(json::serialize(finished["exits"]) + "\n" + json::serialize(finished["sleeps"]));
  EXPECT_EQ(finished["exits"].at("exitCode"), json::value(3));
  EXPECT_EQ(finished["sleeps"].at("status"), json::value("timedOut"));
  // Unconfined, the forwarder is never taken for something the agent left:
  // an agent that exits leaves nothing. (One cut off by its timeout has
  // what it still ran named, the shell and its sleep, as any agent has.
  // Confined, a run cut off or over within a moment can be told "1 process
  // it left running" while bubblewrap's namespace is torn down, with or
  // without a forwarder: not checked here.)
  if (GetParam() == "off") {
    EXPECT_THAT(json::serialize(finished["exits"]), Not(HasSubstr("left running")));
    EXPECT_THAT(json::serialize(finished["sleeps"]), Not(HasSubstr("3 processes")));
  }
  // This test's own script by its whole path: the other instance of this
  // test may run beside it, with a sleeps.sh of its own. The brackets keep
  // grep from counting itself.
  const std::string mine = sleeps.parent_path().string() + "/[s]leeps.sh";
  EXPECT_EQ(sh("ps -eo args | grep -c " + shellQuote(mine) + " || true"), "0");
}

INSTANTIATE_TEST_SUITE_P(Sandbox, ForwarderLifetimeTest, ::testing::Values("bubblewrap", "off"));

// Unconfined as a user other than root, hydra makes the namespace through a
// user namespace of its own: net-jail run as such a user (nobody, when the
// tests run as root) cannot reach a listener of the host that the same
// command reaches without it.
TEST(NetJail, AsAUserOtherThanRootTheNamespaceHoldsToo) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t length = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string probe = shellQuote(
      "import socket\ns = socket.socket()\ntry:\n    s.connect(('127.0.0.1', " + std::to_string(ntohs(address.sin_port)) +
      "))\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\nimport os\nprint('uid', os.getuid())\n");
  const bool root = ::geteuid() == 0;
  const std::string as = root ? "runuser -u nobody -- " : "";
  // nobody may not enter the build tree (a clone in a folder only its owner
  // can open): it runs a copy of hydra from a folder open to everyone.
  fs::path binary = HYDRA_BINARY;
  fs::path copyDir;
  if (root) {
    std::string pattern = (fs::temp_directory_path() / "hydra-netjail-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    copyDir = pattern;
    fs::permissions(copyDir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
    binary = copyDir / "hydra";
    fs::copy_file(HYDRA_BINARY, binary);
    fs::permissions(binary, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  }
  const std::string plain = sh("cd / && " + as + "/usr/bin/python3 -c " + probe + " 2>&1");
  EXPECT_THAT(plain, HasSubstr("connected")) << "the control: the host's listener is reachable";
  const std::string jailed =
      sh("cd / && " + as + shellQuote(binary.string()) + " net-jail --unshare -- /usr/bin/python3 -c " + probe + " 2>&1");
  EXPECT_THAT(jailed, HasSubstr("refused 111")) << jailed;
  EXPECT_THAT(jailed, Not(HasSubstr("uid 0"))) << "it kept its own user id";
  ::close(listener);
  if (!copyDir.empty()) fs::remove_all(copyDir);
}

// hydra sandbox says what each agent reaches; bad settings are refused with
// where they are.
TEST(NetworkPolicyConfig, SandboxCommandNamesEachAgentsNetwork) {
  TestRepo repo;
  repo.writeConfig(
      "[agents.claude]\nnetwork = \"allowlist\"\n\n[agents.offline]\nadapter = \"command\"\nbinary = \"true\"\n"
      "network = \"none\"\n");
  const std::string root = shellQuote(repo.root().string());
  const std::string text = sh("cd " + root + " && '" HYDRA_BINARY "' sandbox 2>&1");
  EXPECT_THAT(text, HasSubstr("claude: allowlist, only api.anthropic.com, through hydra's HTTP proxy")) << text;
  EXPECT_THAT(text, HasSubstr("offline: none, no network")) << text;
  const std::string jsonText = sh("cd " + root + " && '" HYDRA_BINARY "' sandbox --json");
  const json::value parsed = json::parse(jsonText);
  EXPECT_THAT(json::serialize(parsed.at("agents")),
              HasSubstr(R"({"name":"claude","network":"allowlist","allowedHosts":["api.anthropic.com"]})"));

  repo.writeConfig("[general]\nsandbox = \"off\"\n\n[agents.mine]\nadapter = \"command\"\nbinary = \"true\"\n"
                   "network = \"allowlist\"\n");
  const std::string refused = sh("cd " + root + " && '" HYDRA_BINARY "' sandbox 2>&1; echo \"exit $?\"");
  EXPECT_THAT(refused, HasSubstr("hydra.toml:7:11: [agents.mine] network = \"allowlist\" needs 'allowed_hosts'"))
      << refused;
  EXPECT_THAT(refused, Not(HasSubstr("exit 0"))) << refused;
  repo.writeConfig("[general]\nsandbox = \"off\"\n\n[agents.mine]\nadapter = \"command\"\nbinary = \"true\"\n"
                   "network = \"none\"\nallowed_hosts = [\"api.example.com\"]\n");
  const std::string misplaced = sh("cd " + root + " && '" HYDRA_BINARY "' sandbox 2>&1; echo \"exit $?\"");
  EXPECT_THAT(misplaced, HasSubstr("hydra.toml:8:17: [agents.mine] 'allowed_hosts' only applies with network = "
                                   "\"allowlist\"")) << misplaced;
  repo.writeConfig("[general]\nsandbox = \"off\"\n\n[agents.mine]\nadapter = \"command\"\nbinary = \"true\"\n"
                   "network = \"allowlist\"\nallowed_hosts = [\"ok.example\", \"https://api.example.com\"]\n");
  const std::string bad = sh("cd " + root + " && '" HYDRA_BINARY "' sandbox 2>&1; echo \"exit $?\"");
  EXPECT_THAT(bad, HasSubstr("hydra.toml:8:32: 'allowed_hosts' entry 'https://api.example.com' is not a host name"))
      << bad;
  EXPECT_THAT(refused, HasSubstr("needs 'allowed_hosts'")) << refused;
}

}  // namespace
}  // namespace hydra::test
