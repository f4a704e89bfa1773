#include "core/race/record.h"

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <charconv>
#include <cstdio>

namespace hydra::core {

namespace json = boost::json;

namespace {

using std::chrono::milliseconds;

// ---- timestamps ----

// Reads exactly `width` digits at `at`.
std::optional<int> digits(std::string_view text, std::size_t at, std::size_t width) {
  if (at + width > text.size()) return std::nullopt;
  int value = 0;
  const char* first = text.data() + at;
  auto [ptr, ec] = std::from_chars(first, first + width, value);
  if (ec != std::errc() || ptr != first + width || *first == '-' || *first == '+') {
    return std::nullopt;
  }
  return value;
}

// ---- writing ----

void putUsage(json::object& out, const Usage& usage) {
  json::object u;
  if (usage.inputTokens) u["inputTokens"] = *usage.inputTokens;
  if (usage.outputTokens) u["outputTokens"] = *usage.outputTokens;
  if (usage.cachedInputTokens) u["cachedInputTokens"] = *usage.cachedInputTokens;
  if (usage.costUsd) u["costUsd"] = *usage.costUsd;
  out["usage"] = std::move(u);
}

template <class T>
void putOptional(json::object& out, std::string_view key, const std::optional<T>& value) {
  if (value) out[key] = json::value_from(*value);
}

void putOptionalTime(json::object& out, std::string_view key, const std::optional<Timestamp>& t) {
  if (t) out[key] = formatTimestamp(*t);
}

// ---- reading ----

// Reads the fields of one JSON object, naming the offending field (by its path
// from the root) in every error. Unknown fields are ignored so that older hydra
// versions can read records written by newer ones.
class FieldReader {
 public:
  FieldReader(const json::value& in, std::string path) : path_(std::move(path)) {
    if (!in.is_object()) throw RecordError(where("") + "expected an object");
    object_ = &in.get_object();
  }

  const json::value* find(std::string_view key) const {
    const json::value* v = object_->if_contains(key);
    return v && !v->is_null() ? v : nullptr;
  }

  std::string string(std::string_view key) const {
    const json::value* v = find(key);
    if (!v) fail(key, "missing");
    return stringOf(key, *v);
  }

  std::optional<std::string> optionalString(std::string_view key) const {
    const json::value* v = find(key);
    if (!v) return std::nullopt;
    return stringOf(key, *v);
  }

  template <class T>
  T number(std::string_view key) const {
    const json::value* v = find(key);
    if (!v) fail(key, "missing");
    return numberOf<T>(key, *v);
  }

  template <class T>
  std::optional<T> optionalNumber(std::string_view key) const {
    const json::value* v = find(key);
    if (!v) return std::nullopt;
    return numberOf<T>(key, *v);
  }

  Timestamp time(std::string_view key) const {
    auto t = optionalTime(key);
    if (!t) fail(key, "missing");
    return *t;
  }

  std::optional<Timestamp> optionalTime(std::string_view key) const {
    auto text = optionalString(key);
    if (!text) return std::nullopt;
    auto t = parseTimestamp(*text);
    if (!t) fail(key, "not an ISO 8601 UTC time: " + *text);
    return t;
  }

  template <class Enum>
  Enum word(std::string_view key, std::optional<Enum> (*parse)(std::string_view)) const {
    std::string text = string(key);
    auto value = parse(text);
    if (!value) fail(key, "unknown value \"" + text + "\"");
    return *value;
  }

  std::string path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    throw RecordError(where(key) + message);
  }

 private:
  std::string where(std::string_view key) const {
    std::string p = path(key);
    return p.empty() ? std::string() : p + ": ";
  }

  std::string stringOf(std::string_view key, const json::value& v) const {
    if (!v.is_string()) fail(key, "expected a string");
    return std::string(v.get_string());
  }

  template <class T>
  T numberOf(std::string_view key, const json::value& v) const {
    boost::system::error_code ec;
    T n = v.to_number<T>(ec);
    if (ec) fail(key, "expected a number that fits: " + ec.message());
    return n;
  }

