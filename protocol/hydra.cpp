#include "protocol/hydra.h"

#include "protocol/json_read.h"

namespace hydra::protocol {

namespace {

// Sets o[key] only when the optional holds a value.
template <class T>
void put(json::object& o, std::string_view key, const std::optional<T>& value) {
  if (value) o[key] = json::value_from(*value);
}

// Sets o[key] to the value, or to null: for members the protocol always sends.
template <class T>
void putOrNull(json::object& o, std::string_view key, const std::optional<T>& value) {
  o[key] = value ? json::value_from(*value) : json::value(nullptr);
}

template <class T>
json::array arrayOf(const std::vector<T>& items) {
  json::array a;
  a.reserve(items.size());
  for (const auto& item : items) a.push_back(json::value_from(item));
  return a;
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

// --- initialize --------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const HydraCapabilities& x) {
  v = json::object{
      {"version", x.version}, {"agents", arrayOf(x.agents)}, {"methods", arrayOf(x.methods)}};
}

HydraCapabilities tag_invoke(json::value_to_tag<HydraCapabilities>, const json::value& v) {
  ObjectReader r(v);
  HydraCapabilities x;
  r.required("version", x.version);
  r.optional("agents", x.agents);
  r.optional("methods", x.methods);
  return x;
}

// --- hydra/agents ------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const AgentInfo& x) {
  json::object o{{"name", x.name},
                 {"adapter", x.adapter},
                 {"binary", x.binary},
                 {"configured", x.configured},
                 {"available", x.available}};
  putOrNull(o, "version", x.version);
  put(o, "path", x.path);
  put(o, "problem", x.problem);
  v = std::move(o);
}

AgentInfo tag_invoke(json::value_to_tag<AgentInfo>, const json::value& v) {
  ObjectReader r(v);
  AgentInfo x;
  r.required("name", x.name);
  r.required("adapter", x.adapter);
  r.required("binary", x.binary);
  r.optional("configured", x.configured);
  r.required("available", x.available);
  r.optional("version", x.version);
  r.optional("path", x.path);
  r.optional("problem", x.problem);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const AgentsResult& x) {
  v = json::object{{"agents", arrayOf(x.agents)}};
}

AgentsResult tag_invoke(json::value_to_tag<AgentsResult>, const json::value& v) {
  ObjectReader r(v);
  AgentsResult x;
  r.required("agents", x.agents);
  return x;
}

// --- hydra/race --------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const RaceParams& x) {
  json::object o{{"task", x.task}, {"agents", arrayOf(x.agents)}};
  put(o, "base", x.base);
  if (x.workDoneToken) o["workDoneToken"] = toJson(*x.workDoneToken);
  v = std::move(o);
}

RaceParams tag_invoke(json::value_to_tag<RaceParams>, const json::value& v) {
  ObjectReader r(v);
  RaceParams x;
  r.required("task", x.task);
  r.required("agents", x.agents);
  r.optional("base", x.base);
  r.optional("workDoneToken", x.workDoneToken);
  if (blank(x.task)) throw ParamError("task", "must not be empty");
  if (x.agents.empty()) throw ParamError("agents", "name at least one agent");
  for (std::size_t i = 0; i < x.agents.size(); ++i) {
    if (x.agents[i].empty())
      throw ParamError("agents[" + std::to_string(i) + "]", "must not be empty");
  }
  if (x.base && x.base->empty())
    throw ParamError("base", "must not be empty (leave it out for HEAD)");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const RaceAgent& x) {
  v = json::object{
      {"agentId", x.agentId}, {"agent", x.agent}, {"branch", x.branch}, {"worktree", x.worktree}};
}

RaceAgent tag_invoke(json::value_to_tag<RaceAgent>, const json::value& v) {
  ObjectReader r(v);
  RaceAgent x;
  r.required("agentId", x.agentId);
  r.required("agent", x.agent);
  r.required("branch", x.branch);
  r.required("worktree", x.worktree);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const RaceResult& x) {
  v = json::object{{"raceId", x.raceId}, {"agents", arrayOf(x.agents)}};
}

RaceResult tag_invoke(json::value_to_tag<RaceResult>, const json::value& v) {
  ObjectReader r(v);
  RaceResult x;
  r.required("raceId", x.raceId);
  r.required("agents", x.agents);
  return x;
}

