#include "core/records/record.h"

#include <algorithm>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

namespace hydra::core {

namespace json = boost::json;

namespace {

AutoMergeOutcome readAutoMerge(const JsonFields& r) {
  AutoMergeOutcome m;
  m.agentId = r.string("agentId");
  m.outcome = r.string("outcome");
  m.targetBranch = r.optionalString("targetBranch").value_or("");
  m.commit = r.optionalString("commit");
  m.conflicts = r.strings("conflicts");
  m.error = r.optionalString("error");
  return m;
}

}  // namespace

MergeRecord readMergeRecord(const JsonFields& r) {
  MergeRecord m;
  m.agentId = r.string("agentId");
  m.outcome = r.string("outcome");
  m.targetBranch = r.string("targetBranch");
  m.commit = r.optionalString("commit");
  m.mergedAt = r.time("mergedAt");
  m.automatic = r.boolean("automatic", false);
  return m;
}

namespace {

AgentRecord readAgent(const JsonFields& r) {
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
  if (const json::value* usage = r.find("usage")) a.usage = usageFromJson(*usage, r.path("usage"));
  a.error = r.optionalString("error");
  a.warnings = r.strings("warnings");
  a.stderrTail = r.optionalString("stderrTail").value_or("");
  a.deniedToolCalls = r.optionalNumber<int>("deniedToolCalls").value_or(0);
  a.finalMessage = r.optionalString("finalMessage").value_or("");
  a.sessionId = r.optionalString("sessionId");
  a.escapes = r.strings("escapes");
  return a;
}

bool sameUsage(const std::optional<Usage>& a, const std::optional<Usage>& b) {
  if (!a || !b) return !a && !b;
  return a->inputTokens == b->inputTokens && a->outputTokens == b->outputTokens &&
         a->cachedInputTokens == b->cachedInputTokens && a->costUsd == b->costUsd;
}

bool sameAutoMerge(const std::optional<AutoMergeOutcome>& a, const std::optional<AutoMergeOutcome>& b) {
  if (!a || !b) return !a && !b;
  return a->agentId == b->agentId && a->outcome == b->outcome && a->targetBranch == b->targetBranch &&
         a->commit == b->commit &&
         a->conflicts == b->conflicts && a->error == b->error;
}

// How each event changes a record.
struct Apply {
  RaceRecord& race;

