#include "core/scoring/scores.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <utility>

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include "core/util/json_fields.h"

namespace hydra::core::scoring {

namespace json = boost::json;

namespace {

std::optional<TestCounts> testCounts(const std::optional<CheckResult>& check) {
  return check ? check->tests : std::nullopt;
}
std::optional<LintCounts> lintCounts(const std::optional<CheckResult>& check) {
  return check ? check->lint : std::nullopt;
}

// The counts an agent's tests are scored on: every test that ran at the base
// and not for it (removed, or skipped or xfailed now) counts as failed, so
// deleting or skipping a failing test is no fix.
std::optional<TestCounts> scoredTestCounts(const AgentScore& a) {
  std::optional<TestCounts> counts = testCounts(a.checks.tests);
  if (counts && a.testChanges) {
    counts->failed = static_cast<int>(
        std::min<long long>(INT_MAX, static_cast<long long>(counts->failed) + a.testChanges->scoredAsFailed()));
    counts->skipped = std::max(0, counts->skipped - static_cast<int>(a.testChanges->skipped.size()));
  }
  return counts;
}

// Whether `a` takes part in the speed comparison: only an agent that finished
// its work, built, and can win is raced against. One whose build failed is
// not fast, it stopped early, and the winner's speed is never measured
// against it (docs/scoring.md).
bool comparedOnSpeed(const AgentScore& a) {
  const bool built = !a.checks.build || (a.checks.build->passed() && !a.buildScoredAsFailed());
  return a.status == AgentStatus::Completed && a.durationMs && built && a.eligible();
}

// An agent's run time as speed compares it: a run shorter than a second counts
// as one second. Below that the difference is how long a process took to
// start, not how fast the agent worked: 20 ms against 24 ms would otherwise
// score 100 against 83 and decide a race between two runs that were equally
// quick (docs/scoring.md).
constexpr double kShortestComparedRunSeconds = 1.0;
double speedSeconds(const AgentScore& a) {
  return std::max(static_cast<double>(*a.durationMs) / 1000.0, kShortestComparedRunSeconds);
}

// ctest names each test it registers, and a project often registers a whole
// test executable as one (cJSON's misc_tests holds 25 test cases). Unless the
// framework's own names were read (`ctest -V`, core/scoring/test_parsers.cpp,
// naming them "executable::case"), the name stops at the executable, so a
// test case deleted or switched off inside a changed test file reads the same
// as one fixed. So an agent that changed a protected file that its checks ran
// with (protected_mode "flag") cannot prove its tests when any executable
// that ran was named only whole, in its run or at the base (where it may have
// crashed before its framework printed a verdict, so which cases it held is
// unknown): they score 0. This holds per executable, not per run: a GoogleTest
// executable read by its cases proves nothing about a Catch2 one beside it.
// Under "restore" its checks ran the base's files, which prove them.
// The ctest tests named only whole in a run, that ran (a skipped one is
// compared by its name, as ctest's own verdict).
std::vector<std::string> namedOnlyWhole(const CheckResult& check) {
  std::vector<std::string> whole;
  for (const auto& [name, outcome] : check.testCases) {
    if (outcome == TestOutcome::Skipped || name.find("::") != std::string::npos) continue;
    if (std::find(check.testsReadByCase.begin(), check.testsReadByCase.end(), name) != check.testsReadByCase.end())
      continue;
    whole.push_back(name);
  }
  return whole;
}

// The executables that leave `a`'s tests unprovable (empty: they are provable).
std::vector<std::string> unprovableExecutables(const AgentScore& a, const std::optional<CheckResult>& base) {
  if (a.protectedChanges.empty() || a.protectedMode == "restore") return {};
  if (!a.checks.tests || a.checks.tests->format != "ctest") return {};
  std::vector<std::string> whole = namedOnlyWhole(*a.checks.tests);
  if (base && base->format == "ctest") {
    for (std::string& name : namedOnlyWhole(*base))
      if (std::find(whole.begin(), whole.end(), name) == whole.end()) whole.push_back(std::move(name));
  }
  return whole;
}

bool testsUnprovable(const AgentScore& a, const std::optional<CheckResult>& base) {
  return !unprovableExecutables(a, base).empty();
}

// Scores each dimension of one agent. A failed build short-circuits: tests
// and lint were not run and score 0.
Breakdown breakdownOf(const AgentScore& a, const Baseline& baseline, std::optional<double> fastestSeconds) {
  Breakdown b;
  // A build that passed only with the agent's own changed build scripts, for
  // no file it added or removed, is a failed build: so are its tests and lint.
  const bool buildFailed = a.checks.build && (!a.checks.build->passed() || a.buildScoredAsFailed());
  if (a.checks.build) b.build = buildScore(!buildFailed);
  if (a.checks.tests) {
    // Removed or newly skipped tests fail the run: its exit code cannot vouch for them.
    const bool passed = a.checks.tests->passed() && !(a.testChanges && a.testChanges->scoredAsFailed() > 0);
    // A test lost (removed, skipped now, or broken) is never outweighed by added ones.
    const bool lost = a.testChanges && (a.testChanges->scoredAsFailed() > 0 || !a.testChanges->broken.empty());
    b.tests = buildFailed || testsUnprovable(a, baseline.checks.tests)
                  ? 0.0
                  : testsScore(scoredTestCounts(a), testCounts(baseline.checks.tests), passed, lost);
  }
  if (a.checks.lint) {
    b.lint = buildFailed ? 0.0
                         : lintScore(a.checks.lint->lint, lintCounts(baseline.checks.lint), a.checks.lint->passed());
  }
  // Changing nothing is not a focused change: a result identical to the base scores 0.
  b.diffSize = a.diff.filesChanged == 0 ? 0.0 : diffSizeScore(a.diff);
  // Only an agent that finished its work, built and can win can be fast: one
  // that crashed at once, broke the build or changed nothing is not.
  if (comparedOnSpeed(a) && fastestSeconds) {
    b.speed = speedScore(*fastestSeconds, speedSeconds(a));
  } else {
    b.speed = 0.0;
  }
  return b;
}

bool sameScore(double a, double b) { return std::fabs(a - b) < 1e-9; }

// Best first: total, then tests, diff size, speed, and the agent id last so
// that the order never depends on anything but the scores.
bool ranksBefore(const AgentScore& a, const AgentScore& b) {
  if (a.eligible() != b.eligible()) return a.eligible();
  if (!sameScore(a.total, b.total)) return a.total > b.total;
  auto cmp = [](const std::optional<double>& x, const std::optional<double>& y) {
    double vx = x.value_or(-1), vy = y.value_or(-1);
    return sameScore(vx, vy) ? 0 : (vx > vy ? -1 : 1);
  };
  if (int c = cmp(a.breakdown.tests, b.breakdown.tests)) return c < 0;
  if (int c = cmp(a.breakdown.diffSize, b.breakdown.diffSize)) return c < 0;
  if (int c = cmp(a.breakdown.speed, b.breakdown.speed)) return c < 0;
  return a.agentId < b.agentId;
}

// Each test named in a run, by its verdict: the pass/fail totals the names cover.
std::pair<int, int> namedVerdicts(const std::map<std::string, TestOutcome>& cases) {
  int passed = 0, failed = 0;
  for (const auto& [name, outcome] : cases) {
    if (outcome == TestOutcome::Passed) ++passed;
    if (outcome == TestOutcome::Failed) ++failed;
  }
  return {passed, failed};
}

// Both runs ran the tests, so they were compared, if not by name.
bool comparableByCounts(const std::optional<CheckResult>& base, const std::optional<CheckResult>& agent) {
  return base && agent && !base->skipped && !agent->skipped;
}

bool namesEveryVerdict(const CheckResult& check) {
  if (!check.tests || check.skipped) return false;
  const auto [passed, failed] = namedVerdicts(check.testCases);
  return passed == check.tests->passed && failed == check.tests->failed;
}

std::string_view outcomeWord(TestOutcome outcome) {
  switch (outcome) {
    case TestOutcome::Passed: return "passed";
    case TestOutcome::Failed: return "failed";
    case TestOutcome::Skipped: break;
  }
  return "skipped";
}

std::optional<TestOutcome> parseOutcome(std::string_view word) {
  if (word == "passed") return TestOutcome::Passed;
  if (word == "failed") return TestOutcome::Failed;
  if (word == "skipped") return TestOutcome::Skipped;
  return std::nullopt;
}

std::map<std::string, TestOutcome> readTestCases(const JsonFields& r) {
  std::map<std::string, TestOutcome> out;
  const json::value* v = r.find("testCases");
  if (!v) return out;
  if (!v->is_object()) r.fail("testCases", "expected an object");
  for (const auto& [name, word] : v->get_object()) {
    const auto outcome = word.is_string() ? parseOutcome(word.get_string()) : std::nullopt;
    if (!outcome) r.fail("testCases", "expected passed, failed or skipped for \"" + std::string(name) + "\"");
    out.emplace(name, *outcome);
  }
  return out;
}

TestCounts readTestCounts(const JsonFields& r) {
  return TestCounts{r.number<int>("passed"), r.number<int>("failed"), r.optionalNumber<int>("skipped").value_or(0)};
}
LintCounts readLintCounts(const JsonFields& r) { return LintCounts{r.number<int>("errors"), r.number<int>("warnings")}; }

json::value countsJson(const TestCounts& t) {
  return json::object{{"passed", t.passed}, {"failed", t.failed}, {"skipped", t.skipped}};
}
json::value countsJson(const LintCounts& l) { return json::object{{"errors", l.errors}, {"warnings", l.warnings}}; }

CheckResult readCheck(const JsonFields& r) {
  CheckResult x;
  x.command = r.string("command");
  x.skipped = r.boolean("skipped", false);
  x.exitCode = r.optionalNumber<int>("exitCode");
  x.signal = r.optionalNumber<int>("signal");
  x.timedOut = r.boolean("timedOut", false);
  x.error = r.optionalString("error").value_or("");
  x.durationMs = r.optionalNumber<std::int64_t>("durationMs").value_or(0);
  x.output = r.optionalString("output").value_or("");
  x.outputTruncated = r.boolean("outputTruncated", false);
  x.tests = r.optionalObject<TestCounts>("tests", readTestCounts);
  x.testCases = readTestCases(r);
  x.testsReadByCase = r.strings("testsReadByCase");
  x.lint = r.optionalObject<LintCounts>("lint", readLintCounts);
  x.findings = r.array<Finding>("findings", [](const json::value& v, const std::string& path) {
    JsonFields f(v, path);
    return Finding{f.string("path"), f.number<int>("line"), f.optionalNumber<int>("column").value_or(0),
                   f.string("severity"), f.string("message")};
  });
  x.format = r.optionalString("format").value_or("");
  return x;
}

Breakdown readBreakdown(const JsonFields& r) {
  return Breakdown{r.optionalNumber<double>("build"), r.optionalNumber<double>("tests"),
                   r.optionalNumber<double>("lint"), r.optionalNumber<double>("diffSize"),
                   r.optionalNumber<double>("speed")};
}

DiffStats readDiff(const JsonFields& r) {
  return DiffStats{r.number<int>("linesAdded"), r.number<int>("linesRemoved"), r.number<int>("filesChanged")};
}

AgentScore readAgentScore(const JsonFields& r) {
  AgentScore x;
  x.rank = r.number<int>("rank");
  x.agentId = r.string("agentId");
  x.agent = r.string("agent");
  x.status = r.word("status", parseAgentStatus);
  x.total = r.number<double>("total");
  x.breakdown = r.optionalObject<Breakdown>("breakdown", readBreakdown).value_or(Breakdown{});
  x.checks = r.optionalValue<CheckSet>("checks").value_or(CheckSet{});
  x.diff = r.optionalObject<DiffStats>("diff", readDiff).value_or(DiffStats{});
  x.durationMs = r.optionalNumber<std::int64_t>("durationMs");
  // Records written before eligibility was recorded: derived the same way.
  x.ineligible = r.optionalString("ineligible").value_or(ineligibility(x.status, x.diff));
  x.escaped = x.ineligible == "escaped";
  x.testChanges = r.optionalObject<TestChanges>("testChanges", [](const JsonFields& t) {
    return TestChanges{t.strings("fixed"), t.strings("broken"), t.strings("removed"), t.strings("skipped")};
  });
  x.testsByCountsOnly = r.boolean("testsByCountsOnly", false);
  x.flags = r.strings("flags");
  x.deniedToolCalls = r.optionalNumber<int>("deniedToolCalls").value_or(0);
  x.protectedChanges = r.strings("protectedChanges");
  x.protectedMode = r.optionalString("protectedMode").value_or("");
  x.runnerShadows = r.strings("runnerShadows");
  x.addedSecrets = r.strings("addedSecrets");
  x.buildScript = r.optionalObject<BuildScriptCheck>("buildScript", [](const JsonFields& b) {
    auto baseBuild = b.optionalObject<CheckResult>("baseBuild", readCheck);
    if (!baseBuild) b.fail("baseBuild", "missing");
    return BuildScriptCheck{b.strings("changed"), std::move(*baseBuild), b.strings("follows")};
  });
  return x;
}

}  // namespace

namespace {

// A score as it is kept: to a millionth of a point. Written as JSON and read
// back it is the same double (a long fraction would not always be), so the
// scores on disk, in events and in answers are equal, not merely close.
double kept(double score) { return std::isfinite(score) ? std::round(score * 1e6) / 1e6 : score; }

void keep(std::optional<double>& score) {
  if (score) score = kept(*score);
}

}  // namespace

bool AgentScore::builtOnlyByOwnScript() const {
  return buildScript && checks.build && checks.build->passed() && !buildScript->baseBuild.passed();
}

bool AgentScore::buildScoredAsFailed() const { return builtOnlyByOwnScript() && buildScript->follows.empty(); }

std::string ineligibility(AgentStatus status, const DiffStats& diff, bool escaped, const std::string& overLimit) {
  if (escaped) return "escaped";
  if (!overLimit.empty()) return overLimit;
  switch (status) {
    case AgentStatus::Completed:
      break;
    case AgentStatus::TimedOut:
      return "timed out";
    case AgentStatus::Cancelled:
      return "cancelled";
    case AgentStatus::SetupFailed:
      return "setup failed";
    default:
      return std::string(toString(status));
  }
  if (diff.filesChanged == 0) return "changed nothing";
  return {};
}

namespace {

// Where the whole a test belongs to ends in its name, for the runners that
// name a whole alone when it could not run its tests: ctest -V
// ("misc_tests::case" in "misc_tests", an executable that crashed before its
// framework printed a verdict) and go test ("example.com/calc.TestAdd/sub" in
// "example.com/calc", a package that failed to build: its tests begin with an
// upper-case letter, its import path's dots do not). npos for a whole.
std::size_t wholeEnd(std::string_view name, bool go) {
  if (const std::size_t sep = name.find("::"); sep != std::string_view::npos) return sep;
  if (!go) return std::string_view::npos;
  for (std::size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1)) {
    if (dot + 1 < name.size() && name[dot + 1] >= 'A' && name[dot + 1] <= 'Z') return dot;
  }
  return std::string_view::npos;
}

// The verdict `cases` give `name`, also where one run named a whole (a test
// executable, a Go package) and the other the tests inside it (wholeEnd). A
// test takes its whole's verdict; a whole takes its tests' together: failed if
// one failed, else passed if one passed, else skipped.
std::optional<TestOutcome> verdictIn(const std::map<std::string, TestOutcome>& cases, const std::string& name,
                                     bool go) {
  if (const auto it = cases.find(name); it != cases.end()) return it->second;
  if (const std::size_t end = wholeEnd(name, go); end != std::string::npos) {
    if (const auto whole = cases.find(name.substr(0, end)); whole != cases.end()) return whole->second;
    return std::nullopt;
  }
  std::optional<TestOutcome> together;
  for (const std::string& separator : {std::string("::"), std::string(go ? "." : "")}) {
    if (separator.empty()) continue;
    const std::string prefix = name + separator;
    for (auto it = cases.lower_bound(prefix); it != cases.end() && it->first.starts_with(prefix); ++it) {
      if (wholeEnd(it->first, go) != name.size()) continue;  // "calc.v2.TestX" is not in "calc"
      if (it->second == TestOutcome::Failed) return TestOutcome::Failed;
      if (it->second == TestOutcome::Passed || !together) together = it->second;
    }
  }
  return together;
}

}  // namespace