// --- hydra/status, hydra/races -----------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const StatusParams& x) {
  json::object o;
  put(o, "raceId", x.raceId);
  v = std::move(o);
}

StatusParams tag_invoke(json::value_to_tag<StatusParams>, const json::value& v) {
  ObjectReader r(v);
  StatusParams x;
  r.optional("raceId", x.raceId);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const AgentState& x) {
  json::object o{
      {"agentId", x.agentId}, {"agent", x.agent}, {"state", x.state}, {"elapsedMs", x.elapsedMs}};
  put(o, "exitCode", x.exitCode);
  o["branch"] = x.branch;
  o["worktree"] = x.worktree;
  put(o, "commit", x.commit);
  put(o, "error", x.error);
  v = std::move(o);
}

AgentState tag_invoke(json::value_to_tag<AgentState>, const json::value& v) {
  ObjectReader r(v);
  AgentState x;
  r.required("agentId", x.agentId);
  r.required("agent", x.agent);
  r.required("state", x.state);
  r.required("elapsedMs", x.elapsedMs);
  r.optional("exitCode", x.exitCode);
  r.required("branch", x.branch);
  r.required("worktree", x.worktree);
  r.optional("commit", x.commit);
  r.optional("error", x.error);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const RaceSummary& x) {
  json::object o{
      {"raceId", x.raceId}, {"task", x.task}, {"state", x.state}, {"createdAt", x.createdAt}};
  put(o, "finishedAt", x.finishedAt);
  o["baseCommit"] = x.baseCommit;
  o["agents"] = arrayOf(x.agents);
  v = std::move(o);
}

RaceSummary tag_invoke(json::value_to_tag<RaceSummary>, const json::value& v) {
  ObjectReader r(v);
  RaceSummary x;
  r.required("raceId", x.raceId);
  r.required("task", x.task);
  r.required("state", x.state);
  r.required("createdAt", x.createdAt);
  r.optional("finishedAt", x.finishedAt);
  r.required("baseCommit", x.baseCommit);
  r.required("agents", x.agents);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const StatusResult& x) {
  v = json::object{{"races", arrayOf(x.races)}};
}

StatusResult tag_invoke(json::value_to_tag<StatusResult>, const json::value& v) {
  ObjectReader r(v);
  StatusResult x;
  r.required("races", x.races);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const RacesParams& x) {
  v = json::object{{"offset", x.offset}, {"limit", x.limit}};
}

RacesParams tag_invoke(json::value_to_tag<RacesParams>, const json::value& v) {
  ObjectReader r(v);
  RacesParams x;
  r.optional("offset", x.offset);
  r.optional("limit", x.limit);
  if (x.offset < 0) throw ParamError("offset", "must not be negative");
  if (x.limit < 1 || x.limit > 500) throw ParamError("limit", "must be between 1 and 500");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const RacesResult& x) {
  json::object o{{"races", arrayOf(x.races)}, {"total", x.total}};
  put(o, "nextOffset", x.nextOffset);
  v = std::move(o);
}

RacesResult tag_invoke(json::value_to_tag<RacesResult>, const json::value& v) {
  ObjectReader r(v);
  RacesResult x;
  r.required("races", x.races);
  r.required("total", x.total);
  r.optional("nextOffset", x.nextOffset);
  return x;
}

// --- hydra/cancel ------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const CancelRaceParams& x) {
  json::object o{{"raceId", x.raceId}};
  put(o, "agentId", x.agentId);
  v = std::move(o);
}

CancelRaceParams tag_invoke(json::value_to_tag<CancelRaceParams>, const json::value& v) {
  ObjectReader r(v);
  CancelRaceParams x;
  r.required("raceId", x.raceId);
  r.optional("agentId", x.agentId);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const CancelRaceResult& x) {
  v = json::object{{"cancelled", x.cancelled}};
}

CancelRaceResult tag_invoke(json::value_to_tag<CancelRaceResult>, const json::value& v) {
  ObjectReader r(v);
  CancelRaceResult x;
  r.required("cancelled", x.cancelled);
  return x;
}

// --- hydra/scores ------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const RaceIdParams& x) {
  v = json::object{{"raceId", x.raceId}};
}

