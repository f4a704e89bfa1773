// Many front ends on one repository at once, with the real binary: a race
// beside a terminal that keeps asking `hydra status` (and cleaning up), two
// `hydra serve` processes (two editor windows) racing side by side, and a
// hydra killed with SIGKILL in the middle of its checks. Each hydra sees the
// others' races, never touches them, and cancels only its own; commands that
// only read change nothing on disk; what a dead hydra left is recovered by the
// next command that starts work (docs/reliability.md, "Many front ends at once").

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/cli_run.h"
#include "tests/e2e/comparable_scores.h"
#include "tests/e2e/hydra_process.h"
#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kRaceRunning = -32018;
// What a check printed when another hydra had removed its worktree under it.
constexpr const char* kMissingWorktree = "open repository";

// Everything of a race on disk that could mention a removed worktree.
std::string raceFiles(const fs::path& repo, const std::string& raceId) {
  std::string all;
  for (const auto& entry : fs::recursive_directory_iterator(repo / ".hydra" / "races" / raceId)) {
    if (entry.is_regular_file()) all += readFile(entry.path());
  }
  return all;
}

// ---- the demo race beside a status loop ------------------------------------------

class DemoBesideStatusLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/hydra-many-front-ends-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = fs::canonical(pattern);
    fs::copy(fs::path(HYDRA_SOURCE_DIR) / "examples/demo/project", dir_, fs::copy_options::recursive);
    ASSERT_EQ(runShell("cd " + dir_.string() + " && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm demo").code, 0);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  CommandRun hydra(const std::string& args) const { return hydraIn(dir_, args); }

  fs::path dir_;
};

TEST_F(DemoBesideStatusLoopTest, EveryCheckRunsAndTheScoresAreThoseOfTheRaceRunAlone) {
  const std::string race = "race 'Fix the open issue in README.md' --agents careful,breaker,sprawler --json";
  const CommandRun alone = hydra(race);
  ASSERT_EQ(alone.code, 0) << alone.out;
  const json::object aloneDoc = jsonOf(alone);
  const std::string aloneId(aloneDoc.at("race").at("id").as_string());

  // The terminal beside it: `hydra status` every 0.3 s, with `hydra scores`
  // and a `hydra cleanup` of the race that has finished (which recovers
  // first) in between, for as long as the race runs (bounded).
  std::atomic<bool> raceDone{false};
  std::vector<std::string> failures;
  int rounds = 0;
  std::thread terminal([&] {
    do {
      for (const std::string& command :
           {std::string("status"), std::string("status --json"), "scores " + aloneId,
            rounds % 3 == 2 ? "cleanup " + aloneId : std::string("status")}) {
        const CommandRun r = hydra(command);
        if (r.code != 0) failures.push_back(command + ": " + r.out);
      }
      ++rounds;
      std::this_thread::sleep_for(300ms);
    } while (!raceDone && rounds < 400);
  });
  const CommandRun beside = hydra(race);
  raceDone = true;
  terminal.join();

  ASSERT_EQ(beside.code, 0) << beside.out;
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_GE(rounds, 1);
  const json::object besideDoc = jsonOf(beside);
  const std::string besideId(besideDoc.at("race").at("id").as_string());
  EXPECT_EQ(besideDoc.at("race").at("status"), "completed");
  expectChecksRan(aloneDoc.at("scores").as_object());
  expectChecksRan(besideDoc.at("scores").as_object());
  EXPECT_EQ(json::serialize(comparable(besideDoc.at("scores"))), json::serialize(comparable(aloneDoc.at("scores"))));
  EXPECT_EQ(besideDoc.at("scores").at("winner"), "careful");
  EXPECT_THAT(beside.out, Not(HasSubstr(kMissingWorktree)));
  EXPECT_THAT(raceFiles(dir_, besideId), Not(HasSubstr(kMissingWorktree)));
  for (const auto& f : failures) EXPECT_THAT(f, Not(HasSubstr(kMissingWorktree)));
}

// ---- two editors: two `hydra serve` on one repository -----------------------------

class TwoServersTest : public ::testing::Test {
 protected:
  // A check that holds while `hold` exists, so that a race's check and
  // baseline worktrees are in use for as long as the test needs.
  void SetUp() override {
    hold_ = repo_.scratch() / "hold";
    std::ofstream(hold_) << "";
    const std::string build = "while [ -e " + hold_.string() + " ]; do sleep 0.05; done; /usr/bin/python3 -m py_compile calc.py";
    repo_.writeConfig("[scoring]\nbuild_command = \"" + build + "\"\n\n" +
                      TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                      TestRepo::agent("waiter", {"wait-for", (repo_.scratch() / "go").string(), "write", "calc.py", TestRepo::fixedCalc()}));
  }

