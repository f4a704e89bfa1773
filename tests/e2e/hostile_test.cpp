// Hostile scripted agents (tests/fixtures/hostile/) raced by the real `hydra
// serve`, next to a well-behaved sibling, with `[general] sandbox` set to
// "bubblewrap" and to "off".
//
// Confined, whatever an agent tries, after the race the user's checkout (its
// files, index, HEAD and refs other than hydra's own branches), the sibling's
// work and hydra's records are as they were, and no process the race started
// is alive. Unconfined, hydra still keeps what it can: the agent works where
// its PWD says, which is its worktree, and nothing it started (setsid
// daemons, grandchildren that ignore SIGTERM) outlives it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kHostile = fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "hostile";

struct Case {
  std::string script;
  std::string sandbox;  // "bubblewrap" or "off"
  // How per-agent limits are held: "" as hydra finds (a cgroup where it can
  // make one), "rlimits" forced (HYDRA_RESOURCE_LIMITS).
  std::string limits = "";
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.script << " with sandbox = " << c.sandbox << (c.limits.empty() ? "" : ", limits by " + c.limits);
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.script.substr(0, info.param.script.find('.')) + "_" + info.param.sandbox +
                     (info.param.limits.empty() ? "" : "_" + info.param.limits);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// The processes whose working directory or command line lies under `dir`:
// what a race in `dir` started and left behind. A process of another test
// never has such a path.
std::vector<std::string> processesUnder(const fs::path& dir) {
  std::vector<std::string> found;
  const std::string prefix = dir.string();
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(pid) == ::getpid()) continue;
    std::error_code ec;
    std::string cwd = fs::read_symlink(entry.path() / "cwd", ec).string();
    // readFile, not an istreambuf_iterator: a process ending between open and
    // read makes the read fail with ESRCH, which the iterator throws.
    std::string cmdline = readFile(entry.path() / "cmdline");
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    std::string stat = readFile(entry.path() / "stat");
    auto close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z') continue;
    if (cwd.rfind(prefix, 0) == 0 || cmdline.find(prefix) != std::string::npos) {
      found.push_back(pid + " (cwd " + cwd + "): " + cmdline);
    }
  }
  return found;
}

// hydra.toml with one unconfined agent running the hostile `script`.
std::string unconfinedAgent(const std::string& script) {
  return "[general]\nsandbox = \"off\"\n\n[agents.evil]\nadapter = \"command\"\nbinary = \"" +
         (kHostile / script).string() + "\"\n";
}

// hydra.toml, committed: the checkout is clean, as a merge needs it.
void commitConfig(TestRepo& repo, const std::string& config) {
  repo.writeConfig(config);
  repo.git("add hydra.toml");
  repo.git("commit -q -m config");
}

// Races `agents` to the end through `client`; its id.
std::string raceToTheEnd(RpcClient& client, const std::vector<std::string>& agents) {
  json::array names;
  for (const auto& a : agents) names.push_back(json::value(a));
  std::string id(client.call("hydra/race", json::object{{"task", "t"}, {"agents", names}}).at("raceId").as_string());
  client.waitFor("hydra/raceFinished", id, 0, 120s);
  return id;
}

// The params of the last `method` notification (of agent `agentId`, when given).
json::object lastParams(RpcClient& client, const std::string& method, const std::string& agentId = "") {
  json::object found;
  for (const auto& n : client.notifications(method)) {
    if (agentId.empty() || n.at("params").at("agentId") == json::value(agentId)) found = n.at("params").as_object();
  }
  return found;
}

class HostileAgentTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    repo_.git("tag v1");
    // A record of hydra's, which the hostile agent may try to overwrite.
    repo_.write(".hydra/earlier.json", "{\"id\":\"earlier\"}\n");
    // As hydra's first race leaves it: its folder out of `git status`.
    std::ofstream(repo_.root() / ".git" / "info" / "exclude", std::ios::app) << ".hydra/\n";
  }

  // Races the hostile agent and a well-behaved sibling to the end, then ends
  // hydra. `general` and `evil` are more lines for those tables.
  json::object race(const std::string& general = "", const std::string& evil = "") {
    const Case& c = GetParam();
    // (stubborn_grandchild.sh waits for ever: its 10 s are up first.)
    repo_.writeConfig("[general]\nsandbox = \"" + c.sandbox + "\"\ntimeout_seconds = 60\n" + general + "\n" +
                      "[agents.evil]\nadapter = \"command\"\nbinary = \"" + (kHostile / c.script).string() +
                      "\"\ntimeout_seconds = 10\n" + evil + "\n" +
                      TestRepo::agent("honest", {"write", "calc.py", TestRepo::fixedCalc()}) + TestRepo::scoring());
    repo_.git("add hydra.toml");
    repo_.git("commit -q -m config");
    before_ = checkoutSnapshot(repo_);
    earlierRecord_ = repo_.read(".hydra/earlier.json");

    std::vector<std::string> env;
    if (!c.limits.empty()) env.push_back("HYDRA_RESOURCE_LIMITS=" + c.limits);
    RpcClient client(repo_.root(), env);
    hydraPid_ = client.process().pid();
    client.initialize(repo_.uri());
    std::string id(client.call("hydra/race", json::object{{"task", "fix add"}, {"agents", json::array{"evil", "honest"}}})
                       .at("raceId")
                       .as_string());
    std::size_t at = client.waitFor("hydra/raceFinished", id, 0, 180s);
    json::object finished = client.notifications().at(at).at("params").as_object();
    for (const auto& n : client.notifications("hydra/agentFinished")) {
      const json::object& p = n.at("params").as_object();
      agentFinished_[std::string(p.at("agentId").as_string())] = p;
    }
    EXPECT_TRUE(client.call("shutdown", json::object{}).is_null());
    client.notify("exit");
    EXPECT_EQ(client.process().waitExit(60s), 0) << client.process().stderrText();
    stderr_ = client.process().stderrText();
    return finished;
  }

  // Nothing the race started is alive (a dying process may take a moment to go).
  void expectNothingLeft() {
    std::vector<std::string> left;
    for (int i = 0; i < 100; ++i) {
      left = processesUnder(repo_.root().parent_path());
      if (left.empty()) return;
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "left running after the race:\n" << ::testing::PrintToString(left) << "\nhydra said:\n" << stderr_;
  }

  // The sibling's result is its own: it finished, its fix scored (its
  // commit, whatever is in its worktree now).
  void expectSiblingUntouched(const json::object& finished) {
    ASSERT_TRUE(agentFinished_.count("honest"));
    EXPECT_EQ(agentFinished_["honest"].at("status"), json::value("completed")) << json::serialize(finished);
    for (const auto& r : finished.at("rankings").as_array()) {
      if (r.at("agentId") != json::value("honest")) continue;
      EXPECT_EQ(r.at("breakdown").at("tests"), json::value(100.0)) << json::serialize(r);
      EXPECT_EQ(r.at("diff").at("filesChanged"), json::value(1)) << json::serialize(r);
    }
    const std::string branch = "hydra/honest-" + std::string(finished.at("raceId").as_string());
    EXPECT_EQ(repo_.git("diff --name-only main " + branch), "calc.py");
  }

  TestRepo repo_;
  std::map<std::string, std::string> before_;
  std::string earlierRecord_;
  std::map<std::string, json::object> agentFinished_;
  std::string stderr_;
  pid_t hydraPid_ = 0;
};