std::optional<TestChanges> compareTests(const CheckResult& base, const CheckResult& agent) {
  if (!namesEveryVerdict(base) || !namesEveryVerdict(agent)) return std::nullopt;
  TestChanges changes;
  const bool go = base.format == "go" || agent.format == "go";
  for (const auto& [name, before] : base.testCases) {
    if (before == TestOutcome::Skipped) continue;
    const auto now = verdictIn(agent.testCases, name, go);
    if (!now) {
      changes.removed.push_back(name);
    } else if (*now == TestOutcome::Skipped) {
      changes.skipped.push_back(name);
    } else if (before == TestOutcome::Failed && *now == TestOutcome::Passed) {
      changes.fixed.push_back(name);
    } else if (before == TestOutcome::Passed && *now == TestOutcome::Failed) {
      changes.broken.push_back(name);
    }
  }
  return changes;
}

namespace {

// "a, b, c and 4 more": flags stay one readable line.
std::string listed(const std::vector<std::string>& items) {
  constexpr std::size_t kShown = 5;
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kShown; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > kShown) out += " and " + std::to_string(items.size() - kShown) + " more";
  return out;
}

std::vector<std::string> flagsOf(const AgentScore& a, const std::optional<CheckResult>& base) {
  std::vector<std::string> flags;
  if (a.deniedToolCalls > 0) {
    flags.push_back(std::to_string(a.deniedToolCalls) +
                    (a.deniedToolCalls == 1 ? " tool call denied" : " tool calls denied"));
  }
  if (!a.protectedChanges.empty()) {
    flags.push_back("changed protected files: " + listed(a.protectedChanges) +
                    (a.protectedMode == "restore" ? " (put back for its checks)" : ""));
  }
  if (const std::vector<std::string> whole = unprovableExecutables(a, base); !whole.empty()) {
    flags.push_back("tests unprovable: ctest named only whole test executables (" + listed(whole) +
                    ") and it changed protected files (scored 0)");
  }
  if (!a.runnerShadows.empty()) {
    flags.push_back("added files that would run in place of the test runner: " + listed(a.runnerShadows) +
                    " (left out of its checks)");
  }
  if (!a.addedSecrets.empty()) flags.push_back("adds what looks like a secret at " + listed(a.addedSecrets));
  if (a.builtOnlyByOwnScript()) {
    flags.push_back("built only by its own changed build script: " + listed(a.buildScript->changed) +
                    (a.buildScoredAsFailed()
                         ? " (the base's fails on its tree; scored as a failed build)"
                         : " (the base's fails on its tree; its change follows " + listed(a.buildScript->follows) +
                               ")"));
  }
  return flags;
}

