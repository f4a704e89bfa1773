#include "core/scoring/scores.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <boost/json/parse.hpp>

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

namespace hydra::core::scoring {

namespace json = boost::json;

namespace {

std::optional<TestCounts> testCounts(const std::optional<CheckResult>& check) {
  return check ? check->tests : std::nullopt;
}
std::optional<LintCounts> lintCounts(const std::optional<CheckResult>& check) {
  return check ? check->lint : std::nullopt;
}

// Scores each dimension of one agent. A failed build short-circuits: tests
// and lint were not run and score 0.
Breakdown breakdownOf(const AgentScore& a, const Baseline& baseline, std::optional<double> fastestSeconds) {
  Breakdown b;
  bool buildFailed = a.checks.build && !a.checks.build->passed();
  if (a.checks.build) b.build = buildScore(a.checks.build->passed());
  if (a.checks.tests) {
    b.tests = buildFailed ? 0.0
                          : testsScore(a.checks.tests->tests, testCounts(baseline.checks.tests), a.checks.tests->passed());
  }
  if (a.checks.lint) {
    b.lint = buildFailed ? 0.0
                         : lintScore(a.checks.lint->lint, lintCounts(baseline.checks.lint), a.checks.lint->passed());
  }
  // Changing nothing is not a focused change: a result identical to the base scores 0.
  b.diffSize = a.diff.filesChanged == 0 ? 0.0 : diffSizeScore(a.diff);
  // Only an agent that finished its work can be fast: one that crashed at once is not.
  if (a.status == AgentStatus::Completed && a.durationMs && fastestSeconds) {
    b.speed = speedScore(*fastestSeconds, static_cast<double>(*a.durationMs) / 1000.0);
  } else {
    b.speed = 0.0;
  }
  return b;
}

bool sameScore(double a, double b) { return std::fabs(a - b) < 1e-9; }

// Best first: total, then tests, diff size, speed, and the agent id last so
// that the order never depends on anything but the scores.
bool ranksBefore(const AgentScore& a, const AgentScore& b) {
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

template <class T>
void put(json::object& o, std::string_view key, const std::optional<T>& v) {
  o[key] = v ? json::value_from(*v) : json::value(nullptr);
}

template <class T>
std::optional<T> getOptional(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  return json::value_to<T>(*v);
}

json::value countsJson(const TestCounts& t) {
  return json::object{{"passed", t.passed}, {"failed", t.failed}, {"skipped", t.skipped}};
}
json::value countsJson(const LintCounts& l) { return json::object{{"errors", l.errors}, {"warnings", l.warnings}}; }

}  // namespace

RaceScores rankAgents(std::string raceId, std::vector<AgentScore> agents, Baseline baseline,
                      const ScoringConfig& config) {
  std::optional<double> fastest;
  for (const auto& a : agents) {
    if (a.status != AgentStatus::Completed || !a.durationMs) continue;
    double s = static_cast<double>(*a.durationMs) / 1000.0;
    if (!fastest || s < *fastest) fastest = s;
  }
  for (auto& a : agents) {
    a.breakdown = breakdownOf(a, baseline, fastest);
    a.total = composite(a.breakdown, config.weights);
  }
  std::sort(agents.begin(), agents.end(), ranksBefore);
  for (std::size_t i = 0; i < agents.size(); ++i) agents[i].rank = static_cast<int>(i + 1);

  RaceScores scores;
  scores.raceId = std::move(raceId);
  scores.baseline = std::move(baseline);
  if (!agents.empty()) {
    const AgentScore& best = agents.front();
    scores.winner = best.agentId;
    scores.allFailed = best.total < config.thresholds.failMaximum;
    scores.autoMergeEligible = !scores.allFailed && best.status == AgentStatus::Completed &&
                               best.total >= config.thresholds.autoMergeMinimum;
  } else {
    scores.allFailed = true;
  }
  scores.rankings = std::move(agents);
  return scores;
}

std::optional<RaceScores> readScores(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::value_to<RaceScores>(json::parse(text.str()));
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + " is unreadable: " + e.what());
  }
}

// --- JSON ----------------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const CheckResult& x) {
  json::object o;
  o["command"] = x.command;
  o["skipped"] = x.skipped;
  put(o, "exitCode", x.exitCode);
  put(o, "signal", x.signal);
  o["timedOut"] = x.timedOut;
  if (!x.error.empty()) o["error"] = x.error;
  o["durationMs"] = x.durationMs;
  o["output"] = x.output;
  o["outputTruncated"] = x.outputTruncated;
  o["tests"] = x.tests ? countsJson(*x.tests) : json::value(nullptr);
  o["lint"] = x.lint ? countsJson(*x.lint) : json::value(nullptr);
  o["format"] = x.format;
  v = std::move(o);
}