class ConfinedHostileAgentTest : public HostileAgentTest {};

TEST_P(ConfinedHostileAgentTest, NothingEscapesAndNothingIsLeftRunning) {
  json::object finished = race();
  expectNothingLeft();
  // The user's checkout, byte for byte, and hydra's own records.
  EXPECT_EQ(checkoutSnapshot(repo_), before_) << stderr_;
  EXPECT_EQ(repo_.read(".hydra/earlier.json"), earlierRecord_);
  EXPECT_FALSE(fs::exists(repo_.root() / ".hydra" / "races" / "forged"));
  expectSiblingUntouched(finished);
  // The record says how the race ran.
  json::object record = repo_.raceRecord(std::string(finished.at("raceId").as_string()));
  EXPECT_EQ(record.at("sandbox"), json::value("bubblewrap"));
}

INSTANTIATE_TEST_SUITE_P(Bubblewrap, ConfinedHostileAgentTest,
                         ::testing::Values(Case{"write_checkout_absolute.sh", "bubblewrap"},
                                           Case{"write_checkout_relative.sh", "bubblewrap"},
                                           Case{"write_checkout_pwd.sh", "bubblewrap"},
                                           Case{"write_sibling.sh", "bubblewrap"},
                                           Case{"sabotage_sibling.sh", "bubblewrap"},
                                           Case{"setsid_daemon.sh", "bubblewrap"},
                                           Case{"stubborn_grandchild.sh", "bubblewrap"},
                                           Case{"move_refs.sh", "bubblewrap"},
                                           Case{"write_hydra_dir.sh", "bubblewrap"},
                                           Case{"delete_git_link.sh", "bubblewrap"},
                                           Case{"swap_worktree.sh", "bubblewrap"},
                                           Case{"write_git_dir.sh", "bubblewrap"},
                                           Case{"remount.sh", "bubblewrap"}),
                         caseName);

class UnconfinedHostileAgentTest : public HostileAgentTest {};

TEST_P(UnconfinedHostileAgentTest, ItWorksInItsWorktreeAndNothingItStartedOutlivesIt) {
  json::object finished = race();
  expectNothingLeft();
  EXPECT_EQ(checkoutSnapshot(repo_), before_) << stderr_;
  expectSiblingUntouched(finished);
  json::object record = repo_.raceRecord(std::string(finished.at("raceId").as_string()));
  EXPECT_EQ(record.at("sandbox"), json::value("unconfined"));
  EXPECT_FALSE(record.contains("sandboxWarning")) << "sandbox = \"off\" was asked for: nothing to warn about";
}

INSTANTIATE_TEST_SUITE_P(Off, UnconfinedHostileAgentTest,
                         ::testing::Values(Case{"write_checkout_pwd.sh", "off"}, Case{"setsid_daemon.sh", "off"},
                                           Case{"stubborn_grandchild.sh", "off"}, Case{"delete_git_link.sh", "off"},
                                           Case{"write_hydra_dir.sh", "off"}, Case{"sabotage_sibling.sh", "off"}),
                         caseName);

// Unconfined, an agent can delete its worktree's .git link or point it at the
// user's repository; hydra would then commit its work there. It puts the link
// back first, commits on the agent's own branch, and the agent cannot win.
TEST(UnconfinedEscapes, ARewrittenGitLinkIsPutBackBeforeTheCommit) {
  TestRepo repo;
  commitConfig(repo, unconfinedAgent("delete_git_link.sh"));
  auto before = checkoutSnapshot(repo);
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string id = raceToTheEnd(client, {"evil"});
  EXPECT_EQ(checkoutSnapshot(repo), before) << "its work was committed into the user's checkout";
  auto finished = client.notifications("hydra/agentFinished");
  ASSERT_EQ(finished.size(), 1u);
  const json::object& p = finished[0].at("params").as_object();
  ASSERT_TRUE(p.contains("escapes")) << json::serialize(p);
  EXPECT_THAT(json::serialize(p.at("escapes")), HasSubstr(".git link (put back)"));
  const std::string branch = "hydra/evil-" + id;
  EXPECT_EQ(repo.git("merge-base main " + branch), repo.git("rev-parse main")) << "its branch is where hydra made it";
}

