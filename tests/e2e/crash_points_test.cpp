// hydra killed with SIGKILL at moments spread over the commands other than a
// race, with the real binary: a merge, a cleanup that returns worktrees to
// the warm pool, a collaboration and an evaluation (`hydra eval run`). After
// each kill, and after the next command that starts work recovers, every
// record parses and says what happened, nothing is leaked, the user's branch
// is either fully merged or untouched, and an evaluation's report keeps the
// samples finished before the kill, which `--resume` completes
// (docs/reliability.md, "Fault matrix: full disks, crashes").

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/cli_run.h"
#include "tests/e2e/crash_checks.h"
#include "tests/e2e/hydra_process.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

// `points` delays spread evenly over `span` (none at 0 or at its end).
std::vector<std::chrono::milliseconds> spread(std::chrono::milliseconds span, int points) {
  std::vector<std::chrono::milliseconds> out;
  for (int point = 1; point <= points; ++point) out.push_back(span * point / (points + 1));
  return out;
}

// Runs `args` in `dir` to its end; how long it took.
std::chrono::milliseconds timed(const fs::path& dir, const std::vector<std::string>& args) {
  const auto started = Clock::now();
  HydraProcess alone(args, dir, {"PYTHONDONTWRITEBYTECODE=1"});
  const std::optional<int> code = alone.waitExit(180s);
  EXPECT_EQ(code, std::optional<int>(0)) << alone.stderrText();
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
}

// Starts `args` in `dir` and kills it with SIGKILL after `delay`.
void killAfter(const fs::path& dir, const std::vector<std::string>& args, std::chrono::milliseconds delay) {
  HydraProcess hydra(args, dir, {"PYTHONDONTWRITEBYTECODE=1"});
  std::this_thread::sleep_for(delay);
  ::kill(hydra.pid(), SIGKILL);
  ASSERT_TRUE(hydra.waitExit(10s).has_value());
}

// Nothing of hydra's is left in git or the workspace: no worktree but the
// user's, no hydra/* branch, no worktree metadata, no process in the workspace.
void expectNothingLeaked(const TestRepo& repo) {
  const fs::path workspace = repo.root() / ".hydra-workspaces";
  EXPECT_TRUE(eventually([&] { return processesIn(workspace).empty(); }, 10s))
      << processesIn(workspace).size() << " process(es) left running in the workspace";
  EXPECT_THAT(repo.git("worktree list --porcelain"), Not(HasSubstr(".hydra-workspaces")));
  EXPECT_EQ(repo.git("branch --list 'hydra/*'"), "");
  std::error_code ec;
  std::string left;
  for (const auto& e : fs::recursive_directory_iterator(repo.root() / ".git" / "worktrees", ec)) {
    left += " " + e.path().lexically_relative(repo.root() / ".git").string();
  }
  EXPECT_EQ(left, "") << "worktree metadata left";
  EXPECT_EQ(quarantines(repo.root()), std::vector<std::string>{}) << "a race's objects outlived its cleanup";
}

// A lock git's next command would stop at: hydra must never leave one.
void expectNoGitLock(const TestRepo& repo) {
  for (const char* lock : {"index.lock", "HEAD.lock", "refs/heads/main.lock", "hydra-merge.json"}) {
    EXPECT_FALSE(fs::exists(repo.root() / ".git" / lock)) << ".git/" << lock << " left";
  }
}

// The newest race folder's name (ids sort by time).
std::string newest(const TestRepo& repo) {
  std::string id;
  for (const auto& e : fs::directory_iterator(repo.root() / ".hydra" / "races")) id = std::max(id, e.path().filename().string());
  return id;
}

// ---- merge -----------------------------------------------------------------

// Kill points over a merge: spread over how long `hydra merge` takes alone.
constexpr int kMergeKills = 8;
// Files the agent adds: enough that checking the merge out takes a while,
// so that kills land in it and not only before or after.
constexpr int kMergeFiles = 4000;

class MergeCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Each race writes files of its own (its token), so that every merge
    // changes them all.
    const fs::path bulk = repo_.script(
        "bulk.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) +
                       " > calc.py\nmkdir -p gen\ntoken=$(date +%s%N)\nfor i in $(seq 1 " + std::to_string(kMergeFiles) +
                       "); do echo \"$token $i\" > gen/f$i.txt; done\n");
    repo_.writeConfig(TestRepo::scoring() + TestRepo::commandAgent("bulk", bulk));
    // Thousands of loose objects a round: git's own gc would start in the
    // background after the test's commits and change .git under the next race.
    repo_.git("config gc.auto 0");
    repo_.git("add hydra.toml");
    repo_.git("commit -qm config");
    base_ = repo_.git("rev-parse HEAD");
  }

  // A finished race of the bulk agent on `base_`; its id.
  std::string race() {
    const CommandRun r = hydraIn(repo_.root(), "race 'Fix add() in calc.py' --agents bulk --json");
    EXPECT_EQ(r.code, 0) << r.out;
    return std::string(jsonOf(r).at("race").at("id").as_string());
  }

  // Back where the user was before the merge, and the race tidied away.
  void resetToBase() {
    repo_.git("reset -q --hard " + base_);
    repo_.git("clean -qfd -e .hydra -e .hydra-workspaces");
    ASSERT_EQ(hydraIn(repo_.root(), "cleanup").code, 0);
  }

  TestRepo repo_;
  std::string base_;
};

TEST_F(MergeCrashTest, EveryKillLeavesTheBranchFullyMergedOrUntouched) {
  const std::string first = race();
  const auto mergeTime = timed(repo_.root(), {"merge", first});
  std::cout << "[ measured ] the merge of " << kMergeFiles << " files alone took " << mergeTime.count() << " ms\n";
  resetToBase();

  std::map<std::string, int> landed;
  for (const auto delay : spread(mergeTime, kMergeKills)) {
    SCOPED_TRACE("kill after " + std::to_string(delay.count()) + " ms");
    const std::string id = race();
    const std::string commit(repo_.raceRecord(id).at("agents").at(0).at("commit").as_string());
    const auto before = checkoutSnapshot(repo_);
    killAfter(repo_.root(), {"merge", id}, delay);
    EXPECT_EQ(unreadableRecords(repo_.root() / ".hydra"), "");

    // The next command that starts work finishes what the kill cut short.
    const CommandRun cleanup = hydraIn(repo_.root(), "cleanup");
    ASSERT_EQ(cleanup.code, 0) << cleanup.out;
    EXPECT_EQ(unreadableRecords(repo_.root() / ".hydra"), "");
    expectNoGitLock(repo_);
    const json::object record = repo_.raceRecord(id);
    std::string state;
    if (checkoutSnapshot(repo_) == before) {
      state = "untouched";
      EXPECT_FALSE(record.contains("merged")) << json::serialize(record);
    } else {
      state = "merged";
      EXPECT_EQ(repo_.git("rev-parse HEAD"), commit) << "the branch moved elsewhere";
      EXPECT_EQ(repo_.git("status --porcelain=v1 --untracked-files=all"), "") << "index or files not those of the merge";
      EXPECT_EQ(repo_.git("symbolic-ref HEAD"), "refs/heads/main");
      ASSERT_TRUE(record.contains("merged")) << "the race does not say it was merged: " << json::serialize(record);
      EXPECT_EQ(record.at("merged").at("agentId"), "bulk");
    }
    ++landed[state];
    std::cout << "[ measured ] merge killed after " << delay.count() << " ms: " << state << "\n";
    expectNothingLeaked(repo_);
    // The user's next git command works.
    EXPECT_NO_THROW(repo_.git("commit -q --allow-empty -m 'after the kill'"));
    resetToBase();
  }
  for (const auto& [state, count] : landed) std::cout << "[ measured ] " << count << " merge kill(s) left it " << state << "\n";
}

// ---- cleanup and the warm pool ---------------------------------------------

// Kill points over a cleanup that returns a race's worktrees to the pool.
constexpr int kCleanupKills = 6;

