// The scoring formulas, checked against values worked out by hand: each
// expectation shows its arithmetic next to it.

#include "core/scoring/formulas.h"

#include <gtest/gtest.h>

#include <limits>

namespace hydra::core::scoring {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kTolerance = 1e-9;

// ---------------------------------------------------------------------------
// Build

TEST(BuildScoreTest, PassingBuildScoresHundredFailingBuildZero) {
  EXPECT_EQ(buildScore(true), 100.0);
  EXPECT_EQ(buildScore(false), 0.0);
}

// ---------------------------------------------------------------------------
// Tests

TEST(TestsScoreTest, PassRateWithoutBaselineIsPercentPassed) {
  // 45 / (45 + 5) = 0.9 -> 90; no baseline: no bonus, no penalty.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{45, 5}, std::nullopt, false), 90.0);
}

TEST(TestsScoreTest, AllPassingWithSameSuiteScoresHundred) {
  // 20 / 20 = 1 -> 100; 20 tests before and after: no bonus, no penalty.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{20, 0}, TestCounts{20, 0}, true), 100.0);
}

TEST(TestsScoreTest, NewTestsEarnBonusOnTopOfPassRate) {
  // pass_rate = 18 / 20 = 0.9 -> 90
  // new_tests = 20 - 10 = 10, bonus = (10 / 20) * 10 = 5
  // 18 passing >= 10 passing before: no penalty
  // 90 + 5 - 0 = 95
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{18, 2}, TestCounts{10, 0}, false), 95.0);
}

TEST(TestsScoreTest, BonusNeverLiftsScoreAboveHundred) {
  // 21 / 21 -> 100, bonus (1 / 21) * 10 = 0.476..., 100.476... clamps to 100.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{21, 0}, TestCounts{20, 0}, true), 100.0);
}

TEST(TestsScoreTest, LosingBaselinePassesCostsHalfPointPerPercentLost) {
  // pass_rate = 15 / 20 = 0.75 -> 75
  // same total: no bonus
  // penalty = ((20 - 15) / 20) * 50 = 12.5
  // 75 - 12.5 = 62.5
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{15, 5}, TestCounts{20, 0}, false), 62.5);
}

TEST(TestsScoreTest, AddedTestsNeverOutweighLostOnes) {
  // pass_rate = 8 / 12 -> 800 / 12 = 66.666...
  // 8 pass where 10 did: tests were lost, so the 2 added earn no bonus.
  // penalty = ((10 - 8) / 10) * 50 = 10
  // 800/12 - 10 = 56.666...
  EXPECT_NEAR(testsScore(TestCounts{8, 4}, TestCounts{10, 0}, false), 800.0 / 12.0 - 10.0,
              kTolerance);
  // docs/scoring.md's example: 704 tests passed at the base; the agent removed
  // one (counted as failed) and added 20 that pass: 723 / 724, no bonus,
  // 99.86..., where the bonus would have made it 100.
  EXPECT_NEAR(testsScore(TestCounts{723, 1}, TestCounts{704, 0}, false, /*lostTests=*/true),
              72300.0 / 724.0, kTolerance);
  // The same counts with nothing lost by name still earn the bonus, but a
  // run with a failing test never reads as perfect: at most 99.9.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{723, 1}, TestCounts{704, 0}, false), 99.9);
}

TEST(TestsScoreTest, HeavyRegressionIsClampedAtZero) {
  // pass_rate = 1 / 100 -> 1; penalty = ((100 - 1) / 100) * 50 = 49.5
  // 1 - 49.5 = -48.5 clamps to 0.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{1, 99}, TestCounts{100, 0}, false), 0.0);
}