  void operator()(const RaceStarted& e) const { race = RaceRecord::started(e); }
  void operator()(const AgentStarted& e) const {
    AgentRecord* a = race.findAgent(e.agentId);
    if (!a) return;
    a->status = AgentStatus::Running;
    a->startedAt = e.startedAt;
    a->pid = e.pid;
    a->processGroup = e.processGroup;
    a->pidStartTime = e.pidStartTime;
  }
  void operator()(const AgentFinished& e) const {
    AgentRecord* a = race.findAgent(e.agentId);
    if (!a) return;
    a->status = e.status;
    a->exitCode = e.exitCode;
    a->signal = e.signal;
    a->finishedAt = e.finishedAt;
    if (a->startedAt) a->durationMs = e.durationMs;
    a->usage = e.usage;
    a->error = e.error;
    a->commit = e.commit;
    a->warnings = e.warnings;
    a->stderrTail = e.stderrTail;
    a->deniedToolCalls = e.deniedToolCalls;
    a->finalMessage = e.finalMessage;
    a->sessionId = e.sessionId;
    a->escapes = e.escapes;
  }
  void operator()(const IterationScored& e) const { upsert(e.result); }
  void operator()(const IterationFinished& e) const { upsert(e.result); }
  void upsert(const IterationResult& result) const {
    auto it = std::find_if(race.iterations.begin(), race.iterations.end(),
                           [&](const IterationResult& x) { return x.iteration == result.iteration; });
    if (it != race.iterations.end()) {
      *it = result;
    } else {
      race.iterations.push_back(result);
    }
  }
  void operator()(const RaceFinished& e) const {
    race.status = e.status;
    if (e.stopReason) race.stopReason = e.stopReason;
    race.finishedAt = e.finishedAt;
    race.autoMerge = e.autoMerge;
    if (e.autoMerge && isMergedOutcome(e.autoMerge->outcome)) {
      race.merged = MergeRecord{.agentId = e.autoMerge->agentId,
                                .outcome = e.autoMerge->outcome,
                                .targetBranch = e.autoMerge->targetBranch,
                                .commit = e.autoMerge->commit,
                                .mergedAt = e.finishedAt,
                                .automatic = true};
    }
    // Whatever had not ended by then never will. A collaboration's reviewer
    // that was never needed (the first result was good enough) never ran.
    for (auto& a : race.agents) {
      if (race.isCollab() && a.status == AgentStatus::Queued && !a.startedAt &&
          (e.status == RaceStatus::Completed || e.status == RaceStatus::Failed)) {
        continue;
      }
      if (!isFinal(a.status)) {
        a.status = e.status == RaceStatus::Cancelled ? AgentStatus::Cancelled : AgentStatus::Interrupted;
        if (!a.finishedAt) a.finishedAt = e.finishedAt;
      }
    }
  }
  void operator()(const AgentOutput&) const {}
  void operator()(const ScoringStarted&) const {}
  void operator()(const CheckOutput&) const {}
  void operator()(const OutputDropped&) const {}
};

}  // namespace

RaceRecord RaceRecord::started(const RaceStarted& e) {
  RaceRecord race;
  static_cast<RunHeader&>(race) = e;
  race.id = e.raceId;
  race.status = RaceStatus::Running;
  for (const auto& plan : e.agents) {
    AgentRecord a;
    a.agentId = plan.agentId;
    a.agent = plan.agent;
    a.adapter = plan.adapter;
    a.branch = plan.branch;
    a.worktree = plan.worktree;
    a.status = AgentStatus::Queued;
    race.agents.push_back(std::move(a));
  }
  return race;
}

void RaceRecord::apply(const RaceEventBody& event) {
  if (std::holds_alternative<RaceStarted>(event) || raceIdOf(event) == id) std::visit(Apply{*this}, event);
}

AgentRecord* RaceRecord::findAgent(std::string_view agentId) {
  for (auto& agent : agents) {
    if (agent.agentId == agentId) return &agent;
  }
  return nullptr;
}

bool isMergedOutcome(std::string_view outcome) {
  return outcome == "fastForward" || outcome == "merged" || outcome == "upToDate";
}

const IterationResult* RaceRecord::findIteration(int iteration) const {
  for (const auto& x : iterations) {
    if (x.iteration == iteration) return &x;
  }
  return nullptr;
}

const AgentRecord* RaceRecord::findAgent(std::string_view agentId) const {
  return const_cast<RaceRecord*>(this)->findAgent(agentId);
}

bool operator==(const AgentRecord& a, const AgentRecord& b) {
  return a.agentId == b.agentId && a.agent == b.agent && a.adapter == b.adapter && a.branch == b.branch &&
         a.worktree == b.worktree && a.status == b.status && a.pid == b.pid && a.pidStartTime == b.pidStartTime &&
         a.processGroup == b.processGroup && a.exitCode == b.exitCode && a.signal == b.signal &&
         a.startedAt == b.startedAt && a.finishedAt == b.finishedAt && a.durationMs == b.durationMs &&
         a.commit == b.commit && sameUsage(a.usage, b.usage) && a.error == b.error && a.warnings == b.warnings &&
         a.stderrTail == b.stderrTail && a.deniedToolCalls == b.deniedToolCalls && a.finalMessage == b.finalMessage && a.sessionId == b.sessionId &&
         a.escapes == b.escapes;
}

namespace {

// Iterations hold scores, which compare by their one JSON form.
bool sameIterations(const std::vector<IterationResult>& a, const std::vector<IterationResult>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (json::value_from(a[i]) != json::value_from(b[i])) return false;
  }
  return true;
}

}  // namespace

