#include "core/events/events.h"

#include <array>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <utility>

#include "core/util/json_fields.h"

// --- events ----------------------------------------------------------------------

namespace hydra::core {

namespace json = boost::json;

namespace {

void putPhase(json::object& o, const RunPhase& phase) {
  if (phase.phase.empty()) return;
  o["phase"] = phase.phase;
  putIfSet(o, "iteration", phase.iteration);
}

struct Describe {
  json::object operator()(const RaceStarted& e) const {
    json::object o{{"raceId", e.raceId}};
    putRunHeader(o, e);
    json::array agents;
    for (const auto& a : e.agents) {
      agents.push_back(json::object{{"agentId", a.agentId},
                                    {"agent", a.agent},
                                    {"adapter", a.adapter},
                                    {"branch", a.branch},
                                    {"worktree", a.worktree}});
    }
    o["agents"] = std::move(agents);
    return o;
  }
  json::object operator()(const AgentStarted& e) const {
    json::object o{{"raceId", e.raceId}, {"agentId", e.agentId}, {"agent", e.agent},
                   {"branch", e.branch}, {"worktree", e.worktree}};
    o["startedAt"] = formatTimestamp(e.startedAt);
    putIfSet(o, "pid", e.pid);
    putIfSet(o, "processGroup", e.processGroup);
    putIfSet(o, "pidStartTime", e.pidStartTime);
    putPhase(o, e.phase);
    if (e.resumed) o["resumed"] = true;
    return o;
  }
  json::object operator()(const AgentOutput& e) const {
    json::object o{{"raceId", e.raceId}, {"agentId", e.agentId}, {"stream", toString(e.stream)}};
    json::array lines;
    if (!e.line.empty()) lines.emplace_back(e.line);
    o["lines"] = std::move(lines);
    json::array events;
    for (const auto& ev : e.events) events.push_back(json::value_from(ev));
    o["events"] = std::move(events);
    return o;
  }
  json::object operator()(const AgentFinished& e) const {
    json::object o{{"raceId", e.raceId}, {"agentId", e.agentId}, {"status", toString(e.status)}};
    putOrNull(o, "exitCode", e.exitCode);
    putIfSet(o, "signal", e.signal);
    o["durationMs"] = e.durationMs;
    o["finishedAt"] = formatTimestamp(e.finishedAt);
    if (e.usage) o["usage"] = json::value_from(*e.usage);
    putIfSet(o, "error", e.error);
    putIfSet(o, "commit", e.commit);
    if (!e.warnings.empty()) o["warnings"] = stringArray(e.warnings);
    putIfNotEmpty(o, "stderrTail", e.stderrTail);
    if (e.deniedToolCalls > 0) o["deniedToolCalls"] = e.deniedToolCalls;
    putIfNotEmpty(o, "finalMessage", e.finalMessage);
    putIfSet(o, "sessionId", e.sessionId);
    if (!e.escapes.empty()) o["escapes"] = stringArray(e.escapes);
    putPhase(o, e.phase);
    return o;
  }
  json::object operator()(const ScoringStarted& e) const {
    json::object o{{"raceId", e.raceId}};
    putIfSet(o, "iteration", e.iteration);
    return o;
  }
  json::object operator()(const IterationScored& e) const {
    json::object o{{"raceId", e.raceId}};
    json::value result = json::value_from(e.result);
    for (auto& [key, value] : result.as_object()) o[key] = value;
    return o;
  }
  json::object operator()(const IterationFinished& e) const {
    json::object o{{"raceId", e.raceId}};
    json::value result = json::value_from(e.result);
    for (auto& [key, value] : result.as_object()) o[key] = value;
    o["next"] = e.refineNext ? "refine" : "stop";
    return o;
  }
  json::object operator()(const CheckOutput& e) const {
    return json::object{{"raceId", e.raceId},
                        {"subject", e.subject},
                        {"check", e.check},
                        {"stream", toString(e.stream)},
                        {"line", e.line}};
  }
  json::object operator()(const RaceFinished& e) const {
    json::object o{{"raceId", e.raceId}, {"status", toString(e.status)}};
    o["finishedAt"] = formatTimestamp(e.finishedAt);
    // The scores' members, flat: what hydra/scores answers, so a client needs
    // no second request for the results of a race it watched.
    json::object scores;
    if (e.scores) scores = json::value_from(*e.scores).as_object();
    o["rankings"] = scores.contains("rankings") ? scores["rankings"] : json::array();
    o["winner"] = scores.contains("winner") ? scores["winner"] : json::value(nullptr);
    o["autoMergeEligible"] = scores.contains("autoMergeEligible") ? scores["autoMergeEligible"] : false;
    o["autoMergeEnabled"] = scores.contains("autoMergeEnabled") ? scores["autoMergeEnabled"] : false;
    o["allFailed"] = scores.contains("allFailed") ? scores["allFailed"] : false;
    if (scores.contains("baseline")) o["baseline"] = scores["baseline"];
    if (e.autoMerge) o["autoMerge"] = json::value_from(*e.autoMerge);
    putIfSet(o, "stopReason", e.stopReason);
    return o;
  }
  json::object operator()(const OutputDropped& e) const {
    return json::object{{"raceId", e.raceId}, {"agentId", e.agentId}, {"lines", e.lines}};
  }
};

struct TypeName {
  std::string_view operator()(const RaceStarted&) const { return "raceStarted"; }
  std::string_view operator()(const AgentStarted&) const { return "agentStarted"; }
  std::string_view operator()(const AgentOutput&) const { return "agentOutput"; }
  std::string_view operator()(const AgentFinished&) const { return "agentFinished"; }
  std::string_view operator()(const ScoringStarted&) const { return "scoringStarted"; }
  std::string_view operator()(const CheckOutput&) const { return "checkOutput"; }
  std::string_view operator()(const IterationScored&) const { return "iterationScored"; }
  std::string_view operator()(const IterationFinished&) const { return "iterationFinished"; }
  std::string_view operator()(const RaceFinished&) const { return "raceFinished"; }
  std::string_view operator()(const OutputDropped&) const { return "outputDropped"; }
};

}  // namespace

const std::string& raceIdOf(const RaceEventBody& body) {
  return std::visit([](const auto& e) -> const std::string& { return e.raceId; }, body);
}

std::string_view typeOf(const RaceEventBody& body) { return std::visit(TypeName{}, body); }

json::object toJson(const RaceEventBody& body) { return std::visit(Describe{}, body); }

void tag_invoke(json::value_from_tag, json::value& out, const AutoMergeOutcome& x) {
  json::object o{{"agentId", x.agentId}, {"outcome", x.outcome}};
  if (!x.targetBranch.empty()) o["targetBranch"] = x.targetBranch;
  putIfSet(o, "commit", x.commit);
  if (!x.conflicts.empty()) o["conflicts"] = stringArray(x.conflicts);
  putIfSet(o, "error", x.error);
  out = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& out, const CollabSettings& x) {
  json::object o{{"builder", x.builder}, {"reviewer", x.reviewer}, {"maxIterations", x.maxIterations}};
  o["untilScore"] = finiteOrNull(x.untilScore);
  o["approveMarker"] = x.approveMarker;
  if (x.reviewEveryRound) o["reviewEveryRound"] = true;
  out = std::move(o);
}

CollabSettings readCollabSettings(const JsonFields& r) {
  CollabSettings x;
  x.builder = r.string("builder");
  x.reviewer = r.string("reviewer");
  x.maxIterations = r.number<int>("maxIterations");
  x.untilScore = r.optionalNumber<double>("untilScore").value_or(0);
  x.approveMarker = r.optionalString("approveMarker").value_or("");
  x.reviewEveryRound = r.boolean("reviewEveryRound", false);
  return x;
}

void putRunHeader(json::object& o, const RunHeader& h, RunHeaderForm which) {
  const bool full = which == RunHeaderForm::Full;
  o["kind"] = toString(h.kind);
  o["task"] = h.task;
  if (full) {
    o["baseRef"] = h.baseRef;
  } else {
    putIfNotEmpty(o, "baseRef", h.baseRef);  // clients show no empty base
  }
  o["baseCommit"] = h.baseCommit;
  if (full) o["repoRoot"] = h.repoRoot;
  o["createdAt"] = formatTimestamp(h.createdAt);
  if (full) {
    o["hydraPid"] = h.hydraPid;
    o["hydraStartTime"] = h.hydraStartTime;
    putIfNotEmpty(o, "hydraHost", h.hydraHost);
  }
  o["sandbox"] = h.sandbox;
  putIfNotEmpty(o, "sandboxWarning", h.sandboxWarning);
  o["executor"] = toString(h.executor);
  if (full) putIfNotEmpty(o, "slurmConf", h.slurmConf);
  if (h.collaboration) o["collaboration"] = json::value_from(*h.collaboration);
}

RunHeader readRunHeader(const JsonFields& r) {
  RunHeader h;
  h.kind = r.find("kind") ? r.word("kind", parseRunKind) : RunKind::Race;
  h.task = r.string("task");
  h.baseRef = r.optionalString("baseRef").value_or("");
  h.baseCommit = r.string("baseCommit");
  h.repoRoot = r.optionalString("repoRoot").value_or("");
  h.createdAt = r.time("createdAt");
  h.hydraPid = r.optionalNumber<int>("hydraPid").value_or(0);
  h.hydraStartTime = r.optionalNumber<std::uint64_t>("hydraStartTime").value_or(0);
  h.hydraHost = r.optionalString("hydraHost").value_or("");
  h.sandbox = r.optionalString("sandbox").value_or("unconfined");
  h.sandboxWarning = r.optionalString("sandboxWarning").value_or("");
  // Absent in records written before executors were: those ran here.
  h.executor = r.find("executor") ? r.word("executor", parseExecutorKind) : ExecutorKind::Local;
  h.slurmConf = r.optionalString("slurmConf").value_or("");
  h.collaboration = r.optionalObject<CollabSettings>("collaboration", readCollabSettings);
  return h;
}

void tag_invoke(json::value_from_tag, json::value& out, const IterationResult& x) {
  json::object o{{"iteration", x.iteration}};
  putIfSet(o, "commit", x.commit);
  o["builderStatus"] = toString(x.builderStatus);
  o["resumed"] = x.resumed;
  putIfSet(o, "builderDurationMs", x.builderDurationMs);
  if (x.builderUsage) o["builderUsage"] = json::value_from(*x.builderUsage);
  if (x.score) o["score"] = json::value_from(*x.score);
  putIfSet(o, "review", x.review);
  if (x.reviewStatus) o["reviewStatus"] = toString(*x.reviewStatus);
  putIfSet(o, "reviewDurationMs", x.reviewDurationMs);
  if (x.reviewUsage) o["reviewUsage"] = json::value_from(*x.reviewUsage);
  o["approved"] = x.approved;
  putIfSet(o, "stopReason", x.stopReason);
  out = std::move(o);
}

IterationResult readIterationResult(const JsonFields& r) {
  IterationResult x;
  x.iteration = r.number<int>("iteration");
  if (x.iteration < 1) r.fail("iteration", "must be at least 1");
  x.commit = r.optionalString("commit");
  x.builderStatus = r.word<AgentStatus>("builderStatus", parseAgentStatus);
  x.resumed = r.boolean("resumed", false);
  x.builderDurationMs = r.optionalNumber<std::int64_t>("builderDurationMs");
  if (const json::value* u = r.find("builderUsage")) x.builderUsage = usageFromJson(*u, r.path("builderUsage"));
  if (const json::value* s = r.find("score")) {
    try {
      x.score = json::value_to<scoring::AgentScore>(*s);
    } catch (const std::exception& e) {
      r.fail("score", e.what());
    }
  }
  x.review = r.optionalString("review");
  if (r.find("reviewStatus")) x.reviewStatus = r.word<AgentStatus>("reviewStatus", parseAgentStatus);
  x.reviewDurationMs = r.optionalNumber<std::int64_t>("reviewDurationMs");
  if (const json::value* u = r.find("reviewUsage")) x.reviewUsage = usageFromJson(*u, r.path("reviewUsage"));
  x.approved = r.boolean("approved", false);
  x.stopReason = r.optionalString("stopReason");
  return x;
}

}  // namespace hydra::core