  std::unique_ptr<RpcClient> serve() {
    auto client = std::make_unique<RpcClient>(repo_.root(), std::vector<std::string>{"PYTHONDONTWRITEBYTECODE=1"});
    client->initialize(repo_.uri());
    return client;
  }

  static std::string raceOf(RpcClient& client, const std::string& agent) {
    json::object params{{"task", "Fix add() in calc.py"}, {"agents", json::array{json::value(agent)}}};
    return std::string(client.call("hydra/race", std::move(params)).at("raceId").as_string());
  }

  // The state hydra/status gives a race, or "" when it does not list it.
  static std::string stateIn(RpcClient& client, const std::string& raceId) {
    const json::value status = client.call("hydra/status", json::object{});
    for (const auto& r : status.at("races").as_array()) {
      if (r.at("raceId").as_string() == raceId) return std::string(r.at("state").as_string());
    }
    return "";
  }

  std::set<std::string> workspaceEntries() const {
    std::set<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(repo_.root() / ".hydra-workspaces", ec)) names.insert(e.path().filename().string());
    return names;
  }

  bool has(const std::string& prefix, const std::string& raceId) const {
    return workspaceEntries().contains(prefix + raceId);
  }

  TestRepo repo_;
  fs::path hold_;
};

TEST_F(TwoServersTest, EachSeesTheOthersRaceLiveNeverTouchesItAndCancelsOnlyItsOwn) {
  auto a = serve();
  const std::string raceA = raceOf(*a, "fixer");
  // A's race is in its checks, which hold: its check and baseline worktrees exist.
  ASSERT_TRUE(eventually([&] { return has("_check-fixer-", raceA) && has("_baseline-", raceA); }))
      << a->process().stderrText();

  // A second editor window opens the repository: its start-up recovery, and a
  // terminal's cleanup, leave A's worktrees alone.
  auto b = serve();
  ASSERT_TRUE(eventually([&] { return b->process().stderrText().find("recovery done") != std::string::npos; }))
      << b->process().stderrText();
  const CommandRun cleanup = hydraIn(repo_.root(), "cleanup");
  EXPECT_EQ(cleanup.code, 0) << cleanup.out;
  EXPECT_TRUE(has("_check-fixer-", raceA) && has("_baseline-", raceA) && has("fixer-", raceA)) << cleanup.out;

  const std::string raceB = raceOf(*b, "waiter");
  ASSERT_TRUE(eventually([&] { return stateIn(*b, raceB) == "running" && has("waiter-", raceB); }));

  // Each sees the other's race, live.
  EXPECT_EQ(stateIn(*a, raceB), "running");
  EXPECT_EQ(stateIn(*b, raceA), "running");

  // Each may cancel only its own: the other's is refused, naming its hydra.
  const json::object refusedByA = a->callError("hydra/cancel", json::object{{"raceId", raceB}});
  EXPECT_EQ(refusedByA.at("code").as_int64(), kRaceRunning);
  EXPECT_EQ(refusedByA.at("data").at("pid").as_int64(), b->process().pid());
  EXPECT_THAT(std::string(refusedByA.at("message").as_string()),
              HasSubstr("is run by another hydra (pid " + std::to_string(b->process().pid()) + " on "));
  const json::object refusedByB = b->callError("hydra/cancel", json::object{{"raceId", raceA}, {"agentId", "fixer"}});
  EXPECT_EQ(refusedByB.at("code").as_int64(), kRaceRunning);
  EXPECT_EQ(refusedByB.at("data").at("pid").as_int64(), a->process().pid());
  EXPECT_EQ(stateIn(*a, raceA), "scoring") << "the refused cancel changed nothing";

  // Both finish as they would alone, every check run in its own worktree.
  fs::remove(hold_);
  std::ofstream(repo_.scratch() / "go") << "";
  const json::object finishedA = a->notifications()[a->waitFor("hydra/raceFinished", raceA)].at("params").as_object();
  const json::object finishedB = b->notifications()[b->waitFor("hydra/raceFinished", raceB)].at("params").as_object();
  EXPECT_EQ(finishedA.at("status"), "completed") << json::serialize(finishedA);
  EXPECT_EQ(finishedB.at("status"), "completed") << json::serialize(finishedB);
  for (const std::string& raceId : {raceA, raceB}) {
    // Each asks for the other's scores too: read from the record on disk.
    for (RpcClient* asking : {a.get(), b.get()}) {
      const json::object scores = asking->call("hydra/scores", json::object{{"raceId", raceId}}).as_object();
      SCOPED_TRACE(json::serialize(scores));
      expectChecksRan(scores);
      EXPECT_EQ(scores.at("rankings").at(0).at("checks").at("build").at("exitCode"), 0);
    }
  }
  EXPECT_THAT(raceFiles(repo_.root(), raceA) + raceFiles(repo_.root(), raceB), Not(HasSubstr(kMissingWorktree)));

  // Its own race it may cancel (there is nothing left to cancel now).
  EXPECT_EQ(a->call("hydra/cancel", json::object{{"raceId", raceA}}).at("cancelled"), false);
}