RaceIdParams tag_invoke(json::value_to_tag<RaceIdParams>, const json::value& v) {
  ObjectReader r(v);
  RaceIdParams x;
  r.required("raceId", x.raceId);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const TestCounts& x) {
  v = json::object{{"passed", x.passed}, {"failed", x.failed}, {"skipped", x.skipped}};
}

TestCounts tag_invoke(json::value_to_tag<TestCounts>, const json::value& v) {
  ObjectReader r(v);
  TestCounts x;
  r.required("passed", x.passed);
  r.required("failed", x.failed);
  r.optional("skipped", x.skipped);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const LintCounts& x) {
  v = json::object{{"errors", x.errors}, {"warnings", x.warnings}};
}

LintCounts tag_invoke(json::value_to_tag<LintCounts>, const json::value& v) {
  ObjectReader r(v);
  LintCounts x;
  r.required("errors", x.errors);
  r.required("warnings", x.warnings);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const CheckResult& x) {
  json::object o{{"command", x.command}, {"skipped", x.skipped}};
  putOrNull(o, "exitCode", x.exitCode);
  put(o, "signal", x.signal);
  o["timedOut"] = x.timedOut;
  put(o, "error", x.error);
  o["durationMs"] = x.durationMs;
  o["output"] = x.output;
  o["outputTruncated"] = x.outputTruncated;
  putOrNull(o, "tests", x.tests);
  putOrNull(o, "lint", x.lint);
  o["format"] = x.format;
  v = std::move(o);
}

CheckResult tag_invoke(json::value_to_tag<CheckResult>, const json::value& v) {
  ObjectReader r(v);
  CheckResult x;
  r.required("command", x.command);
  r.optional("skipped", x.skipped);
  r.optional("exitCode", x.exitCode);
  r.optional("signal", x.signal);
  r.optional("timedOut", x.timedOut);
  r.optional("error", x.error);
  r.optional("durationMs", x.durationMs);
  r.optional("output", x.output);
  r.optional("outputTruncated", x.outputTruncated);
  r.optional("tests", x.tests);
  r.optional("lint", x.lint);
  r.optional("format", x.format);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const CheckSet& x) {
  json::object o;
  putOrNull(o, "build", x.build);
  putOrNull(o, "tests", x.tests);
  putOrNull(o, "lint", x.lint);
  v = std::move(o);
}

CheckSet tag_invoke(json::value_to_tag<CheckSet>, const json::value& v) {
  ObjectReader r(v);
  CheckSet x;
  r.optional("build", x.build);
  r.optional("tests", x.tests);
  r.optional("lint", x.lint);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const ScoreBreakdown& x) {
  json::object o;
  putOrNull(o, "build", x.build);
  putOrNull(o, "tests", x.tests);
  putOrNull(o, "lint", x.lint);
  putOrNull(o, "diffSize", x.diffSize);
  putOrNull(o, "speed", x.speed);
  v = std::move(o);
}

ScoreBreakdown tag_invoke(json::value_to_tag<ScoreBreakdown>, const json::value& v) {
  ObjectReader r(v);
  ScoreBreakdown x;
  r.optional("build", x.build);
  r.optional("tests", x.tests);
  r.optional("lint", x.lint);
  r.optional("diffSize", x.diffSize);
  r.optional("speed", x.speed);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const DiffStats& x) {
  v = json::object{{"linesAdded", x.linesAdded},
                   {"linesRemoved", x.linesRemoved},
                   {"filesChanged", x.filesChanged}};
}

DiffStats tag_invoke(json::value_to_tag<DiffStats>, const json::value& v) {
  ObjectReader r(v);
  DiffStats x;
  r.required("linesAdded", x.linesAdded);
  r.required("linesRemoved", x.linesRemoved);
  r.required("filesChanged", x.filesChanged);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const Ranking& x) {
  json::object o{{"rank", x.rank},
                 {"agentId", x.agentId},
                 {"agent", x.agent},
                 {"status", x.status},
                 {"total", x.total},
                 {"breakdown", json::value_from(x.breakdown)},
                 {"checks", json::value_from(x.checks)},
                 {"diff", json::value_from(x.diff)}};
  put(o, "durationMs", x.durationMs);
  v = std::move(o);
}