// What an agent's build, tests and lint are worth together: its total without
// diff size and speed, weighted as in the total.
double merit(const AgentScore& a, const ScoringWeights& weights) {
  ScoringWeights meritOnly = weights;
  meritOnly.diffSize = 0;
  meritOnly.speed = 0;
  return composite(a.breakdown, meritOnly);
}

// A flagged agent never outranks an unflagged eligible one on diff size or
// speed alone: it stays above one only where its build, tests and lint are
// worth more. Each flagged eligible agent, lowest first, moves to just below
// the last unflagged eligible agent whose merit is at least its own. Only
// flagged agents move, so once one has moved no later move reorders it
// against an unflagged agent, and every such pair ends in that order (a
// comparison for std::sort could not say this and stay transitive).
void rankFlaggedBelowTheirEquals(std::vector<AgentScore>& agents, const ScoringWeights& weights) {
  for (std::size_t i = agents.size(); i-- > 0;) {
    const AgentScore& flagged = agents[i];
    if (!flagged.eligible() || flagged.flags.empty()) continue;
    const double own = merit(flagged, weights);
    std::optional<std::size_t> last;
    for (std::size_t j = i + 1; j < agents.size(); ++j) {
      const AgentScore& other = agents[j];
      if (other.eligible() && other.flags.empty() &&
          (sameScore(merit(other, weights), own) || merit(other, weights) > own)) {
        last = j;
      }
    }
    if (last) std::rotate(agents.begin() + static_cast<std::ptrdiff_t>(i),
                          agents.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                          agents.begin() + static_cast<std::ptrdiff_t>(*last) + 1);
  }
}

}  // namespace

