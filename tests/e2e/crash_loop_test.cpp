// hydra killed with SIGKILL over and over, at moments spread over a race, with
// the real binary: after every kill the records are readable, a command that
// starts work recovers (the race says interrupted, what finished is kept), and
// no worktree, branch, process or record of the dead race is left once it is
// cleaned up; the user's branch is never touched (docs/reliability.md,
// "Crash loop").

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
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

// Kill points per race: spread evenly over how long the race takes alone,
// and two more in its first moments (making its folder, its record, its
// worktrees), which an even spread on a fast machine can miss.
constexpr int kKillPoints = 10;
constexpr std::chrono::milliseconds kEarlyKills[] = {std::chrono::milliseconds(30), std::chrono::milliseconds(120)};

class CrashLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Agents take a moment, as real ones do, so that kills land while they
    // run as well as while hydra commits and scores.
    repo_.writeConfig(TestRepo::scoring() +
                      TestRepo::agent("fixer", {"sleep", "0.5", "write", "calc.py", TestRepo::fixedCalc()}) +
                      TestRepo::agent("noter", {"write", "NOTES.md", "notes"}) +
                      TestRepo::agent("slow", {"sleep", "1.5", "write", "calc.py", TestRepo::fixedCalc()}));
    repo_.git("add hydra.toml");
    repo_.git("commit -qm config");
  }

  HydraProcess startRace() const {
    return HydraProcess({"race", "Fix add() in calc.py", "--agents", "fixer,noter,slow"}, repo_.root(),
                        {"PYTHONDONTWRITEBYTECODE=1"});
  }

  std::set<std::string> raceIds() const {
    std::set<std::string> ids;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(repo_.root() / ".hydra" / "races", ec)) ids.insert(e.path().filename().string());
    return ids;
  }

  TestRepo repo_;
};

TEST_F(CrashLoopTest, EveryKillLeavesReadableRecordsAndRecoveryLeaksNothing) {
  const auto snapshot = checkoutSnapshot(repo_);
  const fs::path workspace = repo_.root() / ".hydra-workspaces";

  // The race alone, to the end: how long a race takes here, now.
  const auto started = Clock::now();
  HydraProcess alone = startRace();
  ASSERT_EQ(alone.waitExit(120s), 0) << alone.stderrText();
  const auto raceTime = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  std::cout << "[ measured ] the race alone took " << raceTime.count() << " ms\n";
  ASSERT_EQ(hydraIn(repo_.root(), "cleanup").code, 0);

  std::map<std::string, int> landed;  // where kills landed: the record's state right after
  std::vector<std::chrono::milliseconds> delays(std::begin(kEarlyKills), std::end(kEarlyKills));
  for (int point = 1; point <= kKillPoints; ++point) delays.push_back(raceTime * point / (kKillPoints + 1));
  for (const std::chrono::milliseconds delay : delays) {
    SCOPED_TRACE("kill after " + std::to_string(delay.count()) + " ms");
    const std::set<std::string> before = raceIds();
    HydraProcess hydra = startRace();
    std::this_thread::sleep_for(delay);
    ::kill(hydra.pid(), SIGKILL);
    const std::optional<int> code = hydra.waitExit(10s);
    ASSERT_TRUE(code.has_value());

    // Right after the kill, before anyone recovers: every record readable.
    EXPECT_EQ(unreadableRecords(repo_.root() / ".hydra"), "");
    std::string id;
    for (const auto& r : raceIds()) {
      if (!before.contains(r)) id = r;
    }
    std::string state = "no record yet";
    if (!id.empty() && fs::exists(repo_.root() / ".hydra" / "races" / id / "race.json")) {
      const json::object record = repo_.raceRecord(id);
      state = std::string(record.at("status").as_string());
      int finished = 0;
      for (const auto& a : record.at("agents").as_array()) finished += a.at("status") == "completed";
      state += ", " + std::to_string(finished) + " agent(s) finished";
      if (record.at("status") == "running" && fs::exists(repo_.root() / ".hydra" / "races" / id / "events.jsonl") &&
          readFile(repo_.root() / ".hydra" / "races" / id / "events.jsonl").find("scoringStarted") != std::string::npos) {
        state += ", scoring";
      }
    }
    ++landed[state];
    std::cout << "[ measured ] killed after " << delay.count() << " ms (exit " << *code << "): " << state << "\n";

    // A command that starts work recovers: the dead race is interrupted, what
    // finished keeps its commit, nothing runs any more.
    const CommandRun cleanup = hydraIn(repo_.root(), "cleanup");
    ASSERT_EQ(cleanup.code, 0) << cleanup.out;
    EXPECT_THAT(cleanup.out, Not(HasSubstr("open repository")));
    EXPECT_EQ(unreadableRecords(repo_.root() / ".hydra"), "");
    // Every folder left holds a record: one the kill cut short before its
    // first record (or a claim of one) is gone.
    for (const auto& e : fs::directory_iterator(repo_.root() / ".hydra" / "races")) {
      EXPECT_TRUE(fs::exists(e.path() / "race.json")) << "left without a record: " << e.path();
    }
    if (!id.empty() && fs::exists(repo_.root() / ".hydra" / "races" / id)) {
      const json::object record = repo_.raceRecord(id);
      EXPECT_THAT(std::string(record.at("status").as_string()), ::testing::AnyOf("interrupted", "completed"))
          << json::serialize(record);
      for (const auto& a : record.at("agents").as_array()) {
        EXPECT_THAT(std::string(a.at("status").as_string()), Not(::testing::AnyOf("running", "queued")))
            << json::serialize(a);
        if (a.at("status") == "completed") {
          EXPECT_TRUE(a.as_object().contains("commit")) << json::serialize(a);
        }
      }
    }
    EXPECT_TRUE(eventually([&] { return processesIn(workspace).empty(); }, 10s))
        << processesIn(workspace).size() << " process(es) left running in the workspace";
    EXPECT_THAT(repo_.git("worktree list --porcelain"), Not(HasSubstr(".hydra-workspaces")));
    EXPECT_EQ(repo_.git("branch --list 'hydra/*'"), "");
    std::error_code ec;
    EXPECT_TRUE(fs::is_empty(workspace, ec) || ec) << "left in the workspace";
    EXPECT_TRUE(fs::is_empty(repo_.root() / ".git" / "worktrees", ec) || ec) << "worktree metadata left";
    EXPECT_EQ(quarantines(repo_.root()), std::vector<std::string>{}) << "a killed race's objects outlived its cleanup";
    EXPECT_NO_THROW(repo_.git("fsck --no-dangling")) << "a killed race left the repository broken";
    EXPECT_EQ(checkoutSnapshot(repo_), snapshot) << "the user's checkout changed";
  }
  for (const auto& [state, count] : landed) std::cout << "[ measured ] " << count << " kill(s) landed: " << state << "\n";
}

}  // namespace
}  // namespace hydra::test