// Unconfined, an agent can move its worktree away and put a link to the
// user's checkout in its place. hydra's repair of the worktree's .git link
// once wrote through it: the checkout's .git directory became a one-line
// file. Now nothing goes through the link: the checkout keeps its history,
// the agent is an escape and cannot win, nothing of the checkout is
// committed as its work, and the honest agent beside it still scores.
TEST(UnconfinedEscapes, AWorktreeSwappedForALinkToTheCheckoutIsNotWrittenThrough) {
  TestRepo repo;
  commitConfig(repo, unconfinedAgent("swap_worktree.sh") +
                         TestRepo::agent("honest", {"write", "calc.py", TestRepo::fixedCalc()}) + TestRepo::scoring());
  const std::string head = repo.git("rev-parse HEAD");
  auto before = checkoutSnapshot(repo);
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string id = raceToTheEnd(client, {"evil", "honest"});

  auto expectHistoryKept = [&] {
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(repo.root() / ".git"))) << "the checkout's .git was replaced";
    EXPECT_EQ(repo.git("rev-parse HEAD"), head);
    EXPECT_NO_THROW(repo.git("fsck --full --no-progress"));
  };
  expectHistoryKept();
  EXPECT_EQ(checkoutSnapshot(repo), before);

  const json::object evil = lastParams(client, "hydra/agentFinished", "evil");
  const json::object finished = lastParams(client, "hydra/raceFinished");
  ASSERT_TRUE(evil.contains("escapes")) << json::serialize(evil);
  const std::string escapes = json::serialize(evil.at("escapes"));
  EXPECT_THAT(escapes, HasSubstr("replaced its worktree")) << escapes;
  EXPECT_THAT(escapes, HasSubstr("symbolic link to " + repo.root().string())) << escapes;
  EXPECT_THAT(escapes, HasSubstr("not committed")) << escapes;
  EXPECT_FALSE(evil.contains("commit")) << json::serialize(evil);
  // Its branch is where hydra made it: nothing of the checkout was committed.
  EXPECT_EQ(repo.git("rev-parse hydra/evil-" + id), head);
  // The link that took the worktree's place is gone; what it named is not.
  for (const auto& n : client.notifications("hydra/agentStarted")) {
    if (n.at("params").at("agentId") != json::value("evil")) continue;
    const fs::path worktree(std::string(n.at("params").at("worktree").as_string()));
    EXPECT_FALSE(fs::exists(fs::symlink_status(worktree))) << worktree;
  }

  EXPECT_EQ(finished.at("winner"), json::value("honest")) << json::serialize(finished);
  for (const auto& r : finished.at("rankings").as_array()) {
    if (r.at("agentId") == json::value("evil")) {
      EXPECT_EQ(r.at("eligible"), json::value(false)) << json::serialize(r);
      EXPECT_EQ(r.at("ineligible"), json::value("escaped")) << json::serialize(r);
    } else {
      EXPECT_EQ(r.at("breakdown").at("tests"), json::value(100.0)) << json::serialize(r);
    }
  }
  json::object refused =
      client.callError("hydra/merge", json::object{{"raceId", id}, {"agentId", "evil"}, {"dryRun", true}});
  // Nothing of it can be merged: it has no commit at all.
  EXPECT_THAT(json::serialize(refused), HasSubstr("no result commit")) << json::serialize(refused);

  // The winner's merge removes the race's worktrees, the swapped one too:
  // the checkout is still whole afterwards.
  json::object merged = client.call("hydra/merge", json::object{{"raceId", id}, {"agentId", "honest"}}).as_object();
  EXPECT_EQ(merged.at("outcome"), json::value("fastForward")) << json::serialize(merged);
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(repo.root() / ".git")));
  EXPECT_NO_THROW(repo.git("fsck --full --no-progress"));
  EXPECT_EQ(repo.read("calc.py"), TestRepo::fixedCalc() + "\n");
  EXPECT_TRUE(fs::exists(repo.root() / "test_calc.py"));
}

// Unconfined, an agent can write the shared git directory's settings so
// that the user's next git command runs its code (core.fsmonitor, a hook, a
// filter). hydra puts them back when it ends, names what it did, and it
// cannot win; the user's git commands afterwards run nothing of it.
TEST(UnconfinedEscapes, GitDirectorySettingsArePutBackAndTheAgentIsDisqualified) {
  TestRepo repo;
  // One agent at a time: the escape is charged to the agent that ran alone.
  commitConfig(repo, "[general]\nsandbox = \"off\"\nmax_concurrent_agents = 1\n\n[agents.evil]\nadapter = \"command\"\n"
                   "binary = \"" +
                   (kHostile / "write_git_dir.sh").string() + "\"\n\n" +
                   TestRepo::agent("honest", {"write", "calc.py", TestRepo::fixedCalc()}) + TestRepo::scoring());
  const fs::path git = repo.root() / ".git";
  const std::string config = readFile(git / "config");
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string id = raceToTheEnd(client, {"evil", "honest"});

  EXPECT_EQ(readFile(git / "config"), config);
  EXPECT_FALSE(fs::exists(git / "hooks" / "pre-commit"));
  EXPECT_FALSE(fs::exists(git / "info" / "attributes"));
  // The agent's alternate is gone; the file holds just the race's own
  // quarantine (.git/hydra-objects/<race>), until the race is cleaned up.
  EXPECT_EQ(readFile(git / "objects" / "info" / "alternates"), (git / "hydra-objects" / id).string() + "\n");
  // The user's next commands run nothing of it.
  repo.git("status --porcelain");
  repo.write("mine.txt", "mine\n");
  repo.git("add mine.txt");
  repo.git("commit -q -m mine");
  for (const char* marker : {"PWNED-fsmonitor", "PWNED-filter", "PWNED-hook"}) {
    EXPECT_FALSE(fs::exists(repo.root().parent_path() / marker)) << marker;
  }

  const json::object evil = lastParams(client, "hydra/agentFinished", "evil");
  const json::object finished = lastParams(client, "hydra/raceFinished");
  ASSERT_TRUE(evil.contains("escapes")) << json::serialize(evil);
  const std::string escapes = json::serialize(evil.at("escapes"));
  EXPECT_THAT(escapes, HasSubstr(".git/config changed (put back)")) << escapes;
  EXPECT_THAT(escapes, HasSubstr(".git/hooks/pre-commit added (removed)")) << escapes;
  EXPECT_THAT(escapes, HasSubstr(".git/info/attributes added (removed)")) << escapes;
  EXPECT_EQ(finished.at("winner"), json::value("honest")) << json::serialize(finished);
  for (const auto& r : finished.at("rankings").as_array()) {
    if (r.at("agentId") != json::value("evil")) continue;
    EXPECT_EQ(r.at("ineligible"), json::value("escaped")) << json::serialize(r);
  }
  json::object refused =
      client.callError("hydra/merge", json::object{{"raceId", id}, {"agentId", "evil"}, {"dryRun", true}});
  EXPECT_EQ(refused.at("data").at("reason"), json::value("ineligible")) << json::serialize(refused);
}