  std::string path_;
  const json::object* object_ = nullptr;
};

std::optional<Usage> readUsage(const FieldReader& parent) {
  const json::value* v = parent.find("usage");
  if (!v) return std::nullopt;
  FieldReader r(*v, parent.path("usage"));
  Usage usage;
  usage.inputTokens = r.optionalNumber<std::int64_t>("inputTokens");
  usage.outputTokens = r.optionalNumber<std::int64_t>("outputTokens");
  usage.cachedInputTokens = r.optionalNumber<std::int64_t>("cachedInputTokens");
  usage.costUsd = r.optionalNumber<double>("costUsd");
  return usage;
}

AgentRecord readAgent(const json::value& in, std::string path) {
  FieldReader r(in, std::move(path));
  AgentRecord a;
  a.agentId = r.string("agentId");
  a.agent = r.string("agent");
  a.adapter = r.string("adapter");
  a.branch = r.string("branch");
  a.worktree = r.string("worktree");
  a.status = r.word("status", parseAgentStatus);
  a.pid = r.optionalNumber<int>("pid");
  a.pidStartTime = r.optionalNumber<std::uint64_t>("pidStartTime");
  a.processGroup = r.optionalNumber<int>("processGroup");
  a.exitCode = r.optionalNumber<int>("exitCode");
  a.signal = r.optionalNumber<int>("signal");
  a.startedAt = r.optionalTime("startedAt");
  a.finishedAt = r.optionalTime("finishedAt");
  a.durationMs = r.optionalNumber<std::int64_t>("durationMs");
  a.commit = r.optionalString("commit");
  a.usage = readUsage(r);
  a.error = r.optionalString("error");
  return a;
}

bool sameUsage(const std::optional<Usage>& a, const std::optional<Usage>& b) {
  if (!a || !b) return !a && !b;
  return a->inputTokens == b->inputTokens && a->outputTokens == b->outputTokens &&
         a->cachedInputTokens == b->cachedInputTokens && a->costUsd == b->costUsd;
}

}  // namespace

std::string formatTimestamp(Timestamp time) {
  auto ms = std::chrono::floor<milliseconds>(time);
  auto day = std::chrono::floor<std::chrono::days>(ms);
  std::chrono::year_month_day date(day);
  std::chrono::hh_mm_ss clock(ms - day);
  char out[32];
  std::snprintf(
      out, sizeof out, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(date.year()),
      static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
      static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
      static_cast<int>(clock.seconds().count()), static_cast<int>(clock.subseconds().count()));
  return out;
}

std::optional<Timestamp> parseTimestamp(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction]Z
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text.back() != 'Z') {
    return std::nullopt;
  }
  auto year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
  auto hour = digits(text, 11, 2), minute = digits(text, 14, 2), second = digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  std::chrono::year_month_day date{std::chrono::year(*year), std::chrono::month(*month),
                                   std::chrono::day(*day)};
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 60) return std::nullopt;

  std::chrono::nanoseconds fraction{0};
  std::string_view rest = text.substr(19, text.size() - 20);
  if (!rest.empty()) {
    if (rest.front() != '.' || rest.size() < 2 || rest.size() > 10) return std::nullopt;
    std::string_view frac = rest.substr(1);
    auto value = digits(frac, 0, frac.size());
    if (!value) return std::nullopt;
    std::int64_t nanos = *value;
    for (std::size_t i = frac.size(); i < 9; ++i) nanos *= 10;
    fraction = std::chrono::nanoseconds(nanos);
  }
  auto since = std::chrono::sys_days(date).time_since_epoch() + std::chrono::hours(*hour) +
               std::chrono::minutes(*minute) + std::chrono::seconds(*second) + fraction;
  return Timestamp(std::chrono::duration_cast<Timestamp::duration>(since));
}

Timestamp recordNow() { return std::chrono::floor<milliseconds>(std::chrono::system_clock::now()); }

AgentRecord* RaceRecord::findAgent(std::string_view agentId) {
  for (auto& agent : agents) {
    if (agent.agentId == agentId) return &agent;
  }
  return nullptr;
}

