// The ranking rules on hand-made results: every dimension, ties, excluded
// dimensions, thresholds, and the scores' JSON form.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/value_from.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>
#include <cmath>
#include <map>
#include <string>

#include "core/scoring/scores.h"

namespace hydra::core::scoring {
namespace {

// --- ranking -------------------------------------------------------------------

CheckResult passed(const std::string& command) {
  CheckResult r;
  r.command = command;
  r.exitCode = 0;
  return r;
}

CheckResult failed(const std::string& command) {
  CheckResult r;
  r.command = command;
  r.exitCode = 1;
  return r;
}

AgentScore agent(const std::string& id, std::int64_t durationMs, DiffStats diff, CheckSet checks,
                 AgentStatus status = AgentStatus::Completed) {
  AgentScore a;
  a.agentId = id;
  a.agent = id;
  a.status = status;
  a.durationMs = durationMs;
  a.diff = diff;
  a.checks = std::move(checks);
  return a;
}

ScoringConfig allCommands() {
  ScoringConfig c;
  c.buildCommand = "make";
  c.testCommand = "make test";
  c.lintCommand = "make lint";
  return c;
}

CheckSet checksWith(int testsPassed, int testsFailed, int lintWarnings, bool buildOk = true) {
  CheckSet s;
  s.build = buildOk ? passed("make") : failed("make");
  s.tests = passed("make test");
  s.tests->tests = TestCounts{testsPassed, testsFailed, 0};
  s.lint = passed("make lint");
  s.lint->lint = LintCounts{0, lintWarnings};
  if (!buildOk) {
    s.tests->skipped = true;
    s.lint->skipped = true;
  }
  return s;
}

Baseline baselineWith(int testsPassed, int testsFailed) {
  Baseline b;
  b.commit = "base";
  b.checks = checksWith(testsPassed, testsFailed, 0);
  return b;
}

TEST(RankAgentsTest, RanksByTotalAndComputesEveryDimension) {
  // fixer: 10/10 tests (baseline 9 of 9 + 1 new), 40 lines in 2 files, 20 s.
  // slow: same tests as the baseline, 60 s. broken: the build fails, 10 s.
  auto scores = rankAgents("r", {agent("slow", 60'000, {10, 0, 1}, checksWith(9, 0, 0)),
                                  agent("broken", 10'000, {5, 5, 1}, checksWith(0, 0, 0, false)),
                                  agent("fixer", 20'000, {30, 10, 2}, checksWith(10, 0, 0))},
                           baselineWith(9, 0), allCommands());
  ASSERT_EQ(scores.rankings.size(), 3u);
  EXPECT_EQ(scores.rankings[0].agentId, "fixer");
  EXPECT_EQ(scores.rankings[1].agentId, "slow");
  EXPECT_EQ(scores.rankings[2].agentId, "broken");
  EXPECT_EQ(scores.winner, "fixer");

  const AgentScore& fixer = scores.rankings[0];
  // tests: 10/10 -> 100, bonus (1/10)*10 = 1, clamped to 100.
  EXPECT_DOUBLE_EQ(*fixer.breakdown.tests, 100.0);
  // speed: broken's 10 s does not count, its build failed: fixer's 20 s is
  // the fastest -> 100; slow's 60 s -> 20/60 * 100.
  EXPECT_DOUBLE_EQ(*fixer.breakdown.speed, 100.0);
  EXPECT_NEAR(*scores.rankings[1].breakdown.speed, 100.0 / 3.0, 1e-6);
  // (100*30 + 100*30 + 100*15 + 100*15 + 100*10) / 100 = 100.
  EXPECT_DOUBLE_EQ(fixer.total, 100.0);

  const AgentScore& broken = scores.rankings[2];
  EXPECT_DOUBLE_EQ(*broken.breakdown.build, 0.0);
  EXPECT_DOUBLE_EQ(*broken.breakdown.tests, 0.0);  // short-circuit
  EXPECT_DOUBLE_EQ(*broken.breakdown.lint, 0.0);
  // A build that failed is not fast: no speed, and no yardstick for the others.
  EXPECT_DOUBLE_EQ(*broken.breakdown.speed, 0.0);
  // (0 + 0 + 0 + 100*15 + 0*10) / 100 = 15.
  EXPECT_DOUBLE_EQ(broken.total, 15.0);
  EXPECT_EQ(fixer.rank, 1);
  EXPECT_EQ(broken.rank, 3);
}

TEST(RankAgentsTest, TiesAreBrokenByTestsThenDiffThenSpeedThenId) {
  ScoringConfig c;  // no commands: only diff size and speed count
  // Same diff, same duration: the id decides.
  auto byId = rankAgents("r", {agent("b", 1000, {1, 0, 1}, {}), agent("a", 1000, {1, 0, 1}, {})}, {}, c);
  EXPECT_EQ(byId.rankings[0].agentId, "a");

  // Weights that make the totals equal while diff scores differ: speed decides nothing
  // (weight 0 on diff means totals tie) -> diff breaks the tie.
  c.weights = ScoringWeights{30, 30, 15, 0, 10};
  auto byDiff = rankAgents("r", {agent("small", 1000, {10, 0, 1}, {}), agent("big", 1000, {900, 0, 40}, {})}, {}, c);
  EXPECT_DOUBLE_EQ(byDiff.rankings[0].total, byDiff.rankings[1].total);
  EXPECT_EQ(byDiff.rankings[0].agentId, "small");
}

TEST(RankAgentsTest, ExcludedDimensionsAreNullAndRenormalised) {
  ScoringConfig c;
  c.testCommand.emplace("make test");
  CheckSet s;
  s.tests = passed("make test");
  s.tests->tests = TestCounts{4, 1, 0};
  auto scores = rankAgents("r", {agent("only", 5000, {10, 0, 1}, s)}, {}, c);
  const auto& a = scores.rankings[0];
  EXPECT_FALSE(a.breakdown.build);
  EXPECT_FALSE(a.breakdown.lint);
  // tests 80 (4/5, no baseline), diff 100, speed 100 (single agent):
  // (80*30 + 100*15 + 100*10) / 55 = 4900 / 55
  // Kept to a millionth of a point.
  EXPECT_NEAR(a.total, 4900.0 / 55.0, 5e-7);
  EXPECT_EQ(a.total, 89.090909);
}

// An agent that changed nothing finishes first, but cannot win: the others'
// speed is measured among themselves.
TEST(RankAgentsTest, SpeedIsComparedOnlyAmongEligibleAgents) {
  auto scores = rankAgents("r",
                           {agent("idle", 500, {0, 0, 0}, {}), agent("quick", 4000, {1, 0, 1}, {}),
                            agent("slow", 8000, {1, 0, 1}, {})},
                           {}, ScoringConfig{});
  std::map<std::string, double> speed;
  for (const auto& a : scores.rankings) speed[a.agentId] = *a.breakdown.speed;
  EXPECT_DOUBLE_EQ(speed["quick"], 100.0);
  EXPECT_DOUBLE_EQ(speed["slow"], 50.0);
  EXPECT_DOUBLE_EQ(speed["idle"], 0.0);
  EXPECT_EQ(scores.winner, "quick");
}

// Runs shorter than a second are equally fast: on a real project (cJSON,
// tests/e2e/real_projects_test.cpp) scripted agents took 20 ms and 24 ms, and
// the 4 ms of process start-up scored 100 against 83 and outweighed a test
// the slower one fixed.
TEST(RankAgentsTest, RunsUnderASecondAreEquallyFast) {
  auto scores = rankAgents("r",
                           {agent("blink", 20, {1, 0, 1}, {}), agent("wink", 24, {1, 0, 1}, {}),
                            agent("steady", 1500, {1, 0, 1}, {}), agent("slow", 4000, {1, 0, 1}, {})},
                           {}, ScoringConfig{});
  std::map<std::string, double> speed;
  for (const auto& a : scores.rankings) speed[a.agentId] = *a.breakdown.speed;
  EXPECT_DOUBLE_EQ(speed["blink"], 100.0);
  EXPECT_DOUBLE_EQ(speed["wink"], 100.0);
  // Longer runs are measured against the one second the quick ones count as.
  EXPECT_NEAR(speed["steady"], 100.0 / 1.5, 1e-6);
  EXPECT_DOUBLE_EQ(speed["slow"], 25.0);
}

TEST(RankAgentsTest, AnAgentThatDidNotCompleteIsNeverFast) {
  auto scores = rankAgents("r",
                           {agent("crashed", 100, {0, 0, 0}, {}, AgentStatus::Failed),
                            agent("done", 4000, {1, 0, 1}, {})},
                           {}, ScoringConfig{});
  const AgentScore* crashed = nullptr;
  for (const auto& a : scores.rankings) {
    if (a.agentId == "crashed") crashed = &a;
  }
  ASSERT_TRUE(crashed);
  EXPECT_DOUBLE_EQ(*crashed->breakdown.speed, 0.0);
  EXPECT_EQ(scores.winner, "done");
}

TEST(RankAgentsTest, ThresholdsSetAutoMergeAndAllFailed) {
  ScoringConfig c = allCommands();
  auto good = rankAgents("r", {agent("a", 1000, {1, 0, 1}, checksWith(5, 0, 0))}, baselineWith(5, 0), c);
  EXPECT_TRUE(good.autoMergeEligible);  // 100
  EXPECT_FALSE(good.allFailed);

  auto bad = rankAgents("r", {agent("a", 1000, {1, 0, 1}, checksWith(0, 0, 0, false))}, baselineWith(5, 0), c);
  // (15*100 + 10*0) / 100 = 15 < fail_maximum 30: a failed build is not fast.
  EXPECT_DOUBLE_EQ(bad.rankings[0].total, 15.0);
  EXPECT_TRUE(bad.allFailed);
  EXPECT_FALSE(bad.autoMergeEligible);
  EXPECT_FALSE(bad.winner) << "all failed: there is no winner";

  c.thresholds.autoMergeMinimum = 100.5;
  auto strict = rankAgents("r", {agent("a", 1000, {1, 0, 1}, checksWith(5, 0, 0))}, baselineWith(5, 0), c);
  EXPECT_FALSE(strict.autoMergeEligible);
}

// --- eligibility -------------------------------------------------------------------

TEST(EligibilityTest, OnlyACompletedRunThatChangedSomethingCanWin) {
  EXPECT_EQ(ineligibility(AgentStatus::Completed, {1, 0, 1}), "");
  EXPECT_EQ(ineligibility(AgentStatus::Completed, {0, 0, 0}), "changed nothing");
  EXPECT_EQ(ineligibility(AgentStatus::Failed, {1, 0, 1}), "failed");
  EXPECT_EQ(ineligibility(AgentStatus::TimedOut, {1, 0, 1}), "timed out");
  EXPECT_EQ(ineligibility(AgentStatus::Cancelled, {1, 0, 1}), "cancelled");
  EXPECT_EQ(ineligibility(AgentStatus::Interrupted, {1, 0, 1}), "interrupted");
}

TEST(EligibilityTest, AnIneligibleAgentRanksAfterEveryEligibleOneWhateverItsTotal) {
  // The failed run left a perfect tree behind; the completed one a worse one.
  auto scores = rankAgents("r",
                           {agent("crashed", 1000, {1, 0, 1}, checksWith(5, 0, 0), AgentStatus::Failed),
                            agent("timedout", 1000, {1, 0, 1}, checksWith(5, 0, 0), AgentStatus::TimedOut),
                            agent("lazy", 1000, {0, 0, 0}, checksWith(5, 0, 0)),
                            agent("honest", 9000, {40, 0, 3}, checksWith(3, 2, 3))},
                           baselineWith(5, 0), allCommands());
  ASSERT_EQ(scores.rankings.size(), 4u);
  EXPECT_EQ(scores.rankings[0].agentId, "honest");
  EXPECT_TRUE(scores.rankings[0].eligible());
  EXPECT_LT(scores.rankings[0].total, scores.rankings[1].total);
  EXPECT_EQ(scores.winner, "honest");
  EXPECT_FALSE(scores.allFailed);
  for (std::size_t i = 1; i < scores.rankings.size(); ++i) {
    EXPECT_FALSE(scores.rankings[i].eligible()) << scores.rankings[i].agentId;
    EXPECT_EQ(scores.rankings[i].rank, static_cast<int>(i + 1));
  }
}

TEST(EligibilityTest, WhenNoAgentIsEligibleAllFailedAndThereIsNoWinner) {
  auto scores = rankAgents("r",
                           {agent("crashed", 1000, {1, 0, 1}, checksWith(5, 0, 0), AgentStatus::Failed),
                            agent("stopped", 1000, {1, 0, 1}, checksWith(5, 0, 0), AgentStatus::Cancelled),
                            agent("lazy", 1000, {0, 0, 0}, checksWith(5, 0, 0))},
                           baselineWith(5, 0), allCommands());
  EXPECT_FALSE(scores.winner);
  EXPECT_TRUE(scores.allFailed);
  EXPECT_FALSE(scores.autoMergeEligible);
  ASSERT_EQ(scores.rankings.size(), 3u) << "every agent is still listed";
  std::map<std::string, std::string> why;
  for (const auto& a : scores.rankings) why[a.agentId] = a.ineligible;
  EXPECT_EQ(why["crashed"], "failed");
  EXPECT_EQ(why["stopped"], "cancelled");
  EXPECT_EQ(why["lazy"], "changed nothing");
}

TEST(EligibilityTest, TheMarkTravelsThroughJsonAndOldRecordsAreDerived) {
  auto scores = rankAgents("r",
                           {agent("crashed", 1000, {1, 0, 1}, {}, AgentStatus::Failed),
                            agent("fixer", 1000, {1, 0, 1}, {})},
                           {}, ScoringConfig{});
  boost::json::value v = boost::json::value_from(scores);
  const auto& second = v.at("rankings").at(1).as_object();
  EXPECT_EQ(second.at("eligible"), boost::json::value(false));
  EXPECT_EQ(second.at("ineligible"), boost::json::value("failed"));
  EXPECT_EQ(v.at("rankings").at(0).at("eligible"), boost::json::value(true));
  EXPECT_FALSE(v.at("rankings").at(0).as_object().contains("ineligible"));
  // A record written before eligibility was recorded: derived from status and diff.
  v.at("rankings").at(1).as_object().erase("eligible");
  v.at("rankings").at(1).as_object().erase("ineligible");
  auto back = boost::json::value_to<RaceScores>(v);
  EXPECT_EQ(back.rankings[1].ineligible, "failed");
  EXPECT_EQ(back.rankings[0].ineligible, "");
}

TEST(RankAgentsTest, ScoresAreKeptToAMillionthSoTheyRoundTripExactly) {
  // speed 4/7 of the fastest, tests 3/7: long fractions everywhere.
  auto scores = rankAgents("r",
                           {agent("a", 4000, {3, 1, 1}, checksWith(3, 4, 0)), agent("b", 7000, {1, 0, 1}, checksWith(3, 4, 1))},
                           baselineWith(3, 4), allCommands());
  for (const auto& a : scores.rankings) {
    EXPECT_EQ(a.total, std::round(a.total * 1e6) / 1e6);
    EXPECT_EQ(*a.breakdown.speed, std::round(*a.breakdown.speed * 1e6) / 1e6);
  }
  auto back = boost::json::value_to<RaceScores>(boost::json::parse(boost::json::serialize(boost::json::value_from(scores))));
  EXPECT_EQ(boost::json::value_from(back), boost::json::value_from(scores));
}

TEST(RankAgentsTest, ScoresRoundTripThroughJson) {
  auto scores = rankAgents("r", {agent("a", 1000, {3, 1, 1}, checksWith(5, 1, 2))}, baselineWith(5, 0), allCommands());
  auto back = boost::json::value_to<RaceScores>(boost::json::value_from(scores));
  EXPECT_EQ(back.winner, scores.winner);
  EXPECT_DOUBLE_EQ(back.rankings[0].total, scores.rankings[0].total);
  EXPECT_EQ(back.rankings[0].checks.tests->tests, scores.rankings[0].checks.tests->tests);
  EXPECT_EQ(back.rankings[0].diff, scores.rankings[0].diff);
  EXPECT_EQ(back.baseline.commit, "base");
}

// --- tests by name, and flags ---------------------------------------------------

// Tests named in a run: the counts follow from the verdicts.
CheckSet namedTests(const std::map<std::string, TestOutcome>& cases) {
  CheckSet s = checksWith(0, 0, 0);
  TestCounts counts;
  for (const auto& [name, outcome] : cases) {
    if (outcome == TestOutcome::Passed) ++counts.passed;
    if (outcome == TestOutcome::Failed) ++counts.failed;
    if (outcome == TestOutcome::Skipped) ++counts.skipped;
  }
  s.tests->tests = counts;
  s.tests->testCases = cases;
  if (counts.failed > 0) s.tests->exitCode = 1;
  return s;
}

constexpr auto kPass = TestOutcome::Passed;
constexpr auto kFail = TestOutcome::Failed;
constexpr auto kSkip = TestOutcome::Skipped;

Baseline namedBaseline() {
  Baseline b;
  b.commit = "base";
  b.checks = namedTests({{"test_login", kFail}, {"test_logout", kFail}, {"test_home", kPass}, {"test_slow", kSkip}});
  return b;
}

TEST(TestsByNameTest, DeletingTheFailingTestsIsNoFixAndNamesWhatWasRemoved) {
  auto scores = rankAgents(
      "r",
      {agent("deleter", 1000, {0, 20, 1}, namedTests({{"test_home", kPass}})),
       agent("fixer", 3000, {8, 2, 1}, namedTests({{"test_login", kPass}, {"test_logout", kPass}, {"test_home", kPass}}))},
      namedBaseline(), allCommands());
  ASSERT_EQ(scores.winner, "fixer");
  const AgentScore& fixer = scores.rankings[0];
  const AgentScore& deleter = scores.rankings[1];
  ASSERT_TRUE(fixer.testChanges);
  EXPECT_EQ(fixer.testChanges->fixed, (std::vector<std::string>{"test_login", "test_logout"}));
  EXPECT_TRUE(fixer.testChanges->removed.empty());
  ASSERT_TRUE(deleter.testChanges);
  EXPECT_EQ(deleter.testChanges->removed, (std::vector<std::string>{"test_login", "test_logout"}));
  // 1 passed, 2 removed (failed) of a base with 1 of 3 passing: no better than the base.
  EXPECT_LT(*deleter.breakdown.tests, 50.0);
  EXPECT_DOUBLE_EQ(*fixer.breakdown.tests, 100.0);
  EXPECT_EQ(deleter.checks.tests->tests->failed, 0) << "the record keeps what the runner said";
}

// Removing a test and adding many that pass: the removed one counts as failed,
// and the added ones earn no bonus that would hide it (docs/scoring.md).
TEST(TestsByNameTest, AddedTestsNeverOutweighARemovedOne) {
  std::map<std::string, TestOutcome> base, agentCases;
  for (int i = 0; i < 30; ++i) base["test_" + std::to_string(i)] = kPass;
  agentCases = base;
  agentCases.erase("test_0");
  for (int i = 0; i < 20; ++i) agentCases["test_new_" + std::to_string(i)] = kPass;
  Baseline b;
  b.commit = "base";
  b.checks = namedTests(base);
  auto scores = rankAgents("r", {agent("padder", 1000, {50, 1, 2}, namedTests(agentCases))}, b, allCommands());
  const AgentScore& padder = scores.rankings[0];
  ASSERT_TRUE(padder.testChanges);
  EXPECT_EQ(padder.testChanges->removed, (std::vector<std::string>{"test_0"}));
  // 49 passed, 1 removed (failed): 49 / 50 = 98, no bonus for the 20 added.
  EXPECT_NEAR(*padder.breakdown.tests, 98.0, 1e-6);
  EXPECT_LT(*padder.breakdown.tests, 100.0);
}

TEST(TestsByNameTest, BrokenTestsAreNamedAndASkippedBaseTestIsNeverRemoved) {
  auto scores = rankAgents("r",
                           {agent("breaker", 1000, {3, 1, 1},
                                  namedTests({{"test_login", kPass}, {"test_logout", kFail}, {"test_home", kFail}}))},
                           namedBaseline(), allCommands());
  const auto& changes = scores.rankings[0].testChanges;
  ASSERT_TRUE(changes);
  EXPECT_EQ(changes->fixed, std::vector<std::string>{"test_login"});
  EXPECT_EQ(changes->broken, std::vector<std::string>{"test_home"});
  EXPECT_TRUE(changes->removed.empty()) << "test_slow was skipped at the base";
}

TEST(TestsByNameTest, NamesThatDoNotCoverTheCountsCompareNothing) {
  // pytest without -v names only its failures: 3 passed, 1 failed, 1 name.
  CheckSet partial = checksWith(3, 1, 0);
  partial.tests->testCases = {{"test_login", kFail}};
  auto scores = rankAgents("r", {agent("a", 1000, {3, 1, 1}, partial)}, namedBaseline(), allCommands());
  EXPECT_FALSE(scores.rankings[0].testChanges);
  EXPECT_FALSE(compareTests(*namedBaseline().checks.tests, *partial.tests));
  EXPECT_FALSE(compareTests(*partial.tests, *namedBaseline().checks.tests));
  // The result says the tests were compared by counts only.
  EXPECT_TRUE(scores.rankings[0].testsByCountsOnly);
  const AgentScore back = boost::json::value_to<AgentScore>(boost::json::value_from(scores.rankings[0]));
  EXPECT_TRUE(back.testsByCountsOnly);
}

TEST(TestsByNameTest, ATestThatRanAtTheBaseAndIsSkippedOrXfailedNowCountsAsFailed) {
  // @pytest.mark.xfail on both failing tests: pytest says 1 passed, 2 xfailed, exit 0.
  auto xfailed = namedTests({{"test_login", kSkip}, {"test_logout", kSkip}, {"test_home", kPass}});
  auto scores = rankAgents(
      "r",
      {agent("xfailer", 1000, {0, 2, 1}, xfailed),
       agent("fixer", 3000, {8, 2, 1}, namedTests({{"test_login", kPass}, {"test_logout", kPass}, {"test_home", kPass}}))},
      namedBaseline(), allCommands());
  ASSERT_EQ(scores.winner, "fixer");
  const AgentScore& xfailer = scores.rankings[1];
  ASSERT_TRUE(xfailer.testChanges);
  EXPECT_EQ(xfailer.testChanges->skipped, (std::vector<std::string>{"test_login", "test_logout"}));
  EXPECT_TRUE(xfailer.testChanges->fixed.empty());
  EXPECT_TRUE(xfailer.testChanges->removed.empty());
  EXPECT_FALSE(xfailer.testsByCountsOnly);
  // Scored as 1 passed, 2 failed: no better than the base, which had the same.
  EXPECT_LT(*xfailer.breakdown.tests, 50.0);
  EXPECT_EQ(xfailer.checks.tests->tests->skipped, 2) << "the record keeps what the runner said";
  // Kept in the JSON form and read back.
  const AgentScore back = boost::json::value_to<AgentScore>(boost::json::value_from(xfailer));
  ASSERT_TRUE(back.testChanges);
  EXPECT_EQ(back.testChanges->skipped, xfailer.testChanges->skipped);
}

TEST(FlagsTest, DeniedToolCallsAndProtectedChangesRuleOutAutoMergeNotTheWin) {
  static const ScoringConfig config = [] {
    ScoringConfig c = allCommands();
    c.thresholds.autoMergeMinimum = 50;
    return c;
  }();
  auto denied = agent("denied", 1000, {3, 1, 1}, checksWith(5, 0, 0));
  denied.deniedToolCalls = 2;
  auto scores = rankAgents("r", {denied}, baselineWith(5, 0), config);
  EXPECT_EQ(scores.winner, "denied");
  EXPECT_FALSE(scores.autoMergeEligible);
  EXPECT_EQ(scores.rankings[0].flags, std::vector<std::string>{"2 tool calls denied"});

  auto tamperer = agent("tamperer", 1000, {3, 1, 1}, checksWith(5, 0, 0));
  tamperer.protectedChanges = {"tests/conftest.py"};
  tamperer.protectedMode = "restore";
  scores = rankAgents("r", {tamperer}, baselineWith(5, 0), config);
  EXPECT_EQ(scores.winner, "tamperer");
  EXPECT_FALSE(scores.autoMergeEligible);
  EXPECT_EQ(scores.rankings[0].flags,
            std::vector<std::string>{"changed protected files: tests/conftest.py (put back for its checks)"});

  scores = rankAgents("r", {agent("clean", 1000, {3, 1, 1}, checksWith(5, 0, 0))}, baselineWith(5, 0), config);
  EXPECT_TRUE(scores.autoMergeEligible);
  EXPECT_TRUE(scores.rankings[0].flags.empty());
}

// The cJSON race: ctest names only its executables, so an agent that deleted
// the failing test case inside a protected test file reads as fixing
// misc_tests, like the real fix. Its tests are unprovable and score 0.
TEST(FlagsTest, CtestNamesOfWholeExecutablesCannotProveAnAgentThatChangedProtectedFiles) {
  const ScoringConfig config = allCommands();
  const auto ctestChecks = [](TestOutcome miscTests) {
    CheckSet s = checksWith(miscTests == TestOutcome::Passed ? 2 : 1, miscTests == TestOutcome::Passed ? 0 : 1, 0);
    s.tests->format = "ctest";
    s.tests->testCases = {{"parse_hex4", TestOutcome::Passed}, {"misc_tests", miscTests}};
    if (miscTests == TestOutcome::Failed) s.tests->exitCode = 8;
    return s;
  };
  Baseline base;
  base.commit = "base";
  base.checks = ctestChecks(TestOutcome::Failed);

  auto deleter = agent("deleter", 100, {1, 1, 5}, ctestChecks(TestOutcome::Passed));
  deleter.protectedChanges = {"tests/misc_tests.c"};
  deleter.protectedMode = "flag";
  auto scores = rankAgents("r", {deleter}, base, config);
  ASSERT_EQ(scores.rankings.size(), 1u);
  EXPECT_EQ(scores.rankings[0].breakdown.tests, 0.0);
  EXPECT_THAT(scores.rankings[0].flags,
              ::testing::Contains(::testing::HasSubstr("tests unprovable: ctest named only whole test executables")));

  // Beside the real fix it ranks second, though it is faster and changed less.
  const auto fixer = agent("fixer", 5000, {3, 40, 10}, ctestChecks(TestOutcome::Passed));
  scores = rankAgents("r", {deleter, fixer}, base, config);
  EXPECT_EQ(scores.winner, "fixer");
  EXPECT_EQ(scores.rankings[0].breakdown.tests, 100.0);

  // Its checks ran the base's test files ("restore"): they prove its tests.
  auto restored = deleter;
  restored.protectedMode = "restore";
  scores = rankAgents("r", {restored}, base, config);
  EXPECT_EQ(scores.rankings[0].breakdown.tests, 100.0);
  EXPECT_THAT(scores.rankings[0].flags, ::testing::Not(::testing::Contains(::testing::HasSubstr("unprovable"))));

  // The framework's own names (ctest -V) prove them, a deleted case showing by name.
  auto named = deleter;
  named.checks.tests->testCases = {{"parse_hex4::parse_hex4_should_parse_mixed_case", TestOutcome::Passed},
                                   {"misc_tests::cjson_get_object_item_should_get_object_items", TestOutcome::Passed}};
  Baseline namedBase = base;
  namedBase.checks.tests->testCases = named.checks.tests->testCases;
  scores = rankAgents("r", {named}, namedBase, config);
  EXPECT_EQ(scores.rankings[0].breakdown.tests, 100.0);

  // Unless the base named the failing executable only whole: it crashed
  // before its framework printed a verdict, so its cases at the base are
  // unknown and one taken out of the changed file would not show.
  Baseline crashedBase = namedBase;
  crashedBase.checks.tests->testCases = {{"parse_hex4::parse_hex4_should_parse_mixed_case", TestOutcome::Passed},
                                         {"misc_tests", TestOutcome::Failed}};
  scores = rankAgents("r", {named}, crashedBase, config);
  EXPECT_EQ(scores.rankings[0].breakdown.tests, 0.0);
  EXPECT_THAT(scores.rankings[0].flags, ::testing::Contains(::testing::HasSubstr("tests unprovable")));
}

// ctest -V: an executable that crashed before its framework printed a
// verdict is named whole, one that ran is named by its cases. The two are
// compared as the same test.
TEST(TestChangesTest, AnExecutableNamedWholeOnOneSideIsItsCasesOnTheOther) {
  CheckResult base;
  base.format = "ctest";
  base.tests = TestCounts{1, 1, 0};
  base.testCases = {{"misc_tests", TestOutcome::Failed}, {"parse_hex4::mixed_case", TestOutcome::Passed}};
  CheckResult fixed = base;
  fixed.tests = TestCounts{3, 0, 0};
  fixed.testCases = {{"misc_tests::null_pointers", TestOutcome::Passed},
                     {"misc_tests::get_object_items", TestOutcome::Passed},
                     {"parse_hex4::mixed_case", TestOutcome::Passed}};
  auto changes = compareTests(base, fixed);
  ASSERT_TRUE(changes);
  EXPECT_THAT(changes->fixed, ::testing::ElementsAre("misc_tests"));
  EXPECT_THAT(changes->removed, ::testing::IsEmpty());

  CheckResult stillFailing = fixed;
  stillFailing.testCases["misc_tests::null_pointers"] = TestOutcome::Failed;
  stillFailing.tests = TestCounts{2, 1, 0};
  changes = compareTests(base, stillFailing);
  ASSERT_TRUE(changes);
  EXPECT_THAT(changes->fixed, ::testing::IsEmpty());

  // The other way round: the agent's run crashed, its cases take the whole's verdict.
  changes = compareTests(fixed, base);
  ASSERT_TRUE(changes);
  EXPECT_THAT(changes->broken, ::testing::ElementsAre("misc_tests::get_object_items", "misc_tests::null_pointers"));
  EXPECT_THAT(changes->removed, ::testing::IsEmpty());
}

// go test names a package that failed to build by its import path alone:
// the fixer that makes it build has its tests named inside it, not removed.
TEST(TestChangesTest, AGoPackageNamedWholeOnOneSideIsItsTestsOnTheOther) {
  CheckResult base;
  base.format = "go";
  base.tests = TestCounts{1, 1, 0};
  base.testCases = {{"example.com/calc", TestOutcome::Failed}, {"example.com/util.TestTrim", TestOutcome::Passed}};
  CheckResult fixed = base;
  fixed.tests = TestCounts{3, 0, 0};
  fixed.testCases = {{"example.com/calc.TestAdd", TestOutcome::Passed},
                     {"example.com/calc.TestSub/negative", TestOutcome::Passed},
                     {"example.com/util.TestTrim", TestOutcome::Passed}};
  auto changes = compareTests(base, fixed);
  ASSERT_TRUE(changes);
  EXPECT_THAT(changes->fixed, ::testing::ElementsAre("example.com/calc"));
  EXPECT_THAT(changes->removed, ::testing::IsEmpty());

  // Tests of another package whose path starts alike are not the package's.
  CheckResult elsewhere = fixed;
  elsewhere.testCases = {{"example.com/calc.v2.TestAdd", TestOutcome::Passed},
                         {"example.com/calculator.TestAdd", TestOutcome::Passed},
                         {"example.com/util.TestTrim", TestOutcome::Passed}};
  changes = compareTests(base, elsewhere);
  ASSERT_TRUE(changes);
  EXPECT_THAT(changes->removed, ::testing::ElementsAre("example.com/calc"));

  // The other way round: the package no longer builds, its tests take its verdict.
  changes = compareTests(fixed, base);
  ASSERT_TRUE(changes);
  EXPECT_THAT(changes->broken, ::testing::ElementsAre("example.com/calc.TestAdd", "example.com/calc.TestSub/negative"));
  EXPECT_THAT(changes->removed, ::testing::IsEmpty());

  // Only go test's names are cut at a dot: a pytest id is not a package.
  CheckResult pytestBase;
  pytestBase.format = "pytest";
  pytestBase.tests = TestCounts{0, 1, 0};
  pytestBase.testCases = {{"calc", TestOutcome::Failed}};
  CheckResult pytestNow = pytestBase;
  pytestNow.tests = TestCounts{1, 0, 0};
  pytestNow.testCases = {{"calc.Test", TestOutcome::Passed}};
  changes = compareTests(pytestBase, pytestNow);
  ASSERT_TRUE(changes);
  EXPECT_THAT(changes->removed, ::testing::ElementsAre("calc"));
}

TEST(FlagsTest, AFlaggedAgentNeverOutranksAnUnflaggedOneOnSpeedOrDiffSizeAlone) {
  const ScoringConfig config = allCommands();
  // Same build, tests and lint; the flagged one is faster and changed less.
  auto deleter = agent("deleter", 100, {1, 1, 5}, checksWith(5, 0, 0));
  deleter.protectedChanges = {"tests/misc_tests.c"};
  deleter.protectedMode = "flag";
  const auto fixer = agent("fixer", 5000, {3, 40, 10}, checksWith(5, 0, 0));
  auto scores = rankAgents("r", {deleter, fixer}, baselineWith(4, 1), config);
  ASSERT_EQ(scores.rankings.size(), 2u);
  EXPECT_GT(scores.rankings[1].total, scores.rankings[0].total) << "the deleter's total is still the higher";
  EXPECT_EQ(scores.rankings[0].agentId, "fixer");
  EXPECT_EQ(scores.rankings[0].rank, 1);
  EXPECT_EQ(scores.rankings[1].agentId, "deleter");
  EXPECT_EQ(scores.rankings[1].rank, 2);
  EXPECT_EQ(scores.winner, "fixer");

  // Better tests still rank a flagged agent first: its build, tests and lint are worth more.
  const auto halfFixer = agent("half", 5000, {3, 40, 10}, checksWith(3, 2, 0));
  scores = rankAgents("r", {deleter, halfFixer}, baselineWith(4, 1), config);
  EXPECT_EQ(scores.rankings[0].agentId, "deleter");

  // Among several it moves below those whose build, tests and lint are worth as much,
  // and stays above those worth less.
  scores = rankAgents("r", {deleter, fixer, halfFixer}, baselineWith(4, 1), config);
  ASSERT_EQ(scores.rankings.size(), 3u);
  EXPECT_EQ(scores.rankings[0].agentId, "fixer");
  EXPECT_EQ(scores.rankings[1].agentId, "deleter");
  EXPECT_EQ(scores.rankings[2].agentId, "half");

  // An ineligible unflagged agent changes nothing: eligible agents rank first.
  const auto broken = agent("broken", 50, {1, 1, 1}, checksWith(5, 0, 0), AgentStatus::TimedOut);
  scores = rankAgents("r", {deleter, broken}, baselineWith(4, 1), config);
  EXPECT_EQ(scores.rankings[0].agentId, "deleter");
}

TEST(FlagsTest, TestsByNameAndFlagsTravelThroughJson) {
  auto tamperer = agent("tamperer", 1000, {0, 20, 1}, namedTests({{"test_home", kPass}}));
  tamperer.protectedChanges = {"tests/test_login.py", "tests/test_logout.py"};
  tamperer.protectedMode = "flag";
  tamperer.deniedToolCalls = 1;
  auto scores = rankAgents("r", {tamperer}, namedBaseline(), allCommands());
  const boost::json::value v = boost::json::value_from(scores);
  const auto& ranking = v.at("rankings").at(0);
  EXPECT_EQ(ranking.at("testChanges").at("removed"), boost::json::parse(R"(["test_login","test_logout"])"));
  EXPECT_EQ(ranking.at("flags").as_array().size(), 2u);
  EXPECT_EQ(ranking.at("protectedMode"), boost::json::value("flag"));
  EXPECT_EQ(ranking.at("checks").at("tests").at("testCases"), boost::json::parse(R"({"test_home":"passed"})"));
  EXPECT_EQ(v.at("baseline").at("checks").at("tests").at("testCases").at("test_slow"), boost::json::value("skipped"));

  const auto back = boost::json::value_to<RaceScores>(boost::json::parse(boost::json::serialize(v)));
  EXPECT_EQ(boost::json::value_from(back), v);
  EXPECT_EQ(back.rankings[0].testChanges, scores.rankings[0].testChanges);
  EXPECT_EQ(back.baseline.checks.tests->testCases, namedBaseline().checks.tests->testCases);
}

TEST(FlagsTest, AnUnknownVerdictInARecordIsAnErrorNamingTheField) {
  auto v = boost::json::value_from(rankAgents("r", {agent("a", 1000, {1, 0, 1}, namedTests({{"t", kPass}}))},
                                              namedBaseline(), allCommands()));
  v.at("rankings").at(0).at("checks").at("tests").at("testCases").at("t") = "green";
  try {
    boost::json::value_to<RaceScores>(v);
    FAIL() << "read an unknown verdict";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("testCases"), std::string::npos) << e.what();
  }
}

TEST(FlagsTest, ABrokenCheckInARecordIsRefusedNamingItsWholePath) {
  auto v = boost::json::value_from(rankAgents("r", {agent("a", 1000, {1, 0, 1}, namedTests({{"t", kPass}}))},
                                              namedBaseline(), allCommands()));
  boost::json::value baseline = v.at("baseline");
  v.as_object()["baseline"].as_object()["checks"].as_object()["build"] = "passed";
  try {
    boost::json::value_to<RaceScores>(v);
    FAIL() << "read a check that is not an object";
  } catch (const JsonFieldError& e) {
    EXPECT_STREQ(e.what(), "baseline.checks.build: expected an object");
  }
  v.as_object()["baseline"] = baseline;
  v.at("rankings").at(0).as_object()["checks"].as_object()["lint"] = boost::json::array{};
  try {
    boost::json::value_to<RaceScores>(v);
    FAIL() << "read a check that is not an object";
  } catch (const JsonFieldError& e) {
    EXPECT_STREQ(e.what(), "rankings[0].checks.lint: expected an object");
  }
}

TEST(RankAgentsTest, UnconfiguredChecksAreWrittenAsNull) {
  CheckSet none;
  EXPECT_EQ(boost::json::serialize(boost::json::value_from(none)), R"({"build":null,"tests":null,"lint":null})");
  EXPECT_FALSE(boost::json::value_to<CheckSet>(boost::json::parse(R"({"build":null})")).build);
}

}  // namespace
}  // namespace hydra::core::scoring