Ranking tag_invoke(json::value_to_tag<Ranking>, const json::value& v) {
  ObjectReader r(v);
  Ranking x;
  r.required("rank", x.rank);
  r.required("agentId", x.agentId);
  r.required("agent", x.agent);
  r.optional("status", x.status);
  r.required("total", x.total);
  r.required("breakdown", x.breakdown);
  r.optional("checks", x.checks);
  r.required("diff", x.diff);
  r.optional("durationMs", x.durationMs);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const Baseline& x) {
  v = json::object{
      {"commit", x.commit}, {"checks", json::value_from(x.checks)}, {"fromCache", x.fromCache}};
}

Baseline tag_invoke(json::value_to_tag<Baseline>, const json::value& v) {
  ObjectReader r(v);
  Baseline x;
  r.required("commit", x.commit);
  r.optional("checks", x.checks);
  r.optional("fromCache", x.fromCache);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const ScoresResult& x) {
  json::object o{{"raceId", x.raceId}, {"rankings", arrayOf(x.rankings)}};
  putOrNull(o, "winner", x.winner);
  o["baseline"] = json::value_from(x.baseline);
  o["autoMergeEligible"] = x.autoMergeEligible;
  o["allFailed"] = x.allFailed;
  v = std::move(o);
}

ScoresResult tag_invoke(json::value_to_tag<ScoresResult>, const json::value& v) {
  ObjectReader r(v);
  ScoresResult x;
  r.required("raceId", x.raceId);
  r.required("rankings", x.rankings);
  r.optional("winner", x.winner);
  r.required("baseline", x.baseline);
  r.required("autoMergeEligible", x.autoMergeEligible);
  r.required("allFailed", x.allFailed);
  return x;
}

// --- hydra/diff --------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const DiffParams& x) {
  json::object o{{"raceId", x.raceId}, {"agentId", x.agentId}};
  put(o, "path", x.path);
  v = std::move(o);
}

DiffParams tag_invoke(json::value_to_tag<DiffParams>, const json::value& v) {
  ObjectReader r(v);
  DiffParams x;
  r.required("raceId", x.raceId);
  r.required("agentId", x.agentId);
  r.optional("path", x.path);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const FileChange& x) {
  json::object o{{"path", x.path}};
  put(o, "oldPath", x.oldPath);
  o["status"] = x.status;
  o["additions"] = x.additions;
  o["deletions"] = x.deletions;
  o["binary"] = x.binary;
  v = std::move(o);
}

FileChange tag_invoke(json::value_to_tag<FileChange>, const json::value& v) {
  ObjectReader r(v);
  FileChange x;
  r.required("path", x.path);
  r.optional("oldPath", x.oldPath);
  r.required("status", x.status);
  r.required("additions", x.additions);
  r.required("deletions", x.deletions);
  r.required("binary", x.binary);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const DiffResult& x) {
  v = json::object{{"files", arrayOf(x.files)},
                   {"additions", x.additions},
                   {"deletions", x.deletions},
                   {"patch", x.patch}};
}

DiffResult tag_invoke(json::value_to_tag<DiffResult>, const json::value& v) {
  ObjectReader r(v);
  DiffResult x;
  r.required("files", x.files);
  r.optional("additions", x.additions);
  r.optional("deletions", x.deletions);
  r.required("patch", x.patch);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const FileContentsResult& x) {
  json::object o{{"path", x.path}};
  putOrNull(o, "base", x.base);
  putOrNull(o, "agent", x.agent);
  o["binary"] = x.binary;
  o["encoding"] = x.encoding;
  v = std::move(o);
}

FileContentsResult tag_invoke(json::value_to_tag<FileContentsResult>, const json::value& v) {
  ObjectReader r(v);
  FileContentsResult x;
  r.required("path", x.path);
  r.optional("base", x.base);
  r.optional("agent", x.agent);
  r.required("binary", x.binary);
  r.optional("encoding", x.encoding);
  if (x.encoding != "utf-8" && x.encoding != "base64")
    throw ParamError("encoding", "must be utf-8 or base64");
  return x;
}

// --- hydra/merge -------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const MergeParams& x) {
  json::object o{{"raceId", x.raceId}};
  put(o, "agentId", x.agentId);
  o["dryRun"] = x.dryRun;
  o["keep"] = x.keep;
  v = std::move(o);
}