CheckResult tag_invoke(json::value_to_tag<CheckResult>, const json::value& v) {
  const json::object& o = v.as_object();
  CheckResult x;
  x.command = json::value_to<std::string>(o.at("command"));
  x.skipped = o.at("skipped").as_bool();
  x.exitCode = getOptional<int>(o, "exitCode");
  x.signal = getOptional<int>(o, "signal");
  x.timedOut = o.at("timedOut").as_bool();
  if (auto e = getOptional<std::string>(o, "error")) x.error = *e;
  x.durationMs = o.at("durationMs").to_number<std::int64_t>();
  x.output = json::value_to<std::string>(o.at("output"));
  x.outputTruncated = o.at("outputTruncated").as_bool();
  if (const auto* t = o.if_contains("tests"); t && t->is_object()) {
    x.tests = TestCounts{static_cast<int>(t->at("passed").to_number<int>()),
                         static_cast<int>(t->at("failed").to_number<int>()),
                         static_cast<int>(t->at("skipped").to_number<int>())};
  }
  if (const auto* l = o.if_contains("lint"); l && l->is_object()) {
    x.lint = LintCounts{l->at("errors").to_number<int>(), l->at("warnings").to_number<int>()};
  }
  x.format = json::value_to<std::string>(o.at("format"));
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const CheckSet& x) {
  json::object o;
  put(o, "build", x.build);
  put(o, "tests", x.tests);
  put(o, "lint", x.lint);
  v = std::move(o);
}

CheckSet tag_invoke(json::value_to_tag<CheckSet>, const json::value& v) {
  const json::object& o = v.as_object();
  return CheckSet{getOptional<CheckResult>(o, "build"), getOptional<CheckResult>(o, "tests"),
                  getOptional<CheckResult>(o, "lint")};
}

void tag_invoke(json::value_from_tag, json::value& v, const Baseline& x) {
  v = json::object{{"commit", x.commit}, {"checks", json::value_from(x.checks)}, {"fromCache", x.fromCache}};
}

Baseline tag_invoke(json::value_to_tag<Baseline>, const json::value& v) {
  const json::object& o = v.as_object();
  Baseline x;
  x.commit = json::value_to<std::string>(o.at("commit"));
  x.checks = json::value_to<CheckSet>(o.at("checks"));
  if (const auto* c = o.if_contains("fromCache")) x.fromCache = c->as_bool();
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const AgentScore& x) {
  json::object o;
  o["rank"] = x.rank;
  o["agentId"] = x.agentId;
  o["agent"] = x.agent;
  o["status"] = toString(x.status);
  o["total"] = x.total;
  json::object b;
  put(b, "build", x.breakdown.build);
  put(b, "tests", x.breakdown.tests);
  put(b, "lint", x.breakdown.lint);
  put(b, "diffSize", x.breakdown.diffSize);
  put(b, "speed", x.breakdown.speed);
  o["breakdown"] = std::move(b);
  o["checks"] = json::value_from(x.checks);
  o["diff"] = json::object{{"linesAdded", x.diff.linesAdded},
                           {"linesRemoved", x.diff.linesRemoved},
                           {"filesChanged", x.diff.filesChanged}};
  put(o, "durationMs", x.durationMs);
  v = std::move(o);
}

AgentScore tag_invoke(json::value_to_tag<AgentScore>, const json::value& v) {
  const json::object& o = v.as_object();
  AgentScore x;
  x.rank = o.at("rank").to_number<int>();
  x.agentId = json::value_to<std::string>(o.at("agentId"));
  x.agent = json::value_to<std::string>(o.at("agent"));
  x.status = parseAgentStatus(json::value_to<std::string>(o.at("status"))).value_or(AgentStatus::Failed);
  x.total = o.at("total").to_number<double>();
  const json::object& b = o.at("breakdown").as_object();
  x.breakdown = Breakdown{getOptional<double>(b, "build"), getOptional<double>(b, "tests"),
                          getOptional<double>(b, "lint"), getOptional<double>(b, "diffSize"),
                          getOptional<double>(b, "speed")};
  x.checks = json::value_to<CheckSet>(o.at("checks"));
  const json::object& d = o.at("diff").as_object();
  x.diff = DiffStats{d.at("linesAdded").to_number<int>(), d.at("linesRemoved").to_number<int>(),
                     d.at("filesChanged").to_number<int>()};
  x.durationMs = getOptional<std::int64_t>(o, "durationMs");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const RaceScores& x) {
  json::object o;
  o["raceId"] = x.raceId;
  json::array rankings;
  for (const auto& a : x.rankings) rankings.push_back(json::value_from(a));
  o["rankings"] = std::move(rankings);
  put(o, "winner", x.winner);
  o["autoMergeEligible"] = x.autoMergeEligible;
  o["allFailed"] = x.allFailed;
  o["baseline"] = json::value_from(x.baseline);
  v = std::move(o);
}

RaceScores tag_invoke(json::value_to_tag<RaceScores>, const json::value& v) {
  const json::object& o = v.as_object();
  RaceScores x;
  x.raceId = json::value_to<std::string>(o.at("raceId"));
  for (const auto& a : o.at("rankings").as_array()) x.rankings.push_back(json::value_to<AgentScore>(a));
  x.winner = getOptional<std::string>(o, "winner");
  x.autoMergeEligible = o.at("autoMergeEligible").as_bool();
  x.allFailed = o.at("allFailed").as_bool();
  x.baseline = json::value_to<Baseline>(o.at("baseline"));
  return x;
}

}  // namespace hydra::core::scoring
