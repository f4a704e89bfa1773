// The evaluator against real repositories, worktrees and check commands, and
// the ranking rules on hand-made results.

#include "core/scoring/evaluator.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "core/git/git.h"
#include "core/git/worktree.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::scoring {
namespace {

namespace fs = std::filesystem;
using core::testing::TempRepo;

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
  // speed: fastest completed run is broken's 10 s -> 10/20 * 100 = 50.
  EXPECT_DOUBLE_EQ(*fixer.breakdown.speed, 50.0);
  // (100*30 + 100*30 + 100*15 + 100*15 + 50*10) / 100 = 95.
  EXPECT_DOUBLE_EQ(fixer.total, 95.0);

  const AgentScore& broken = scores.rankings[2];
  EXPECT_DOUBLE_EQ(*broken.breakdown.build, 0.0);
  EXPECT_DOUBLE_EQ(*broken.breakdown.tests, 0.0);  // short-circuit
  EXPECT_DOUBLE_EQ(*broken.breakdown.lint, 0.0);
  EXPECT_DOUBLE_EQ(*broken.breakdown.speed, 100.0);
  // (0 + 0 + 0 + 100*15 + 100*10) / 100 = 25.
  EXPECT_DOUBLE_EQ(broken.total, 25.0);
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
  c.testCommand = "make test";
  CheckSet s;
  s.tests = passed("make test");
  s.tests->tests = TestCounts{4, 1, 0};
  auto scores = rankAgents("r", {agent("only", 5000, {10, 0, 1}, s)}, {}, c);
  const auto& a = scores.rankings[0];
  EXPECT_FALSE(a.breakdown.build);
  EXPECT_FALSE(a.breakdown.lint);
  // tests 80 (4/5, no baseline), diff 100, speed 100 (single agent):
  // (80*30 + 100*15 + 100*10) / 55 = 4900 / 55
  EXPECT_NEAR(a.total, 4900.0 / 55.0, 1e-9);
}

