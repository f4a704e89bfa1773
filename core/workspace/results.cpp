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

void tag_invoke(json::value_from_tag, json::value& out, const AgentInfo& x) {
  json::object o{{"name", x.name},
                 {"adapter", x.adapter},
                 {"binary", x.binary},
                 {"configured", x.configured},
                 {"available", x.available}};
  putOrNull(o, "version", x.version);
  putIfSet(o, "path", x.path);
  putIfSet(o, "problem", x.problem);
  out = std::move(o);
}

AgentInfo tag_invoke(json::value_to_tag<AgentInfo>, const json::value& in) {
  JsonFields r(in);
  AgentInfo x;
  x.name = r.string("name");
  x.adapter = r.string("adapter");
  x.binary = r.string("binary");
  x.configured = r.boolean("configured", false);
  x.available = r.boolean("available", false);
  x.version = r.optionalString("version");
  x.path = r.optionalString("path");
  x.problem = r.optionalString("problem");
  return x;
}

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

void tag_invoke(json::value_from_tag, json::value& out, const SandboxStatus& x) {
  out = json::object{{"mode", x.mode},         {"confined", x.confined},
                     {"refused", x.refused},   {"summary", x.summary},
                     {"limits", json::value_from(x.limits)}};
}

SandboxStatus tag_invoke(json::value_to_tag<SandboxStatus>, const json::value& in) {
  JsonFields r(in);
  SandboxStatus x;
  x.mode = r.string("mode");
  x.confined = r.boolean("confined", false);
  x.refused = r.boolean("refused", false);
  x.summary = r.string("summary");
  if (const auto* limits = in.as_object().if_contains("limits")) x.limits = json::value_to<LimitsStatus>(*limits);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& out, const AgentState& x) {
  json::object o{{"agentId", x.agentId}, {"agent", x.agent}, {"state", x.state}, {"elapsedMs", x.elapsedMs}};
  putIfSet(o, "exitCode", x.exitCode);
  o["branch"] = x.branch;
  o["worktree"] = x.worktree;
  putIfSet(o, "commit", x.commit);
  putIfSet(o, "error", x.error);
  if (!x.warnings.empty()) o["warnings"] = stringArray(x.warnings);
  putIfNotEmpty(o, "stderrTail", x.stderrTail);
  if (x.deniedToolCalls > 0) o["deniedToolCalls"] = x.deniedToolCalls;
  putIfSet(o, "rank", x.rank);
  putIfSet(o, "total", x.total);
  out = std::move(o);
}