bool operator==(const RaceRecord& a, const RaceRecord& b) {
  return static_cast<const RunHeader&>(a) == static_cast<const RunHeader&>(b) && a.id == b.id &&
         a.finishedAt == b.finishedAt && a.status == b.status && a.agents == b.agents &&
         sameAutoMerge(a.autoMerge, b.autoMerge) && a.merged == b.merged && a.stopReason == b.stopReason &&
         sameIterations(a.iterations, b.iterations);
}

void tag_invoke(json::value_from_tag, json::value& out, const MergeRecord& m) {
  json::object o;
  o["agentId"] = m.agentId;
  o["outcome"] = m.outcome;
  o["targetBranch"] = m.targetBranch;
  putIfSet(o, "commit", m.commit);
  o["mergedAt"] = formatTimestamp(m.mergedAt);
  if (m.automatic) o["automatic"] = true;
  out = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& out, const AgentRecord& a) {
  json::object o;
  o["agentId"] = a.agentId;
  o["agent"] = a.agent;
  o["adapter"] = a.adapter;
  o["branch"] = a.branch;
  o["worktree"] = a.worktree;
  o["status"] = toString(a.status);
  putIfSet(o, "pid", a.pid);
  putIfSet(o, "pidStartTime", a.pidStartTime);
  putIfSet(o, "processGroup", a.processGroup);
  putIfSet(o, "exitCode", a.exitCode);
  putIfSet(o, "signal", a.signal);
  putTimeIfSet(o, "startedAt", a.startedAt);
  putTimeIfSet(o, "finishedAt", a.finishedAt);
  putIfSet(o, "durationMs", a.durationMs);
  putIfSet(o, "commit", a.commit);
  if (a.usage) o["usage"] = json::value_from(*a.usage);
  putIfSet(o, "error", a.error);
  if (!a.warnings.empty()) o["warnings"] = stringArray(a.warnings);
  putIfNotEmpty(o, "stderrTail", a.stderrTail);
  if (a.deniedToolCalls > 0) o["deniedToolCalls"] = a.deniedToolCalls;
  putIfNotEmpty(o, "finalMessage", a.finalMessage);
  putIfSet(o, "sessionId", a.sessionId);
  if (!a.escapes.empty()) o["escapes"] = stringArray(a.escapes);
  out = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& out, const RaceRecord& r) {
  json::object o;
  o["id"] = r.id;
  putRunHeader(o, r);
  putTimeIfSet(o, "finishedAt", r.finishedAt);
  o["status"] = toString(r.status);
  json::array agents;
  for (const auto& agent : r.agents) agents.push_back(json::value_from(agent));
  o["agents"] = std::move(agents);
  if (r.autoMerge) o["autoMerge"] = json::value_from(*r.autoMerge);
  if (r.merged) o["merged"] = json::value_from(*r.merged);
  if (r.isCollab()) {
    json::array iterations;
    for (const auto& x : r.iterations) iterations.push_back(json::value_from(x));
    o["iterations"] = std::move(iterations);
  }
  putIfSet(o, "stopReason", r.stopReason);
  out = std::move(o);
}

AgentRecord tag_invoke(json::value_to_tag<AgentRecord>, const json::value& in) { return readAgent(JsonFields(in)); }

RaceRecord tag_invoke(json::value_to_tag<RaceRecord>, const json::value& in) {
  JsonFields r(in);
  RaceRecord race;
  static_cast<RunHeader&>(race) = readRunHeader(r);
  race.id = r.string("id");
  race.finishedAt = r.optionalTime("finishedAt");
  race.status = r.word("status", parseRaceStatus);
  race.agents = r.array<AgentRecord>(
      "agents", [](const json::value& v, const std::string& path) { return readAgent(JsonFields(v, path)); });
  race.autoMerge = r.optionalObject<AutoMergeOutcome>("autoMerge", readAutoMerge);
  race.merged = r.optionalObject<MergeRecord>("merged", readMergeRecord);
  race.iterations = r.array<IterationResult>("iterations", [](const json::value& v, const std::string& path) {
    return readIterationResult(JsonFields(v, path));
  });
  race.stopReason = r.optionalString("stopReason");
  return race;
}

}  // namespace hydra::core
