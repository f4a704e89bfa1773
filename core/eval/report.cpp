#include "core/eval/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include "core/util/json_fields.h"

namespace hydra::core::eval {

namespace json = boost::json;

// --- aggregate -----------------------------------------------------------------

namespace {

double mean(double sum, std::size_t count) { return count == 0 ? 0.0 : sum / static_cast<double>(count); }

CaseAgentStats caseAgentStats(const std::string& agent, const std::vector<const Sample*>& samples,
                              const std::vector<int>& passK) {
  CaseAgentStats s;
  s.agent = agent;
  s.n = static_cast<int>(samples.size());
  double score = 0;
  double forgetest = 0;
  for (const Sample* x : samples) {
    if (x->solved) ++s.c;
    score += x->score;
    forgetest += x->forgetestScore;
  }
  for (int k : passK) s.passAtK[k] = passAtK(s.n, s.c, k);
  s.meanScore = mean(score, samples.size());
  s.meanForgetestScore = mean(forgetest, samples.size());
  return s;
}

// Over the cases `agent` ran: the mean of each k's pass@k, undefined when it
// is undefined for any case.
PassAtK meanPassAtK(const std::vector<const CaseAgentStats*>& cases, const std::vector<int>& passK) {
  PassAtK out;
  for (int k : passK) {
    std::optional<double> sum = 0.0;
    for (const CaseAgentStats* c : cases) {
      auto it = c->passAtK.find(k);
      if (it == c->passAtK.end() || !it->second) {
        sum.reset();
        break;
      }
      *sum += *it->second;
    }
    if (sum && !cases.empty()) {
      out[k] = *sum / static_cast<double>(cases.size());
    } else {
      out[k] = std::nullopt;
    }
  }
  return out;
}

AgentStats agentStats(const std::string& agent, const Report& report,
                      const std::vector<const CaseAgentStats*>& cases) {
  AgentStats a;
  a.agent = agent;
  if (auto it = report.agentVersions.find(agent); it != report.agentVersions.end()) a.version = it->second;
  a.passAtK = meanPassAtK(cases, report.passK);
  int built = 0;
  int withTests = 0;
  double testRates = 0;
  double score = 0;
  double forgetest = 0;
  double latency = 0;
  for (const Sample& x : report.samples) {
    if (x.agent != agent) continue;
    ++a.samples;
    if (x.solved) ++a.solved;
    if (x.builds) ++built;
    if (x.testsPassed + x.testsFailed > 0) {
      ++withTests;
      testRates += static_cast<double>(x.testsPassed) / (x.testsPassed + x.testsFailed);
    }
    score += x.score;
    forgetest += x.forgetestScore;
    latency += static_cast<double>(x.latencyMs);
    if (x.costUsd) a.totalCostUsd += *x.costUsd;
    if (x.inputTokens) a.inputTokens += *x.inputTokens;
    if (x.outputTokens) a.outputTokens += *x.outputTokens;
  }
  const auto n = static_cast<std::size_t>(a.samples);
  a.compileRate = mean(built, n);
  a.testPassRate = mean(testRates, static_cast<std::size_t>(withTests));
  a.meanScore = mean(score, n);
  a.meanForgetestScore = mean(forgetest, n);
  a.meanLatencyMs = mean(latency, n);
  a.passAt1Wilson = wilson95(a.solved, a.samples);
  return a;
}

// `item` appended to `order` unless it is there already.
void remember(std::vector<std::string>& order, const std::string& item) {
  if (std::find(order.begin(), order.end(), item) == order.end()) order.push_back(item);
}

}  // namespace

void aggregate(Report& report) {
  std::vector<std::string> caseOrder;
  std::vector<std::string> agentOrder;
  std::map<std::string, std::vector<std::string>> agentsOfCase;
  std::map<std::pair<std::string, std::string>, std::vector<const Sample*>> groups;
  for (const Sample& x : report.samples) {
    remember(caseOrder, x.caseId);
    remember(agentOrder, x.agent);
    remember(agentsOfCase[x.caseId], x.agent);
    groups[{x.caseId, x.agent}].push_back(&x);
  }

  report.cases.clear();
  for (const std::string& caseId : caseOrder) {
    CaseStats c;
    c.caseId = caseId;
    for (const std::string& agent : agentsOfCase[caseId]) {
      c.agents.push_back(caseAgentStats(agent, groups[{caseId, agent}], report.passK));
    }
    report.cases.push_back(std::move(c));
  }

  report.agents.clear();
  for (const std::string& agent : agentOrder) {
    std::vector<const CaseAgentStats*> cases;
    for (const CaseStats& c : report.cases) {
      for (const CaseAgentStats& s : c.agents) {
        if (s.agent == agent) cases.push_back(&s);
      }
    }
    report.agents.push_back(agentStats(agent, report, cases));
  }
}

// --- tables --------------------------------------------------------------------

namespace {

bool rightAligned(const Table& table, std::size_t column) {
  return column < table.align.size() ? table.align[column] == 'r' : column > 0;
}

std::string markdownCell(const std::string& cell) {
  std::string out;
  for (char ch : cell) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '\n' || ch == '\r') {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::string tableText(const Table& table, std::string_view indent) {
  std::vector<std::size_t> widths(table.header.size(), 0);
  auto measure = [&widths](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  };
  measure(table.header);
  for (const auto& row : table.rows) measure(row);

  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string text(indent);
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : std::string();
      const std::string pad(widths[i] - cell.size(), ' ');
      if (i > 0) text += "  ";
      text += rightAligned(table, i) ? pad + cell : cell + pad;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line(table.header);
  for (const auto& row : table.rows) line(row);
  return out;
}

std::string tableMarkdown(const Table& table) {
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    out += "|";
    for (std::size_t i = 0; i < table.header.size(); ++i) out += " " + markdownCell(i < row.size() ? row[i] : "") + " |";
    out += "\n";
  };
  line(table.header);
  out += "|";
  for (std::size_t i = 0; i < table.header.size(); ++i) out += rightAligned(table, i) ? "---:|" : ":---|";
  out += "\n";
  for (const auto& row : table.rows) line(row);
  return out;
}

// --- rendering -----------------------------------------------------------------

std::string formatted(const char* spec, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, x);
  return buf;
}

namespace {

std::string percent(double share) { return formatted("%.1f%%", 100.0 * share); }

std::string percentOrNa(const std::optional<double>& share) { return share ? percent(*share) : "n/a"; }

std::string interval(const Interval& i) { return "[" + percent(i.low) + ", " + percent(i.high) + "]"; }

template <class Pred>
bool anySample(const Report& report, const std::string& agent, Pred pred) {
  return std::any_of(report.samples.begin(), report.samples.end(),
                     [&](const Sample& x) { return x.agent == agent && pred(x); });
}

std::string joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

std::string title(const Report& r) { return r.name.empty() ? "Eval report" : "Eval report: " + r.name; }

// "hydra 1.2.0, eval set 3fa4, started ..., finished ..."; empty when nothing is known.
std::string provenance(const Report& r, bool markdown) {
  auto code = [markdown](const std::string& s) { return markdown ? "`" + s + "`" : s; };
  std::vector<std::string> parts;
  if (!r.hydraVersion.empty()) parts.push_back("hydra " + r.hydraVersion);
  if (!r.evalSetHash.empty()) parts.push_back("eval set " + code(r.evalSetHash));
  if (!r.startedAt.empty()) parts.push_back("started " + r.startedAt);
  if (!r.finishedAt.empty()) parts.push_back("finished " + r.finishedAt);
  return joined(parts, ", ");
}

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string counts(const Report& r) {
  return plural(r.samples.size(), "sample") + ", " + plural(r.cases.size(), "case") + ", " +
         plural(r.agents.size(), "agent");
}

Table agentTable(const Report& r) {
  Table t;
  t.align = "ll";
  t.header = {"agent", "version"};
  for (int k : r.passK) t.header.push_back("pass@" + std::to_string(k));
  for (const char* h : {"compile", "tests", "score", "cost", "latency", "pass@1 95% CI"}) t.header.emplace_back(h);
  for (const AgentStats& a : r.agents) {
    std::vector<std::string> row{a.agent, a.version.empty() ? "-" : a.version};
    for (int k : r.passK) {
      auto it = a.passAtK.find(k);
      row.push_back(percentOrNa(it == a.passAtK.end() ? std::nullopt : it->second));
    }
    row.push_back(percent(a.compileRate));
    const bool ranTests = anySample(r, a.agent, [](const Sample& x) { return x.testsPassed + x.testsFailed > 0; });
    row.push_back(ranTests ? percent(a.testPassRate) : "n/a");
    row.push_back(formatted("%.1f", a.meanScore));
    const bool costed = anySample(r, a.agent, [](const Sample& x) { return x.costUsd.has_value(); });
    row.push_back(costed ? formatted("$%.4f", a.totalCostUsd) : "n/a");
    row.push_back(formatted("%.1fs", a.meanLatencyMs / 1000.0));
    row.push_back(interval(a.passAt1Wilson));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table caseTable(const Report& r, const CaseStats& c) {
  Table t;
  t.header = {"agent", "n", "c"};
  for (int k : r.passK) t.header.push_back("pass@" + std::to_string(k));
  t.header.emplace_back("score");
  for (const CaseAgentStats& s : c.agents) {
    std::vector<std::string> row{s.agent, std::to_string(s.n), std::to_string(s.c)};
    for (int k : r.passK) {
      auto it = s.passAtK.find(k);
      row.push_back(percentOrNa(it == s.passAtK.end() ? std::nullopt : it->second));
    }
    row.push_back(formatted("%.1f", s.meanScore));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string baseCommit(const Report& r, const std::string& caseId) {
  auto it = r.baseCommits.find(caseId);
  return it == r.baseCommits.end() ? std::string() : it->second.substr(0, 12);
}

}  // namespace

std::string renderText(const Report& r) {
  std::string out = title(r) + "\n";
  if (std::string p = provenance(r, false); !p.empty()) out += p + "\n";
  out += counts(r) + "\n\nAgents\n" + tableText(agentTable(r));
  for (const CaseStats& c : r.cases) {
    out += "\nCase " + c.caseId;
    if (std::string base = baseCommit(r, c.caseId); !base.empty()) out += " (base " + base + ")";
    out += "\n" + tableText(caseTable(r, c));
  }
  return out;
}

std::string renderMarkdown(const Report& r) {
  std::string out = "## " + title(r) + "\n\n";
  if (std::string p = provenance(r, true); !p.empty()) out += p + "\n\n";
  out += counts(r) + "\n\n### Agents\n\n" + tableMarkdown(agentTable(r));
  for (const CaseStats& c : r.cases) {
    out += "\n### Case " + markdownCell(c.caseId) + "\n\n";
    if (std::string base = baseCommit(r, c.caseId); !base.empty()) out += "Base commit `" + base + "`.\n\n";
    out += tableMarkdown(caseTable(r, c));
  }
  return out;
}

// --- JSON ----------------------------------------------------------------------

namespace {

bool requiredBoolean(const JsonFields& r, std::string_view key) {
  const json::value* v = r.find(key);
  if (!v) r.fail(key, "missing");
  if (!v->is_bool()) r.fail(key, "expected true or false");
  return v->get_bool();
}

template <class T>
T nonNegative(const JsonFields& r, std::string_view key) {
  T n = r.number<T>(key);
  if (n < 0) r.fail(key, "expected a number >= 0");
  return n;
}

template <class T>
std::optional<T> optionalNonNegative(const JsonFields& r, std::string_view key) {
  std::optional<T> n = r.optionalNumber<T>(key);
  if (n && *n < 0) r.fail(key, "expected a number >= 0");
  return n;
}

// k as written in a pass@k key or the passK list: an integer >= 1.
std::optional<int> parseK(std::string_view text) {
  int k = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), k);
  if (ec != std::errc() || end != text.data() + text.size() || k < 1) return std::nullopt;
  return k;
}

json::value passAtKJson(const PassAtK& p) {
  json::object o;
  for (const auto& [k, value] : p) putOrNull(o, std::to_string(k), value);
  return o;
}

PassAtK readPassAtK(const JsonFields& r, std::string_view key) {
  PassAtK out;
  const json::value* v = r.find(key);
  if (!v) r.fail(key, "missing");
  if (!v->is_object()) r.fail(key, "expected an object keyed by k");
  for (const auto& [name, value] : v->get_object()) {
    const std::string where = r.path(key) + "." + std::string(name);
    auto k = parseK(name);
    if (!k) throw JsonFieldError(where + ": expected a key that is an integer k >= 1");
    if (value.is_null()) {
      out[*k] = std::nullopt;
      continue;
    }
    boost::system::error_code ec;
    const double x = value.to_number<double>(ec);
    if (ec || !std::isfinite(x)) throw JsonFieldError(where + ": expected a number or null");
    out[*k] = x;
  }
  return out;
}

json::value stringMapJson(const std::map<std::string, std::string>& m) {
  json::object o;
  for (const auto& [key, value] : m) o[key] = value;
  return o;
}

std::map<std::string, std::string> readStringMap(const JsonFields& r, std::string_view key) {
  std::map<std::string, std::string> out;
  const json::value* v = r.find(key);
  if (!v) return out;
  if (!v->is_object()) r.fail(key, "expected an object");
  for (const auto& [name, value] : v->get_object()) {
    if (!value.is_string()) throw JsonFieldError(r.path(key) + "." + std::string(name) + ": expected a string");
    out.emplace(name, value.get_string());
  }
  return out;
}

std::vector<int> readPassK(const JsonFields& r) {
  return r.array<int>("passK", [](const json::value& v, const std::string& path) {
    boost::system::error_code ec;
    const int k = v.is_number() ? v.to_number<int>(ec) : 0;
    if (ec || k < 1) throw JsonFieldError(path + ": expected an integer k >= 1");
    return k;
  });
}

Interval readInterval(const JsonFields& r) {
  Interval i{r.number<double>("low"), r.number<double>("high")};
  if (i.low < 0 || i.high > 1 || i.low > i.high) r.fail("high", "expected 0 <= low <= high <= 1");
  return i;
}

Sample readSample(const JsonFields& r) {
  Sample s;
  s.caseId = r.string("caseId");
  s.agent = r.string("agent");
  s.index = nonNegative<int>(r, "index");
  s.solved = requiredBoolean(r, "solved");
  s.error = r.optionalString("error");
  s.score = r.number<double>("score");
  s.forgetestScore = r.number<double>("forgetestScore");
  s.builds = requiredBoolean(r, "builds");
  s.testsPassed = nonNegative<int>(r, "testsPassed");
  s.testsFailed = nonNegative<int>(r, "testsFailed");
  s.lintWarnings = nonNegative<int>(r, "lintWarnings");
  s.costUsd = optionalNonNegative<double>(r, "costUsd");
  s.inputTokens = optionalNonNegative<std::int64_t>(r, "inputTokens");
  s.outputTokens = optionalNonNegative<std::int64_t>(r, "outputTokens");
  s.latencyMs = nonNegative<std::int64_t>(r, "latencyMs");
  s.commit = r.optionalString("commit");
  s.status = r.string("status");
  s.verifyOutput = r.optionalString("verifyOutput");
  return s;
}

CaseAgentStats readCaseAgentStats(const JsonFields& r) {
  CaseAgentStats s;
  s.agent = r.string("agent");
  s.n = nonNegative<int>(r, "n");
  s.c = nonNegative<int>(r, "c");
  if (s.c > s.n) r.fail("c", "expected at most n (" + std::to_string(s.n) + ")");
  s.passAtK = readPassAtK(r, "passAtK");
  s.meanScore = r.number<double>("meanScore");
  s.meanForgetestScore = r.number<double>("meanForgetestScore");
  return s;
}

CaseStats readCaseStats(const JsonFields& r) {
  CaseStats c;
  c.caseId = r.string("caseId");
  c.agents = r.array<CaseAgentStats>("agents", [](const json::value& v, const std::string& path) {
    return readCaseAgentStats(JsonFields(v, path));
  });
  return c;
}

AgentStats readAgentStats(const JsonFields& r) {
  AgentStats a;
  a.agent = r.string("agent");
  a.version = r.optionalString("version").value_or("");
  a.passAtK = readPassAtK(r, "passAtK");
  a.compileRate = r.number<double>("compileRate");
  a.testPassRate = r.number<double>("testPassRate");
  a.meanScore = r.number<double>("meanScore");
  a.meanForgetestScore = r.number<double>("meanForgetestScore");
  a.totalCostUsd = r.number<double>("totalCostUsd");
  a.meanLatencyMs = r.number<double>("meanLatencyMs");
  a.inputTokens = nonNegative<std::int64_t>(r, "inputTokens");
  a.outputTokens = nonNegative<std::int64_t>(r, "outputTokens");
  auto wilson = r.optionalObject<Interval>("passAt1Wilson", readInterval);
  if (!wilson) r.fail("passAt1Wilson", "missing");
  a.passAt1Wilson = *wilson;
  a.samples = nonNegative<int>(r, "samples");
  a.solved = nonNegative<int>(r, "solved");
  if (a.solved > a.samples) r.fail("solved", "expected at most samples (" + std::to_string(a.samples) + ")");
  return a;
}

template <class T>
json::array arrayOf(const std::vector<T>& items) {
  json::array out;
  out.reserve(items.size());
  for (const T& x : items) out.push_back(json::value_from(x));
  return out;
}

}  // namespace

void tag_invoke(json::value_from_tag, json::value& out, const Interval& x) {
  json::object o;
  o["low"] = finiteOrNull(x.low);
  o["high"] = finiteOrNull(x.high);
  out = std::move(o);
}

Interval tag_invoke(json::value_to_tag<Interval>, const json::value& in) { return readInterval(JsonFields(in)); }

void tag_invoke(json::value_from_tag, json::value& out, const Sample& x) {
  json::object o;
  o["caseId"] = x.caseId;
  o["agent"] = x.agent;
  o["index"] = x.index;
  o["solved"] = x.solved;
  putIfSet(o, "error", x.error);
  o["score"] = finiteOrNull(x.score);
  o["forgetestScore"] = finiteOrNull(x.forgetestScore);
  o["builds"] = x.builds;
  o["testsPassed"] = x.testsPassed;
  o["testsFailed"] = x.testsFailed;
  o["lintWarnings"] = x.lintWarnings;
  putIfSet(o, "costUsd", x.costUsd);
  putIfSet(o, "inputTokens", x.inputTokens);
  putIfSet(o, "outputTokens", x.outputTokens);
  o["latencyMs"] = x.latencyMs;
  putIfSet(o, "commit", x.commit);
  o["status"] = x.status;
  putIfSet(o, "verifyOutput", x.verifyOutput);
  out = std::move(o);
}

Sample tag_invoke(json::value_to_tag<Sample>, const json::value& in) { return readSample(JsonFields(in)); }

void tag_invoke(json::value_from_tag, json::value& out, const CaseAgentStats& x) {
  json::object o;
  o["agent"] = x.agent;
  o["n"] = x.n;
  o["c"] = x.c;
  o["passAtK"] = passAtKJson(x.passAtK);
  o["meanScore"] = finiteOrNull(x.meanScore);
  o["meanForgetestScore"] = finiteOrNull(x.meanForgetestScore);
  out = std::move(o);
}

CaseAgentStats tag_invoke(json::value_to_tag<CaseAgentStats>, const json::value& in) {
  return readCaseAgentStats(JsonFields(in));
}

void tag_invoke(json::value_from_tag, json::value& out, const CaseStats& x) {
  json::object o;
  o["caseId"] = x.caseId;
  o["agents"] = arrayOf(x.agents);
  out = std::move(o);
}

CaseStats tag_invoke(json::value_to_tag<CaseStats>, const json::value& in) { return readCaseStats(JsonFields(in)); }

void tag_invoke(json::value_from_tag, json::value& out, const AgentStats& x) {
  json::object o;
  o["agent"] = x.agent;
  o["version"] = x.version;
  o["passAtK"] = passAtKJson(x.passAtK);
  o["compileRate"] = finiteOrNull(x.compileRate);
  o["testPassRate"] = finiteOrNull(x.testPassRate);
  o["meanScore"] = finiteOrNull(x.meanScore);
  o["meanForgetestScore"] = finiteOrNull(x.meanForgetestScore);
  o["totalCostUsd"] = finiteOrNull(x.totalCostUsd);
  o["meanLatencyMs"] = finiteOrNull(x.meanLatencyMs);
  o["inputTokens"] = x.inputTokens;
  o["outputTokens"] = x.outputTokens;
  o["passAt1Wilson"] = json::value_from(x.passAt1Wilson);
  o["samples"] = x.samples;
  o["solved"] = x.solved;
  out = std::move(o);
}

AgentStats tag_invoke(json::value_to_tag<AgentStats>, const json::value& in) {
  return readAgentStats(JsonFields(in));
}

void tag_invoke(json::value_from_tag, json::value& out, const Report& x) {
  json::object o;
  o["schema"] = x.schema;
  o["name"] = x.name;
  o["hydraVersion"] = x.hydraVersion;
  o["evalSetHash"] = x.evalSetHash;
  putIfNotEmpty(o, "startedAt", x.startedAt);
  putIfNotEmpty(o, "finishedAt", x.finishedAt);
  json::array passK;
  for (int k : x.passK) passK.emplace_back(k);
  o["passK"] = std::move(passK);
  o["agentVersions"] = stringMapJson(x.agentVersions);
  o["baseCommits"] = stringMapJson(x.baseCommits);
  o["samples"] = arrayOf(x.samples);
  o["cases"] = arrayOf(x.cases);
  o["agents"] = arrayOf(x.agents);
  out = std::move(o);
}

Report tag_invoke(json::value_to_tag<Report>, const json::value& in) {
  JsonFields r(in);
  Report report;
  report.schema = r.string("schema");
  if (report.schema != kReportSchema) {
    r.fail("schema", "expected \"" + std::string(kReportSchema) + "\", got \"" + report.schema +
                         "\": not a hydra eval report, or one this hydra cannot read");
  }
  report.name = r.optionalString("name").value_or("");
  report.hydraVersion = r.optionalString("hydraVersion").value_or("");
  report.evalSetHash = r.optionalString("evalSetHash").value_or("");
  report.startedAt = r.optionalString("startedAt").value_or("");
  report.finishedAt = r.optionalString("finishedAt").value_or("");
  report.passK = readPassK(r);
  report.agentVersions = readStringMap(r, "agentVersions");
  report.baseCommits = readStringMap(r, "baseCommits");
  report.samples = r.array<Sample>(
      "samples", [](const json::value& v, const std::string& path) { return readSample(JsonFields(v, path)); });
  report.cases = r.array<CaseStats>(
      "cases", [](const json::value& v, const std::string& path) { return readCaseStats(JsonFields(v, path)); });
  report.agents = r.array<AgentStats>(
      "agents", [](const json::value& v, const std::string& path) { return readAgentStats(JsonFields(v, path)); });
  return report;
}

Report readReportFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the report " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return json::value_to<Report>(json::parse(text.str()));
  } catch (const std::exception& e) {
    throw std::runtime_error(path.string() + " is not a hydra eval report: " + e.what());
  }
}

}  // namespace hydra::core::eval