RaceScores rankAgents(std::string raceId, std::vector<AgentScore> agents, Baseline baseline,
                      const ScoringConfig& config) {
  for (auto& a : agents) a.ineligible = ineligibility(a.status, a.diff, a.escaped, a.overLimit);
  std::optional<double> fastest;
  for (const auto& a : agents) {
    if (!comparedOnSpeed(a)) continue;
    const double s = speedSeconds(a);
    if (!fastest || s < *fastest) fastest = s;
  }
  for (auto& a : agents) {
    a.testChanges = baseline.checks.tests && a.checks.tests ? compareTests(*baseline.checks.tests, *a.checks.tests)
                                                           : std::nullopt;
    a.testsByCountsOnly = !a.testChanges && comparableByCounts(baseline.checks.tests, a.checks.tests);
    a.flags = flagsOf(a, baseline.checks.tests);
    a.breakdown = breakdownOf(a, baseline, fastest);
    a.total = kept(composite(a.breakdown, config.weights));
    for (auto* part : {&a.breakdown.build, &a.breakdown.tests, &a.breakdown.lint, &a.breakdown.diffSize,
                       &a.breakdown.speed}) {
      keep(*part);
    }
  }
  std::sort(agents.begin(), agents.end(), ranksBefore);
  rankFlaggedBelowTheirEquals(agents, config.weights);
  for (std::size_t i = 0; i < agents.size(); ++i) agents[i].rank = static_cast<int>(i + 1);

  RaceScores scores;
  scores.raceId = std::move(raceId);
  scores.baseline = std::move(baseline);
  scores.autoMergeEnabled = config.autoMerge;
  // Eligible agents rank first: the best of them wins unless even it failed.
  if (!agents.empty() && agents.front().eligible() &&
      agents.front().total >= config.thresholds.failMaximum) {
    const AgentScore& best = agents.front();
    scores.winner = best.agentId;
    scores.autoMergeEligible = best.total >= config.thresholds.autoMergeMinimum && best.flags.empty();
  } else {
    scores.allFailed = true;
  }
  scores.rankings = std::move(agents);
  return scores;
}