TEST(TestsScoreTest, BaselineWithoutPassingTestsCannotBeRegressed) {
  // The base commit's suite fails entirely (0 of 5 pass): the penalty's
  // divisor would be 0, and there is nothing to regress.
  // pass_rate = 3 / 5 -> 60; same total: no bonus; no penalty -> 60.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{3, 2}, TestCounts{0, 5}, false), 60.0);
  // Still failing everything: 0 / 5 -> 0, and no division by zero.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{0, 5}, TestCounts{0, 5}, false), 0.0);
}

TEST(TestsScoreTest, MissingBaselineGivesPlainPassRate) {
  // 18 / 20 -> 90; a baseline would have added a bonus for any new tests,
  // but without one nothing is known to be new.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{18, 2}, std::nullopt, false), 90.0);
}

TEST(TestsScoreTest, UnparsedOutputFallsBackToExitCode) {
  EXPECT_DOUBLE_EQ(testsScore(std::nullopt, TestCounts{10, 0}, true), 100.0);
  EXPECT_DOUBLE_EQ(testsScore(std::nullopt, TestCounts{10, 0}, false), 0.0);
  EXPECT_DOUBLE_EQ(testsScore(std::nullopt, std::nullopt, true), 100.0);
}

TEST(TestsScoreTest, SuiteThatRanNothingScoresZeroWhenBaseRanTests) {
  // The base commit ran 10 tests; the agent's worktree ran none, even with
  // a successful exit (the agent deleted or disabled the suite).
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{0, 0}, TestCounts{10, 0}, true), 0.0);
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{0, 0, 4}, TestCounts{10, 0}, true), 0.0);
}

TEST(TestsScoreTest, SuiteThatRanNothingFollowsExitCodeWhenProjectHasNoTests) {
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{0, 0}, TestCounts{0, 0}, true), 100.0);
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{0, 0}, TestCounts{0, 0}, false), 0.0);
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{0, 0}, std::nullopt, true), 100.0);
}

TEST(TestsScoreTest, FirstTestsInProjectWithoutTestsEarnFullBonus) {
  // Base had no tests; agent adds 4, 3 pass.
  // pass_rate = 3 / 4 -> 75; bonus = ((4 - 0) / 4) * 10 = 10; no penalty.
  // 75 + 10 = 85
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{3, 1}, TestCounts{0, 0}, false), 85.0);
}

TEST(TestsScoreTest, CleanCountsFromFailedCommandScoreZero) {
  // Every counted test passed, yet the command failed: something outside the
  // counts failed, and the exit code wins.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{10, 0}, TestCounts{10, 0}, false), 0.0);
}

TEST(TestsScoreTest, CountedFailuresOutweighSuccessfulExit) {
  // A runner that exits 0 despite failures (`pytest || true`): 9 / 10 -> 90.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{9, 1}, std::nullopt, true), 90.0);
}

TEST(TestsScoreTest, SkippedTestsAreNotPartOfTheTotal) {
  // total = 9 + 1 = 10 (5 skipped left out): pass_rate 0.9 -> 90
  // not more tests than the base's 10: no bonus
  // penalty = ((10 - 9) / 10) * 50 = 5
  // 90 - 5 = 85
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{9, 1, 5}, TestCounts{10, 0, 0}, false), 85.0);
}

TEST(TestsScoreTest, NegativeCountsAreTreatedAsZero) {
  // {10, -3} reads as {10, 0}: 10 / 10 -> 100.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{10, -3}, std::nullopt, true), 100.0);
  // A negative baseline total reads as 0: bonus = (10 / 10) * 10, clamped: 100.
  EXPECT_DOUBLE_EQ(testsScore(TestCounts{10, 0}, TestCounts{-5, -5}, true), 100.0);
}

// ---------------------------------------------------------------------------
// Lint

TEST(LintScoreTest, NoProblemsBeforeOrAfterScoresHundred) {
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{0, 0}, LintCounts{0, 0}, true), 100.0);
}

