#pragma once

// What scoring produces: every check's raw result, every agent's breakdown
// and total, the ranking, and the flags the thresholds set. Each type has one
// JSON form (its described members, read and written by protocol/wire.h, or
// the tag_invoke pairs below), used by the records on disk,
// `hydra scores --json` and the protocol alike.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/describe/class.hpp>
#include <boost/json/conversion.hpp>
#include <boost/json/value.hpp>

#include "core/config/config.h"
#include "core/scoring/status.h"
#include "core/scoring/formulas.h"
#include "core/util/json_fields.h"

namespace hydra::core::scoring {

// The described structs here convert through protocol/wire.h (ADL).
using protocol::tag_invoke;

// One run of a configured command (build, tests or lint) in one worktree.
struct CheckResult {
  std::string command;
  bool skipped = false;  // not run: the build had failed
  std::optional<int> exitCode;
  std::optional<int> signal;
  bool timedOut = false;
  std::string error;  // could not run at all
  std::int64_t durationMs = 0;
  std::string output;  // the end of the output, capped; the whole is in the check's log
  bool outputTruncated = false;
  std::optional<TestCounts> tests;  // tests only, when a parser read them
  // Tests only: each test the output or report named, with its verdict.
  std::map<std::string, TestOutcome> testCases;
  // Tests only, ctest: the ctest tests whose cases were read (TestParse::readByCase).
  std::vector<std::string> testsReadByCase;
  std::optional<LintCounts> lint;   // lint only
  // Build and lint: the problems its output names at a file and line
  // (parseFindings), paths relative to the checkout when they lie in it.
  std::vector<Finding> findings;
  std::string format;               // the parser that read the counts

  bool passed() const { return !skipped && exitCode && *exitCode == 0; }
};

// nullopt: the command is not configured.
struct CheckSet {
  std::optional<CheckResult> build;
  std::optional<CheckResult> tests;
  std::optional<CheckResult> lint;

  static constexpr std::string_view wireNullable[] = {"build", "tests", "lint"};
};
BOOST_DESCRIBE_STRUCT(CheckSet, (), (build, tests, lint))

struct Baseline {
  std::string commit;
  CheckSet checks;
  bool fromCache = false;

