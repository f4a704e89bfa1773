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

// --- hydra/race --------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const RaceParams& x) {
  json::object o{{"task", x.task}, {"agents", arrayOf(x.agents)}};
  put(o, "base", x.base);
  put(o, "executor", x.executor);
  if (x.workDoneToken) o["workDoneToken"] = toJson(*x.workDoneToken);
  v = std::move(o);
}

RaceParams tag_invoke(json::value_to_tag<RaceParams>, const json::value& v) {
  ObjectReader r(v);
  RaceParams x;
  r.required("task", x.task);
  r.required("agents", x.agents);
  r.optional("base", x.base);
  r.optional("executor", x.executor);
  r.optional("workDoneToken", x.workDoneToken);
  if (blank(x.task)) throw ParamError("task", "must not be empty");
  if (x.agents.empty()) throw ParamError("agents", "name at least one agent");
  for (std::size_t i = 0; i < x.agents.size(); ++i) {
    if (x.agents[i].empty())
      throw ParamError("agents[" + std::to_string(i) + "]", "must not be empty");
  }
  if (x.base && x.base->empty())
    throw ParamError("base", "must not be empty (leave it out for HEAD)");
  if (x.executor && *x.executor != "local" && *x.executor != "slurm")
    throw ParamError("executor", "must be \"local\" or \"slurm\" (leave it out for [executor] kind)");
  return x;
}

// --- hydra/collab ---------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const CollabParams& x) {
  json::object o{{"task", x.task}};
  put(o, "builder", x.builder);
  put(o, "reviewer", x.reviewer);
  put(o, "maxIterations", x.maxIterations);
  put(o, "untilScore", x.untilScore);
  put(o, "base", x.base);
  put(o, "executor", x.executor);
  if (x.workDoneToken) o["workDoneToken"] = toJson(*x.workDoneToken);
  v = std::move(o);
}

CollabParams tag_invoke(json::value_to_tag<CollabParams>, const json::value& v) {
  ObjectReader r(v);
  CollabParams x;
  r.required("task", x.task);
  r.optional("builder", x.builder);
  r.optional("reviewer", x.reviewer);
  r.optional("maxIterations", x.maxIterations);
  r.optional("untilScore", x.untilScore);
  r.optional("base", x.base);
  r.optional("executor", x.executor);
  r.optional("workDoneToken", x.workDoneToken);
  if (blank(x.task)) throw ParamError("task", "must not be empty");
  if (x.builder && x.builder->empty()) throw ParamError("builder", "must not be empty");
  if (x.reviewer && x.reviewer->empty()) throw ParamError("reviewer", "must not be empty");
  if (x.maxIterations && *x.maxIterations < 1) throw ParamError("maxIterations", "must be at least 1");
  if (x.untilScore && (*x.untilScore < 0 || *x.untilScore > 100))
    throw ParamError("untilScore", "must be between 0 and 100");
  if (x.base && x.base->empty())
    throw ParamError("base", "must not be empty (leave it out for HEAD)");
  if (x.executor && *x.executor != "local" && *x.executor != "slurm")
    throw ParamError("executor", "must be \"local\" or \"slurm\" (leave it out for [executor] kind)");
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

// --- hydra/merge -------------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const MergeParams& x) {
  json::object o{{"raceId", x.raceId}};
  put(o, "agentId", x.agentId);
  o["dryRun"] = x.dryRun;
  o["keep"] = x.keep;
  o["force"] = x.force;
  v = std::move(o);
}

MergeParams tag_invoke(json::value_to_tag<MergeParams>, const json::value& v) {
  ObjectReader r(v);
  MergeParams x;
  r.required("raceId", x.raceId);
  r.optional("agentId", x.agentId);
  r.optional("dryRun", x.dryRun);
  r.optional("keep", x.keep);
  r.optional("force", x.force);
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

// --- hydra/cleanup -----------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const CleanupParams& x) {
  json::object o;
  put(o, "raceId", x.raceId);
  o["keepBranches"] = x.keepBranches;
  o["pool"] = x.pool;
  v = std::move(o);
}

CleanupParams tag_invoke(json::value_to_tag<CleanupParams>, const json::value& v) {
  ObjectReader r(v);
  CleanupParams x;
  r.optional("raceId", x.raceId);
  r.optional("keepBranches", x.keepBranches);
  r.optional("pool", x.pool);
  return x;
}