const AgentRecord* RaceRecord::findAgent(std::string_view agentId) const {
  return const_cast<RaceRecord*>(this)->findAgent(agentId);
}

bool operator==(const AgentRecord& a, const AgentRecord& b) {
  return a.agentId == b.agentId && a.agent == b.agent && a.adapter == b.adapter &&
         a.branch == b.branch && a.worktree == b.worktree && a.status == b.status &&
         a.pid == b.pid && a.pidStartTime == b.pidStartTime && a.processGroup == b.processGroup &&
         a.exitCode == b.exitCode && a.signal == b.signal && a.startedAt == b.startedAt &&
         a.finishedAt == b.finishedAt && a.durationMs == b.durationMs && a.commit == b.commit &&
         sameUsage(a.usage, b.usage) && a.error == b.error;
}

bool operator==(const RaceRecord& a, const RaceRecord& b) {
  return a.id == b.id && a.task == b.task && a.baseRef == b.baseRef &&
         a.baseCommit == b.baseCommit && a.repoRoot == b.repoRoot && a.createdAt == b.createdAt &&
         a.finishedAt == b.finishedAt && a.status == b.status && a.hydraPid == b.hydraPid &&
         a.hydraStartTime == b.hydraStartTime && a.agents == b.agents;
}

void tag_invoke(json::value_from_tag, json::value& out, const AgentRecord& a) {
  json::object o;
  o["agentId"] = a.agentId;
  o["agent"] = a.agent;
  o["adapter"] = a.adapter;
  o["branch"] = a.branch;
  o["worktree"] = a.worktree;
  o["status"] = toString(a.status);
  putOptional(o, "pid", a.pid);
  putOptional(o, "pidStartTime", a.pidStartTime);
  putOptional(o, "processGroup", a.processGroup);
  putOptional(o, "exitCode", a.exitCode);
  putOptional(o, "signal", a.signal);
  putOptionalTime(o, "startedAt", a.startedAt);
  putOptionalTime(o, "finishedAt", a.finishedAt);
  putOptional(o, "durationMs", a.durationMs);
  putOptional(o, "commit", a.commit);
  if (a.usage) putUsage(o, *a.usage);
  putOptional(o, "error", a.error);
  out = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& out, const RaceRecord& r) {
  json::object o;
  o["id"] = r.id;
  o["task"] = r.task;
  o["baseRef"] = r.baseRef;
  o["baseCommit"] = r.baseCommit;
  o["repoRoot"] = r.repoRoot;
  o["createdAt"] = formatTimestamp(r.createdAt);
  putOptionalTime(o, "finishedAt", r.finishedAt);
  o["status"] = toString(r.status);
  o["hydraPid"] = r.hydraPid;
  o["hydraStartTime"] = r.hydraStartTime;
  json::array agents;
  for (const auto& agent : r.agents) agents.push_back(json::value_from(agent));
  o["agents"] = std::move(agents);
  out = std::move(o);
}

AgentRecord tag_invoke(json::value_to_tag<AgentRecord>, const json::value& in) {
  return readAgent(in, "");
}

RaceRecord tag_invoke(json::value_to_tag<RaceRecord>, const json::value& in) {
  FieldReader r(in, "");
  RaceRecord race;
  race.id = r.string("id");
  race.task = r.string("task");
  race.baseRef = r.string("baseRef");
  race.baseCommit = r.string("baseCommit");
  race.repoRoot = r.string("repoRoot");
  race.createdAt = r.time("createdAt");
  race.finishedAt = r.optionalTime("finishedAt");
  race.status = r.word("status", parseRaceStatus);
  race.hydraPid = r.number<int>("hydraPid");
  race.hydraStartTime = r.number<std::uint64_t>("hydraStartTime");
  if (const json::value* agents = r.find("agents")) {
    if (!agents->is_array()) r.fail("agents", "expected an array");
    const auto& list = agents->get_array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      race.agents.push_back(readAgent(list[i], "agents[" + std::to_string(i) + "]"));
    }
  }
  return race;
}

}  // namespace hydra::core