  static constexpr std::string_view wireRequired[] = {"commit"};
};
BOOST_DESCRIBE_STRUCT(Baseline, (), (commit, checks, fromCache))

// An agent's tests compared by name with the base commit's.
struct TestChanges {
  std::vector<std::string> fixed;    // failed at the base, pass now
  std::vector<std::string> broken;   // passed at the base, fail now
  std::vector<std::string> removed;  // ran at the base, did not run now: scored as failed
  // Ran to a verdict at the base, skipped or expected to fail now
  // (@pytest.mark.xfail on the failing test): scored as failed, like removed.
  std::vector<std::string> skipped;
  // The tests that ran at the base and count as failed now whatever the run said.
  std::size_t scoredAsFailed() const { return removed.size() + skipped.size(); }
  bool operator==(const TestChanges&) const = default;
};

// The tests of `agent` by name against `base`'s. nullopt unless both runs name
// every test they counted as passed or failed (a runner printing only the
// failures' names, such as pytest without -v or -rA, cannot tell a removed
// test from a passing one).
std::optional<TestChanges> compareTests(const CheckResult& base, const CheckResult& agent);

// An agent changed its build command's build scripts (core/checks/build_script.h):
// the build run again with the base's versions of them over its tree.
struct BuildScriptCheck {
  std::vector<std::string> changed;  // the build scripts it changed, put back as the base has them
  CheckResult baseBuild;             // the build command with those put back
  // The files it added or removed that its change to them follows (a new
  // source listed in the Makefile): why the base's scripts may fail on its tree.
  std::vector<std::string> follows;
};

struct AgentScore {
  int rank = 0;
  std::string agentId;
  std::string agent;
  AgentStatus status = AgentStatus::Completed;
  double total = 0;
  Breakdown breakdown;
  CheckSet checks;
  DiffStats diff;
  std::optional<std::int64_t> durationMs;
  // Why it can never be the winner, be merged or auto-merged ("failed",
  // "timed out", "cancelled", "escaped", "changed nothing", "result too
  // large: ..."); empty when it can.
  // Set by rankAgents(). An ineligible agent is still ranked, after every
  // eligible one.
  std::string ineligible;
  // It changed something outside its worktree (AgentFinished::escapes).
  bool escaped = false;
  // Its work was over a result limit and not committed
  // (AgentFinished::tooLarge), or its run over a resource limit
  // (AgentFinished::overLimit): the words. rankAgents() makes them
  // `ineligible`, which is what the record keeps.
  std::string overLimit;
  // Set by rankAgents() when the tests could be compared by name.
  std::optional<TestChanges> testChanges;
  // Set by rankAgents() when both runs had tests but one of them did not name
  // each test (a runner or format that prints only counts): its tests were
  // compared by counts only, so a deleted test could read as a passing one.
  bool testsByCountsOnly = false;
  // What its CLI reported and the race found that rule out merging it
  // automatically, though it may win: "2 tool calls denied", "changed
  // protected files: tests/conftest.py". Set by rankAgents() from the members
  // below.
  std::vector<std::string> flags;
  int deniedToolCalls = 0;
  // The protected files it changed ([scoring] protected_paths), and the mode
  // its checks ran with ("flag" or "restore").
  std::vector<std::string> protectedChanges;
  std::string protectedMode;
  // The files it added that would have run in place of the test runner
  // (core/checks/runner_shadows.h): removed for its checks whatever the mode.
  std::vector<std::string> runnerShadows;
  // Where the lines it added look like a secret ("leak.txt:1";
  // core/checks/added_secrets.h).
  std::vector<std::string> addedSecrets;
  // Set when it changed a build script and its own build passed.
  std::optional<BuildScriptCheck> buildScript;

  // Its build passed with its own build scripts but not with the base's.
  bool builtOnlyByOwnScript() const;
  // That, and its change follows no file it added or removed: its build counts as failed.
  bool buildScoredAsFailed() const;

  bool eligible() const { return ineligible.empty(); }
};

// Why an agent with this status and diff can never win; empty when it can.
// `overLimit` (AgentScore::overLimit) is the reason itself when set.
std::string ineligibility(AgentStatus status, const DiffStats& diff, bool escaped = false,
                          const std::string& overLimit = {});

struct RaceScores {
  std::string raceId;
  std::vector<AgentScore> rankings;   // best first, eligible agents before the others
  // agentId of rank 1 when it is eligible and reached fail_maximum; nullopt
  // when all failed.
  std::optional<std::string> winner;
  // The winner reached [scoring.thresholds] auto_merge_minimum and has no flags.
  bool autoMergeEligible = false;
  // [scoring] auto_merge was on when the race was scored: whether being
  // eligible means anything will happen.
  bool autoMergeEnabled = false;
  // No agent is eligible, or even the best eligible one is below fail_maximum.
  bool allFailed = false;
  Baseline baseline;

  static constexpr std::string_view wireRequired[] = {"raceId"};
  static constexpr std::string_view wireNullable[] = {"winner"};
};
BOOST_DESCRIBE_STRUCT(RaceScores, (), (raceId, rankings, winner, autoMergeEligible, autoMergeEnabled, allFailed, baseline))

// Computes every agent's breakdown and total from its checks, diff and
// duration, then ranks them: eligible before ineligible, then total, tests,
// diff size, speed, agent id.
// `agents` come with checks, diff and duration filled in.
RaceScores rankAgents(std::string raceId, std::vector<AgentScore> agents, Baseline baseline,
                      const ScoringConfig& config);

void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const CheckResult& x);
CheckResult tag_invoke(boost::json::value_to_tag<CheckResult>, const boost::json::value& v);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const AgentScore& x);
AgentScore tag_invoke(boost::json::value_to_tag<AgentScore>, const boost::json::value& v);

}  // namespace hydra::core::scoring