// Worktrees git knows in the workspace that are not in the warm pool.
std::string nonPooledWorktrees(const TestRepo& repo) {
  std::string out;
  std::istringstream lines(repo.git("worktree list --porcelain"));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("worktree ") && line.find(".hydra-workspaces") != std::string::npos &&
        line.find("/_pool-") == std::string::npos) {
      out += line + "\n";
    }
  }
  return out;
}

TEST(CleanupCrashTest, EveryKillOfACleanupThatPoolsLeavesAWholePoolAndNothingElse) {
  TestRepo repo;
  repo.writeConfig("[general]\npool_size = 2\n\n" + TestRepo::scoring() +
                   TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                   TestRepo::agent("noter", {"write", "NOTES.md", "notes"}) +
                   TestRepo::agent("other", {"write", "OTHER.md", "other"}));
  repo.git("add hydra.toml");
  repo.git("commit -qm config");
  const auto snapshot = checkoutSnapshot(repo);
  const std::string race = "race 'Fix add() in calc.py' --agents fixer,noter,other";

  ASSERT_EQ(hydraIn(repo.root(), race).code, 0);
  const auto cleanupTime = timed(repo.root(), {"cleanup"});
  std::cout << "[ measured ] a cleanup that pools took " << cleanupTime.count() << " ms alone\n";
  for (const auto delay : spread(cleanupTime, kCleanupKills)) {
    SCOPED_TRACE("kill after " + std::to_string(delay.count()) + " ms");
    // Each race claims its worktrees from the pool the cleanup before filled.
    const CommandRun ran = hydraIn(repo.root(), race);
    ASSERT_EQ(ran.code, 0) << ran.out;
    killAfter(repo.root(), {"cleanup"}, delay);
    EXPECT_EQ(unreadableRecords(repo.root() / ".hydra"), "");

    const CommandRun again = hydraIn(repo.root(), "cleanup");
    ASSERT_EQ(again.code, 0) << again.out;
    EXPECT_EQ(unreadableRecords(repo.root() / ".hydra"), "");
    EXPECT_EQ(nonPooledWorktrees(repo), "") << "left outside the pool";
    EXPECT_EQ(repo.git("branch --list 'hydra/*'"), "");
    const CommandRun status = hydraIn(repo.root(), "status");
    EXPECT_EQ(status.code, 0) << status.out;
    EXPECT_EQ(checkoutSnapshot(repo), snapshot) << "the user's checkout changed";
  }
  // The pool that is left is whole: emptied, nothing at all remains.
  const CommandRun empty = hydraIn(repo.root(), "cleanup --pool");
  ASSERT_EQ(empty.code, 0) << empty.out;
  expectNothingLeaked(repo);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(repo.root() / ".hydra-workspaces", ec)) {
    ADD_FAILURE() << "left in the workspace: " << e.path();
  }
  expectNoGitLock(repo);
}

// ---- collaboration -----------------------------------------------------------

constexpr int kCollabKills = 6;