AgentState tag_invoke(json::value_to_tag<AgentState>, const json::value& in) {
  JsonFields r(in);
  AgentState x;
  x.agentId = r.string("agentId");
  x.agent = r.string("agent");
  x.state = r.string("state");
  x.elapsedMs = r.optionalNumber<std::int64_t>("elapsedMs").value_or(0);
  x.exitCode = r.optionalNumber<int>("exitCode");
  x.branch = r.optionalString("branch").value_or("");
  x.worktree = r.optionalString("worktree").value_or("");
  x.commit = r.optionalString("commit");
  x.error = r.optionalString("error");
  x.warnings = r.strings("warnings");
  x.stderrTail = r.optionalString("stderrTail").value_or("");
  x.deniedToolCalls = r.optionalNumber<int>("deniedToolCalls").value_or(0);
  x.rank = r.optionalNumber<int>("rank");
  x.total = r.optionalNumber<double>("total");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& out, const RaceSummary& x) {
  json::object o{{"raceId", x.raceId}, {"kind", toString(x.kind)}, {"task", x.task}, {"state", x.state}, {"createdAt", x.createdAt}};
  putIfSet(o, "finishedAt", x.finishedAt);
  putIfNotEmpty(o, "baseRef", x.baseRef);
  o["baseCommit"] = x.baseCommit;
  o["agents"] = arrayOf(x.agents);
  putIfSet(o, "winner", x.winner);
  o["allFailed"] = x.allFailed;
  o["sandbox"] = x.sandbox;
  putIfNotEmpty(o, "sandboxWarning", x.sandboxWarning);
  o["executor"] = x.executor;
  if (x.merged) o["merged"] = json::value_from(*x.merged);
  if (x.collaboration) {
    json::value settings = json::value_from(*x.collaboration);
    putIfSet(settings.as_object(), "stopReason", x.stopReason);
    o["collaboration"] = std::move(settings);
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
  x.raceId = r.string("raceId");
  x.kind = r.find("kind") ? r.word("kind", parseRunKind) : RunKind::Race;
  x.task = r.string("task");
  x.state = r.string("state");
  x.createdAt = r.string("createdAt");
  x.finishedAt = r.optionalString("finishedAt");
  x.baseRef = r.optionalString("baseRef").value_or("");
  x.baseCommit = r.string("baseCommit");
  x.agents = readArray<AgentState>(r, "agents");
  x.winner = r.optionalString("winner");
  x.allFailed = r.boolean("allFailed", false);
  x.sandbox = r.optionalString("sandbox").value_or("unconfined");
  x.sandboxWarning = r.optionalString("sandboxWarning").value_or("");
  x.executor = r.optionalString("executor").value_or("local");
  x.merged = r.optionalObject<MergeRecord>("merged", readMergeRecord);
  x.collaboration = r.optionalObject<CollabSettings>("collaboration", readCollabSettings);
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

void tag_invoke(json::value_from_tag, json::value& out, const RacePage& x) {
  json::object o{{"races", arrayOf(x.races)}, {"total", x.total}};
  putIfSet(o, "nextOffset", x.nextOffset);
  out = std::move(o);
}

RacePage tag_invoke(json::value_to_tag<RacePage>, const json::value& in) {
  JsonFields r(in);
  RacePage x;
  x.races = readArray<RaceSummary>(r, "races");
  x.total = r.number<std::int64_t>("total");
  x.nextOffset = r.optionalNumber<std::int64_t>("nextOffset");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& out, const DiffResult& x) {
  out = json::object{{"files", arrayOf(x.files)},
                     {"additions", x.additions},
                     {"deletions", x.deletions},
                     {"patch", x.patch}};
}

DiffResult tag_invoke(json::value_to_tag<DiffResult>, const json::value& in) {
  JsonFields r(in);
  DiffResult x;
  x.files = readArray<merge::FileChange>(r, "files");
  x.additions = r.number<int>("additions");
  x.deletions = r.number<int>("deletions");
  x.patch = r.optionalString("patch").value_or("");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& out, const FileContents& x) {
  json::object o{{"path", x.path}};
  putOrNull(o, "base", x.base);
  putOrNull(o, "agent", x.agent);
  o["binary"] = x.binary;
  o["encoding"] = x.encoding;
  out = std::move(o);
}

FileContents tag_invoke(json::value_to_tag<FileContents>, const json::value& in) {
  JsonFields r(in);
  FileContents x;
  x.path = r.string("path");
  x.base = r.optionalString("base");
  x.agent = r.optionalString("agent");
  x.binary = r.boolean("binary", false);
  x.encoding = r.optionalString("encoding").value_or("utf-8");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& out, const MergeReport& x) {
  json::object o{{"outcome", x.outcome},
                 {"agentId", x.agentId},
                 {"branch", x.branch},
                 {"targetBranch", x.targetBranch},
                 {"dryRun", x.dryRun},
                 {"files", stringArray(x.files)},
                 {"conflicts", stringArray(x.conflicts)}};
  putIfSet(o, "commit", x.commit);
  o["cleanedUp"] = x.cleanedUp;
  if (!x.concerns.empty()) o["concerns"] = stringArray(x.concerns);
  out = std::move(o);
}

MergeReport tag_invoke(json::value_to_tag<MergeReport>, const json::value& in) {
  JsonFields r(in);
  MergeReport x;
  x.outcome = r.string("outcome");
  x.agentId = r.string("agentId");
  x.branch = r.string("branch");
  x.targetBranch = r.string("targetBranch");
  x.dryRun = r.boolean("dryRun", false);
  x.files = r.strings("files");
  x.conflicts = r.strings("conflicts");
  x.commit = r.optionalString("commit");
  x.cleanedUp = r.boolean("cleanedUp", false);
  x.concerns = r.strings("concerns");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& out, const LogText& x) {
  out = json::object{
      {"data", x.data}, {"offset", x.offset}, {"totalSize", x.totalSize}, {"nextOffset", x.nextOffset}};
}

LogText tag_invoke(json::value_to_tag<LogText>, const json::value& in) {
  JsonFields r(in);
  return LogText{r.string("data"), r.number<std::uint64_t>("offset"), r.number<std::uint64_t>("totalSize"),
                 r.number<std::uint64_t>("nextOffset")};
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

void tag_invoke(json::value_from_tag, json::value& out, const CleanupReport& x) {
  out = json::object{{"removed", stringArray(x.removed)},
                     {"pooled", stringArray(x.pooled)},
                     {"poolRemoved", stringArray(x.poolRemoved)},
                     {"poolBytesFreed", x.poolBytesFreed}};
}

CleanupReport tag_invoke(json::value_to_tag<CleanupReport>, const json::value& in) {
  JsonFields r(in);
  CleanupReport x;
  x.removed = r.strings("removed");
  x.pooled = r.strings("pooled");
  x.poolRemoved = r.strings("poolRemoved");
  x.poolBytesFreed = r.optionalNumber<std::uint64_t>("poolBytesFreed").value_or(0);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& out, const PoolStatus& x) {
  out = json::object{{"worktrees", x.worktrees}, {"bytes", x.bytes}, {"size", x.size}};
}

PoolStatus tag_invoke(json::value_to_tag<PoolStatus>, const json::value& in) {
  JsonFields r(in);
  PoolStatus x;
  x.worktrees = r.optionalNumber<std::uint64_t>("worktrees").value_or(0);
  x.bytes = r.optionalNumber<std::uint64_t>("bytes").value_or(0);
  x.size = r.optionalNumber<std::uint64_t>("size").value_or(0);
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