TEST(LintScoreTest, NewErrorsCostTenAndNewWarningsTwo) {
  // new_errors = 3 - 1 = 2 -> 20; new_warnings = 7 - 4 = 3 -> 6
  // resolved = max(0, (1 + 4) - (3 + 7)) = 0
  // 100 - 20 - 6 + 0 = 74
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{3, 7}, LintCounts{1, 4}, false), 74.0);
}

TEST(LintScoreTest, TwoNewWarningsCostFourPoints) {
  // The specification's worked example calls this 90; its own formula says
  // 100 - 2 * 2 = 96.
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{0, 2}, LintCounts{0, 0}, true), 96.0);
}

TEST(LintScoreTest, ResolvedIssuesEarnOnePointEach) {
  // Trading ten warnings for two errors:
  // new_errors = 2 - 0 = 2 -> 20; new_warnings = max(0, 0 - 10) = 0
  // resolved = (0 + 10) - (2 + 0) = 8 -> +8
  // 100 - 20 - 0 + 8 = 88
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{2, 0}, LintCounts{0, 10}, true), 88.0);
  // Only resolutions: 100 + 6 clamps to 100.
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{1, 5}, LintCounts{2, 10}, true), 100.0);
}

TEST(LintScoreTest, ManyNewErrorsClampAtZero) {
  // 100 - 11 * 10 = -10 clamps to 0.
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{11, 0}, LintCounts{0, 0}, false), 0.0);
}

TEST(LintScoreTest, MissingBaselineCountsEveryProblemAsNew) {
  // 100 - 1 * 10 - 3 * 2 = 84
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{1, 3}, std::nullopt, false), 84.0);
}

TEST(LintScoreTest, UnparsedOutputFallsBackToExitCode) {
  EXPECT_DOUBLE_EQ(lintScore(std::nullopt, LintCounts{3, 3}, true), 100.0);
  EXPECT_DOUBLE_EQ(lintScore(std::nullopt, LintCounts{3, 3}, false), 0.0);
}

TEST(LintScoreTest, CleanReportFromFailedCommandScoresZero) {
  // Linters exit non-zero only when they report something; a clean report
  // with a failed exit means the linter did not really run.
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{0, 0}, LintCounts{0, 0}, false), 0.0);
}

TEST(LintScoreTest, WarningsWithFailedExitStillUseCounts) {
  // flake8 and ruff exit 1 for warnings alone: 100 - 3 * 2 = 94.
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{0, 3}, LintCounts{0, 0}, false), 94.0);
}

TEST(LintScoreTest, NegativeCountsAreTreatedAsZero) {
  // {-4, 2} reads as {0, 2}: 100 - 2 * 2 = 96.
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{-4, 2}, LintCounts{-1, -1}, true), 96.0);
}

TEST(LintScoreTest, HugeCountsDoNotOverflow) {
  constexpr int kMax = std::numeric_limits<int>::max();
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{kMax, kMax}, LintCounts{0, 0}, false), 0.0);
  // All resolved: 100 + a very large bonus, clamped.
  EXPECT_DOUBLE_EQ(lintScore(LintCounts{0, 1}, LintCounts{kMax, kMax}, false), 100.0);
}

// ---------------------------------------------------------------------------
// Diff size

TEST(DiffSizeScoreTest, SmallFocusedChangeScoresHundred) {
  // churn 60 + 40 = 100 <= 100 -> 100; 5 files <= 5 -> 100.
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{60, 40, 5}), 100.0);
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{0, 0, 0}), 100.0);
}

TEST(DiffSizeScoreTest, ChurnDecaysLinearlyFromHundredToSixtyAtFiveHundred) {
  // churn 300: 100 - ((300 - 100) / 400) * 40 = 100 - 20 = 80
  // 0.6 * 80 + 0.4 * 100 = 48 + 40 = 88
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{200, 100, 1}), 88.0);
  // churn 500: 100 - (400 / 400) * 40 = 60 -> 0.6 * 60 + 40 = 76
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{500, 0, 1}), 76.0);
  // churn 101: 100 - (1 / 400) * 40 = 99.9 -> 0.6 * 99.9 + 40 = 99.94
  EXPECT_NEAR(diffSizeScore(DiffStats{101, 0, 1}), 99.94, kTolerance);
}

