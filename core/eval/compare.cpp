#include "core/eval/compare.h"

#include <cstdio>
#include <map>
#include <utility>

#include <boost/json/value_from.hpp>

#include "core/util/json_fields.h"

namespace hydra::core::eval {

namespace json = boost::json;

namespace {

using Key = std::pair<std::string, std::string>;  // case id, agent

std::map<Key, const CaseAgentStats*> byPair(const Report& report) {
  std::map<Key, const CaseAgentStats*> out;
  for (const CaseStats& c : report.cases) {
    for (const CaseAgentStats& s : c.agents) out.emplace(Key{c.caseId, s.agent}, &s);
  }
  return out;
}

std::string pairName(const std::string& caseId, const std::string& agent) { return caseId + "/" + agent; }

}  // namespace

Comparison compare(const Report& baseline, const Report& current, double threshold) {
  Comparison out;
  out.threshold = threshold;
  const auto before = byPair(baseline);
  const auto after = byPair(current);

  auto add = [&](const std::string& caseId, const std::string& agent, std::string metric, double was, double is) {
    Change change{caseId, agent, std::move(metric), was, is, is - was, std::string(kUnchanged)};
    if (change.delta < -(threshold + kThresholdSlack)) {
      change.verdict = kRegression;
      ++out.regressions;
    } else if (change.delta > threshold + kThresholdSlack) {
      change.verdict = kImprovement;
      ++out.improvements;
    }
    out.changes.push_back(std::move(change));
  };

  for (const CaseStats& c : current.cases) {
    for (const CaseAgentStats& now : c.agents) {
      auto it = before.find({c.caseId, now.agent});
      if (it == before.end()) {
        out.onlyInCurrent.push_back(pairName(c.caseId, now.agent));
        continue;
      }
      const CaseAgentStats& was = *it->second;
      for (const auto& [k, value] : now.passAtK) {
        auto old = was.passAtK.find(k);
        if (!value || old == was.passAtK.end() || !old->second) continue;
        add(c.caseId, now.agent, "pass@" + std::to_string(k), *old->second, *value);
      }
      add(c.caseId, now.agent, "meanScore", was.meanScore / 100.0, now.meanScore / 100.0);
    }
  }
  for (const CaseStats& c : baseline.cases) {
    for (const CaseAgentStats& was : c.agents) {
      if (!after.contains({c.caseId, was.agent})) out.onlyInBaseline.push_back(pairName(c.caseId, was.agent));
    }
  }
  return out;
}

// --- rendering -----------------------------------------------------------------

namespace {

using eval::formatted;

// "+0.050", "-0.333"; never "-0.000".
std::string signedDelta(double x) {
  std::string text = formatted("%+.3f", x);
  if (text == "-0.000") text = "+0.000";
  return text;
}

std::string count(int n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// "1 regression, 2 improvements"
std::string summary(const Comparison& c) {
  return count(c.regressions, "regression") + ", " + count(c.improvements, "improvement");
}

// "5 unchanged (threshold 0.05)"
std::string details(const Comparison& c) {
  const auto unchanged = static_cast<int>(c.changes.size()) - c.regressions - c.improvements;
  return std::to_string(unchanged) + " unchanged (threshold " + formatted("%g", c.threshold) + ")";
}

Table changedTable(const Comparison& c) {
  Table t;
  t.align = "lllrrrl";
  t.header = {"case", "agent", "metric", "baseline", "current", "delta", "verdict"};
  for (const Change& x : c.changes) {
    if (x.verdict == kUnchanged) continue;
    t.rows.push_back({x.caseId, x.agent, x.metric, formatted("%.3f", x.baseline), formatted("%.3f", x.current),
                      signedDelta(x.delta), x.verdict});
  }
  return t;
}

}  // namespace

std::string renderCompareText(const Comparison& c) {
  std::string out = "Eval comparison: " + summary(c) + ", " + details(c) + "\n";
  const Table changed = changedTable(c);
  if (!changed.rows.empty()) out += tableText(changed);
  auto list = [&out](const char* label, const std::vector<std::string>& pairs) {
    if (pairs.empty()) return;
    out += std::string(label) + " (not compared): ";
    for (std::size_t i = 0; i < pairs.size(); ++i) out += (i > 0 ? ", " : "") + pairs[i];
    out += "\n";
  };
  list("Only in baseline", c.onlyInBaseline);
  list("Only in current", c.onlyInCurrent);
  return out;
}

std::string renderCompareMarkdown(const Comparison& c) {
  std::string out = "### Eval comparison\n\n**" + summary(c) + "**, " + details(c) + "\n";
  const Table changed = changedTable(c);
  if (!changed.rows.empty()) out += "\n" + tableMarkdown(changed);
  auto list = [&out](const char* label, const std::vector<std::string>& pairs) {
    if (pairs.empty()) return;
    out += "\n" + std::string(label) + " (not compared):\n\n";
    for (const auto& p : pairs) out += "- `" + p + "`\n";
  };
  list("Only in baseline", c.onlyInBaseline);
  list("Only in current", c.onlyInCurrent);
  return out;
}

// --- JSON ----------------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& out, const Change& x) {
  json::object o;
  o["caseId"] = x.caseId;
  o["agent"] = x.agent;
  o["metric"] = x.metric;
  o["baseline"] = finiteOrNull(x.baseline);
  o["current"] = finiteOrNull(x.current);
  o["delta"] = finiteOrNull(x.delta);
  o["verdict"] = x.verdict;
  out = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& out, const Comparison& x) {
  json::object o;
  o["threshold"] = finiteOrNull(x.threshold);
  o["regressions"] = x.regressions;
  o["improvements"] = x.improvements;
  json::array changes;
  for (const Change& change : x.changes) changes.push_back(json::value_from(change));
  o["changes"] = std::move(changes);
  o["onlyInBaseline"] = stringArray(x.onlyInBaseline);
  o["onlyInCurrent"] = stringArray(x.onlyInCurrent);
  out = std::move(o);
}

}  // namespace hydra::core::eval