// Unconfined, an agent can replace a loose object of the base commit in the
// shared object store. Once that corrupted the repository and made the
// honest sibling score "changed nothing". hydra keeps the base's loose
// objects, puts the replaced one back when the agent ends, names it, and the
// agent cannot win. Confined, the object store's existing folders are
// read-only (only new objects can be added): the attempt fails, and the
// guard, which watches confined races too, has nothing to say.
class BaseObjectTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BaseObjectTest, AnOverwrittenObjectOfTheBaseIsPutBackAndTheSiblingScores) {
  TestRepo repo;
  // One agent at a time: the escape is charged to the agent that ran alone.
  commitConfig(repo, "[general]\nsandbox = \"" + GetParam() + "\"\nmax_concurrent_agents = 1\n\n[agents.evil]\n"
                     "adapter = \"command\"\nbinary = \"" +
                         (kHostile / "overwrite_base_object.sh").string() + "\"\n\n" +
                         TestRepo::agent("honest", {"write", "calc.py", TestRepo::fixedCalc()}) + TestRepo::scoring());
  const std::string blob = repo.git("rev-parse HEAD:calc.py");
  const fs::path object = repo.root() / ".git" / "objects" / blob.substr(0, 2) / blob.substr(2);
  const std::string kept = readFile(object);
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string id = raceToTheEnd(client, {"evil", "honest"});

  EXPECT_EQ(readFile(object), kept);
  EXPECT_NO_THROW(repo.git("fsck --full --no-progress"));
  const json::object evil = lastParams(client, "hydra/agentFinished", "evil");
  const json::object finished = lastParams(client, "hydra/raceFinished");
  if (GetParam() == "off") {
    ASSERT_TRUE(evil.contains("escapes")) << json::serialize(evil);
    const std::string escapes = json::serialize(evil.at("escapes"));
    EXPECT_THAT(escapes, HasSubstr("object " + blob + " of the base commit")) << escapes;
    EXPECT_THAT(escapes, HasSubstr("(put back)")) << escapes;
  } else {
    EXPECT_FALSE(evil.contains("escapes")) << json::serialize(evil);
    EXPECT_THAT(json::serialize(evil.at("finalMessage")), HasSubstr("blocked: overwrite the base's object"));
  }
  EXPECT_FALSE(lastParams(client, "hydra/agentFinished", "honest").contains("escapes"));
  EXPECT_EQ(finished.at("winner"), json::value("honest")) << json::serialize(finished);
  for (const auto& r : finished.at("rankings").as_array()) {
    if (r.at("agentId") == json::value("evil")) {
      EXPECT_EQ(r.at("ineligible"), json::value(GetParam() == "off" ? "escaped" : "changed nothing"))
          << json::serialize(r);
    } else {
      EXPECT_EQ(r.at("breakdown").at("tests"), json::value(100.0)) << json::serialize(r);
      EXPECT_EQ(r.at("diff").at("filesChanged"), json::value(1)) << json::serialize(r);
    }
  }
  EXPECT_EQ(repo.git("diff --name-only main hydra/honest-" + id), "calc.py");
}