// --- JSON ----------------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const CheckResult& x) {
  json::object o;
  o["command"] = x.command;
  o["skipped"] = x.skipped;
  putOrNull(o, "exitCode", x.exitCode);
  putIfSet(o, "signal", x.signal);
  o["timedOut"] = x.timedOut;
  putIfNotEmpty(o, "error", x.error);
  o["durationMs"] = x.durationMs;
  o["output"] = x.output;
  o["outputTruncated"] = x.outputTruncated;
  o["tests"] = x.tests ? countsJson(*x.tests) : json::value(nullptr);
  if (!x.testCases.empty()) {
    json::object cases;
    cases.reserve(x.testCases.size());
    for (const auto& [name, outcome] : x.testCases) cases[name] = outcomeWord(outcome);
    o["testCases"] = std::move(cases);
  }
  if (!x.testsReadByCase.empty()) o["testsReadByCase"] = json::value_from(x.testsReadByCase);
  o["lint"] = x.lint ? countsJson(*x.lint) : json::value(nullptr);
  if (!x.findings.empty()) {
    json::array findings;
    findings.reserve(x.findings.size());
    for (const auto& f : x.findings) {
      json::object one{{"path", f.path}, {"line", f.line}};
      if (f.column > 0) one["column"] = f.column;
      one["severity"] = f.severity;
      one["message"] = f.message;
      findings.push_back(std::move(one));
    }
    o["findings"] = std::move(findings);
  }
  o["format"] = x.format;
  v = std::move(o);
}

