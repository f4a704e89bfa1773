#include "core/workspace/results.h"

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include "core/util/json_fields.h"

namespace hydra::core {

namespace json = boost::json;

namespace {

template <class T>
json::array arrayOf(const std::vector<T>& items) {
  json::array out;
  out.reserve(items.size());
  for (const auto& x : items) out.push_back(json::value_from(x));
  return out;
}

template <class T>
std::vector<T> readArray(const JsonFields& r, std::string_view key) {
  return r.array<T>(key, [](const json::value& v, const std::string&) { return json::value_to<T>(v); });
}

}  // namespace

namespace {

// {"memoryMiB": 4096, "processes": 4096}: a limit that is off is absent.
json::object limitsObject(const ResourceLimits& limits) {
  json::object o;
  if (limits.memoryMiB) o["memoryMiB"] = *limits.memoryMiB;
  if (limits.processes) o["processes"] = *limits.processes;
  if (limits.cpuSeconds) o["cpuSeconds"] = *limits.cpuSeconds;
  return o;
}

ResourceLimits limitsFrom(const json::value& in) {
  JsonFields r(in);
  ResourceLimits limits;
  limits.memoryMiB = r.optionalNumber<std::uint64_t>("memoryMiB");
  limits.processes = r.optionalNumber<int>("processes");
  limits.cpuSeconds = r.optionalNumber<int>("cpuSeconds");
  return limits;
}

}  // namespace

void tag_invoke(json::value_from_tag, json::value& out, const LimitsStatus& x) {
  json::object agents;
  for (const auto& [name, limits] : x.agents) agents[name] = limitsObject(limits);
  out = json::object{{"mechanism", x.mechanism},
                     {"detail", x.detail},
                     {"defaults", limitsObject(x.defaults)},
                     {"agents", std::move(agents)},
                     {"summary", x.summary}};
}

LimitsStatus tag_invoke(json::value_to_tag<LimitsStatus>, const json::value& in) {
  JsonFields r(in);
  LimitsStatus x;
  x.mechanism = r.string("mechanism");
  x.detail = r.string("detail");
  x.summary = r.string("summary");
  if (const auto* defaults = in.as_object().if_contains("defaults")) x.defaults = limitsFrom(*defaults);
  if (const auto* agents = in.as_object().if_contains("agents"); agents && agents->is_object()) {
    for (const auto& [name, limits] : agents->as_object()) x.agents[std::string(name)] = limitsFrom(limits);
  }
  return x;
}

void tag_invoke(json::value_from_tag, json::value& out, const RaceSummary& x) {
  json::object o{{"raceId", x.raceId}, {"state", x.state}};
  putRunHeader(o, x, RunHeaderForm::Public);
  putTimeIfSet(o, "finishedAt", x.finishedAt);
  o["agents"] = arrayOf(x.agents);
  putIfSet(o, "winner", x.winner);
  o["allFailed"] = x.allFailed;
  if (x.merged) o["merged"] = json::value_from(*x.merged);
  if (x.collaboration) {
    putIfSet(o["collaboration"].as_object(), "stopReason", x.stopReason);
    o["iterations"] = x.iterations;
  }
  out = std::move(o);
}

json::object iterationSummary(const IterationResult& iteration) {
  json::value v = json::value_from(iteration);
  json::object& o = v.as_object();
  o.erase("score");
  if (iteration.score) {
    json::value score = json::value_from(*iteration.score);
    o["score"] = iteration.score->total;
    if (const json::value* b = score.as_object().if_contains("breakdown")) o["breakdown"] = *b;
    if (!iteration.score->ineligible.empty()) o["ineligible"] = iteration.score->ineligible;
  }
  return o;
}

RaceSummary tag_invoke(json::value_to_tag<RaceSummary>, const json::value& in) {
  JsonFields r(in);
  RaceSummary x;
  static_cast<RunHeader&>(x) = readRunHeader(r);
  x.raceId = r.string("raceId");
  x.state = r.string("state");
  x.finishedAt = r.optionalTime("finishedAt");
  x.agents = readArray<AgentState>(r, "agents");
  x.winner = r.optionalString("winner");
  x.allFailed = r.boolean("allFailed", false);
  x.merged = r.optionalObject<MergeRecord>("merged", readMergeRecord);
  if (const json::value* settings = r.find("collaboration")) {
    if (const json::value* reason = settings->as_object().if_contains("stopReason")) {
      if (reason->is_string()) x.stopReason = std::string(reason->get_string());
    }
  }
  if (const json::value* iterations = r.find("iterations")) {
    if (!iterations->is_array()) r.fail("iterations", "expected an array");
    x.iterations = iterations->get_array();
  }
  return x;
}

void tag_invoke(json::value_from_tag, json::value& out, const AgentEventsResult& x) {
  json::array events;
  for (std::size_t i = 0; i < x.events.size(); ++i) {
    json::value e = json::value_from(x.events[i]);
    e.as_object()["stream"] = toString(i < x.streams.size() ? x.streams[i] : OutputStream::Stdout);
    events.push_back(std::move(e));
  }
  json::object o{{"events", std::move(events)}, {"offset", x.offset}, {"total", x.total}};
  putIfSet(o, "nextOffset", x.nextOffset);
  out = std::move(o);
}

AgentEventsResult tag_invoke(json::value_to_tag<AgentEventsResult>, const json::value& in) {
  JsonFields r(in);
  AgentEventsResult x;
  x.events = readArray<AgentEvent>(r, "events");
  for (const auto& e : in.at("events").as_array()) {
    const json::value* stream = e.as_object().if_contains("stream");
    auto parsed = stream && stream->is_string() ? parseOutputStream(stream->as_string()) : std::nullopt;
    x.streams.push_back(parsed.value_or(OutputStream::Stdout));
  }
  x.offset = r.number<std::uint64_t>("offset");
  x.total = r.number<std::uint64_t>("total");
  x.nextOffset = r.optionalNumber<std::uint64_t>("nextOffset");
  return x;
}

}  // namespace hydra::core

namespace hydra::core::merge {

void tag_invoke(json::value_from_tag, json::value& out, const FileChange& x) {
  json::object o{{"path", x.path}};
  if (!x.oldPath.empty() && x.oldPath != x.path) o["oldPath"] = x.oldPath;
  o["status"] = x.status;
  o["additions"] = x.additions;
  o["deletions"] = x.deletions;
  o["binary"] = x.binary;
  out = std::move(o);
}

FileChange tag_invoke(json::value_to_tag<FileChange>, const json::value& in) {
  JsonFields r(in);
  FileChange x;
  x.path = r.string("path");
  x.oldPath = r.optionalString("oldPath").value_or("");
  x.status = r.string("status");
  x.additions = r.number<int>("additions");
  x.deletions = r.number<int>("deletions");
  x.binary = r.boolean("binary", false);
  return x;
}

}  // namespace hydra::core::merge