TEST(CollabCrashTest, EveryKillOfACollaborationIsRecoveredAsInterruptedAndLeaksNothing) {
  TestRepo repo;
  repo.writeConfig(TestRepo::scoring() + TestRepo::agent("bob", {"sleep", "0.3", "write", "calc.py", TestRepo::fixedCalc()}) +
                   TestRepo::agent("rita", {"sleep", "0.3", "say", "add() could be clearer"}));
  repo.git("add hydra.toml");
  repo.git("commit -qm config");
  const auto snapshot = checkoutSnapshot(repo);
  const std::vector<std::string> collab = {"collab", "Fix add() in calc.py", "--builder", "bob", "--reviewer", "rita",
                                           "--max-iterations", "2"};
  const auto collabTime = timed(repo.root(), collab);
  std::cout << "[ measured ] the collaboration alone took " << collabTime.count() << " ms\n";
  ASSERT_EQ(hydraIn(repo.root(), "cleanup").code, 0);

  for (const auto delay : spread(collabTime, kCollabKills)) {
    SCOPED_TRACE("kill after " + std::to_string(delay.count()) + " ms");
    killAfter(repo.root(), collab, delay);
    EXPECT_EQ(unreadableRecords(repo.root() / ".hydra"), "");
    const CommandRun cleanup = hydraIn(repo.root(), "cleanup");
    ASSERT_EQ(cleanup.code, 0) << cleanup.out;
    EXPECT_EQ(unreadableRecords(repo.root() / ".hydra"), "");
    std::string state;
    for (const auto& e : fs::directory_iterator(repo.root() / ".hydra" / "races")) {
      EXPECT_TRUE(fs::exists(e.path() / "race.json")) << "left without a record: " << e.path();
      if (!fs::exists(e.path() / "race.json")) continue;
      const json::object record = repo.raceRecord(e.path().filename().string());
      EXPECT_THAT(std::string(record.at("status").as_string()), ::testing::AnyOf("interrupted", "completed"))
          << json::serialize(record);
      // Of an interrupted one no agent still runs or waits. (A completed
      // collaboration keeps its reviewer's entry "queued": its reviews are in
      // its iterations.)
      for (const auto& a : record.at("agents").as_array()) {
        if (record.at("status") != "interrupted") continue;
        EXPECT_THAT(std::string(a.at("status").as_string()), Not(::testing::AnyOf("running", "queued")))
            << json::serialize(a);
      }
      if (e.path().filename().string() == newest(repo)) state = std::string(record.at("status").as_string());
    }
    std::cout << "[ measured ] collaboration killed after " << delay.count() << " ms: " << state << "\n";
    expectNothingLeaked(repo);
    expectNoGitLock(repo);
    EXPECT_EQ(checkoutSnapshot(repo), snapshot) << "the user's checkout changed";
  }
}

// ---- evaluation ----------------------------------------------------------------

constexpr int kEvalKills = 6;