MergeParams tag_invoke(json::value_to_tag<MergeParams>, const json::value& v) {
  ObjectReader r(v);
  MergeParams x;
  r.required("raceId", x.raceId);
  r.optional("agentId", x.agentId);
  r.optional("dryRun", x.dryRun);
  r.optional("keep", x.keep);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const MergeResult& x) {
  json::object o{{"outcome", x.outcome},
                 {"agentId", x.agentId},
                 {"branch", x.branch},
                 {"targetBranch", x.targetBranch},
                 {"dryRun", x.dryRun},
                 {"files", arrayOf(x.files)},
                 {"conflicts", arrayOf(x.conflicts)}};
  put(o, "commit", x.commit);
  o["cleanedUp"] = x.cleanedUp;
  v = std::move(o);
}

MergeResult tag_invoke(json::value_to_tag<MergeResult>, const json::value& v) {
  ObjectReader r(v);
  MergeResult x;
  r.required("outcome", x.outcome);
  r.required("agentId", x.agentId);
  r.required("branch", x.branch);
  r.required("targetBranch", x.targetBranch);
  r.optional("dryRun", x.dryRun);
  r.optional("files", x.files);
  r.optional("conflicts", x.conflicts);
  r.optional("commit", x.commit);
  r.optional("cleanedUp", x.cleanedUp);
  return x;
}

// --- hydra/log ---------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const LogParams& x) {
  json::object o{{"raceId", x.raceId}, {"agentId", x.agentId}, {"offset", x.offset}};
  put(o, "limit", x.limit);
  o["stream"] = x.stream;
  v = std::move(o);
}

LogParams tag_invoke(json::value_to_tag<LogParams>, const json::value& v) {
  ObjectReader r(v);
  LogParams x;
  r.required("raceId", x.raceId);
  r.required("agentId", x.agentId);
  r.optional("offset", x.offset);
  r.optional("limit", x.limit);
  r.optional("stream", x.stream);
  if (x.stream != "stdout" && x.stream != "stderr")
    throw ParamError("stream", "must be stdout or stderr");
  if (x.limit && *x.limit == 0) throw ParamError("limit", "must be positive");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const LogResult& x) {
  v = json::object{{"data", x.data},
                   {"offset", x.offset},
                   {"totalSize", x.totalSize},
                   {"nextOffset", x.nextOffset}};
}

LogResult tag_invoke(json::value_to_tag<LogResult>, const json::value& v) {
  ObjectReader r(v);
  LogResult x;
  r.required("data", x.data);
  r.required("offset", x.offset);
  r.required("totalSize", x.totalSize);
  r.required("nextOffset", x.nextOffset);
  return x;
}

// --- hydra/cleanup -----------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const CleanupParams& x) {
  json::object o;
  put(o, "raceId", x.raceId);
  o["keepBranches"] = x.keepBranches;
  v = std::move(o);
}

CleanupParams tag_invoke(json::value_to_tag<CleanupParams>, const json::value& v) {
  ObjectReader r(v);
  CleanupParams x;
  r.optional("raceId", x.raceId);
  r.optional("keepBranches", x.keepBranches);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const CleanupResult& x) {
  v = json::object{{"removed", arrayOf(x.removed)}};
}

CleanupResult tag_invoke(json::value_to_tag<CleanupResult>, const json::value& v) {
  ObjectReader r(v);
  CleanupResult x;
  r.required("removed", x.removed);
  return x;
}

// --- notifications -----------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const AgentStartedParams& x) {
  v = json::object{{"raceId", x.raceId},
                   {"agentId", x.agentId},
                   {"agent", x.agent},
                   {"branch", x.branch},
                   {"worktree", x.worktree}};
}

AgentStartedParams tag_invoke(json::value_to_tag<AgentStartedParams>, const json::value& v) {
  ObjectReader r(v);
  AgentStartedParams x;
  r.required("raceId", x.raceId);
  r.required("agentId", x.agentId);
  r.required("agent", x.agent);
  r.required("branch", x.branch);
  r.required("worktree", x.worktree);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const Usage& x) {
  json::object o;
  put(o, "inputTokens", x.inputTokens);
  put(o, "outputTokens", x.outputTokens);
  put(o, "cachedInputTokens", x.cachedInputTokens);
  put(o, "costUsd", x.costUsd);
  v = std::move(o);
}