// --- hydra/agentEvents -------------------------------------------------------

void tag_invoke(json::value_from_tag, json::value& v, const AgentEventsParams& x) {
  json::object o{{"raceId", x.raceId}, {"agentId", x.agentId}, {"offset", x.offset}};
  put(o, "limit", x.limit);
  v = std::move(o);
}

AgentEventsParams tag_invoke(json::value_to_tag<AgentEventsParams>, const json::value& v) {
  ObjectReader r(v);
  AgentEventsParams x;
  r.required("raceId", x.raceId);
  r.required("agentId", x.agentId);
  r.optional("offset", x.offset);
  r.optional("limit", x.limit);
  if (x.limit && *x.limit == 0) throw ParamError("limit", "must be positive");
  return x;
}

// --- hydra/evalRun, hydra/evalReport, hydra/evalCancel -----------------------

void tag_invoke(json::value_from_tag, json::value& v, const EvalRunParams& x) {
  json::object o{{"set", x.set}};
  if (!x.agents.empty()) o["agents"] = arrayOf(x.agents);
  put(o, "samples", x.samples);
  if (!x.passK.empty()) o["passK"] = arrayOf(x.passK);
  put(o, "out", x.out);
  put(o, "resume", x.resume);
  put(o, "executor", x.executor);
  if (x.workDoneToken) o["workDoneToken"] = toJson(*x.workDoneToken);
  v = std::move(o);
}

EvalRunParams tag_invoke(json::value_to_tag<EvalRunParams>, const json::value& v) {
  ObjectReader r(v);
  EvalRunParams x;
  r.required("set", x.set);
  r.optional("agents", x.agents);
  r.optional("samples", x.samples);
  r.optional("passK", x.passK);
  r.optional("out", x.out);
  r.optional("resume", x.resume);
  r.optional("executor", x.executor);
  r.optional("workDoneToken", x.workDoneToken);
  if (blank(x.set)) throw ParamError("set", "must name an eval set file");
  for (std::size_t i = 0; i < x.agents.size(); ++i) {
    if (x.agents[i].empty()) throw ParamError("agents[" + std::to_string(i) + "]", "must not be empty");
  }
  if (x.samples && *x.samples < 1) throw ParamError("samples", "must be at least 1");
  for (std::size_t i = 0; i < x.passK.size(); ++i) {
    if (x.passK[i] < 1) throw ParamError("passK[" + std::to_string(i) + "]", "must be at least 1");
  }
  if (x.out && blank(*x.out)) throw ParamError("out", "must not be empty (leave it out for the default)");
  if (x.resume && blank(*x.resume)) throw ParamError("resume", "must name a report");
  if (x.executor && *x.executor != "local" && *x.executor != "slurm")
    throw ParamError("executor", "must be \"local\" or \"slurm\" (leave it out for [executor] kind)");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const EvalReportParams& x) {
  json::object o{{"format", x.format}};
  put(o, "report", x.report);
  put(o, "evalId", x.evalId);
  v = std::move(o);
}

EvalReportParams tag_invoke(json::value_to_tag<EvalReportParams>, const json::value& v) {
  ObjectReader r(v);
  EvalReportParams x;
  r.optional("report", x.report);
  r.optional("evalId", x.evalId);
  r.optional("format", x.format);
  if (x.format != "json" && x.format != "text" && x.format != "markdown") {
    throw ParamError("format", "must be json, text or markdown");
  }
  if (x.report && x.evalId) throw ParamError("report", "name a report or an evalId, not both");
  if (x.report && blank(*x.report)) throw ParamError("report", "must name a report");
  if (x.evalId && x.evalId->empty()) throw ParamError("evalId", "must not be empty");
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const EvalIdParams& x) { v = json::object{{"evalId", x.evalId}}; }

EvalIdParams tag_invoke(json::value_to_tag<EvalIdParams>, const json::value& v) {
  ObjectReader r(v);
  EvalIdParams x;
  r.required("evalId", x.evalId);
  if (x.evalId.empty()) throw ParamError("evalId", "must not be empty");
  return x;
}

}  // namespace hydra::protocol