TEST(EvalCrashTest, EveryKillOfAnEvaluationKeepsItsFinishedSamplesAndLeaksNothing) {
  TestRepo repo;
  // Two agents, one that fixes add() and one that does not; each sample is a
  // race of its own with a build and pytest, then a verification. The noter
  // works for 2 s, so that kills land while it runs and leave it for
  // recovery to end.
  const fs::path fixer = repo.script("fixer.sh", "sleep 0.2\nprintf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) + " > calc.py\n");
  const fs::path noter = repo.script("noter.sh", "sleep 2\necho '# looked' >> calc.py\n");
  repo.writeConfig(TestRepo::scoring() + TestRepo::commandAgent("fixer", fixer) + TestRepo::commandAgent("noter", noter));
  repo.git("add hydra.toml");
  repo.git("commit -qm config");
  const fs::path evals = repo.scratch() / "evals";
  fs::create_directories(evals);
  std::ofstream(evals / "set.toml") << "[eval]\nname = \"crash\"\nagents = [\"fixer\", \"noter\"]\nsamples = 2\n"
                                       "pass_k = [1]\nmax_concurrent_agents = 2\n\n[[cases]]\nid = \"add\"\n"
                                       "task = \"Fix add() in calc.py\"\n"
                                       "verify_command = \"/usr/bin/python3 -m pytest -q -p no:cacheprovider test_calc.py\"\n";
  constexpr std::size_t kSamples = 4;  // 1 case x 2 agents x 2 samples
  const fs::path report = repo.scratch() / "report.json";
  const auto snapshot = checkoutSnapshot(repo);
  const std::vector<std::string> run = {"eval", "run", (evals / "set.toml").string(), "--out", report.string()};
  const auto evalTime = timed(repo.root(), run);
  std::cout << "[ measured ] the evaluation of " << kSamples << " samples alone took " << evalTime.count() << " ms\n";
  ASSERT_EQ(json::parse(readFile(report)).at("samples").as_array().size(), kSamples);
  ASSERT_EQ(hydraIn(repo.root(), "cleanup").code, 0);

  std::map<std::size_t, int> landed;  // samples kept by a kill -> how many kills
  for (const auto delay : spread(evalTime, kEvalKills)) {
    SCOPED_TRACE("kill after " + std::to_string(delay.count()) + " ms");
    fs::remove(report);
    std::set<std::string> racesBefore;
    for (const auto& e : fs::directory_iterator(repo.root() / ".hydra" / "races")) racesBefore.insert(e.path().filename());
    killAfter(repo.root(), run, delay);
    const std::size_t orphans = processesIn(repo.root() / ".hydra-workspaces").size();
    EXPECT_EQ(unreadableRecords(repo.root() / ".hydra"), "");

    // The report says what the kill left: the samples finished before it,
    // whole, and no end (a run that ended has its finishedAt).
    json::array kept;
    if (fs::exists(report)) {
      json::value written;
      ASSERT_NO_THROW(written = json::parse(readFile(report))) << readFile(report);
      kept = written.at("samples").as_array();
      if (kept.size() < kSamples) {
        EXPECT_FALSE(written.as_object().contains("finishedAt")) << json::serialize(written);
      }
      for (const auto& s : kept) {
        EXPECT_EQ(s.at("status"), "completed") << json::serialize(s);
      }
    }
    ++landed[kept.size()];
    std::cout << "[ measured ] evaluation killed after " << delay.count() << " ms: " << kept.size() << " of " << kSamples
              << " samples kept" << (fs::exists(report) ? "" : " (no report yet)") << ", " << orphans
              << " process(es) of it left running\n";

    // A command that only reads answers; the next that starts work recovers.
    const CommandRun status = hydraIn(repo.root(), "status");
    EXPECT_EQ(status.code, 0) << status.out;
    const CommandRun cleanup = hydraIn(repo.root(), "cleanup");
    ASSERT_EQ(cleanup.code, 0) << cleanup.out;
    // Ended by the kill or by recovery, not by running out: well within the noter's 2 s.
    EXPECT_TRUE(eventually([&] { return processesIn(repo.root() / ".hydra-workspaces").empty(); }, 1s))
        << "still running after the cleanup: " << processesIn(repo.root() / ".hydra-workspaces").size();
    EXPECT_EQ(unreadableRecords(repo.root() / ".hydra"), "");
    for (const auto& e : fs::directory_iterator(repo.root() / ".hydra" / "races")) {
      if (racesBefore.contains(e.path().filename())) continue;
      EXPECT_TRUE(fs::exists(e.path() / "race.json")) << "left without a record: " << e.path();
      if (!fs::exists(e.path() / "race.json")) continue;
      const json::object record = repo.raceRecord(e.path().filename().string());
      EXPECT_EQ(record.at("kind"), "sample") << json::serialize(record);
      EXPECT_THAT(std::string(record.at("status").as_string()), ::testing::AnyOf("interrupted", "completed"))
          << json::serialize(record);
      for (const auto& a : record.at("agents").as_array()) {
        EXPECT_THAT(std::string(a.at("status").as_string()), Not(::testing::AnyOf("running", "queued")))
            << json::serialize(record);
      }
    }
    expectNothingLeaked(repo);
    expectNoGitLock(repo);
    EXPECT_EQ(checkoutSnapshot(repo), snapshot) << "the user's checkout changed";

    // Resumed, the run ends with every sample, those kept as they were.
    if (fs::exists(report)) {
      HydraProcess resumed({"eval", "run", (evals / "set.toml").string(), "--resume", report.string()}, repo.root(),
                           {"PYTHONDONTWRITEBYTECODE=1"});
      ASSERT_EQ(resumed.waitExit(180s), std::optional<int>(0)) << resumed.stderrText();
      const json::value after = json::parse(readFile(report));
      ASSERT_EQ(after.at("samples").as_array().size(), kSamples) << json::serialize(after);
      EXPECT_TRUE(after.as_object().contains("finishedAt"));
      for (const auto& s : kept) {
        EXPECT_NE(std::find(after.at("samples").as_array().begin(), after.at("samples").as_array().end(), s),
                  after.at("samples").as_array().end())
            << "a sample finished before the kill was not kept: " << json::serialize(s);
      }
      ASSERT_EQ(hydraIn(repo.root(), "cleanup").code, 0);
      expectNothingLeaked(repo);
    }
  }
  for (const auto& [samples, count] : landed) {
    std::cout << "[ measured ] " << count << " evaluation kill(s) kept " << samples << " sample(s)\n";
  }
}

}  // namespace
}  // namespace hydra::test