Usage tag_invoke(json::value_to_tag<Usage>, const json::value& v) {
  ObjectReader r(v);
  Usage x;
  r.optional("inputTokens", x.inputTokens);
  r.optional("outputTokens", x.outputTokens);
  r.optional("cachedInputTokens", x.cachedInputTokens);
  r.optional("costUsd", x.costUsd);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const AgentEvent& x) {
  json::object o{{"kind", x.kind}};
  put(o, "text", x.text);
  put(o, "tool", x.tool);
  put(o, "detail", x.detail);
  put(o, "path", x.path);
  put(o, "change", x.change);
  put(o, "isError", x.isError);
  put(o, "usage", x.usage);
  put(o, "turns", x.turns);
  if (x.warnings) o["warnings"] = arrayOf(*x.warnings);
  v = std::move(o);
}

AgentEvent tag_invoke(json::value_to_tag<AgentEvent>, const json::value& v) {
  ObjectReader r(v);
  AgentEvent x;
  r.required("kind", x.kind);
  r.optional("text", x.text);
  r.optional("tool", x.tool);
  r.optional("detail", x.detail);
  r.optional("path", x.path);
  r.optional("change", x.change);
  r.optional("isError", x.isError);
  r.optional("usage", x.usage);
  r.optional("turns", x.turns);
  r.optional("warnings", x.warnings);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const AgentOutputParams& x) {
  json::object o{{"raceId", x.raceId},
                 {"agentId", x.agentId},
                 {"stream", x.stream},
                 {"lines", arrayOf(x.lines)},
                 {"events", arrayOf(x.events)}};
  put(o, "droppedLines", x.droppedLines);
  v = std::move(o);
}

AgentOutputParams tag_invoke(json::value_to_tag<AgentOutputParams>, const json::value& v) {
  ObjectReader r(v);
  AgentOutputParams x;
  r.required("raceId", x.raceId);
  r.required("agentId", x.agentId);
  r.required("stream", x.stream);
  r.required("lines", x.lines);
  r.optional("events", x.events);
  r.optional("droppedLines", x.droppedLines);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const AgentFinishedParams& x) {
  json::object o{{"raceId", x.raceId}, {"agentId", x.agentId}, {"status", x.status}};
  putOrNull(o, "exitCode", x.exitCode);
  o["durationMs"] = x.durationMs;
  put(o, "usage", x.usage);
  put(o, "error", x.error);
  v = std::move(o);
}

AgentFinishedParams tag_invoke(json::value_to_tag<AgentFinishedParams>, const json::value& v) {
  ObjectReader r(v);
  AgentFinishedParams x;
  r.required("raceId", x.raceId);
  r.required("agentId", x.agentId);
  r.required("status", x.status);
  r.optional("exitCode", x.exitCode);
  r.required("durationMs", x.durationMs);
  r.optional("usage", x.usage);
  r.optional("error", x.error);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const ScoringStartedParams& x) {
  v = json::object{{"raceId", x.raceId}};
}

ScoringStartedParams tag_invoke(json::value_to_tag<ScoringStartedParams>, const json::value& v) {
  ObjectReader r(v);
  ScoringStartedParams x;
  r.required("raceId", x.raceId);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const RaceFinishedParams& x) {
  json::object o{{"raceId", x.raceId}, {"status", x.status}, {"rankings", arrayOf(x.rankings)}};
  putOrNull(o, "winner", x.winner);
  o["autoMergeEligible"] = x.autoMergeEligible;
  o["allFailed"] = x.allFailed;
  v = std::move(o);
}

RaceFinishedParams tag_invoke(json::value_to_tag<RaceFinishedParams>, const json::value& v) {
  ObjectReader r(v);
  RaceFinishedParams x;
  r.required("raceId", x.raceId);
  r.required("status", x.status);
  r.required("rankings", x.rankings);
  r.optional("winner", x.winner);
  r.required("autoMergeEligible", x.autoMergeEligible);
  r.required("allFailed", x.allFailed);
  return x;
}

}  // namespace hydra::protocol