INSTANTIATE_TEST_SUITE_P(Sandbox, BaseObjectTest, ::testing::Values("off", "bubblewrap"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The base's objects packed (git gc ran): an unconfined agent that writes
// into the pack damages the base's blob, which hydra cannot put back (packs
// are not kept). It is named with the object it damaged and cannot win.
// Confined, the packs are read-only: the attempt fails and nothing is said.
class PackWriteTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PackWriteTest, BytesWrittenIntoThePackOfTheBaseAreNamedWithTheDamagedObject) {
  TestRepo repo;
  commitConfig(repo, "[general]\nsandbox = \"" + GetParam() + "\"\nmax_concurrent_agents = 1\n\n[agents.evil]\n"
                     "adapter = \"command\"\nbinary = \"" +
                         (kHostile / "write_into_pack.sh").string() + "\"\n\n" +
                         TestRepo::agent("honest", {"write", "calc.py", TestRepo::fixedCalc()}) + TestRepo::scoring());
  repo.git("gc -q --prune=now");
  const std::string blob = repo.git("rev-parse HEAD:calc.py");
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string id = raceToTheEnd(client, {"evil", "honest"});

  const json::object evil = lastParams(client, "hydra/agentFinished", "evil");
  EXPECT_FALSE(lastParams(client, "hydra/agentFinished", "honest").contains("escapes"));
  if (GetParam() == "bubblewrap") {
    EXPECT_FALSE(evil.contains("escapes")) << json::serialize(evil);
    EXPECT_THAT(json::serialize(evil.at("finalMessage")), HasSubstr("blocked: write into the pack"));
    EXPECT_NO_THROW(repo.git("fsck --full --no-progress"));
    return;
  }
  ASSERT_TRUE(evil.contains("escapes")) << json::serialize(evil);
  const std::string escapes = json::serialize(evil.at("escapes"));
  EXPECT_THAT(escapes, HasSubstr(".pack was written: 1 object(s) of the base commit in it are damaged (" + blob))
      << escapes;
  EXPECT_THAT(escapes, HasSubstr("could not be put back")) << escapes;
  // The base's blob is damaged for good, and told as such: hydra cannot
  // commit or check the honest sibling's work on it either, and nobody wins.
  const json::object finished = lastParams(client, "hydra/raceFinished");
  EXPECT_TRUE(finished.at("winner").is_null()) << json::serialize(finished);
  for (const auto& r : finished.at("rankings").as_array()) {
    if (r.at("agentId") == json::value("evil")) {
      EXPECT_EQ(r.at("ineligible"), json::value("escaped")) << json::serialize(r);
    }
  }
  EXPECT_ANY_THROW(repo.git("fsck --full --no-progress"));
  EXPECT_EQ(repo.git("rev-parse HEAD"), repo.git("rev-parse main"));
}

INSTANTIATE_TEST_SUITE_P(Sandbox, PackWriteTest, ::testing::Values("off", "bubblewrap"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Unconfined, an agent can change a file of the git directory that is too
// large for hydra to keep a copy of: it cannot be put back. The agent cannot
// win, and no agent of the race is merged, the honest winner included,
// unless the merge is forced: the repository is not as the race found it.
TEST(UnconfinedEscapes, AnEscapeNotPutBackRefusesEveryMergeOfTheRaceWithoutForce) {
  TestRepo repo;
  commitConfig(repo, "[general]\nsandbox = \"off\"\nmax_concurrent_agents = 1\n\n[agents.evil]\nadapter = \"command\"\n"
                     "binary = \"" +
                         (kHostile / "append_git_info.sh").string() + "\"\n\n" +
                         TestRepo::agent("honest", {"write", "calc.py", TestRepo::fixedCalc()}) + TestRepo::scoring());
  const fs::path sizable = repo.root() / ".git" / "info" / "sizable";
  std::ofstream(sizable) << std::string((2u << 20), 'x');
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string id = raceToTheEnd(client, {"evil", "honest"});

  const json::object evil = lastParams(client, "hydra/agentFinished", "evil");
  ASSERT_TRUE(evil.contains("escapes")) << json::serialize(evil);
  const std::string escapes = json::serialize(evil.at("escapes"));
  EXPECT_THAT(escapes, HasSubstr(".git/info/exclude changed (put back)")) << escapes;
  EXPECT_THAT(escapes, HasSubstr(".git/info/sizable changed (could not be put back")) << escapes;
  EXPECT_EQ(lastParams(client, "hydra/raceFinished").at("winner"), json::value("honest"));

  json::object refused = client.callError("hydra/merge", json::object{{"raceId", id}, {"agentId", "honest"}});
  EXPECT_EQ(refused.at("data").at("reason"), json::value("needsForce")) << json::serialize(refused);
  EXPECT_THAT(json::serialize(refused.at("data").at("concerns")),
              HasSubstr("agent evil changed what hydra could not put back: .git/info/sizable"))
      << json::serialize(refused);
  EXPECT_EQ(repo.git("rev-parse HEAD"), repo.git("rev-parse main"));
  json::object merged =
      client.call("hydra/merge", json::object{{"raceId", id}, {"agentId", "honest"}, {"force", true}}).as_object();
  EXPECT_EQ(merged.at("outcome"), json::value("fastForward")) << json::serialize(merged);
}

// Confined, an agent's worktree metadata stays writable (git writes its
// HEAD and index there), but not its own settings: in a repository with
// extensions.worktreeConfig, a core.fsmonitor in config.worktree would run
// in the user's next `git status` there, outside any sandbox.
TEST(ConfinedEscapes, TheWorktreesOwnSettingsAreReadOnly) {
  TestRepo repo;
  repo.git("config extensions.worktreeConfig true");
  commitConfig(repo, "[general]\nsandbox = \"bubblewrap\"\n\n[agents.evil]\nadapter = \"command\"\nbinary = \"" +
                         (kHostile / "write_worktree_config.sh").string() + "\"\n");
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  raceToTheEnd(client, {"evil"});

  fs::path worktree;
  for (const auto& n : client.notifications("hydra/agentStarted")) {
    worktree = fs::path(std::string(n.at("params").at("worktree").as_string()));
  }
  ASSERT_TRUE(fs::is_directory(worktree));
  const std::string gitdir = readFile(worktree / ".git").substr(std::string("gitdir: ").size());
  const fs::path metadata(gitdir.substr(0, gitdir.find_last_not_of("\n") + 1));
  EXPECT_EQ(readFile(metadata / "config.worktree"), "");
  EXPECT_THAT(readFile(metadata / "gitdir"), Not(HasSubstr("elsewhere")));
  EXPECT_THAT(readFile(metadata / "commondir"), Not(HasSubstr("elsewhere")));
  EXPECT_THAT(readFile(metadata / "hydra"), Not(HasSubstr("elsewhere")));
  // The user's git in that worktree runs nothing of it.
  sh("git -C '" + worktree.string() + "' status --porcelain >/dev/null");
  EXPECT_FALSE(fs::exists(repo.root().parent_path() / "PWNED-worktree-config"));
}

// An agent that writes a secret it was given into a file: the secret would
// be committed to its branch and shown by every diff. The agent is flagged,
// so it is not merged automatically though it wins; every diff hydra shows
// masks the secret; a merge by hand refuses without force.
TEST(SecretsInDiffs, ASecretWrittenToAFileIsFlaggedMaskedAndNotMergedUnasked) {
  TestRepo repo;
  const std::string secret = "foo-live-4f1d9a7c2b8e6035";
  const fs::path leaker = repo.script("leaker.sh", "cat > calc.py <<'EOF'\n" + TestRepo::fixedCalc() +
                                                       "\nEOF\necho \"$FOO_API_KEY\" > leak.txt\n");
  commitConfig(repo, TestRepo::scoring() + "auto_merge = true\n\n[agents.leaker]\nadapter = \"command\"\nbinary = \"" +
                         leaker.string() + "\"\nenv = { FOO_API_KEY = \"" + secret + "\" }\n\n");
  const std::string head = repo.git("rev-parse main");
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string id = raceToTheEnd(client, {"leaker"});
  ASSERT_THAT(repo.git("show hydra/leaker-" + id + ":leak.txt"), HasSubstr(secret)) << "the agent did leak it";

  const json::object finished = lastParams(client, "hydra/raceFinished");
  EXPECT_EQ(finished.at("winner"), json::value("leaker")) << json::serialize(finished);
  const json::object& ranked = finished.at("rankings").at(0).as_object();
  EXPECT_THAT(json::serialize(ranked.at("flags")), HasSubstr("adds what looks like a secret at leak.txt:1"))
      << json::serialize(ranked);
  EXPECT_FALSE(finished.contains("autoMerge")) << json::serialize(finished);
  EXPECT_EQ(repo.git("rev-parse main"), head) << "it was merged automatically";

  const json::object diff = client.call("hydra/diff", json::object{{"raceId", id}, {"agentId", "leaker"}}).as_object();
  const std::string patch(diff.at("patch").as_string());
  EXPECT_THAT(patch, Not(HasSubstr(secret))) << patch;
  EXPECT_THAT(patch, HasSubstr("+[REDACTED]")) << patch;
  const json::object file =
      client.call("hydra/diff", json::object{{"raceId", id}, {"agentId", "leaker"}, {"path", "leak.txt"}}).as_object();
  EXPECT_THAT(json::serialize(file), Not(HasSubstr(secret))) << json::serialize(file);
  const std::string cli = sh("cd '" + repo.root().string() + "' && '" HYDRA_BINARY "' diff " + id + " leaker 2>&1");
  EXPECT_THAT(cli, Not(HasSubstr(secret))) << cli;
  EXPECT_THAT(cli, HasSubstr("[REDACTED]")) << cli;

  json::object refused = client.callError("hydra/merge", json::object{{"raceId", id}, {"agentId", "leaker"}});
  EXPECT_EQ(refused.at("data").at("reason"), json::value("needsForce")) << json::serialize(refused);
  EXPECT_THAT(json::serialize(refused.at("data").at("concerns")), HasSubstr("adds what looks like a secret at leak.txt:1"));
  const std::string piped =
      sh("cd '" + repo.root().string() + "' && '" HYDRA_BINARY "' merge " + id + " leaker </dev/null 2>&1; echo \"exit $?\"");
  EXPECT_THAT(piped, HasSubstr("adds what looks like a secret at leak.txt:1")) << piped;
  EXPECT_THAT(piped, HasSubstr("exit 2")) << piped;
  EXPECT_EQ(repo.git("rev-parse main"), head);
}

// Unconfined, an agent can move the main repository's refs: hydra notices
// when it ends, puts them back, names what it did, and it cannot win.
TEST(UnconfinedEscapes, MovedRefsArePutBackAndTheAgentIsDisqualified) {
  TestRepo repo;
  repo.git("tag v1");
  // One agent at a time: the escape is charged to the agent that ran alone.
  commitConfig(repo, "[general]\nsandbox = \"off\"\nmax_concurrent_agents = 1\n\n[agents.evil]\nadapter = \"command\"\n"
                   "binary = \"" +
                   (kHostile / "move_refs.sh").string() + "\"\n\n" +
                   TestRepo::agent("honest", {"write", "calc.py", TestRepo::fixedCalc()}) + TestRepo::scoring());
  auto before = checkoutSnapshot(repo);

  RpcClient client(repo.root());
  client.initialize(repo.uri());
  std::string id(client.call("hydra/race", json::object{{"task", "t"}, {"agents", json::array{"evil", "honest"}}})
                     .at("raceId")
                     .as_string());
  std::size_t at = client.waitFor("hydra/raceFinished", id, 0, 120s);
  json::object finished = client.notifications().at(at).at("params").as_object();

  // Put back: main, the tag, HEAD; the planted branch is gone.
  EXPECT_EQ(checkoutSnapshot(repo), before);
  EXPECT_EQ(repo.git("branch --list planted"), "");

  json::object evil;
  for (const auto& n : client.notifications("hydra/agentFinished")) {
    if (n.at("params").at("agentId") == json::value("evil")) evil = n.at("params").as_object();
  }
  ASSERT_TRUE(evil.contains("escapes")) << json::serialize(evil);
  const std::string escapes = json::serialize(evil.at("escapes"));
  EXPECT_THAT(escapes, HasSubstr("refs/heads/main")) << escapes;
  EXPECT_THAT(escapes, HasSubstr("refs/tags/v1")) << escapes;
  EXPECT_THAT(escapes, HasSubstr("refs/heads/planted")) << escapes;
  EXPECT_THAT(escapes, HasSubstr("put back")) << escapes;

  EXPECT_EQ(finished.at("winner"), json::value("honest")) << json::serialize(finished);
  for (const auto& r : finished.at("rankings").as_array()) {
    if (r.at("agentId") != json::value("evil")) continue;
    EXPECT_EQ(r.at("eligible"), json::value(false));
    EXPECT_EQ(r.at("ineligible"), json::value("escaped"));
  }
  // The record keeps what it did; a merge of it is refused.
  json::object record = repo.raceRecord(id);
  EXPECT_TRUE(record.at("agents").at(0).as_object().contains("escapes") ||
              record.at("agents").at(1).as_object().contains("escapes"));
  json::object refused =
      client.callError("hydra/merge", json::object{{"raceId", id}, {"agentId", "evil"}, {"dryRun", true}});
  EXPECT_EQ(refused.at("data").at("reason"), json::value("ineligible")) << json::serialize(refused);
}

// Unconfined, an agent can write into the user's checkout. hydra cannot tell
// it from the user's own edits, so it does not undo them: it says which files
// changed while the agent ran.
TEST(UnconfinedEscapes, WritesIntoTheCheckoutAreNamedInTheAgentsWarnings) {
  TestRepo repo;
  commitConfig(repo, unconfinedAgent("write_checkout_absolute.sh"));
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  raceToTheEnd(client, {"evil"});
  auto finished = client.notifications("hydra/agentFinished");
  ASSERT_EQ(finished.size(), 1u);
  const json::object& p = finished[0].at("params").as_object();
  ASSERT_TRUE(p.contains("warnings")) << json::serialize(p);
  const std::string warnings = json::serialize(p.at("warnings"));
  EXPECT_THAT(warnings, HasSubstr("ESCAPE_absolute.txt")) << warnings;
  EXPECT_THAT(warnings, HasSubstr("README.md")) << warnings;
  EXPECT_THAT(warnings, HasSubstr("cannot tell who")) << warnings;
}

// Unconfined, an agent can rewrite hydra's records: an earlier race's
// scores, files under .hydra/, a forged race. hydra names each change, and
// the agent cannot win or be merged.
TEST(UnconfinedEscapes, TamperedRecordsAreNamedAndTheAgentIsDisqualified) {
  TestRepo repo;
  commitConfig(repo, unconfinedAgent("write_hydra_dir.sh") + TestRepo::agent("honest", {"write", "calc.py", TestRepo::fixedCalc()}) +
                   TestRepo::scoring());
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string earlier = raceToTheEnd(client, {"honest"});
  ASSERT_TRUE(fs::exists(repo.root() / ".hydra" / "races" / earlier / "scores.json"));
  repo.write(".hydra/earlier.json", "{\"id\":\"earlier\"}\n");

  const std::string id = raceToTheEnd(client, {"evil"});
  json::object evil;
  for (const auto& n : client.notifications("hydra/agentFinished")) {
    if (n.at("params").at("raceId") == json::value(id)) evil = n.at("params").as_object();
  }
  ASSERT_TRUE(evil.contains("escapes")) << json::serialize(evil);
  const std::string escapes = json::serialize(evil.at("escapes"));
  EXPECT_THAT(escapes, HasSubstr("added .hydra/races/forged/race.json")) << escapes;
  EXPECT_THAT(escapes, HasSubstr("changed hydra's record .hydra/earlier.json")) << escapes;
  EXPECT_THAT(escapes, HasSubstr("changed hydra's record .hydra/races/" + earlier + "/scores.json")) << escapes;
  json::object refused =
      client.callError("hydra/merge", json::object{{"raceId", id}, {"agentId", "evil"}, {"dryRun", true}});
  EXPECT_EQ(refused.at("data").at("reason"), json::value("ineligible")) << json::serialize(refused);
}

// A merge of an earlier race while another race runs moves main, changes the
// checkout and writes the earlier race's record: hydra's own doing, so it is
// neither put back nor charged to the running race's agents.
TEST(UnconfinedEscapes, AMergeWhileARaceRunsIsNoEscape) {
  TestRepo repo;
  const fs::path go = repo.scratch() / "go";
  commitConfig(repo, "[general]\nsandbox = \"off\"\n\n" + TestRepo::agent("honest", {"write", "calc.py", TestRepo::fixedCalc()}) +
                   TestRepo::agent("slow", {"wait-for", go.string(), "write", "notes.txt", "later"}) +
                   TestRepo::scoring());
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  const std::string earlier = raceToTheEnd(client, {"honest"});

  std::string id(client.call("hydra/race", json::object{{"task", "t"}, {"agents", json::array{"slow"}}})
                     .at("raceId")
                     .as_string());
  client.waitFor("hydra/agentStarted", id);
  json::object merged = client.call("hydra/merge", json::object{{"raceId", earlier}, {"agentId", "honest"}}).as_object();
  EXPECT_EQ(merged.at("outcome"), json::value("fastForward")) << json::serialize(merged);
  const std::string mergedMain = repo.git("rev-parse main");
  repo.write("../scratch/go", "");
  client.waitFor("hydra/raceFinished", id, 0, 120s);
  EXPECT_EQ(repo.git("rev-parse main"), mergedMain) << "the merge stays";
  int seen = 0;
  for (const auto& n : client.notifications("hydra/agentFinished")) {
    if (n.at("params").at("raceId") != json::value(id)) continue;
    ++seen;
    EXPECT_FALSE(n.at("params").as_object().contains("escapes")) << json::serialize(n);
    EXPECT_FALSE(n.at("params").as_object().contains("warnings")) << json::serialize(n);
  }
  EXPECT_EQ(seen, 1);
}

// The processes an unconfined agent left behind when it ended are named in
// its result.
TEST(UnconfinedLeftovers, TheAgentsResultSaysWhatWasEnded) {
  TestRepo repo;
  repo.writeConfig(unconfinedAgent("setsid_daemon.sh"));
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  raceToTheEnd(client, {"evil"});
  auto finished = client.notifications("hydra/agentFinished");
  ASSERT_EQ(finished.size(), 1u);
  const json::object& p = finished[0].at("params").as_object();
  ASSERT_TRUE(p.contains("warnings")) << json::serialize(p);
  EXPECT_THAT(json::serialize(p.at("warnings")), HasSubstr("it left running ended with it")) << json::serialize(p);
}

// Per-agent limits ([general] and [agents.NAME] memory_limit_mib,
// max_processes, cpu_limit_seconds): an agent over one is ended with its
// own words, cannot win, leaves nothing running, and its sibling scores as
// if it had raced alone. Held by a cgroup where hydra can make one, and by
// rlimits with hydra's watch of the tree when forced
// (HYDRA_RESOURCE_LIMITS=rlimits), as on a machine without cgroups.
struct LimitFor {
  std::string general;  // lines for [general]
  std::string evil;     // lines for [agents.evil]
  std::string words;    // its error
};

LimitFor limitFor(const std::string& script) {
  if (script == "memory_hog.sh") return {"", "memory_limit_mib = 256\n", "killed: over its 256 MiB memory limit"};
  if (script == "fork_bomb.sh") return {"max_processes = 100\n", "", "killed: over its 100-process limit"};
  return {"", "cpu_limit_seconds = 2\n", "killed: over its 2 s CPU limit"};
}

// The cgroups hydra `pid` made (hydra.<pid>.<start> directories) that are
// still there.
std::vector<std::string> cgroupsOf(pid_t pid) {
  std::vector<std::string> left;
  const std::string prefix = "hydra." + std::to_string(pid) + ".";
  std::error_code ec;
  fs::recursive_directory_iterator it("/sys/fs/cgroup", fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= 4 || !it->is_directory(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().filename().string().rfind(prefix, 0) == 0) left.push_back(it->path().string());
  }
  return left;
}

class LimitedHostileAgentTest : public HostileAgentTest {};

TEST_P(LimitedHostileAgentTest, ItIsEndedOverItsLimitAloneAndTheHonestAgentWins) {
  const LimitFor limit = limitFor(GetParam().script);
  json::object finished = race(limit.general, limit.evil);
  expectNothingLeft();
  EXPECT_EQ(checkoutSnapshot(repo_), before_) << stderr_;
  expectSiblingUntouched(finished);
  ASSERT_TRUE(agentFinished_.count("evil"));
  const json::object& evil = agentFinished_["evil"];
  EXPECT_EQ(evil.at("status"), json::value("failed")) << json::serialize(evil) << "\n" << stderr_;
  EXPECT_EQ(evil.at("error"), json::value(limit.words)) << json::serialize(evil) << "\n" << stderr_;
  // Ended for its limit, long before its 10 s timeout.
  EXPECT_LT(evil.at("durationMs").to_number<std::int64_t>(), 9000) << json::serialize(evil);
  EXPECT_EQ(finished.at("winner"), json::value("honest")) << json::serialize(finished);
  for (const auto& r : finished.at("rankings").as_array()) {
    if (r.at("agentId") != json::value("evil")) continue;
    EXPECT_EQ(r.at("eligible"), json::value(false)) << json::serialize(r);
    EXPECT_EQ(r.at("ineligible"), json::value(limit.words)) << json::serialize(r);
  }
  EXPECT_THAT(cgroupsOf(hydraPid_), ::testing::IsEmpty()) << "its cgroups outlived hydra";
  if (GetParam().script == "fork_bomb.sh") {
    // Its sleeps, ended with it and named.
    ASSERT_TRUE(evil.contains("warnings")) << json::serialize(evil);
    EXPECT_THAT(json::serialize(evil.at("warnings")), HasSubstr("it left running ended with it")) << json::serialize(evil);
  }
}

INSTANTIATE_TEST_SUITE_P(Limits, LimitedHostileAgentTest,
                         ::testing::Values(Case{"memory_hog.sh", "bubblewrap"}, Case{"memory_hog.sh", "off"},
                                           Case{"memory_hog.sh", "bubblewrap", "rlimits"},
                                           Case{"memory_hog.sh", "off", "rlimits"},
                                           Case{"fork_bomb.sh", "bubblewrap"}, Case{"fork_bomb.sh", "off"},
                                           Case{"fork_bomb.sh", "bubblewrap", "rlimits"},
                                           Case{"fork_bomb.sh", "off", "rlimits"},
                                           Case{"cpu_burner.sh", "bubblewrap"}, Case{"cpu_burner.sh", "off"},
                                           Case{"cpu_burner.sh", "bubblewrap", "rlimits"},
                                           Case{"cpu_burner.sh", "off", "rlimits"}),
                         caseName);

// What an agent left running when it exited is ended and named in its
// result, confined or not (bubblewrap's namespace would otherwise take it
// down unseen, and unconfined its process group ended it unnamed).
class LeftRunningTest : public HostileAgentTest {};

TEST_P(LeftRunningTest, WhatItLeftRunningIsEndedAndNamed) {
  json::object finished = race();
  expectNothingLeft();
  expectSiblingUntouched(finished);
  ASSERT_TRUE(agentFinished_.count("evil"));
  const json::object& evil = agentFinished_["evil"];
  ASSERT_TRUE(evil.contains("warnings")) << json::serialize(evil) << "\n" << stderr_;
  EXPECT_THAT(json::serialize(evil.at("warnings")), HasSubstr("20 processes it left running ended with it"))
      << json::serialize(evil);
}

INSTANTIATE_TEST_SUITE_P(Leftovers, LeftRunningTest,
                         ::testing::Values(Case{"leave_sleepers.sh", "bubblewrap"}, Case{"leave_sleepers.sh", "off"}),
                         caseName);

}  // namespace
}  // namespace hydra::test