TEST(DiffSizeScoreTest, ChurnAboveFiveHundredDecaysToFloorOfTwenty) {
  // churn 1000: max(20, 60 - ((1000 - 500) / 1000) * 40) = 60 - 20 = 40
  // 0.6 * 40 + 40 = 64
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{600, 400, 2}), 64.0);
  // churn 1500: 60 - 40 = 20 -> 0.6 * 20 + 40 = 52
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{1000, 500, 2}), 52.0);
  // churn 5000: max(20, 60 - 180) = 20 -> 52
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{5000, 0, 1}), 52.0);
}

TEST(DiffSizeScoreTest, FilesTouchedDecayToFloorOfThirty) {
  // churn 10 -> 100 (0.6 * 100 = 60) in every case below.
  // 10 files: 100 - ((10 - 5) / 10) * 30 = 85 -> 60 + 0.4 * 85 = 94
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{10, 0, 10}), 94.0);
  // 15 files: 100 - 30 = 70 -> 60 + 28 = 88
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{10, 0, 15}), 88.0);
  // 25 files: max(30, 70 - ((25 - 15) / 20) * 40) = 50 -> 60 + 20 = 80
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{10, 0, 25}), 80.0);
  // 100 files: max(30, 70 - 170) = 30 -> 60 + 12 = 72
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{10, 0, 100}), 72.0);
}

TEST(DiffSizeScoreTest, ChurnAndFilesCombineSixtyForty) {
  // churn 500 -> 60; 35 files: max(30, 70 - (20 / 20) * 40) = 30
  // 0.6 * 60 + 0.4 * 30 = 36 + 12 = 48
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{300, 200, 35}), 48.0);
}

TEST(DiffSizeScoreTest, NegativeCountsAreTreatedAsZero) {
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{-50, -50, -3}), 100.0);
}

TEST(DiffSizeScoreTest, HugeCountsDoNotOverflow) {
  constexpr int kMax = std::numeric_limits<int>::max();
  // Both curves at their floors: 0.6 * 20 + 0.4 * 30 = 24.
  EXPECT_DOUBLE_EQ(diffSizeScore(DiffStats{kMax, kMax, kMax}), 24.0);
}

// ---------------------------------------------------------------------------
// Speed

TEST(SpeedScoreTest, FastestAgentScoresHundred) { EXPECT_DOUBLE_EQ(speedScore(36.0, 36.0), 100.0); }

TEST(SpeedScoreTest, TwiceAsSlowScoresFifty) {
  // 36 / 72 * 100 = 50
  EXPECT_DOUBLE_EQ(speedScore(36.0, 72.0), 50.0);
}

TEST(SpeedScoreTest, SpecificationExampleDurations) {
  // 36 / 45 * 100 = 80; 36 / 51 * 100 = 70.588... (the specification rounds it to 70).
  EXPECT_DOUBLE_EQ(speedScore(36.0, 45.0), 80.0);
  EXPECT_NEAR(speedScore(36.0, 51.0), 3600.0 / 51.0, kTolerance);
}

TEST(SpeedScoreTest, SingleAgentIsItsOwnFastest) {
  EXPECT_DOUBLE_EQ(speedScore(12.5, 12.5), 100.0);
}

TEST(SpeedScoreTest, ZeroOrNegativeDurationCountsAsFastest) {
  EXPECT_DOUBLE_EQ(speedScore(10.0, 0.0), 100.0);
  EXPECT_DOUBLE_EQ(speedScore(0.0, 0.0), 100.0);
  EXPECT_DOUBLE_EQ(speedScore(10.0, -1.0), 100.0);
}