TEST(RankAgentsTest, AnAgentThatDidNotCompleteIsNeverFast) {
  auto scores = rankAgents("r",
                           {agent("crashed", 100, {0, 0, 0}, {}, AgentStatus::Failed),
                            agent("done", 4000, {0, 0, 0}, {})},
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
  // (15*100 + 10*100) / 100 = 25 < fail_maximum 30
  EXPECT_DOUBLE_EQ(bad.rankings[0].total, 25.0);
  EXPECT_TRUE(bad.allFailed);
  EXPECT_FALSE(bad.autoMergeEligible);

  c.thresholds.autoMergeMinimum = 100.5;
  auto strict = rankAgents("r", {agent("a", 1000, {1, 0, 1}, checksWith(5, 0, 0))}, baselineWith(5, 0), c);
  EXPECT_FALSE(strict.autoMergeEligible);
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

TEST(BaselineKeyTest, DependsOnTheCommitAndEveryCommand) {
  ScoringConfig c = allCommands();
  std::string k = baselineKey("abc", c);
  EXPECT_EQ(k, baselineKey("abc", c));
  EXPECT_NE(k, baselineKey("abd", c));
  ScoringConfig other = c;
  other.testCommand = "make check";
  EXPECT_NE(k, baselineKey("abc", other));
  other = c;
  other.lintFormat = "gcc";
  EXPECT_NE(k, baselineKey("abc", other));
}

// --- the evaluator on real repositories ------------------------------------------

class EvaluatorTest : public ::testing::Test {
 protected:
  EvaluatorTest() {
    repo.isolateLibgit2();
    // A tiny project: `check.sh NAME` passes unless the file FAIL_NAME exists;
    // every run is logged outside the repository.
    fs::create_directories(repo.outside());
    repo.write("check.sh",
               "#!/bin/sh\n"
               "echo \"$1 $(pwd)\" >> " + (repo.outside() / "runs.log").string() + "\n"
               "if [ -e FAIL_$1 ]; then echo \"$1 failed\"; exit 1; fi\n"
               "if [ \"$1\" = tests ]; then echo \"3 passed, 1 skipped in 0.01s\"; fi\n"
               "exit 0\n");
    repo.commit("project");
    base = repo.git("rev-parse HEAD");
    config.buildCommand = "sh check.sh build";
    config.testCommand = "sh check.sh tests";
    config.lintCommand = "sh check.sh lint";
    config.timeoutPerCheckSeconds = 20;
  }

  // An agent's result: a worktree with `files` written and committed.
  AgentRecord makeAgent(const std::string& id, const std::map<std::string, std::string>& files,
                        std::int64_t durationMs = 1000) {
    Worktree wt = worktrees.create(id, base, "t1");
    for (const auto& [path, content] : files) {
      fs::create_directories((wt.path / path).parent_path());
      std::ofstream(wt.path / path) << content;
    }
    worktrees.commitAll(wt, "agent " + id);
    AgentRecord a;
    a.agentId = id;
    a.agent = id;
    a.status = AgentStatus::Completed;
    a.branch = wt.branch;
    a.worktree = wt.path.string();
    a.durationMs = durationMs;
    a.commit = worktrees.headCommit(wt);
    return a;
  }

  RaceRecord raceWith(std::vector<AgentRecord> agents) {
    RaceRecord r;
    r.id = store.newRaceId();
    r.task = "t";
    r.baseRef = "HEAD";
    r.baseCommit = base;
    r.repoRoot = repo.root().string();
    r.agents = std::move(agents);
    store.save(r);
    return r;
  }

  RaceScores evaluate(const RaceRecord& race, EvaluatorOptions options = {}) {
    boost::asio::io_context io;
    Evaluator evaluator(io, repo.root(), config, store, worktrees, options);
    std::optional<RaceScores> result;
    evaluator.evaluate(race, [&](RaceScores s) { result = std::move(s); });
    io.run_for(std::chrono::seconds(60));  // returns once the evaluation is done
    EXPECT_TRUE(result) << "evaluation did not finish";
    return result.value_or(RaceScores{});
  }

  std::vector<std::string> runs() {
    std::ifstream in(repo.outside() / "runs.log");
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  git::LibGit2 libgit2;
  TempRepo repo;
  std::string base;
  ScoringConfig config;
  RaceStore store{repo.root()};
  WorktreeManager worktrees{repo.root(), ".hydra-workspaces"};
};

TEST_F(EvaluatorTest, ScoresEveryAgentFromItsOwnWorktreeAndDiff) {
  auto race = raceWith({makeAgent("good", {{"src/new.txt", "one\ntwo\n"}}),
                        makeAgent("broken", {{"FAIL_build", "x\n"}})});
  auto scores = evaluate(race);
  ASSERT_EQ(scores.rankings.size(), 2u);
  EXPECT_EQ(scores.winner, "good");
  const AgentScore& good = scores.rankings[0];
  EXPECT_TRUE(good.checks.build->passed());
  ASSERT_TRUE(good.checks.tests->tests);
  EXPECT_EQ(*good.checks.tests->tests, (TestCounts{3, 0, 1}));
  EXPECT_EQ(good.checks.tests->format, "pytest");
  EXPECT_EQ(good.diff, (DiffStats{2, 0, 1}));

  const AgentScore& broken = scores.rankings[1];
  EXPECT_FALSE(broken.checks.build->passed());
  EXPECT_NE(broken.checks.build->output.find("build failed"), std::string::npos);
  EXPECT_TRUE(broken.checks.tests->skipped);  // short-circuit: not run
  EXPECT_TRUE(broken.checks.lint->skipped);
  for (const auto& line : runs()) {
    EXPECT_FALSE(line.rfind("tests", 0) == 0 && line.find("broken-t1") != std::string::npos) << line;
  }
  // The record on disk says the same.
  EXPECT_TRUE(fs::exists(store.scoresPath(race.id)));
  EXPECT_TRUE(fs::exists(store.raceDir(race.id) / "checks" / "good.build.log"));
}

TEST_F(EvaluatorTest, BaselineRunsInItsOwnWorktreeNeverTheUsersDirtyTree) {
  // The user's working tree would fail the build; the base commit does not.
  repo.write("FAIL_build", "work in progress\n");
  auto race = raceWith({makeAgent("a", {{"x.txt", "x\n"}})});
  auto scores = evaluate(race);
  ASSERT_TRUE(scores.baseline.checks.build);
  EXPECT_TRUE(scores.baseline.checks.build->passed());
  for (const auto& line : runs()) {
    EXPECT_EQ(line.find(repo.root().string() + "\n"), std::string::npos);
    EXPECT_NE(line, "build " + repo.root().string()) << "a check ran in the user's working tree";
  }
  // The baseline's worktree and branch are gone afterwards.
  EXPECT_EQ(repo.git("branch --list 'hydra/_baseline*'"), "");
  EXPECT_TRUE(fs::exists(repo.root() / "FAIL_build"));
}

TEST_F(EvaluatorTest, BaselineIsCachedByCommitAndCommands) {
  auto first = evaluate(raceWith({makeAgent("a", {{"x.txt", "x\n"}})}));
  EXPECT_FALSE(first.baseline.fromCache);
  auto baselineRuns = [&] {
    int n = 0;
    for (const auto& line : runs()) n += line.find("_baseline") != std::string::npos;
    return n;
  };
  EXPECT_EQ(baselineRuns(), 3);  // build, tests, lint

  auto second = evaluate(raceWith({makeAgent("b", {{"y.txt", "y\n"}})}));
  EXPECT_TRUE(second.baseline.fromCache);
  EXPECT_EQ(baselineRuns(), 3);  // not run again
  EXPECT_EQ(second.baseline.checks.tests->tests, first.baseline.checks.tests->tests);

  config.lintCommand = "sh check.sh lint --strict";
  auto third = evaluate(raceWith({makeAgent("c", {{"z.txt", "z\n"}})}));
  EXPECT_FALSE(third.baseline.fromCache);  // other commands: another key
  EXPECT_EQ(baselineRuns(), 6);
}

TEST_F(EvaluatorTest, HungCheckIsKilledAtItsTimeoutWithEverythingItStarted) {
  fs::path pidFile = repo.outside() / "child.pid";
  config.testCommand = "sh -c 'trap \"\" TERM; sleep 60 & echo $! > " + pidFile.string() + "; wait'";
  config.timeoutPerCheckSeconds = 1;
  auto started = std::chrono::steady_clock::now();
  auto scores = evaluate(raceWith({makeAgent("a", {{"x.txt", "x\n"}})}));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  const AgentScore& a = scores.rankings.at(0);
  EXPECT_TRUE(a.checks.tests->timedOut);
  EXPECT_DOUBLE_EQ(*a.breakdown.tests, 0.0);
  std::ifstream in(pidFile);
  pid_t child = 0;
  in >> child;
  ASSERT_GT(child, 0);
  // Give init a moment to reap what was killed.
  for (int i = 0; i < 100 && ::kill(child, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(::kill(child, 0), 0) << "the check's child outlived its timeout";
}

TEST_F(EvaluatorTest, ParallelismBoundsHowManyWorktreesAreCheckedAtOnce) {
  fs::path log = repo.outside() / "spans.log";
  config.buildCommand = "echo start >> " + log.string() + "; sleep 0.3; echo end >> " + log.string();
  config.testCommand.reset();
  config.lintCommand.reset();
  EvaluatorOptions options;
  options.parallelism = 1;
  evaluate(raceWith({makeAgent("a", {{"a.txt", "a\n"}}), makeAgent("b", {{"b.txt", "b\n"}})}), options);
  std::ifstream in(log);
  int open = 0, most = 0, starts = 0;
  for (std::string line; std::getline(in, line);) {
    open += line == "start" ? 1 : -1;
    starts += line == "start";
    most = std::max(most, open);
  }
  EXPECT_EQ(starts, 3);  // the baseline and two agents
  EXPECT_EQ(most, 1);
}

TEST_F(EvaluatorTest, MissingWorktreeIsScoredAsFailedChecks) {
  AgentRecord gone;
  gone.agentId = "gone";
  gone.agent = "gone";
  gone.status = AgentStatus::Failed;
  gone.worktree = (repo.root() / ".hydra-workspaces" / "gone-t1").string();
  auto scores = evaluate(raceWith({gone, makeAgent("ok", {{"a.txt", "a\n"}})}));
  ASSERT_EQ(scores.rankings.size(), 2u);
  EXPECT_EQ(scores.rankings[1].agentId, "gone");
  EXPECT_NE(scores.rankings[1].checks.build->error.find("does not exist"), std::string::npos);
  EXPECT_DOUBLE_EQ(*scores.rankings[1].breakdown.build, 0.0);
}

}  // namespace
}  // namespace hydra::core::scoring