// ---- a hydra killed mid-race -------------------------------------------------------

// What a read-only command must leave exactly as it was: every path under
// .hydra and .hydra-workspaces (with the contents of hydra's records), git's
// worktrees and branches.
std::string diskState(const TestRepo& repo) {
  std::string state;
  for (const char* top : {".hydra", ".hydra-workspaces"}) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(repo.root() / top, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      const fs::path rel = fs::relative(it->path(), repo.root());
      state += rel.string() + "\n";
      // A worktree's own files are the agents' and checks' business; its place is what counts.
      if (rel.begin()->string() == ".hydra-workspaces" && it->is_directory()) it.disable_recursion_pending();
      if (it->is_regular_file() && (it->path().filename() == "race.json" || it->path().filename() == "scores.json")) {
        state += readFile(it->path());
      }
    }
  }
  state += repo.git("worktree list --porcelain") + "\n" + repo.git("branch --list 'hydra/*'") + "\n";
  for (const auto& e : fs::directory_iterator(repo.root() / ".git" / "worktrees")) {
    state += e.path().filename().string() + ": " + readFile(e.path() / "hydra");
  }
  return state;
}

TEST(KilledHydraTest, StatusChangesNothingAndTheNextRaceRecoversWhatTheDeadOneLeft) {
  TestRepo repo;
  const fs::path hold = repo.scratch() / "hold";
  std::ofstream(hold) << "";
  const std::string build = "while [ -e " + hold.string() + " ]; do sleep 0.05; done; /usr/bin/python3 -m py_compile calc.py";
  repo.writeConfig("[scoring]\nbuild_command = \"" + build + "\"\n\n" +
                   TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                   TestRepo::agent("noter", {"write", "NOTES.md", "notes"}));

  HydraProcess killed({"race", "Fix add() in calc.py", "--agents", "fixer,noter"}, repo.root(),
                      {"PYTHONDONTWRITEBYTECODE=1"});
  std::string id;
  auto inWorkspace = [&](const std::string& name) { return fs::exists(repo.root() / ".hydra-workspaces" / name); };
  ASSERT_TRUE(eventually([&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(repo.root() / ".hydra" / "races", ec)) id = e.path().filename().string();
    return !id.empty() && inWorkspace("_check-fixer-" + id) && inWorkspace("_baseline-" + id);
  })) << killed.stderrText();
  ASSERT_EQ(::kill(killed.pid(), SIGKILL), 0);
  ASSERT_EQ(killed.waitExit(10s), 128 + SIGKILL);
  ASSERT_EQ(repo.raceRecord(id).at("status"), "running") << "nobody has noticed yet";

  // Read-only commands right after the kill: they tell the truth and change nothing.
  const std::string before = diskState(repo);
  const CommandRun status = hydraIn(repo.root(), "status --json");
  ASSERT_EQ(status.code, 0) << status.out;
  EXPECT_EQ(jsonOf(status).at("races").at(0).at("state"), "interrupted") << status.out;
  for (const std::string& command : {std::string("status"), "status " + id, "scores " + id, "log " + id + " fixer", "diff " + id + " fixer",
                                     std::string("agents"), std::string("sandbox")}) {
    hydraIn(repo.root(), command);  // exit codes vary (the race was never scored); the disk may not
  }
  EXPECT_EQ(diskState(repo), before);
  EXPECT_EQ(repo.raceRecord(id).at("status"), "running") << "a read-only command wrote the record";

  // The orphaned checks end; the next command that starts work recovers.
  fs::remove(hold);
  const CommandRun next = hydraIn(repo.root(), "race 'Write notes' --agents noter --json");
  ASSERT_EQ(next.code, 0) << next.out;
  EXPECT_EQ(repo.raceRecord(id).at("status"), "interrupted");
  for (const char* check : {"_check-fixer-", "_check-noter-", "_baseline-"}) {  // whichever were made
    EXPECT_FALSE(inWorkspace(check + id)) << check << " of the dead race is removed\n" << next.out;
    EXPECT_THAT(repo.git("worktree list --porcelain"), Not(HasSubstr(check + id)));
  }
  // Its agents' worktrees are kept for inspection until cleanup, as ever.
  EXPECT_TRUE(inWorkspace("fixer-" + id));
  EXPECT_TRUE(inWorkspace("noter-" + id));
  const CommandRun cleanup = hydraIn(repo.root(), "cleanup");
  ASSERT_EQ(cleanup.code, 0) << cleanup.out;
  EXPECT_EQ(repo.git("branch --list 'hydra/*'"), "");
  EXPECT_EQ(repo.git("worktree list --porcelain").find(".hydra-workspaces"), std::string::npos);
}

}  // namespace
}  // namespace hydra::test
