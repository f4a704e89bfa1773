// The terminal commands of the real `hydra` binary (race, status, agents, init,
// cleanup), run in throwaway git repositories with scripted agents
// (tests/fixtures/agents) and hydra_test_child as the agents.

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <set>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace hydra::test {

// From test_repo.h, whose other helpers this file has its own versions of.
std::string unconfinedUnlessSet(const std::string& toml);
// From cli_run.h.
std::vector<std::string> objectFiles(const std::filesystem::path& root);

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

const fs::path kHydra = HYDRA_BINARY;
const fs::path kTestChild = HYDRA_TEST_CHILD;
const fs::path kScriptedAgent = fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "agents" / "scripted_agent.sh";

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

void writeFile(const fs::path& path, const std::string& content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command; its stdout without trailing newlines. Throws when it fails.
std::string sh(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (::pclose(pipe) != 0) throw std::runtime_error("failed: " + command + "\n" + out);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// True once `pid` no longer runs. An orphan killed by hydra is reaped by init,
// not by the test: a zombie counts as gone.
bool processGone(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close == std::string::npos || (close + 2 < stat.size() && stat[close + 2] == 'Z');
}

bool waitGone(pid_t pid, std::chrono::seconds limit = 15s) {
  auto deadline = Clock::now() + limit;
  while (!processGone(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// hydra's argv and environment for execve: this process's environment, with
// `extraEnv` ("NAME=VALUE") replacing what it names and variables named in
// `dropped` left out.
class HydraCommand {
 public:
  HydraCommand(const std::vector<std::string>& args, const std::vector<std::string>& extraEnv,
               const std::vector<std::string>& dropped = {}) {
    argv_.push_back(kHydra.string());
    argv_.insert(argv_.end(), args.begin(), args.end());
    auto named = [](const std::string& entry, const std::string& name) {
      return entry.compare(0, name.size() + 1, name + "=") == 0;
    };
    for (char** e = environ; *e != nullptr; ++e) {
      std::string entry(*e);
      bool replaced = std::any_of(extraEnv.begin(), extraEnv.end(), [&](const std::string& x) {
        return named(entry, x.substr(0, x.find('=')));
      });
      bool drop = std::any_of(dropped.begin(), dropped.end(), [&](const std::string& n) { return named(entry, n); });
      if (!replaced && !drop) env_.push_back(entry);
    }
    env_.insert(env_.end(), extraEnv.begin(), extraEnv.end());
    for (auto& a : argv_) cargv_.push_back(a.data());
    cargv_.push_back(nullptr);
    for (auto& e : env_) cenv_.push_back(e.data());
    cenv_.push_back(nullptr);
  }
  HydraCommand(const HydraCommand&) = delete;
  HydraCommand& operator=(const HydraCommand&) = delete;

  char* const* argv() const { return cargv_.data(); }
  char* const* envp() const { return cenv_.data(); }

 private:
  std::vector<std::string> argv_, env_;
  std::vector<char*> cargv_, cenv_;
};

// The hydra binary running in a directory, stdin from /dev/null, stdout and
// stderr into files (so that a test never blocks on a full pipe).
class Hydra {
 public:
  Hydra(const fs::path& cwd, const std::vector<std::string>& args, const fs::path& scratch,
        const std::vector<std::string>& extraEnv) {
    static int counter = 0;
    const std::string stem = "hydra-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
    outPath_ = scratch / (stem + ".out");
    errPath_ = scratch / (stem + ".err");

    HydraCommand command(args, extraEnv);
    char* const* cargv = command.argv();
    char* const* cenv = command.envp();

    // Everything the child needs is opened before fork: after it, only exec.
    int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = ::open(outPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err = ::open(errPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || err < 0) throw std::runtime_error("cannot open hydra's stdio files");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(in, STDIN_FILENO);
      ::dup2(out, STDOUT_FILENO);
      ::dup2(err, STDERR_FILENO);
      if (::chdir(cwd.c_str()) != 0) ::_exit(126);
      ::execve(cargv[0], cargv, cenv);
      ::_exit(127);
    }
    ::close(in);
    ::close(out);
    ::close(err);
  }

  ~Hydra() {
    if (!code_) {
      ::kill(pid_, SIGKILL);
      wait(10s);
    }
  }
  Hydra(const Hydra&) = delete;
  Hydra& operator=(const Hydra&) = delete;

  // The exit code (128 + signal when killed), or nullopt if still running at the limit.
  std::optional<int> wait(std::chrono::seconds limit = 60s) {
    auto deadline = Clock::now() + limit;
    while (!code_) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      } else if (Clock::now() > deadline) {
        return std::nullopt;
      } else {
        std::this_thread::sleep_for(10ms);
      }
    }
    return code_;
  }

  pid_t pid() const { return pid_; }
  std::string out() const { return readFile(outPath_); }
  std::string err() const { return readFile(errPath_); }

 private:
  pid_t pid_ = -1;
  std::optional<int> code_;
  fs::path outPath_, errPath_;
};

struct Outcome {
  int code = -1;
  std::string out, err;
};

std::ostream& operator<<(std::ostream& os, const Outcome& r) {
  return os << "exit " << r.code << "\n--- stdout\n" << r.out << "--- stderr\n" << r.err;
}

class CliTest : public ::testing::Test {
 protected:
  CliTest() {
    char pattern[] = "/tmp/hydra-cli-test-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = fs::canonical(pattern);
    repo_ = dir_ / "repo";
    fs::create_directories(repo_);
    fs::create_directories(dir_ / "home");
    fs::create_directories(dir_ / "outside");
    fs::create_directories(dir_ / "io");
    git("init -q -b main");
    git("config user.name 'Test User'");
    git("config user.email test@example.com");
    writeFile(repo_ / "README.md", "# sample\n");
    writeFile(repo_ / "src" / "a.txt", "alpha\n");
    git("add -A");
    git("commit -q -m initial");
  }

  ~CliTest() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // hydra sees an empty home, so no user configuration (git's or hydra's) leaks in.
  std::vector<std::string> env(std::vector<std::string> extra = {}) const {
    extra.push_back("HOME=" + (dir_ / "home").string());
    extra.push_back("XDG_CONFIG_HOME=" + (dir_ / "home" / ".config").string());
    return extra;
  }

  std::unique_ptr<Hydra> spawn(const std::vector<std::string>& args, std::optional<fs::path> cwd = std::nullopt,
                               std::vector<std::string> extraEnv = {}) const {
    return std::make_unique<Hydra>(cwd.value_or(repo_), args, dir_ / "io", env(std::move(extraEnv)));
  }

  Outcome hydra(const std::vector<std::string>& args, std::optional<fs::path> cwd = std::nullopt,
            std::vector<std::string> extraEnv = {}) const {
    auto process = spawn(args, cwd, std::move(extraEnv));
    auto code = process->wait();
    if (!code) throw std::runtime_error("hydra did not finish within a minute");
    return Outcome{*code, process->out(), process->err()};
  }

  std::string git(const std::string& args) const {
    return sh("GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -C " + shellQuote(repo_.string()) + " " + args);
  }

  // Unconfined unless `toml` says otherwise: these tests follow the agents'
  // processes by their host pids and hand them files outside the repository.
  void writeConfig(const std::string& toml) const { writeFile(repo_ / "hydra.toml", unconfinedUnlessSet(toml)); }

  // [agents.NAME] played by the scripted agent carrying out `steps`.
  static std::string scriptedAgent(const std::string& name, const std::vector<std::string>& steps) {
    std::string args;
    for (const auto& s : steps) args += (args.empty() ? "\"" : ", \"") + s + "\"";
    return "[agents." + name + "]\nadapter = \"command\"\nbinary = \"" + kScriptedAgent.string() +
           "\"\nargs = [" + args + "]\n\n";
  }

  // The races in .hydra/races.
  std::vector<std::string> raceIds() const {
    std::vector<std::string> ids;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(repo_ / ".hydra" / "races", ec)) {
      ids.push_back(entry.path().filename().string());
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  // The race given `task`. (Ids of races started within one second do not
  // sort by time: their last part is random.)
  std::string raceIdOf(const std::string& task) const {
    for (const auto& id : raceIds()) {
      if (raceJson(id).at("task").as_string() == task) return id;
    }
    throw std::runtime_error("no race with task " + task);
  }

  json::object raceJson(const std::string& id) const {
    return json::parse(readFile(repo_ / ".hydra" / "races" / id / "race.json")).as_object();
  }

  fs::path quarantineOf(const std::string& raceId) const { return repo_ / ".git" / "hydra-objects" / raceId; }

  std::string alternates() const {
    const fs::path path = repo_ / ".git" / "objects" / "info" / "alternates";
    return fs::exists(path) ? readFile(path) : "";
  }

  fs::path dir_;
  fs::path repo_;
};

// 1.
TEST_F(CliTest, RaceShowsPlainProgressThenRanksEveryAgentAndLeavesTheirBranches) {
  writeConfig(scriptedAgent("a", {"say", "a is thinking", "write", "a.txt", "from a"}) +
              scriptedAgent("b", {"shout", "b warns", "write", "b.txt", "from b"}));
  Outcome r = hydra({"race", "Add a file", "--agents", "a,b"});
  ASSERT_EQ(r.code, 0) << r;

  auto ids = raceIds();
  ASSERT_EQ(ids.size(), 1u);
  const std::string& id = ids[0];
  EXPECT_THAT(r.out, HasSubstr("Race " + id));
  EXPECT_THAT(r.out, Not(HasSubstr("\033["))) << "no terminal escapes when stdout is not a terminal";
  // Plain progress lines, each naming its agent.
  EXPECT_THAT(r.out, ContainsRegex("\\] a +started in "));
  EXPECT_THAT(r.out, ContainsRegex("\\] b +started in "));
  EXPECT_THAT(r.out, ContainsRegex("\\] a +a is thinking"));
  EXPECT_THAT(r.out, ContainsRegex("\\] b +stderr: b warns"));
  EXPECT_THAT(r.out, ContainsRegex("\\] a +completed, exit 0"));
  EXPECT_THAT(r.out, ContainsRegex("\\] b +completed, exit 0"));
  // The summary ranks every agent and names the winner's branch.
  EXPECT_THAT(r.out, ContainsRegex("\n  #[12]  a +"));
  EXPECT_THAT(r.out, ContainsRegex("\n  #[12]  b +"));
  EXPECT_THAT(r.out, ContainsRegex("\nWinner: [ab] \\(branch: hydra/[ab]-" + id + "\\)"));

  EXPECT_EQ(git("branch --list --format='%(refname:short)' 'hydra/*'"), "hydra/a-" + id + "\nhydra/b-" + id);
  EXPECT_EQ(git("show hydra/a-" + id + ":a.txt"), "from a");
  EXPECT_EQ(git("show hydra/b-" + id + ":b.txt"), "from b");
}

// Agents racing on one web app each get a port of their own for dev servers.
TEST_F(CliTest, EveryAgentGetsAPortOfItsOwnThatItCanListenOn) {
  const std::string script =
      "echo $HYDRA_PORT > port.txt; /usr/bin/python3 -c 'import os, socket; s = socket.socket(); "
      "s.bind((\\\"127.0.0.1\\\", int(os.environ[\\\"HYDRA_PORT\\\"]))); s.listen(); print(\\\"listening\\\")' > listen.txt; sleep 1";
  std::string agents;
  for (const char* name : {"a", "b", "c"}) {
    agents += std::string("[agents.") + name + "]\nadapter = \"command\"\nbinary = \"/bin/sh\"\nargs = [\"-c\", \"" +
              script + "\"]\n\n";
  }
  writeConfig("[general]\nmax_concurrent_agents = 3\n\n" + agents);
  Outcome r = hydra({"race", "Serve the app", "--agents", "a,b,c"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string id = raceIds().at(0);
  std::set<std::string> ports;
  for (const char* name : {"a", "b", "c"}) {
    SCOPED_TRACE(name);
    const std::string port = git("show hydra/" + std::string(name) + "-" + id + ":port.txt");
    EXPECT_THAT(port, ::testing::MatchesRegex("[1-9][0-9]{2,4}"));
    ports.insert(port);
    EXPECT_EQ(git("show hydra/" + std::string(name) + "-" + id + ":listen.txt"), "listening");
  }
  EXPECT_EQ(ports.size(), 3u) << "three agents running at once, three ports";
}

// Installed dependencies the user's checkout holds are in every worktree from the start.
TEST_F(CliTest, CopyIgnoredPutsTheCheckoutsIgnoredFoldersInEveryWorktree) {
  writeFile(repo_ / ".gitignore", "node_modules/\n");
  git("add .gitignore");
  git("commit -q -m 'ignore node_modules'");
  writeFile(repo_ / "node_modules" / "dep" / "index.js", "exports.dep = 42;\n");
  std::string agents;
  for (const char* name : {"a", "b"}) {
    agents += std::string("[agents.") + name +
              "]\nadapter = \"command\"\nbinary = \"/bin/sh\"\nargs = [\"-c\", \"cat node_modules/dep/index.js > seen.txt; "
              "echo mine > node_modules/dep/index.js\"]\n\n";
  }
  writeConfig("[general]\ncopy_ignored = [\"node_modules\", \"missing_folder\"]\n\n" + agents);
  Outcome r = hydra({"race", "Use the dependency", "--agents", "a,b"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string id = raceIds().at(0);
  for (const char* name : {"a", "b"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(git("show hydra/" + std::string(name) + "-" + id + ":seen.txt"), "exports.dep = 42;");
    // Ignored in the worktree too: never part of the agent's commit.
    EXPECT_THAT(git("ls-tree -r --name-only hydra/" + std::string(name) + "-" + id), Not(HasSubstr("node_modules")));
  }
  EXPECT_EQ(readFile(repo_ / "node_modules" / "dep" / "index.js"), "exports.dep = 42;\n")
      << "each agent wrote its own copy";
  EXPECT_THAT(r.err, HasSubstr("copy_ignored: missing_folder: not in your checkout"));
}

// 2.
TEST_F(CliTest, RaceWithJsonPrintsOneDocumentHoldingTheRaceRecord) {
  writeConfig(scriptedAgent("a", {"say", "progress that must not reach stdout", "write", "a.txt", "a"}) +
              scriptedAgent("b", {"exit", "4"}));
  Outcome r = hydra({"race", "Add a file", "--agents", "a,b", "--json"});
  ASSERT_EQ(r.code, 0) << r;

  json::value doc;
  ASSERT_NO_THROW(doc = json::parse(r.out)) << r;
  const json::object& race = doc.at("race").as_object();
  EXPECT_EQ(race.at("id").as_string(), raceIds().at(0));
  EXPECT_EQ(race.at("task").as_string(), "Add a file");
  EXPECT_EQ(race.at("status").as_string(), "completed");
  const json::array& agents = race.at("agents").as_array();
  ASSERT_EQ(agents.size(), 2u);
  EXPECT_EQ(agents[0].at("agentId").as_string(), "a");
  EXPECT_EQ(agents[0].at("status").as_string(), "completed");
  EXPECT_TRUE(agents[0].as_object().contains("commit"));
  EXPECT_EQ(agents[1].at("agentId").as_string(), "b");
  EXPECT_EQ(agents[1].at("status").as_string(), "failed");
  EXPECT_EQ(agents[1].at("exitCode").as_int64(), 4);
  EXPECT_EQ(doc.at("scores").at("rankings").as_array().size(), 2u);
}

TEST_F(CliTest, RaceReportsAFailingAgentAsFailed) {
  writeConfig(scriptedAgent("a", {"shout", "cannot do it", "exit", "2"}));
  Outcome r = hydra({"race", "Do it", "--agents", "a"});
  EXPECT_THAT(r.out, ContainsRegex("\\] a +stderr: cannot do it"));
  // The CLI's own last word on stderr is kept with the exit code.
  EXPECT_THAT(r.out, ContainsRegex("\\] a +failed, exit 2 after [^\n]*\\(exited with code 2: cannot do it\\)"));
  EXPECT_EQ(raceJson(raceIds().at(0)).at("agents").at(0).at("status").as_string(), "failed");
}

TEST_F(CliTest, ScoresShowWhatEachCLIReportedAndWhatKeepsAnAgentFromAutoMerge) {
  // "denier" plays claude with a result that reports a denied Write; "quitter"
  // fails with a last word on stderr that holds a terminal escape.
  const std::string result =
      R"({"type":"result","subtype":"success","is_error":false,"result":"done","permission_denials":)"
      R"([{"tool_name":"Write","tool_input":{"file_path":"/etc/hosts"}}]})";
  writeConfig("[agents.denier]\nadapter = \"claude\"\nbinary = \"" + kScriptedAgent.string() +
              "\"\nargs = ['write', 'd.txt', 'd', 'say', '" + result + "', '--']\n\n" +
              scriptedAgent("quitter", {"write", "q.txt", "q", "shout", "\\u001b[2Jcannot do it", "exit", "2"}));
  Outcome r = hydra({"race", "Do it", "--agents", "denier,quitter"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string id = raceIds().at(0);

  Outcome scores = hydra({"scores", id});
  ASSERT_EQ(scores.code, 0) << scores;
  EXPECT_THAT(scores.out, HasSubstr("      not for auto-merge: 1 tool call denied\n")) << scores.out;
  EXPECT_THAT(scores.out, HasSubstr("      warning: permission denied: Write")) << scores.out;
  EXPECT_THAT(scores.out, HasSubstr("      error: exited with code 2: ^[[2Jcannot do it\n")) << scores.out;
  EXPECT_THAT(scores.out, HasSubstr("      stderr: ^[[2Jcannot do it\n")) << scores.out;
  EXPECT_THAT(scores.out, Not(HasSubstr("\033"))) << "an agent's escape sequence never reaches the terminal";
  EXPECT_THAT(scores.out, HasSubstr("Winner: denier")) << scores.out;
  EXPECT_THAT(scores.out, Not(HasSubstr("eligible for auto-merge"))) << scores.out;

  const json::object ranked = json::parse(hydra({"scores", id, "--json"}).out).as_object();
  const json::value& denier = ranked.at("rankings").at(0);
  EXPECT_EQ(denier.at("agentId"), json::value("denier"));
  EXPECT_EQ(denier.at("deniedToolCalls"), json::value(1));
  EXPECT_EQ(denier.at("flags"), json::parse(R"(["1 tool call denied"])"));
  EXPECT_EQ(raceJson(id).at("agents").at(0).at("deniedToolCalls"), json::value(1));
}

TEST_F(CliTest, ScoresNameATestSkippedNowAndSayWhenTestsWereComparedByCountsOnly) {
  // The "test suite" prints what verdicts.txt holds, in pytest's words.
  writeFile(repo_ / "verdicts.txt", "FAILED t.py::test_a - assert 1 == 2\nPASSED t.py::test_b\n"
                                    "===== 1 failed, 1 passed in 0.10s =====\n");
  git("add verdicts.txt");
  git("commit -q -m verdicts");
  writeConfig(scriptedAgent("xfailer", {"write", "verdicts.txt",
                                        "XFAIL t.py::test_a\\nPASSED t.py::test_b\\n"
                                        "===== 1 passed, 1 xfailed in 0.10s ====="}) +
              scriptedAgent("counter", {"write", "verdicts.txt", "===== 2 passed in 0.10s ====="}) +
              "[scoring]\ntest_command = \"cat verdicts.txt; ! grep -q FAILED verdicts.txt\"\n");
  Outcome r = hydra({"race", "Fix test_a", "--agents", "xfailer,counter"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string id = raceIds().at(0);

  Outcome scores = hydra({"scores", id});
  ASSERT_EQ(scores.code, 0) << scores;
  EXPECT_THAT(scores.out, HasSubstr("      skipped or xfailed now: t.py::test_a (ran at the base; scored as failed)\n"))
      << scores.out;
  EXPECT_THAT(scores.out, HasSubstr("      tests compared by counts only: ")) << scores.out;

  const json::object ranked = json::parse(hydra({"scores", id, "--json"}).out).as_object();
  for (const json::value& a : ranked.at("rankings").as_array()) {
    if (a.at("agentId") == json::value("xfailer")) {
      EXPECT_EQ(a.at("testChanges").at("skipped"), json::parse(R"(["t.py::test_a"])")) << json::serialize(a);
      EXPECT_LT(a.at("breakdown").at("tests").to_number<double>(), 100.0) << json::serialize(a);
    } else {
      EXPECT_EQ(a.at("testsByCountsOnly"), json::value(true)) << json::serialize(a);
    }
  }
}

TEST_F(CliTest, RaceWithAnUnknownAgentExitsTwoListingTheKnownOnes) {
  writeConfig(scriptedAgent("a", {"say", "hi"}));
  Outcome r = hydra({"race", "Do it", "--agents", "a,nobody"});
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("unknown agent 'nobody'"));
  EXPECT_THAT(r.err, HasSubstr("known: a"));
  EXPECT_TRUE(raceIds().empty()) << "a refused race left a directory behind";
}

// hydra on a pseudo-terminal, as a person runs it: what it printed there, and its exit code.
// `input` is typed on the terminal at once: the terminal keeps it until hydra reads.
Outcome onTerminal(const fs::path& cwd, const std::vector<std::string>& args, const std::vector<std::string>& extraEnv,
                   const std::string& input = "") {
  // The pager settings are the test's to give.
  HydraCommand command(args, extraEnv, {"PAGER", "HYDRA_PAGER", "LESS"});
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) throw std::runtime_error("forkpty failed");
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execve(command.argv()[0], command.argv(), command.envp());
    ::_exit(127);
  }
  if (!input.empty() && ::write(master, input.data(), input.size()) != static_cast<ssize_t>(input.size())) {
    throw std::runtime_error("cannot type on the terminal");
  }
  Outcome r;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(master, buffer, sizeof buffer);
    if (n > 0) {
      r.out.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO: the terminal's last user is gone
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// What in `text` a terminal would act on that hydra did not make itself; ""
// when there is nothing. hydra's own: its colours (SGR 0, 1, 2, 31, 32, 33,
// 36), the live table's cursor moves (CSI n A, CSI 2 K) and, on a terminal,
// the \r the line discipline adds. Anything else (another ESC, a C0 or C1
// control) came from the agent.
std::string foreignControls(const std::string& text, bool terminal) {
  static const std::set<std::string> colours{"0", "1", "2", "31", "32", "33", "36"};
  auto at = [&](std::size_t i, const std::string& what) {
    return what + " at byte " + std::to_string(i) + ": " +
           json::serialize(json::value(text.substr(i < 20 ? 0 : i - 20, 60)));
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b) {
      if (terminal && i + 1 < text.size() && text[i + 1] == '[') {
        std::size_t j = i + 2;
        std::string params;
        while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == ';')) params += text[j++];
        const char final = j < text.size() ? text[j] : '\0';
        if ((final == 'm' && colours.count(params)) || final == 'A' || (final == 'K' && params == "2")) {
          i = j;
          continue;
        }
      }
      return at(i, "ESC");
    }
    if ((c < 0x20 && c != '\n' && c != '\t' && !(terminal && c == '\r')) || c == 0x7f) return at(i, "a C0 control");
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) return at(i, "a C1 control");
  }
  return "";
}

// An agent that prints OSC 52 (clipboard), OSC 0 (title), OSC 8 (links), CSI,
// DCS, APC and C1 controls, writes a file whose name holds ESC and ends with
// such an error: nothing of it reaches the terminal raw, in a pipe or on a
// terminal, through race, log, diff, scores or status. It is shown escaped.
TEST_F(CliTest, NothingAnAgentPrintsOrNamesReachesTheTerminalRaw) {
  const fs::path hostile = fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "hostile" / "terminal_escapes.sh";
  writeConfig("[agents.evil]\nadapter = \"command\"\nbinary = \"" + hostile.string() + "\"\n\n" +
              scriptedAgent("good", {"say", "fine", "write", "good.txt", "good"}));
  auto expectSafe = [&](const Outcome& r, bool terminal, const std::string& what) {
    EXPECT_EQ(foreignControls(r.out, terminal), "") << what << " (stdout)\n" << r;
    EXPECT_EQ(foreignControls(r.err, terminal), "") << what << " (stderr)\n" << r;
  };

  // Pipe mode: plain lines.
  Outcome race = hydra({"race", "Print things", "--agents", "evil,good"});
  expectSafe(race, false, "hydra race");
  EXPECT_THAT(race.out, HasSubstr("^[]52;c;c2VjcmV0^Gclipboard")) << race;
  EXPECT_THAT(race.out, HasSubstr("\\u009b6n c1 csi")) << race;
  EXPECT_THAT(race.out, HasSubstr("exited with code 3: the end ^[]52;c;ZW5k^G")) << race;
  const std::string id = raceIdOf("Print things");

  Outcome log = hydra({"log", "evil"});
  ASSERT_EQ(log.code, 0) << log;
  expectSafe(log, false, "hydra log");
  EXPECT_THAT(log.out, HasSubstr("^[]8;;https://evil.example/^[\\link^[]8;;^[\\\n")) << log;
  EXPECT_THAT(log.out, HasSubstr("^[P+q544e^[\\ dcs ^[_apc^[\\ lone ^[\n")) << log;
  Outcome logErr = hydra({"log", "evil", "--stderr"});
  expectSafe(logErr, false, "hydra log --stderr");
  EXPECT_THAT(logErr.out, HasSubstr("on stderr ^[]52;c;c3RkZXJy^G")) << logErr;

  Outcome diff = hydra({"diff", "evil", "--no-pager"});
  ASSERT_EQ(diff.code, 0) << diff;
  expectSafe(diff, false, "hydra diff --no-pager");
  EXPECT_THAT(diff.out, HasSubstr("+content ^[[5mblinks^[]0;FILE^G\n")) << diff;
  Outcome colored = hydra({"diff", "evil", "--no-pager", "--color"});
  expectSafe(colored, true, "hydra diff --color");
  Outcome stat = hydra({"diff", "evil", "--stat"});
  expectSafe(stat, false, "hydra diff --stat");
  EXPECT_THAT(stat.out, HasSubstr("evil^[]52;c;bmFtZQ==^G.txt")) << stat;

  Outcome scores = hydra({"scores"});
  ASSERT_EQ(scores.code, 0) << scores;
  expectSafe(scores, false, "hydra scores");
  Outcome status = hydra({"status"});
  expectSafe(status, false, "hydra status");
  Outcome one = hydra({"status", id});
  expectSafe(one, false, "hydra status RACE");
  EXPECT_THAT(one.out, HasSubstr("the end ^[]52;c;ZW5k^G")) << one;
  // --json is for programs, but may be read on a terminal: JSON escapes ESC,
  // and hydra escapes the C1 controls JSON would leave raw. A program reads
  // the agent's words unchanged.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status", id, "--json"}, std::vector<std::string>{"scores", id, "--json"},
        std::vector<std::string>{"race", "Print as JSON", "--agents", "evil", "--json"}}) {
    Outcome asJson = hydra(args);
    expectSafe(asJson, false, "hydra " + args[0] + " --json");
    if (args[0] == "scores") continue;
    EXPECT_THAT(asJson.out, HasSubstr("\\u009b2J")) << asJson;
    EXPECT_THAT(json::serialize(json::parse(asJson.out)), HasSubstr("the end \\u001b]52;c;ZW5k\\u0007 \xc2\x9b" "2J"))
        << asJson;
  }

  // On a terminal: the live table, and what the pager is handed.
  Outcome live = onTerminal(repo_, {"race", "Print again", "--agents", "evil,good"}, env());
  expectSafe(live, true, "hydra race on a terminal");
  const fs::path paged = dir_ / "paged.txt";
  const fs::path pager = dir_ / "pager.sh";
  writeFile(pager, "#!/bin/sh\ncat > '" + paged.string() + "'\n");
  fs::permissions(pager, fs::perms::owner_all);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"log", "evil"},
                                                std::vector<std::string>{"diff", "evil"},
                                                std::vector<std::string>{"scores"}}) {
    fs::remove(paged);
    Outcome shown = onTerminal(repo_, args, env({"PAGER=" + pager.string()}));
    expectSafe(shown, true, "hydra " + args[0] + " on a terminal");
    if (args[0] != "scores") {
      EXPECT_EQ(foreignControls(readFile(paged), true), "") << "what the pager got from hydra " << args[0];
      EXPECT_THAT(readFile(paged), HasSubstr("^[]")) << "the sequences show as text";
    }
  }
}

// scores, diff and merge work on the newest race when none is named; diff
// pages and colours on a terminal like git; a merged race says so and is not
// merged twice.
TEST_F(CliTest, ReviewCommandsTakeTheLatestRaceAndAMergedRaceSaysSo) {
  writeConfig(scriptedAgent("fixer", {"write", "fixed.txt", "the fix", "write", "notes.txt",
                                      "1\\n2\\n3\\n4\\n5\\n6\\n7\\n8\\n9\\n10\\n11\\n12"}) +
              scriptedAgent("breaker", {"write", "broken.txt", "oops"}) +
              "[scoring]\nbuild_command = \"if [ -e broken.txt ]; then echo 'build broke: broken.txt is in the way'; "
              "echo $PWD/broken.txt:1:2: error: oops is not code; exit 3; fi\"\n");
  ASSERT_EQ(hydra({"race", "First", "--agents", "fixer"}).code, 0);
  Outcome r = hydra({"race", "Fix it", "--agents", "fixer,breaker"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string id = raceIdOf("Fix it");

  // The failed check says why, in its own words.
  Outcome scores = hydra({"scores"});
  ASSERT_EQ(scores.code, 0) << scores;
  EXPECT_THAT(scores.out, HasSubstr("Race Results — Task: \"Fix it\"")) << scores.out;
  EXPECT_THAT(scores.out, HasSubstr("      build failed (exit 3): if [ -e broken.txt ]")) << scores.out;
  EXPECT_THAT(scores.out, HasSubstr("        build broke: broken.txt is in the way\n")) << scores.out;
  EXPECT_EQ(hydra({"scores", "latest"}).out, scores.out);
  // What the build named at a place is a finding, its path relative to the checkout.
  const json::value ranked = json::parse(hydra({"scores", "--json"}).out);
  const json::value& breaker = ranked.at("rankings").at(1);
  ASSERT_EQ(breaker.at("agentId"), json::value("breaker"));
  EXPECT_EQ(breaker.at("checks").at("build").at("findings"),
            json::parse(R"([{"path":"broken.txt","line":1,"column":2,"severity":"error","message":"oops is not code"}])"));
  EXPECT_EQ(hydra({"scores", id}).out, scores.out);

  // --stat: status, insertions and deletions in aligned columns.
  Outcome stat = hydra({"diff", "fixer", "--stat"});
  ASSERT_EQ(stat.code, 0) << stat;
  EXPECT_EQ(stat.out,
            "  added     +1 -0  fixed.txt\n"
            "  added    +12 -0  notes.txt\n"
            "2 file(s) changed, 13 insertion(s), 0 deletion(s)\n");
  EXPECT_EQ(hydra({"diff", id, "fixer", "--stat"}).out, stat.out);

  // In a pipe: the plain patch, no pager. The path narrows it to one file.
  Outcome plain = hydra({"diff", "fixer", "fixed.txt"});
  ASSERT_EQ(plain.code, 0) << plain;
  EXPECT_THAT(plain.out, HasSubstr("+++ b/fixed.txt\n"));
  EXPECT_THAT(plain.out, HasSubstr("\n+the fix\n"));
  EXPECT_THAT(plain.out, Not(HasSubstr("notes.txt")));
  EXPECT_THAT(plain.out, Not(HasSubstr("\033")));
  EXPECT_EQ(hydra({"diff", "latest", "fixer", "fixed.txt"}).out, plain.out);

  // On a terminal: coloured, through the pager, with git's LESS default.
  const fs::path paged = dir_ / "paged.txt";
  const fs::path pager = dir_ / "pager.sh";
  writeFile(pager, "#!/bin/sh\necho \"LESS=$LESS\" > '" + paged.string() + ".env'\ncat > '" + paged.string() + "'\n");
  fs::permissions(pager, fs::perms::owner_all);
  Outcome shown = onTerminal(repo_, {"diff", "fixer", "fixed.txt"}, env({"PAGER=" + pager.string()}));
  ASSERT_EQ(shown.code, 0) << shown;
  const std::string viaPager = readFile(paged);
  EXPECT_THAT(viaPager, HasSubstr("\033[1mdiff --git a/fixed.txt b/fixed.txt\033[0m\n")) << viaPager;
  EXPECT_THAT(viaPager, HasSubstr("\033[36m@@ -0,0 +1 @@\033[0m\n")) << viaPager;
  EXPECT_THAT(viaPager, HasSubstr("\033[32m+the fix\033[0m\n")) << viaPager;
  EXPECT_EQ(readFile(paged.string() + ".env"), "LESS=FRX\n");
  EXPECT_THAT(shown.out, Not(HasSubstr("the fix"))) << "the pager had the diff, not the terminal";
  // HYDRA_PAGER=cat, or --no-pager: straight to the terminal, still coloured.
  Outcome direct = onTerminal(repo_, {"diff", "fixer", "fixed.txt", "--no-pager"}, env({"PAGER=" + pager.string()}));
  EXPECT_THAT(direct.out, HasSubstr("\033[32m+the fix\033[0m")) << direct.out;
  Outcome cat = onTerminal(repo_, {"diff", "fixer", "fixed.txt"}, env({"HYDRA_PAGER=cat", "PAGER=" + pager.string()}));
  EXPECT_THAT(cat.out, HasSubstr("\033[32m+the fix\033[0m")) << cat.out;
  // A pager that is not installed loses nothing: the diff is printed, and the user told.
  Outcome missing = onTerminal(repo_, {"diff", "fixer", "fixed.txt"}, env({"PAGER=hydra-no-such-pager -R"}));
  EXPECT_EQ(missing.code, 0) << missing;
  EXPECT_THAT(missing.out, HasSubstr("pager 'hydra-no-such-pager' not found")) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("\033[32m+the fix\033[0m")) << missing.out;
  // --color colours a pipe too.
  EXPECT_THAT(hydra({"diff", "fixer", "fixed.txt", "--color"}).out, HasSubstr("\033[32m+the fix\033[0m"));

  Outcome usage = hydra({"diff"});
  EXPECT_NE(usage.code, 0) << usage;
  EXPECT_THAT(usage.err, HasSubstr("required")) << usage;
  Outcome noAgent = hydra({"diff", "nobody"});
  EXPECT_NE(noAgent.code, 0) << noAgent;
  EXPECT_THAT(noAgent.err, HasSubstr("nobody")) << noAgent;

  // merge without a race takes the latest race's winner; status and scores then say it was merged.
  Outcome merged = hydra({"merge"});
  ASSERT_EQ(merged.code, 0) << merged;
  EXPECT_THAT(merged.out, HasSubstr("hydra/fixer-" + id + " was merged into main (fast-forward, 2 file(s))"));
  const std::string head = git("rev-parse HEAD");
  Outcome status = hydra({"status", id});
  EXPECT_THAT(status.out, HasSubstr("\n    winner fixer  merged fixer into main " + head.substr(0, 10) + "\n"))
      << status.out;
  EXPECT_THAT(status.out, ContainsRegex("\n    1  fixer    completed  [^\n]*  winner  merged\n")) << status.out;
  Outcome after = hydra({"scores"});
  EXPECT_THAT(after.out, HasSubstr("Merged: fixer into main, " + head.substr(0, 10) + "\n")) << after.out;
  EXPECT_THAT(after.out, Not(HasSubstr("Run `hydra merge"))) << after.out;
  EXPECT_EQ(raceJson(id).at("merged").at("agentId"), json::value("fixer"));

  Outcome again = hydra({"merge", id, "fixer"});
  EXPECT_EQ(again.code, 2) << again;
  EXPECT_THAT(again.err, HasSubstr("race " + id + " was merged already: fixer into main")) << again;
  EXPECT_EQ(git("rev-parse HEAD"), head) << "nothing was merged twice";
}

// An agent that is not the winner and whose build failed is not merged
// silently: a dry run says why, a terminal asks, and without one --force is
// needed. The editors ask the same before they send force.
TEST_F(CliTest, MergingAnAgentThatIsNotASafePickSaysWhyAndAsksOrNeedsForce) {
  writeConfig(scriptedAgent("fixer", {"write", "fixed.txt", "the fix"}) +
              scriptedAgent("breaker", {"write", "broken.txt", "oops"}) +
              "[scoring]\nbuild_command = \"if [ -e broken.txt ]; then echo 'build broke'; exit 3; fi\"\n");
  Outcome r = hydra({"race", "Fix it", "--agents", "fixer,breaker"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string id = raceIdOf("Fix it");
  const std::string head = git("rev-parse HEAD");

  Outcome dry = hydra({"merge", id, "breaker", "--dry-run"});
  EXPECT_EQ(dry.code, 0) << dry;
  EXPECT_THAT(dry.out, HasSubstr("would be merged into main")) << dry;
  EXPECT_THAT(dry.out, HasSubstr("But breaker is not a safe pick:\n")) << dry;
  EXPECT_THAT(dry.out, HasSubstr("  - it is not the winner (fixer is; it ranked #2)\n")) << dry;
  EXPECT_THAT(dry.out, HasSubstr("  - its build failed (exit 3)\n")) << dry;
  EXPECT_THAT(dry.out, HasSubstr("needs --force")) << dry;

  Outcome refused = hydra({"merge", id, "breaker"});
  EXPECT_EQ(refused.code, 2) << refused;
  EXPECT_THAT(refused.err, HasSubstr("breaker is not a safe pick:\n  - it is not the winner")) << refused;
  EXPECT_THAT(refused.err, HasSubstr("  - its build failed (exit 3)\n")) << refused;
  EXPECT_THAT(refused.err, HasSubstr("pass --force to merge breaker anyway")) << refused;
  EXPECT_EQ(git("rev-parse HEAD"), head);

  Outcome declined = onTerminal(repo_, {"merge", id, "breaker"}, env(), "n\n");
  EXPECT_EQ(declined.code, 1) << declined;
  EXPECT_THAT(declined.out, HasSubstr("its build failed (exit 3)")) << declined;
  EXPECT_THAT(declined.out, HasSubstr("Merge breaker anyway? [y/N]")) << declined;
  EXPECT_THAT(declined.out, HasSubstr("Nothing was merged.")) << declined;
  EXPECT_EQ(git("rev-parse HEAD"), head);

  Outcome forced = hydra({"merge", id, "breaker", "--force"});
  EXPECT_EQ(forced.code, 0) << forced;
  EXPECT_THAT(forced.out, HasSubstr("hydra/breaker-" + id + " was merged into main")) << forced;
  EXPECT_EQ(git("show HEAD:broken.txt"), "oops");
}

// A flagged winner is the race's pick, yet a dry run names its flag before
// anything is merged, and a merge without a terminal needs --force.
TEST_F(CliTest, ADryRunOfAFlaggedWinnerNamesTheFlagBeforeMerging) {
  writeConfig(scriptedAgent("toucher", {"write", "tests/guard.txt", "weakened"}) +
              "[scoring]\nprotected_paths = [\"tests/\"]\n");
  Outcome r = hydra({"race", "Fix it", "--agents", "toucher"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string id = raceIdOf("Fix it");
  const std::string head = git("rev-parse HEAD");

  Outcome dry = hydra({"merge", id, "--dry-run"});
  EXPECT_EQ(dry.code, 0) << dry;
  EXPECT_THAT(dry.out, HasSubstr("hydra/toucher-" + id + " would be merged into main")) << dry;
  EXPECT_THAT(dry.out, HasSubstr("But toucher is not a safe pick:\n")) << dry;
  EXPECT_THAT(dry.out, HasSubstr("  - it is flagged: changed protected files: tests/guard.txt\n")) << dry;
  EXPECT_THAT(dry.out, Not(HasSubstr("not the winner"))) << dry;
  EXPECT_EQ(git("rev-parse HEAD"), head) << "a dry run merges nothing";

  Outcome refused = hydra({"merge", id});
  EXPECT_EQ(refused.code, 2) << refused;
  EXPECT_THAT(refused.err, HasSubstr("  - it is flagged: changed protected files: tests/guard.txt\n")) << refused;
  EXPECT_EQ(git("rev-parse HEAD"), head);
}

// Test names that look like secrets (more-itertools has 26 ending in `key`)
// stay readable in every record and front end, with their verdicts, while a
// key printed beside them is masked.
TEST_F(CliTest, TestsNamedLikeSecretsStayReadableWhileAKeyPrintedBesideThemIsMasked) {
  const std::string key = "sk-proj-Ab3xY9Ab3xY9Ab3xY9Ab3xY9Ab3xY9";
  writeFile(repo_ / "calc.py", "def add(a, b):\n    return a - b\n");
  writeFile(repo_ / "test_names.py",
            "from calc import add\n\n\ndef test_key():\n    assert add(1, 1) == 2\n\n\n"
            "def test_token():\n    assert add(2, 2) == 4\n\n\ndef test_password():\n    assert True\n\n\n"
            "def test_api_key():\n    print('OPENAI_API_KEY=" + key + "')\n");
  git("add -A");
  git("commit -q -m tests");
  writeConfig(scriptedAgent("fixer", {"write", "calc.py", "def add(a, b):\\n    return a + b\\n"}) +
              "[scoring]\ntest_command = \"/usr/bin/python3 -m pytest -rA -p no:cacheprovider\"\n"
              "test_format = \"pytest\"\n");
  Outcome r = hydra({"race", "Fix add", "--agents", "fixer"}, std::nullopt, {"PYTHONDONTWRITEBYTECODE=1"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string id = raceIds().at(0);
  const fs::path dir = repo_ / ".hydra" / "races" / id;
  for (const char* file : {"race.json", "scores.json", "events.jsonl"}) {
    const std::string text = readFile(dir / file);
    EXPECT_EQ(text.find(key), std::string::npos) << file;
    EXPECT_EQ(text.find("\"test_names.py::test_key\":\"[REDACTED]\""), std::string::npos) << file;
  }
  EXPECT_THAT(readFile(dir / "scores.json"), HasSubstr("OPENAI_API_KEY=[REDACTED]"));

  Outcome scores = hydra({"scores", id});
  ASSERT_EQ(scores.code, 0) << scores;
  EXPECT_THAT(scores.out, HasSubstr("test_names.py::test_key")) << scores.out;
  EXPECT_THAT(scores.out, HasSubstr("test_names.py::test_token")) << scores.out;
  const json::value ranked = json::parse(hydra({"scores", id, "--json"}).out);
  const json::value& cases = ranked.at("rankings").at(0).at("checks").at("tests").at("testCases");
  for (const char* name : {"test_key", "test_token", "test_password", "test_api_key"}) {
    EXPECT_EQ(cases.at(std::string("test_names.py::") + name), json::value("passed")) << name;
  }
  EXPECT_EQ(ranked.at("baseline").at("checks").at("tests").at("testCases").at("test_names.py::test_key"),
            json::value("failed"));
  Outcome status = hydra({"status", id});
  EXPECT_EQ(status.code, 0) << status;
  EXPECT_THAT(status.out, ContainsRegex("fixer +completed +[^ ]+ +[0-9]+\\.[0-9]  winner")) << status.out;
  Outcome dry = hydra({"merge", id, "--dry-run"});
  EXPECT_EQ(dry.code, 0) << dry;
  EXPECT_THAT(dry.out, Not(HasSubstr("not a safe pick"))) << dry;
}

// 3.
TEST_F(CliTest, StatusListsRacesShowsOneAsJsonAndRejectsAnUnknownOne) {
  writeConfig(scriptedAgent("a", {"write", "a.txt", "a"}));
  ASSERT_EQ(hydra({"race", "First task", "--agents", "a"}).code, 0);
  const std::string id = raceIds().at(0);

  Outcome list = hydra({"status"});
  ASSERT_EQ(list.code, 0) << list;
  EXPECT_THAT(list.out, ContainsRegex(id + "  completed  [^\n]*\"First task\""));
  // One aligned row per agent, by rank: rank, agent, state, time, score, and the winner's mark.
  EXPECT_THAT(list.out, ContainsRegex("\n    winner a\n"));
  EXPECT_THAT(list.out, ContainsRegex("\n    #  agent  state      time     score\n"));
  EXPECT_THAT(list.out, ContainsRegex("\n    1  a      completed  [0-9.]+s +100\\.0  winner\n"));

  Outcome one = hydra({"status", id, "--json"});
  ASSERT_EQ(one.code, 0) << one;
  json::value doc;
  ASSERT_NO_THROW(doc = json::parse(one.out)) << one;
  // The same form as hydra/status answers.
  ASSERT_EQ(doc.at("races").as_array().size(), 1u);
  EXPECT_EQ(doc.at("races").at(0).at("raceId").as_string(), id);
  EXPECT_EQ(doc.at("races").at(0).at("agents").at(0).at("branch").as_string(), "hydra/a-" + id);

  Outcome all = hydra({"status", "--json"});
  ASSERT_EQ(all.code, 0) << all;
  EXPECT_EQ(json::parse(all.out).at("races").as_array().size(), 1u);

  Outcome unknown = hydra({"status", "20990101-000000-beef"});
  EXPECT_NE(unknown.code, 0);
  EXPECT_THAT(unknown.err, HasSubstr("no race '20990101-000000-beef'"));
  EXPECT_EQ(unknown.out, "");
  Outcome invalid = hydra({"status", "../escape"});
  EXPECT_NE(invalid.code, 0);
  EXPECT_THAT(invalid.err, HasSubstr("'../escape' is not a race id"));
}

// A race is named as git names a commit: `latest`, its whole id, or the
// start of exactly one race's id; a start that several races share is
// refused with their ids, in every command that takes a race.
TEST_F(CliTest, CommandsTakeLatestOrAUniqueStartOfARaceIdAndNameTheCandidatesOfAnAmbiguousOne) {
  writeConfig(scriptedAgent("a", {"write", "a.txt", "a"}));
  ASSERT_EQ(hydra({"race", "First task", "--agents", "a"}).code, 0);
  ASSERT_EQ(hydra({"race", "Second task", "--agents", "a"}).code, 0);
  const std::vector<std::string> ids = raceIds();
  ASSERT_EQ(ids.size(), 2u);
  // The shortest start of each id that the other does not share.
  std::size_t common = 0;
  while (common < ids[0].size() && ids[0][common] == ids[1][common]) ++common;
  ASSERT_LT(common, ids[0].size());
  const std::string unique0 = ids[0].substr(0, common + 1);
  const std::string shared = ids[0].substr(0, common);

  Outcome latest = hydra({"status", "latest", "--json"});
  ASSERT_EQ(latest.code, 0) << latest;
  EXPECT_EQ(json::parse(latest.out).at("races").at(0).at("raceId").as_string(), raceIdOf("Second task"));

  Outcome status = hydra({"status", unique0, "--json"});
  ASSERT_EQ(status.code, 0) << status;
  EXPECT_EQ(json::parse(status.out).at("races").at(0).at("raceId").as_string(), ids[0]);
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"scores", unique0, "--json"}, {"diff", unique0, "a", "--stat"},
        {"log", unique0, "a"}, {"merge", unique0, "a", "--dry-run"}}) {
    Outcome r = hydra(command);
    EXPECT_EQ(r.code, 0) << command.front() << ": " << r;
    EXPECT_THAT(r.out + r.err, Not(HasSubstr(ids[1]))) << command.front() << ": " << r;
  }

  if (!shared.empty()) {
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"status", shared}, {"scores", shared}, {"diff", shared, "a"}, {"log", shared}}) {
      Outcome r = hydra(command);
      EXPECT_EQ(r.code, 2) << command.front() << ": " << r;
      EXPECT_THAT(r.err, HasSubstr("'" + shared + "' is ambiguous: 2 races start with it")) << r;
      EXPECT_THAT(r.err, HasSubstr(ids[0])) << r;
      EXPECT_THAT(r.err, HasSubstr(ids[1])) << r;
    }
  }
}

TEST_F(CliTest, ABrokenHydraTomlIsSaidOnceWithItsLineAndColumn) {
  writeConfig(scriptedAgent("ready", {"say", "hi"}) + "[general\n");
  Outcome r = hydra({"race", "task", "--agents", "ready"});
  EXPECT_EQ(r.code, 2) << r;
  const std::string all = r.out + r.err;
  EXPECT_THAT(r.err, HasSubstr("hydra.toml is broken: "));
  EXPECT_THAT(r.err, testing::ContainsRegex("hydra\\.toml:[0-9]+:[0-9]+: "));
  EXPECT_EQ(all.find("Error while parsing"), all.rfind("Error while parsing")) << "said once: " << r;
  // A command that does not need it says nothing of it.
  Outcome status = hydra({"status"});
  EXPECT_EQ(status.code, 0) << status;
  EXPECT_EQ(status.err, "") << status;
}

TEST_F(CliTest, StatusOfARepositoryWithoutRacesSaysHowToStartOne) {
  Outcome r = hydra({"status"});
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("No races yet"));
}

// 4.
TEST_F(CliTest, AgentsJsonTellsWhichBinariesAreAvailableAndWhyNot) {
  writeConfig(scriptedAgent("ready", {"say", "hi"}) +
              "[agents.gone]\nadapter = \"command\"\nbinary = \"/nonexistent/hydra-ghost-agent\"\n\n"
              "[agents.offpath]\nadapter = \"command\"\nbinary = \"hydra-test-not-on-path\"\n");
  // A PATH of the system's own directories, so the user's tools cannot change the answer.
  Outcome r = hydra({"agents", "--json"}, std::nullopt, {"PATH=/usr/bin:/bin"});
  ASSERT_EQ(r.code, 0) << r;

  json::value doc;
  ASSERT_NO_THROW(doc = json::parse(r.out)) << r;
  auto find = [&](std::string_view name) -> const json::object* {
    for (const auto& v : doc.as_array()) {
      if (v.at("name").as_string() == name) return &v.as_object();
    }
    return nullptr;
  };
  const json::object* ready = find("ready");
  ASSERT_NE(ready, nullptr) << r.out;
  EXPECT_EQ(ready->at("available").as_bool(), true);
  EXPECT_EQ(ready->at("configured").as_bool(), true);
  EXPECT_EQ(ready->at("path").as_string(), kScriptedAgent.string());

  const json::object* gone = find("gone");
  ASSERT_NE(gone, nullptr) << r.out;
  EXPECT_EQ(gone->at("available").as_bool(), false);
  EXPECT_THAT(std::string(gone->at("problem").as_string()), HasSubstr("/nonexistent/hydra-ghost-agent"));

  const json::object* offpath = find("offpath");
  ASSERT_NE(offpath, nullptr) << r.out;
  EXPECT_EQ(offpath->at("available").as_bool(), false);
  // The PATH is said once for all agents, not in each agent's problem.
  EXPECT_EQ(offpath->at("problem").as_string(), "'hydra-test-not-on-path' not found on PATH");

  // Built-in adapters are listed too, marked as not configured.
  const json::object* claude = find("claude");
  ASSERT_NE(claude, nullptr) << r.out;
  EXPECT_EQ(claude->at("configured").as_bool(), false);

  // As text, every agent missing from PATH says so, and the PATH searched comes once.
  Outcome text = hydra({"agents"}, std::nullopt, {"PATH=/usr/bin:/bin"});
  ASSERT_EQ(text.code, 0) << text;
  EXPECT_THAT(text.out, HasSubstr("'hydra-test-not-on-path' not found on PATH\n"));
  EXPECT_THAT(text.out, HasSubstr("PATH searched: /usr/bin:/bin\n"));
  std::size_t times = 0;
  for (std::size_t at = text.out.find("/usr/bin:/bin"); at != std::string::npos; at = text.out.find("/usr/bin:/bin", at + 1))
    ++times;
  EXPECT_EQ(times, 1u) << text.out;
}

// A bwrap that cannot make its namespaces, as in a container that forbids
// them: first on the PATH hydra gets, it stands for a machine where
// bubblewrap does not work. Returns that PATH.
std::string pathWithBrokenBubblewrap(const fs::path& dir) {
  fs::create_directories(dir / "broken-bwrap");
  const fs::path bwrap = dir / "broken-bwrap" / "bwrap";
  writeFile(bwrap, "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n");
  fs::permissions(bwrap, fs::perms::owner_all);
  return "PATH=" + (dir / "broken-bwrap").string() + ":/usr/bin:/bin";
}

TEST_F(CliTest, SandboxSaysHowAgentsRunHereAndWhy) {
  auto status = [&](const std::string& mode, std::vector<std::string> env) {
    writeConfig("[general]\nsandbox = \"" + mode + "\"\n");
    Outcome r = hydra({"sandbox", "--json"}, std::nullopt, std::move(env));
    EXPECT_EQ(r.code, 0) << r;
    json::value doc;
    EXPECT_NO_THROW(doc = json::parse(r.out)) << r;
    return doc.is_object() ? doc.as_object() : json::object{};
  };
  json::object confined = status("auto", {"PATH=/usr/bin:/bin"});
  EXPECT_EQ(confined.at("mode"), json::value("auto"));
  EXPECT_EQ(confined.at("confined"), json::value(true)) << json::serialize(confined);
  EXPECT_EQ(confined.at("summary"), json::value("confined by bubblewrap (/usr/bin/bwrap)"));

  json::object off = status("off", {});
  EXPECT_EQ(off.at("confined"), json::value(false));
  EXPECT_THAT(std::string(off.at("summary").as_string()), HasSubstr("sandbox = \"off\""));

  const std::string broken = pathWithBrokenBubblewrap(dir_);
  json::object fallback = status("auto", {broken});
  EXPECT_EQ(fallback.at("confined"), json::value(false));
  EXPECT_EQ(fallback.at("refused"), json::value(false));
  EXPECT_THAT(std::string(fallback.at("summary").as_string()), HasSubstr("unconfined: "));
  EXPECT_THAT(std::string(fallback.at("summary").as_string()), HasSubstr("No permissions"));

  json::object refused = status("bubblewrap", {broken});
  EXPECT_EQ(refused.at("refused"), json::value(true)) << json::serialize(refused);
  EXPECT_THAT(std::string(refused.at("summary").as_string()), HasSubstr("races are refused"));

  // For people: what to do about it.
  writeConfig("[general]\nsandbox = \"auto\"\n");
  Outcome text = hydra({"sandbox"}, std::nullopt, {broken});
  EXPECT_EQ(text.code, 0) << text;
  EXPECT_THAT(text.out, HasSubstr("Agents run unconfined: "));
  EXPECT_THAT(text.out, HasSubstr("apt install bubblewrap"));
  // And what the checks protect: the defaults, since hydra.toml sets none.
  EXPECT_THAT(text.out, HasSubstr("Protected paths (the defaults, protected_mode = \"flag\"): pytest.ini, "
                                  "pyproject.toml, setup.cfg, tox.ini, conftest.py"));
  EXPECT_THAT(text.out, HasSubstr("always left out of its checks"));
  // With the scripts the test command runs: `make test` is only as good as the Makefile.
  writeConfig("[general]\nsandbox = \"auto\"\n[scoring]\ntest_command = \"make test\"\n");
  EXPECT_THAT(hydra({"sandbox"}, std::nullopt, {broken}).out,
              HasSubstr(", *.cmake, *.mk, GNUmakefile, Makefile, makefile\n"));
  writeConfig("[general]\nsandbox = \"auto\"\n[scoring]\nprotected_paths = [\"tests/\"]\n");
  EXPECT_THAT(hydra({"sandbox"}, std::nullopt, {broken}).out,
              HasSubstr("Protected paths (hydra.toml, protected_mode = \"flag\"): tests/\n"));
}

// `hydra sandbox` says which per-agent limits are in force and what holds
// them: a cgroup per run where hydra can make one, else rlimits (forced
// here with HYDRA_RESOURCE_LIMITS), and each agent's own where it differs.
TEST_F(CliTest, SandboxSaysWhichLimitsHoldAndHow) {
  writeConfig("[general]\nmax_processes = 300\ncpu_limit_seconds = 600\n\n" +
              scriptedAgent("small", {"write", "a.txt", "a"}) + "memory_limit_mib = 512\n");
  auto limits = [&](std::vector<std::string> env) {
    Outcome r = hydra({"sandbox", "--json"}, std::nullopt, std::move(env));
    EXPECT_EQ(r.code, 0) << r;
    json::value doc;
    EXPECT_NO_THROW(doc = json::parse(r.out)) << r;
    return doc.is_object() && doc.as_object().contains("limits") ? doc.at("limits").as_object() : json::object{};
  };
  json::object forced = limits({"HYDRA_RESOURCE_LIMITS=rlimits"});
  EXPECT_EQ(forced.at("mechanism"), json::value("rlimits")) << json::serialize(forced);
  EXPECT_EQ(forced.at("detail"), json::value("HYDRA_RESOURCE_LIMITS=rlimits"));
  EXPECT_EQ(forced.at("defaults").at("processes"), json::value(300));
  EXPECT_EQ(forced.at("defaults").at("cpuSeconds"), json::value(600));
  EXPECT_TRUE(forced.at("defaults").as_object().contains("memoryMiB")) << "half the machine's memory";
  EXPECT_EQ(forced.at("agents").at("small").at("memoryMiB"), json::value(512)) << json::serialize(forced);

  // This machine (and CI's) lets root make cgroup v1 memory and pids groups.
  json::object found = limits({});
  EXPECT_THAT(std::string(found.at("mechanism").as_string()), HasSubstr("cgroup")) << json::serialize(found);
  EXPECT_THAT(std::string(found.at("summary").as_string()), HasSubstr("cgroup per agent run"));

  Outcome text = hydra({"sandbox"}, std::nullopt, {"HYDRA_RESOURCE_LIMITS=rlimits"});
  EXPECT_THAT(text.out, HasSubstr("Limits per agent: memory "));
  EXPECT_THAT(text.out, HasSubstr(", 300 processes, CPU 600 s; held by rlimits and hydra's watch"));
  EXPECT_THAT(text.out, HasSubstr("  small: memory 512 MiB, 300 processes, CPU 600 s\n"));
}

TEST_F(CliTest, ARaceThatCannotBeConfinedSaysSoAndRecordsWhy) {
  writeConfig("[general]\nsandbox = \"auto\"\n\n" + scriptedAgent("a", {"write", "a.txt", "a"}));
  Outcome r = hydra({"race", "add a", "--agents", "a"}, std::nullopt, {pathWithBrokenBubblewrap(dir_)});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("warning: "));
  EXPECT_THAT(r.out, HasSubstr("No permissions"));
  ASSERT_EQ(raceIds().size(), 1u);
  json::value record = json::parse(readFile(repo_ / ".hydra" / "races" / raceIds()[0] / "race.json"));
  EXPECT_EQ(record.at("sandbox"), json::value("unconfined"));
  EXPECT_THAT(std::string(record.at("sandboxWarning").as_string()), HasSubstr("No permissions"));
}

// 5.
TEST_F(CliTest, InitWritesConfigForTheProjectAndOverwritesOnlyWithForce) {
  writeFile(repo_ / "package.json", R"({"name": "demo", "scripts": {"test": "jest --ci"}})");
  Outcome first = hydra({"init"});
  ASSERT_EQ(first.code, 0) << first;
  EXPECT_THAT(first.out, HasSubstr("Wrote " + (repo_ / "hydra.toml").string()));
  EXPECT_THAT(first.out, HasSubstr("npm test"));
  const std::string written = readFile(repo_ / "hydra.toml");
  EXPECT_THAT(written, HasSubstr("test_command = \"npm test\""));
  // The runner's configuration is protected, and written out where the user sees it.
  EXPECT_THAT(written, HasSubstr("protected_paths = [\"package.json\"]"));
  // jest's default output names no passing tests: init says what that costs.
  EXPECT_THAT(first.out, HasSubstr("  warning: jest names no passing tests in its output, so tests will be compared "
                                   "by counts only"));
  // What init writes, hydra reads.
  Outcome check = hydra({"agents", "--json"}, std::nullopt, {"PATH=/usr/bin:/bin"});
  EXPECT_EQ(check.code, 0) << check;

  writeFile(repo_ / "hydra.toml", "# my own settings\n");
  Outcome again = hydra({"init"});
  EXPECT_NE(again.code, 0) << again;
  EXPECT_THAT(again.err, HasSubstr("already exists"));
  EXPECT_THAT(again.err, HasSubstr("--force"));
  EXPECT_EQ(readFile(repo_ / "hydra.toml"), "# my own settings\n");

  Outcome forced = hydra({"init", "--force"});
  ASSERT_EQ(forced.code, 0) << forced;
  EXPECT_EQ(readFile(repo_ / "hydra.toml"), written);
}

TEST_F(CliTest, InitDetectsACargoProject) {
  writeFile(repo_ / "Cargo.toml", "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n");
  Outcome r = hydra({"init"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string written = readFile(repo_ / "hydra.toml");
  EXPECT_THAT(written, HasSubstr("test_command = \"cargo test\""));
  EXPECT_THAT(written, HasSubstr("build_command = \"cargo build\""));
}

// 6.
TEST_F(CliTest, CleanupRemovesThatRacesWorktreesAndBranchesOnly) {
  writeConfig(scriptedAgent("a", {"write", "a.txt", "a"}) + scriptedAgent("b", {"write", "b.txt", "b"}));
  ASSERT_EQ(hydra({"race", "First", "--agents", "a,b"}).code, 0);
  ASSERT_EQ(hydra({"race", "Second", "--agents", "a"}).code, 0);
  ASSERT_EQ(raceIds().size(), 2u);
  const std::string first = raceIdOf("First"), second = raceIdOf("Second");
  const json::object firstRace = raceJson(first);
  std::vector<std::string> firstWorktrees;
  for (const auto& a : firstRace.at("agents").as_array()) firstWorktrees.emplace_back(a.at("worktree").as_string());
  const std::string secondWorktree(raceJson(second).at("agents").at(0).at("worktree").as_string());
  ASSERT_EQ(lines(git("worktree list")).size(), 4u);

  Outcome r = hydra({"cleanup", first});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("Cleaned up 2 worktree(s)"));
  const std::string worktrees = git("worktree list --porcelain");
  for (const auto& wt : firstWorktrees) {
    EXPECT_THAT(worktrees, Not(HasSubstr(wt)));
    EXPECT_FALSE(fs::exists(wt)) << wt;
  }
  EXPECT_THAT(worktrees, HasSubstr(secondWorktree));
  EXPECT_EQ(git("branch --list --format='%(refname:short)' 'hydra/*'"), "hydra/a-" + second);
  // The record stays, as history.
  EXPECT_EQ(hydra({"status", first}).code, 0);

  Outcome rest = hydra({"cleanup"});
  ASSERT_EQ(rest.code, 0) << rest;
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");
  EXPECT_EQ(lines(git("worktree list")).size(), 1u);
}

TEST_F(CliTest, CleanupKeepBranchesRemovesWorktreesButKeepsTheCommits) {
  writeConfig(scriptedAgent("a", {"write", "a.txt", "kept"}));
  ASSERT_EQ(hydra({"race", "Task", "--agents", "a"}).code, 0);
  const std::string id = raceIds().at(0);
  Outcome r = hydra({"cleanup", id, "--keep-branches"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(lines(git("worktree list")).size(), 1u);
  EXPECT_EQ(git("show hydra/a-" + id + ":a.txt"), "kept");
}

// A worktree a killed hydra left half removed (git can no longer open it)
// goes with its race, and --keep-branches still keeps its branch.
TEST_F(CliTest, CleanupKeepBranchesKeepsTheBranchOfAHalfRemovedWorktree) {
  writeConfig(scriptedAgent("a", {"write", "a.txt", "kept"}));
  ASSERT_EQ(hydra({"race", "Task", "--agents", "a"}).code, 0);
  const std::string id = raceIds().at(0);
  std::vector<fs::path> admins;
  for (const auto& entry : fs::directory_iterator(repo_ / ".git" / "worktrees")) admins.push_back(entry.path());
  ASSERT_EQ(admins.size(), 1u);
  fs::remove(admins[0] / "commondir");  // as a kill inside the removal leaves it
  Outcome r = hydra({"cleanup", id, "--keep-branches"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(fs::exists(admins[0]));
  EXPECT_EQ(lines(git("worktree list")).size(), 1u);
  EXPECT_EQ(git("show hydra/a-" + id + ":a.txt"), "kept");
}

// A race's objects live in a directory of their own while the race is kept;
// cleanup drops them, and the user's store holds what it held before.
TEST_F(CliTest, ARacesObjectsGoWithItsCleanupLeavingTheStoreAsItWas) {
  writeConfig(scriptedAgent("a", {"write", "a.txt", "only a writes this", "write", "big.txt", "a's own data"}) +
              scriptedAgent("b", {"write", "b.txt", "only b writes this"}));
  const std::vector<std::string> before = objectFiles(repo_);
  ASSERT_EQ(hydra({"race", "Task", "--agents", "a,b"}).code, 0);
  const std::string id = raceIds().at(0);
  const std::string commit = git("rev-parse hydra/a-" + id);
  // The results are readable as usual, from the race's quarantine.
  EXPECT_EQ(git("show hydra/a-" + id + ":a.txt"), "only a writes this");
  EXPECT_EQ(git("show hydra/b-" + id + ":b.txt"), "only b writes this");
  ASSERT_TRUE(fs::exists(quarantineOf(id) / commit.substr(0, 2) / commit.substr(2))) << commit;
  EXPECT_THAT(alternates(), HasSubstr(quarantineOf(id).string()));
  EXPECT_EQ(objectFiles(repo_), before) << "a race wrote into the user's own store";

  Outcome r = hydra({"cleanup"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(fs::exists(quarantineOf(id)));
  EXPECT_THAT(alternates(), Not(HasSubstr(id)));
  EXPECT_EQ(objectFiles(repo_), before);
  EXPECT_NE(git("cat-file -e " + commit + " 2>/dev/null; echo exit $?"), "exit 0")
      << "an unmerged result outlived its race's cleanup";
  EXPECT_EQ(git("fsck --no-dangling 2>&1; echo exit $?"), "exit 0");
}

// An agent that commits by itself writes into the user's store (git writes
// where the repository's objects are). Committing its result moves what its
// commits brought into the race's quarantine, so cleanup still leaves the
// store as it was.
TEST_F(CliTest, AnAgentsOwnCommitsLeaveTheUsersStoreWithItsRace) {
  writeConfig(
      "[agents.committer]\nadapter = \"command\"\nbinary = \"/bin/sh\"\n"
      "args = ['-c', 'echo own-work > own.txt && git add own.txt && "
      "git -c user.name=agent -c user.email=agent@localhost commit -q -m own-commit']\n\n");
  const std::vector<std::string> before = objectFiles(repo_);
  Outcome raced = hydra({"race", "Task", "--agents", "committer"});
  ASSERT_EQ(raced.code, 0) << raced;
  const std::string id = raceIds().at(0);
  const std::string commit = git("rev-parse hydra/committer-" + id);
  EXPECT_EQ(git("log -1 --format=%s " + commit), "own-commit");
  EXPECT_EQ(git("show " + commit + ":own.txt"), "own-work");
  EXPECT_TRUE(fs::exists(quarantineOf(id) / commit.substr(0, 2) / commit.substr(2))) << commit;
  EXPECT_EQ(objectFiles(repo_), before) << "the agent's own commit stayed in the user's store";
  EXPECT_EQ(git("fsck --no-dangling 2>&1; echo exit $?"), "exit 0");

  Outcome r = hydra({"cleanup"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(objectFiles(repo_), before);
  EXPECT_NE(git("cat-file -e " + commit + " 2>/dev/null; echo exit $?"), "exit 0")
      << "the agent's own commit outlived its race's cleanup";
  EXPECT_EQ(git("fsck --no-dangling 2>&1; echo exit $?"), "exit 0");
}

// --keep-branches keeps the commits, so their objects move into the user's store.
TEST_F(CliTest, CleanupThatKeepsBranchesKeepsTheirObjectsInTheUsersStore) {
  writeConfig(scriptedAgent("a", {"write", "a.txt", "kept after cleanup"}));
  ASSERT_EQ(hydra({"race", "Task", "--agents", "a"}).code, 0);
  const std::string id = raceIds().at(0);
  Outcome r = hydra({"cleanup", id, "--keep-branches"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(fs::exists(quarantineOf(id)));
  EXPECT_EQ(git("show hydra/a-" + id + ":a.txt"), "kept after cleanup");
  EXPECT_EQ(git("fsck --no-dangling 2>&1; echo exit $?"), "exit 0");
}

// The merged result is the user's own: readable after the race is cleaned up.
TEST_F(CliTest, AMergedResultStaysReadableAfterItsRaceIsCleanedUp) {
  writeConfig(scriptedAgent("a", {"write", "a.txt", "merged work"}) + scriptedAgent("b", {"write", "b.txt", "lost work"}));
  ASSERT_EQ(hydra({"race", "Task", "--agents", "a,b"}).code, 0);
  const std::string id = raceIds().at(0);
  const std::string commit = git("rev-parse hydra/a-" + id);
  const std::string other = git("rev-parse hydra/b-" + id);
  Outcome merged = hydra({"merge", id, "a", "--force"});
  ASSERT_EQ(merged.code, 0) << merged;
  // The merge cleaned the race up, its quarantine with it.
  EXPECT_FALSE(fs::exists(quarantineOf(id)));
  ASSERT_EQ(hydra({"cleanup"}).code, 0);
  EXPECT_EQ(git("cat-file -e " + commit + "; echo exit $?"), "exit 0");
  EXPECT_EQ(git("show HEAD:a.txt"), "merged work");
  EXPECT_EQ(git("fsck --no-dangling 2>&1; echo exit $?"), "exit 0");
  EXPECT_NE(git("cat-file -e " + other + " 2>/dev/null; echo exit $?"), "exit 0") << "the loser's commit stayed";
}

// Which quarantines cleanup drops: a finished race's even without the mark a
// kill can leave it without, and one of this checkout whose race record is
// gone; never one another checkout of the repository made.
TEST_F(CliTest, CleanupDropsItsOwnQuarantinesAndLeavesAnotherCheckoutsAlone) {
  writeConfig(scriptedAgent("a", {"write", "a.txt", "a"}));
  ASSERT_EQ(hydra({"race", "Task", "--agents", "a"}).code, 0);
  const std::string id = raceIds().at(0);
  ASSERT_TRUE(fs::remove(quarantineOf(id) / "info" / "hydra-workspace"));
  const std::string orphan = "20200101-000000-dead", others = "20200101-000000-beef";
  writeFile(quarantineOf(orphan) / "info" / "hydra-workspace", repo_.string() + "\n");
  writeFile(quarantineOf(others) / "info" / "hydra-workspace", (dir_ / "elsewhere").string() + "\n");

  Outcome r = hydra({"cleanup"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(fs::exists(quarantineOf(id)));
  EXPECT_FALSE(fs::exists(quarantineOf(orphan)));
  EXPECT_TRUE(fs::exists(quarantineOf(others) / "info" / "hydra-workspace"));
}

// Another hydra's cleanup leaves a race under way alone, quarantine included.
TEST_F(CliTest, CleanupNeverDropsTheObjectsOfARaceUnderWay) {
  const fs::path go = dir_ / "outside" / "go";
  writeConfig(scriptedAgent("quick", {"write", "quick.txt", "done early"}) +
              scriptedAgent("slow", {"wait-for", go.string(), "write", "slow.txt", "done late"}));
  auto race = spawn({"race", "Task", "--agents", "quick,slow"});
  // Until quick's result is committed (into the race's quarantine) while slow waits.
  std::string id, quick;
  const auto deadline = Clock::now() + 60s;
  while (quick.empty()) {
    ASSERT_LT(Clock::now(), deadline) << "quick's result never showed up\n" << race->err();
    ASSERT_FALSE(race->wait(0s)) << "hydra ended early\n" << race->out() << race->err();
    std::this_thread::sleep_for(20ms);
    const auto ids = raceIds();
    if (ids.empty()) continue;
    id = ids[0];
    try {
      const std::string tip = git("rev-parse hydra/quick-" + id);
      if (git("log -1 --format=%an " + tip) == "hydra" && fs::exists(quarantineOf(id))) quick = tip;
    } catch (const std::runtime_error&) {
      // No branch yet.
    }
  }

  Outcome r = hydra({"cleanup"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_TRUE(fs::exists(quarantineOf(id)));
  EXPECT_THAT(alternates(), HasSubstr(quarantineOf(id).string()));
  EXPECT_EQ(git("show " + quick + ":quick.txt"), "done early");

  writeFile(go, "");
  ASSERT_EQ(race->wait(), 0) << race->out() << race->err();
  EXPECT_EQ(git("show hydra/slow-" + id + ":slow.txt"), "done late");
  EXPECT_EQ(git("show hydra/quick-" + id + ":quick.txt"), "done early");
  ASSERT_EQ(hydra({"cleanup"}).code, 0);
  EXPECT_FALSE(fs::exists(quarantineOf(id)));
}

// 7.
TEST_F(CliTest, BrokenConfigStopsTheRaceNamingLineColumnAndTheNearestKey) {
  writeFile(repo_ / "hydra.toml", "[general]\nmax_concurent_agents = 2\n");
  Outcome unknownKey = hydra({"race", "Task", "--agents", "claude"});
  EXPECT_EQ(unknownKey.code, 2) << unknownKey;
  EXPECT_THAT(unknownKey.err, ContainsRegex("hydra\\.toml:2:[0-9]+: "));
  EXPECT_THAT(unknownKey.err, HasSubstr("max_concurent_agents"));
  EXPECT_THAT(unknownKey.err, HasSubstr("did you mean 'max_concurrent_agents'"));

  writeFile(repo_ / "hydra.toml", "# settings\n[general]\ntimeout_seconds = \"ten\"\n");
  Outcome wrongType = hydra({"race", "Task", "--agents", "claude"});
  EXPECT_EQ(wrongType.code, 2) << wrongType;
  EXPECT_THAT(wrongType.err, ContainsRegex("hydra\\.toml:3:[0-9]+: "));
  EXPECT_THAT(wrongType.err, HasSubstr("timeout_seconds"));

  writeFile(repo_ / "hydra.toml", scriptedAgent("a", {"say", "hi"}) + "binnary = \"x\"\n");
  Outcome agentKey = hydra({"race", "Task", "--agents", "a"});
  EXPECT_EQ(agentKey.code, 2) << agentKey;
  EXPECT_THAT(agentKey.err, ContainsRegex("hydra\\.toml:6:[0-9]+: "));
  EXPECT_THAT(agentKey.err, HasSubstr("did you mean 'binary'"));
  EXPECT_TRUE(raceIds().empty()) << "no race was started";
}

// 8.
TEST_F(CliTest, OutsideAGitRepositoryCommandsFailWithAClearMessage) {
  const fs::path outside = dir_ / "outside";
  ASSERT_THROW(sh("git -C " + shellQuote(outside.string()) + " rev-parse --git-dir"), std::runtime_error)
      << "the temp directory must not be inside a repository";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"race", "Task", "--agents", "claude"}, {"status"}, {"cleanup"}, {"init"}}) {
    Outcome r = hydra(args, outside);
    EXPECT_NE(r.code, 0) << args[0] << "\n" << r;
    EXPECT_THAT(r.err, HasSubstr("not inside a git repository")) << args[0];
  }
  EXPECT_FALSE(fs::exists(outside / "hydra.toml"));
  EXPECT_FALSE(fs::exists(outside / ".hydra"));
}

// 9.
// Status only reads: it shows the race interrupted at once, and the next
// command that starts work records it so and ends the orphans.
TEST_F(CliTest, KilledHydraLeavesARaceThatStatusShowsInterruptedAndTheNextRaceRecovers) {
  const fs::path pidFile = dir_ / "outside" / "grandchild.pid";
  writeConfig("[agents.slow]\nadapter = \"command\"\nbinary = \"" + kTestChild.string() +
              "\"\nargs = [\"--ignore-sigterm\", \"--spawn-grandchild\", \"--pid-file\", \"" + pidFile.string() +
              "\", \"--sleep\", \"30\"]\n\n" + scriptedAgent("quick", {"write", "quick.txt", "done"}));
  auto race = spawn({"race", "Take your time", "--agents", "slow"});

  // Wait until the record on disk shows the agent running, with its grandchild made.
  std::string id;
  pid_t agentPid = 0;
  auto deadline = Clock::now() + 30s;
  while (agentPid == 0 || !fs::exists(pidFile)) {
    ASSERT_LT(Clock::now(), deadline) << "the agent never showed up as running\n" << race->err();
    ASSERT_FALSE(race->wait(0s)) << "hydra ended early\n" << race->out() << race->err();
    std::this_thread::sleep_for(20ms);
    auto ids = raceIds();
    if (ids.empty() || !fs::exists(repo_ / ".hydra" / "races" / ids[0] / "race.json")) continue;
    id = ids[0];
    json::object record = raceJson(id);
    const json::object& agent = record.at("agents").at(0).as_object();
    if (agent.at("status").as_string() == "running" && agent.contains("pid")) {
      agentPid = static_cast<pid_t>(agent.at("pid").as_int64());
    }
  }
  const pid_t grandchild = static_cast<pid_t>(std::stol(readFile(pidFile)));

  ASSERT_EQ(::kill(race->pid(), SIGKILL), 0);
  ASSERT_EQ(race->wait(10s), 128 + SIGKILL);

  // Left behind: a record that still says running, and the agent with its grandchild.
  json::object left;
  ASSERT_NO_THROW(left = raceJson(id));
  EXPECT_EQ(left.at("status").as_string(), "running");
  EXPECT_FALSE(processGone(agentPid));
  EXPECT_FALSE(processGone(grandchild));
  const std::string worktree(left.at("agents").at(0).at("worktree").as_string());

  Outcome status = hydra({"status"});
  ASSERT_EQ(status.code, 0) << status;
  EXPECT_THAT(status.out, ContainsRegex(id + "  interrupted"));
  EXPECT_THAT(status.out, ContainsRegex("\n    -  slow   interrupted  [^\n]* --\n"));
  EXPECT_EQ(raceJson(id).at("status").as_string(), "running") << "status wrote the record";
  EXPECT_FALSE(processGone(agentPid)) << "status ended a process";

  Outcome next = hydra({"race", "Next", "--agents", "quick"});
  ASSERT_EQ(next.code, 0) << next;
  json::object recovered = raceJson(id);
  EXPECT_EQ(recovered.at("status").as_string(), "interrupted");
  EXPECT_EQ(recovered.at("agents").at(0).at("status").as_string(), "interrupted");
  EXPECT_TRUE(waitGone(agentPid)) << "the orphaned agent still runs";
  EXPECT_TRUE(waitGone(grandchild)) << "the orphaned agent's grandchild still runs";
  // Its worktree is kept for inspection until cleanup.
  EXPECT_TRUE(fs::is_directory(worktree));
  EXPECT_THAT(git("worktree list --porcelain"), HasSubstr(worktree));

  Outcome cleanup = hydra({"cleanup"});
  ASSERT_EQ(cleanup.code, 0) << cleanup;
  EXPECT_FALSE(fs::exists(worktree));
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");
}

// The warm pool: worktrees of finished races kept, and the next race starts in
// them with only what differs rewritten, the kept dependencies still there,
// nothing an agent left, and the setup run again.
TEST_F(CliTest, TheWarmPoolHandsFinishedRacesWorktreesToTheNextRace) {
  writeFile(repo_ / ".gitignore", "node_modules/\n");
  git("add .gitignore");
  git("commit -q -m 'ignore node_modules'");
  std::string agents;
  for (const char* name : {"a", "b"}) {
    agents += std::string("[agents.") + name +
              "]\nadapter = \"command\"\nbinary = \"/bin/sh\"\nargs = [\"-c\", \"ls -A > seen.txt; cat node_modules/installs.txt > "
              "installs.txt; cat src/a.txt > base.txt; echo junk > junk.txt; mkdir -p build && echo o > build/out.o\"]\n\n";
  }
  writeConfig("[general]\npool_size = 2\nkeep_ignored = [\"node_modules\"]\n"
              "setup_command = \"mkdir -p node_modules && echo installed >> node_modules/installs.txt\"\n\n" + agents);
  ASSERT_EQ(hydra({"race", "First", "--agents", "a,b"}).code, 0);
  const std::string first = raceIdOf("First");
  EXPECT_EQ(git("show hydra/a-" + first + ":installs.txt"), "installed");

  Outcome cleanup = hydra({"cleanup"});
  ASSERT_EQ(cleanup.code, 0) << cleanup;
  EXPECT_THAT(cleanup.out, HasSubstr("Cleaned up 2 worktree(s), 2 kept in the pool for the next races."));
  EXPECT_THAT(cleanup.out, ContainsRegex("pooled [^\n]*/a-" + first + " and its branch"));
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");
  EXPECT_EQ(lines(git("worktree list")).size(), 3u) << "pooled worktrees stay registered with git";
  Outcome status = hydra({"status"});
  ASSERT_EQ(status.code, 0) << status;
  EXPECT_THAT(status.out, ContainsRegex("Pool: 2 of 2 worktree\\(s\\) kept for reuse, [0-9.]+ [KM]?i?B on disk"));
  json::object pool = json::parse(hydra({"status", "--json"}).out).at("pool").as_object();
  EXPECT_EQ(pool.at("worktrees").as_int64(), 2);
  EXPECT_GT(pool.at("bytes").as_int64(), 0);

  writeFile(repo_ / "src" / "a.txt", "alpha, moved on\n");
  git("commit -q -am 'the next base'");
  ASSERT_EQ(hydra({"race", "Second", "--agents", "a,b"}).code, 0);
  const std::string second = raceIdOf("Second");
  for (const char* name : {"a", "b"}) {
    SCOPED_TRACE(name);
    const std::string branch = "hydra/" + std::string(name) + "-" + second;
    // The new base, the kept folder with both setups' work in it, and nothing of race one's agents.
    EXPECT_EQ(git("show " + branch + ":base.txt"), "alpha, moved on");
    EXPECT_EQ(git("show " + branch + ":installs.txt"), "installed\ninstalled");
    EXPECT_EQ(git("show " + branch + ":seen.txt"), ".git\n.gitignore\nREADME.md\nnode_modules\nseen.txt\nsrc");
    EXPECT_EQ(git("ls-tree --name-only " + branch),
              ".gitignore\nREADME.md\nbase.txt\nbuild\ninstalls.txt\njunk.txt\nseen.txt\nsrc");
  }
  EXPECT_EQ(json::parse(hydra({"status", "--json"}).out).at("pool").at("worktrees").as_int64(), 0);

  Outcome emptied = hydra({"cleanup", "--pool"});
  ASSERT_EQ(emptied.code, 0) << emptied;
  EXPECT_THAT(emptied.out, ContainsRegex("Emptied the pool: 2 worktree\\(s\\), [0-9.]+ [KM]?i?B freed."));
  EXPECT_EQ(lines(git("worktree list")).size(), 1u);
  EXPECT_TRUE(fs::is_empty(repo_ / ".hydra-workspaces"));
  EXPECT_THAT(hydra({"cleanup", "--pool"}).out, HasSubstr("The pool was empty."));
}

// hydra killed mid-race with worktrees taken from the pool, then restarted:
// nothing is lost or left over, and the pool works on.
TEST_F(CliTest, APoolSurvivesAKilledHydraWithoutLeakingWorktrees) {
  const fs::path go = dir_ / "outside" / "go";
  writeConfig("[general]\npool_size = 2\n\n" + scriptedAgent("a", {"write", "a.txt", "a"}) +
              scriptedAgent("b", {"write", "b.txt", "b"}) + scriptedAgent("slow", {"wait-for", go.string()}) +
              scriptedAgent("slower", {"wait-for", go.string()}));
  ASSERT_EQ(hydra({"race", "First", "--agents", "a,b"}).code, 0);
  ASSERT_EQ(hydra({"cleanup"}).code, 0);
  ASSERT_EQ(json::parse(hydra({"status", "--json"}).out).at("pool").at("worktrees").as_int64(), 2);

  auto race = spawn({"race", "Hang", "--agents", "slow,slower"});
  auto deadline = Clock::now() + 30s;
  for (;;) {
    ASSERT_LT(Clock::now(), deadline) << race->err();
    std::this_thread::sleep_for(20ms);
    std::string id;
    try {
      id = raceIdOf("Hang");
    } catch (const std::runtime_error&) {
      continue;
    }
    const json::object record = raceJson(id);
    const auto& agents = record.at("agents").as_array();
    if (std::all_of(agents.begin(), agents.end(), [](const json::value& a) { return a.at("status") == "running"; })) break;
  }
  ASSERT_EQ(::kill(race->pid(), SIGKILL), 0);
  ASSERT_EQ(race->wait(10s), 128 + SIGKILL);
  EXPECT_EQ(json::parse(hydra({"status", "--json"}).out).at("pool").at("worktrees").as_int64(), 0)
      << "both were taken by the killed race";

  // Restarted: the interrupted race's worktrees go back to the pool, and the pool serves the next race.
  Outcome cleanup = hydra({"cleanup"});
  ASSERT_EQ(cleanup.code, 0) << cleanup;
  EXPECT_THAT(cleanup.out, HasSubstr("2 kept in the pool"));
  ASSERT_EQ(hydra({"race", "Third", "--agents", "a"}).code, 0);
  EXPECT_EQ(git("show hydra/a-" + raceIdOf("Third") + ":a.txt"), "a");
  ASSERT_EQ(hydra({"cleanup"}).code, 0);
  // Exactly the pool is left: two registered worktrees, two directories, no branch.
  EXPECT_EQ(lines(git("worktree list")).size(), 3u);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(repo_ / ".hydra-workspaces")) {
    left.push_back(entry.path().filename().string());
  }
  ASSERT_EQ(left.size(), 2u);
  for (const auto& name : left) EXPECT_TRUE(name.starts_with("_pool-")) << name;
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");
  EXPECT_EQ(git("worktree prune --dry-run -v"), "");
}

// [general] sparse_paths: the agent sees its folders and the root's files; its
// commit, its score and its merge keep everything else as it was.
TEST_F(CliTest, ASparseRaceSeesOnlyItsFoldersAndItsMergeKeepsTheRest) {
  writeFile(repo_ / "services" / "api" / "main.txt", "api\n");
  writeFile(repo_ / "services" / "web" / "index.txt", "web\n");
  git("add -A");
  git("commit -q -m 'a monorepo'");
  writeConfig("[general]\nsparse_paths = [\"services/api\"]\n\n"
              "[agents.a]\nadapter = \"command\"\nbinary = \"/bin/sh\"\n"
              "args = [\"-c\", \"find . -path ./.git -prune -o -type f ! -name seen.txt -print | sort > seen.txt; "
              "echo fixed >> services/api/main.txt\"]\n");
  Outcome r = hydra({"race", "Fix the api", "--agents", "a"});
  ASSERT_EQ(r.code, 0) << r;
  const std::string id = raceIds().at(0);
  const std::string branch = "hydra/a-" + id;
  EXPECT_EQ(git("show " + branch + ":seen.txt"), "./README.md\n./services/api/main.txt");
  EXPECT_EQ(git("diff --name-only main " + branch), "seen.txt\nservices/api/main.txt");
  Outcome merged = hydra({"merge", id, "a"});
  ASSERT_EQ(merged.code, 0) << merged;
  EXPECT_EQ(readFile(repo_ / "services" / "web" / "index.txt"), "web\n");
  EXPECT_EQ(readFile(repo_ / "src" / "a.txt"), "alpha\n");
  EXPECT_EQ(readFile(repo_ / "services" / "api" / "main.txt"), "api\nfixed\n");
}

// [general] setup_command failing is the setup's failure, not the agent's.
TEST_F(CliTest, ASetupThatFailsIsReportedAsASetupFailure) {
  writeConfig("[general]\nsetup_command = \"echo resolving; echo 'npm ERR! no lockfile' >&2; exit 3\"\n\n" +
              scriptedAgent("a", {"write", "a.txt", "a"}));
  Outcome r = hydra({"race", "Task", "--agents", "a"});
  EXPECT_NE(r.code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("setup_command exited with code 3: npm ERR! no lockfile"));
  const std::string id = raceIds().at(0);
  const json::object record = raceJson(id);
  EXPECT_EQ(record.at("agents").at(0).at("status"), "setupFailed");
  Outcome log = hydra({"log", id, "a"});
  EXPECT_THAT(log.out, HasSubstr("[setup] resolving"));
  EXPECT_EQ(git("show hydra/a-" + id + ":a.txt 2>/dev/null || echo none"), "none") << "the agent never ran";
  Outcome scores = hydra({"scores", id, "--json"});
  EXPECT_THAT(scores.out, HasSubstr("\"ineligible\":\"setup failed\""));
}

}  // namespace
}  // namespace hydra::test