TEST(SpeedScoreTest, ZeroLengthFastestLeavesRealRunsAtZero) {
  // 0 / 10 * 100 = 0
  EXPECT_DOUBLE_EQ(speedScore(0.0, 10.0), 0.0);
}

TEST(SpeedScoreTest, FastestSlowerThanDurationIsClamped) {
  // A caller that passes a fastest larger than the duration: 20 / 10 * 100 = 200 -> 100.
  EXPECT_DOUBLE_EQ(speedScore(20.0, 10.0), 100.0);
}

TEST(SpeedScoreTest, NotANumberScoresZero) {
  EXPECT_DOUBLE_EQ(speedScore(10.0, kNaN), 0.0);
  EXPECT_DOUBLE_EQ(speedScore(kNaN, 10.0), 0.0);
}

// ---------------------------------------------------------------------------
// Composite

ScoringWeights defaultWeights() { return ScoringWeights{}; }  // 30/30/15/15/10

TEST(CompositeTest, DefaultWeightsAreTheSpecifications) {
  const ScoringWeights w = defaultWeights();
  EXPECT_EQ(w.build + w.tests + w.lint + w.diffSize + w.speed, 100.0);
}

TEST(CompositeTest, SpecificationExampleFromItsTable) {
  // The dimension scores as the specification's table gives them.
  // Claude Code: (100*30 + 95*30 + 90*15 + 75*15 + 80*10) / 100
  //            = (3000 + 2850 + 1350 + 1125 + 800) / 100 = 9125 / 100 = 91.25
  //   (the specification prints 91.0)
  EXPECT_DOUBLE_EQ(composite(Breakdown{100, 95, 90, 75, 80}, defaultWeights()), 91.25);
  // Codex CLI: (3000 + 80*30 + 100*15 + 95*15 + 100*10) / 100
  //          = (3000 + 2400 + 1500 + 1425 + 1000) / 100 = 9325 / 100 = 93.25 (printed 93.3)
  EXPECT_DOUBLE_EQ(composite(Breakdown{100, 80, 100, 95, 100}, defaultWeights()), 93.25);
  // Cursor CLI, build failed so tests and lint are 0 but still weighed:
  // (0 + 0 + 0 + 60*15 + 70*10) / 100 = (900 + 700) / 100 = 16
  EXPECT_DOUBLE_EQ(composite(Breakdown{0, 0, 0, 60, 70}, defaultWeights()), 16.0);
}

TEST(CompositeTest, SpecificationExampleRecomputedFromItsFacts) {
  // The table's facts run through the formulas instead of its rounded scores.
  // Claude Code: 1 new test, all passing -> 100 (not 95); 2 new warnings -> 96
  // (not 90); 45 s against the fastest 36 s -> 80; diff 75 as given.
  const double claudeTests = testsScore(TestCounts{11, 0}, TestCounts{10, 0}, true);
  const double claudeLint = lintScore(LintCounts{0, 2}, LintCounts{0, 0}, true);
  EXPECT_DOUBLE_EQ(claudeTests, 100.0);
  EXPECT_DOUBLE_EQ(claudeLint, 96.0);
  // (100*30 + 100*30 + 96*15 + 75*15 + 80*10) / 100
  // = (3000 + 3000 + 1440 + 1125 + 800) / 100 = 9365 / 100 = 93.65
  const Breakdown claude{buildScore(true), claudeTests, claudeLint, 75, speedScore(36, 45)};
  EXPECT_NEAR(composite(claude, defaultWeights()), 93.65, kTolerance);

  // Codex CLI: all pass, none new -> 100 (not 80); clean -> 100; fastest -> 100.
  // (3000 + 3000 + 1500 + 95*15 + 1000) / 100 = (8500 + 1425) / 100 = 99.25
  const Breakdown codex{buildScore(true), testsScore(TestCounts{10, 0}, TestCounts{10, 0}, true),
                        lintScore(LintCounts{0, 0}, LintCounts{0, 0}, true), 95,
                        speedScore(36, 36)};
  EXPECT_NEAR(composite(codex, defaultWeights()), 99.25, kTolerance);

  // Cursor CLI: build failed (tests and lint short-circuit to 0), 51 s.
  // speed = 3600 / 51 = 70.588...; (60*15 + (3600/51)*10) / 100 = 9 + 360/51 = 16.0588...
  const Breakdown cursor{buildScore(false), 0.0, 0.0, 60, speedScore(36, 51)};
  EXPECT_NEAR(composite(cursor, defaultWeights()), 9.0 + 360.0 / 51.0, kTolerance);
}