CheckResult tag_invoke(json::value_to_tag<CheckResult>, const json::value& v) { return readCheck(JsonFields(v)); }

void tag_invoke(json::value_from_tag, json::value& v, const AgentScore& x) {
  json::object o;
  o["rank"] = x.rank;
  o["agentId"] = x.agentId;
  o["agent"] = x.agent;
  o["status"] = toString(x.status);
  o["total"] = finiteOrNull(x.total);
  json::object b;
  putOrNull(b, "build", x.breakdown.build);
  putOrNull(b, "tests", x.breakdown.tests);
  putOrNull(b, "lint", x.breakdown.lint);
  putOrNull(b, "diffSize", x.breakdown.diffSize);
  putOrNull(b, "speed", x.breakdown.speed);
  o["breakdown"] = std::move(b);
  o["checks"] = json::value_from(x.checks);
  o["diff"] = json::object{{"linesAdded", x.diff.linesAdded},
                           {"linesRemoved", x.diff.linesRemoved},
                           {"filesChanged", x.diff.filesChanged}};
  putIfSet(o, "durationMs", x.durationMs);
  o["eligible"] = x.eligible();
  putIfNotEmpty(o, "ineligible", x.ineligible);
  if (x.testChanges) {
    o["testChanges"] = json::object{{"fixed", stringArray(x.testChanges->fixed)},
                                    {"broken", stringArray(x.testChanges->broken)},
                                    {"removed", stringArray(x.testChanges->removed)},
                                    {"skipped", stringArray(x.testChanges->skipped)}};
  }
  if (x.testsByCountsOnly) o["testsByCountsOnly"] = true;
  if (!x.flags.empty()) o["flags"] = stringArray(x.flags);
  if (x.deniedToolCalls > 0) o["deniedToolCalls"] = x.deniedToolCalls;
  if (!x.protectedChanges.empty()) {
    o["protectedChanges"] = stringArray(x.protectedChanges);
    putIfNotEmpty(o, "protectedMode", x.protectedMode);
  }
  if (!x.runnerShadows.empty()) o["runnerShadows"] = stringArray(x.runnerShadows);
  if (!x.addedSecrets.empty()) o["addedSecrets"] = stringArray(x.addedSecrets);
  if (x.buildScript) {
    o["buildScript"] = json::object{{"changed", stringArray(x.buildScript->changed)},
                                    {"baseBuild", json::value_from(x.buildScript->baseBuild)},
                                    {"follows", stringArray(x.buildScript->follows)}};
  }
  v = std::move(o);
}

AgentScore tag_invoke(json::value_to_tag<AgentScore>, const json::value& v) { return readAgentScore(JsonFields(v)); }

}  // namespace hydra::core::scoring