TEST(CompositeTest, AbsentDimensionsAreLeftOutAndWeightsRenormalised) {
  // No test_command: weights 30 + 15 + 15 + 10 = 70.
  // (100*30 + 80*15 + 90*15 + 50*10) / 70 = (3000 + 1200 + 1350 + 500) / 70 = 6050 / 70
  const Breakdown noTests{100, std::nullopt, 80, 90, 50};
  EXPECT_NEAR(composite(noTests, defaultWeights()), 6050.0 / 70.0, kTolerance);
  // The same as scaling the remaining weights up to 100 (30/70 -> 42.857...).
  ScoringWeights scaled{30.0 * 100 / 70, 0.0, 15.0 * 100 / 70, 15.0 * 100 / 70, 10.0 * 100 / 70};
  EXPECT_NEAR(composite(Breakdown{100, 0, 80, 90, 50}, scaled), 6050.0 / 70.0, kTolerance);
}

TEST(CompositeTest, AbsentDimensionIsNotScoredAsZero) {
  // Only build and diff size: (100*30 + 50*15) / 45 = 3750 / 45 = 83.333...
  const Breakdown partial{100, std::nullopt, std::nullopt, 50, std::nullopt};
  EXPECT_NEAR(composite(partial, defaultWeights()), 3750.0 / 45.0, kTolerance);
}

TEST(CompositeTest, NothingPresentScoresZero) {
  EXPECT_DOUBLE_EQ(composite(Breakdown{}, defaultWeights()), 0.0);
}

TEST(CompositeTest, ZeroWeightsForEveryPresentDimensionScoreZero) {
  ScoringWeights weights{0, 0, 0, 0, 10};
  // Speed, the only weighted dimension, is absent.
  EXPECT_DOUBLE_EQ(composite(Breakdown{100, 100, 100, 100, std::nullopt}, weights), 0.0);
}

TEST(CompositeTest, ZeroWeightDimensionDoesNotCount) {
  // weights build 50, tests 0, speed 50: (100*50 + 0*0 + 40*50) / 100 = 70
  ScoringWeights weights{50, 0, 0, 0, 50};
  EXPECT_DOUBLE_EQ(composite(Breakdown{100, 0, std::nullopt, std::nullopt, 40}, weights), 70.0);
}

TEST(CompositeTest, NegativeOrNotANumberWeightsCountAsZero) {
  // lint weight -15 and speed weight NaN are ignored:
  // (100*30 + 50*30 + 70*15) / 75 = (3000 + 1500 + 1050) / 75 = 5550 / 75 = 74
  ScoringWeights weights{30, 30, -15, 15, kNaN};
  EXPECT_DOUBLE_EQ(composite(Breakdown{100, 50, 0, 70, 0}, weights), 74.0);
}

TEST(CompositeTest, OutOfRangeDimensionScoresAreClamped) {
  // build 150 -> 100, tests NaN -> 0, lint -20 -> 0:
  // (100*30 + 0*30 + 0*15) / 75 = 3000 / 75 = 40
  const Breakdown odd{150, kNaN, -20, std::nullopt, std::nullopt};
  EXPECT_DOUBLE_EQ(composite(odd, defaultWeights()), 40.0);
}

}  // namespace
}  // namespace hydra::core::scoring
