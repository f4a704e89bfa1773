// The workspace's view of its races: status, the list of races, one record,
// and scores. Races running in this process are read from their live state,
// every other race from its record on disk.

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/config/limits.h"
#include "core/process/resource_limits.h"
#include "core/sandbox/mode.h"
#include "core/sandbox/probe.h"
#include "core/workspace/agent_probe.h"
#include "core/workspace/workspace.h"

namespace hydra::core {

std::vector<RaceRecord> Workspace::allRaces() {
  // The disk, where the recorder may not have caught up yet, completed by the live races.
  // A race whose hydra died shows as interrupted, as recovery will record it:
  // a query only reads, and leaves writing that to recover().
  std::vector<RaceRecord> races = store_.list();
  for (RaceRecord& race : races) markIfOrphaned(race);
  std::lock_guard lock(liveMutex_);
  for (const auto& [liveId, live] : live_) {
    const std::string& id = liveId;  // (a structured binding cannot be captured before C++20 compilers catch up)
    auto it = std::find_if(races.begin(), races.end(), [&](const RaceRecord& r) { return r.id == id; });
    if (it == races.end()) {
      races.push_back(live.record);
    } else {
      *it = live.record;
    }
  }
  std::sort(races.begin(), races.end(), [](const RaceRecord& a, const RaceRecord& b) {
    if (a.createdAt != b.createdAt) return a.createdAt > b.createdAt;
    return a.id > b.id;
  });
  return races;
}

std::vector<std::string> Workspace::agentNames() {
  auto config = configState().config;
  return config ? knownAgentNames(*config) : std::vector<std::string>{};
}

std::vector<AgentInfo> Workspace::agents() {
  auto config = this->config();
  return probeAgents(*config, knownAgentNames(*config), root_);
}

namespace {

LimitsStatus limitsStatus(const Config& config) {
  LimitsStatus status;
  const LimitSupport& support = limitSupport();
  status.mechanism = toString(support.mechanism);
  status.detail = support.mechanism == LimitMechanism::Rlimits ? support.reason : support.where;
  status.defaults = resourceLimitsFor(config.general.limits, {});
  for (const auto& [name, agent] : config.agents) {
    const ResourceLimits own = resourceLimitsFor(config.general.limits, agent.limits);
    if (own != status.defaults) status.agents[name] = own;
  }
  status.summary = describeLimits(status.defaults) + "; held by " +
                   (support.mechanism == LimitMechanism::Rlimits
                        ? "rlimits and hydra's watch of each agent's processes (no cgroup: " + support.reason + ")"
                        : "a " + status.mechanism + " cgroup per agent run (in " + support.where + ")");
  return status;
}

}  // namespace

SandboxStatus Workspace::sandboxStatus() {
  auto config = this->config();
  auto mode = sandbox::parseSandboxMode(config->general.sandbox).value_or(sandbox::SandboxMode::Auto);
  SandboxStatus status;
  status.limits = limitsStatus(*config);
  status.mode = mode == sandbox::SandboxMode::Off          ? "off"
                : mode == sandbox::SandboxMode::Bubblewrap ? "bubblewrap"
                                                           : "auto";
  if (mode == sandbox::SandboxMode::Off) {
    status.summary = "unconfined: [general] sandbox = \"off\" in hydra.toml";
    return status;
  }
  const auto& probe = sandbox::cachedSandboxProbe();
  if (probe.works()) {
    status.confined = true;
    status.summary = "confined by bubblewrap (" + probe.bwrap.string() + ")";
  } else if (mode == sandbox::SandboxMode::Bubblewrap) {
    status.refused = true;
    status.summary = "races are refused: [general] sandbox = \"bubblewrap\" but " + probe.describe();
  } else {
    status.summary = "unconfined: " + probe.describe();
  }
  return status;
}

RaceRecord Workspace::record(const std::string& raceId) {
  if (!isValidId(raceId)) throw WorkspaceError::unknownRace(raceId);
  if (auto l = live(raceId)) return l->record;
  std::optional<RaceRecord> race;
  try {
    race = store_.load(raceId);
  } catch (const RecordError& e) {
    throw std::runtime_error("the record of race " + raceId + " is unreadable: " + e.what());
  }
  if (!race) throw WorkspaceError::unknownRace(raceId);
  markIfOrphaned(*race);  // as allRaces() shows it
  return *race;
}

std::string Workspace::resolveRaceId(const std::string& word) {
  std::vector<RaceRecord> all = allRaces();  // newest first
  for (const auto& race : all) {
    if (race.id == word) return race.id;  // an evaluation's sample too, named whole
  }
  std::erase_if(all, [](const RaceRecord& race) { return race.kind == RunKind::Sample; });
  if (word == "latest") {
    if (all.empty()) {
      throw WorkspaceError(WorkspaceError::Kind::UnknownRace,
                           "no races yet in this repository: start one with hydra race \"TASK\" --agents NAME[,NAME...]",
                           boost::json::object{{"raceId", word}});
    }
    return all.front().id;
  }
  std::vector<std::string> fits;
  for (const auto& race : all) {
    if (!word.empty() && race.id.compare(0, word.size(), word) == 0) fits.push_back(race.id);
  }
  if (fits.size() == 1) return fits.front();
  if (fits.empty()) throw WorkspaceError::unknownRace(word);
  throw WorkspaceError::ambiguousRace(word, fits);
}

void Workspace::requireCancellable(const std::string& raceId) {
  const RaceRecord race = record(raceId);
  if (live(raceId) || race.status != RaceStatus::Running) return;
  const ProcessOwner self = ProcessOwner::self();
  const ProcessOwner owner = race.hydraOwner();
  if (owner.pid == self.pid && (owner.host.empty() || owner.host == self.host)) return;
  throw WorkspaceError::raceOwnedElsewhere(raceId, owner);
}

AgentRecord Workspace::agentRecord(const std::string& raceId, const std::string& agentId) {
  RaceRecord race = record(raceId);
  const AgentRecord* agent = isValidId(agentId) ? race.findAgent(agentId) : nullptr;
  if (!agent) throw WorkspaceError::unknownAgent(race, agentId);
  return *agent;
}

std::optional<scoring::RaceScores> Workspace::scoresIfAny(const std::string& raceId) {
  if (!isValidId(raceId)) throw WorkspaceError::unknownRace(raceId);
  if (auto l = live(raceId)) return l->scores;
  try {
    return store_.loadScores(raceId);
  } catch (const RecordError& e) {
    throw std::runtime_error("the scores of race " + raceId + " are unreadable: " + e.what());
  }
}

scoring::RaceScores Workspace::scores(const std::string& raceId) {
  RaceRecord race = record(raceId);
  auto scores = scoresIfAny(raceId);
  if (!scores) {
    auto l = live(raceId);
    throw WorkspaceError::notScored(race, l && l->scoring);
  }
  return *scores;
}

RaceSummary Workspace::summarize(const RaceRecord& race, bool scoring,
                                 const std::optional<scoring::RaceScores>& scores) const {
  auto now = std::chrono::system_clock::now();
  RaceSummary s;
  static_cast<RunHeader&>(s) = race;
  s.raceId = race.id;
  s.state = scoring ? "scoring" : std::string(toString(race.status));
  s.finishedAt = race.finishedAt;
  s.merged = race.merged;
  for (const auto& a : race.agents) {
    AgentState st;
    st.agentId = a.agentId;
    st.agent = a.agent;
    st.state = std::string(toString(a.status));
    // A collaboration's reviewer that the loop ended without: not needed, not waiting.
    if (race.isCollab() && race.status != RaceStatus::Running && a.status == AgentStatus::Queued && !a.startedAt)
      st.state = "notNeeded";
    if (a.durationMs) {
      st.elapsedMs = *a.durationMs;
    } else if (a.startedAt && a.status == AgentStatus::Running) {
      st.elapsedMs = millisBetween(*a.startedAt, now);
    }
    st.exitCode = a.exitCode;
    st.branch = a.branch;
    st.worktree = a.worktree;
    st.commit = a.commit;
    st.error = a.error;
    st.warnings = a.warnings;
    st.stderrTail = a.stderrTail;
    st.deniedToolCalls = a.deniedToolCalls;
    if (scores) {
      for (const auto& r : scores->rankings) {
        if (r.agentId != a.agentId) continue;
        st.rank = r.rank;
        st.total = r.total;
      }
    }
    s.agents.push_back(std::move(st));
  }
  if (scores) {
    s.winner = scores->winner;
    s.allFailed = scores->allFailed;
  }
  if (race.isCollab()) {
    if (!s.collaboration) s.collaboration = CollabSettings{};
    s.stopReason = race.stopReason;
    for (const auto& it : race.iterations) s.iterations.push_back(iterationSummary(it));
  }
  return s;
}

std::vector<RaceSummary> Workspace::status(const std::optional<std::string>& raceId, std::size_t newest) {
  std::vector<RaceSummary> out;
  auto summaryOf = [this](const RaceRecord& race) {
    auto l = live(race.id);
    std::optional<scoring::RaceScores> scores;
    try {
      scores = l ? l->scores : store_.loadScores(race.id);
    } catch (const std::exception& e) {
      spdlog::warn("race {}: {}", race.id, e.what());
    }
    return summarize(l ? l->record : race, l && l->scoring, scores);
  };
  if (raceId) {
    out.push_back(summaryOf(record(*raceId)));
    return out;
  }
  // Running races first, then the newest of the others.
  std::vector<RaceRecord> rest;
  for (auto& race : allRaces()) {
    // An evaluation's samples are listed by its report, not one by one.
    if (race.kind == RunKind::Sample) continue;
    if (race.status == RaceStatus::Running || busy(race.id)) {
      out.push_back(summaryOf(race));
    } else if (rest.size() < newest) {
      rest.push_back(std::move(race));
    }
  }
  for (const auto& race : rest) out.push_back(summaryOf(race));
  return out;
}

RacePage Workspace::races(std::size_t offset, std::size_t limit) {
  auto all = allRaces();  // newest first
  std::erase_if(all, [](const RaceRecord& race) { return race.kind == RunKind::Sample; });
  RacePage page;
  page.total = static_cast<std::int64_t>(all.size());
  auto begin = std::min(offset, all.size());
  auto end = std::min(begin + limit, all.size());
  for (std::size_t i = begin; i < end; ++i) {
    auto l = live(all[i].id);
    std::optional<scoring::RaceScores> scores;
    try {
      scores = l ? l->scores : store_.loadScores(all[i].id);
    } catch (const std::exception& e) {
      spdlog::warn("race {}: {}", all[i].id, e.what());
    }
    page.races.push_back(summarize(l ? l->record : all[i], l && l->scoring, scores));
  }
  if (end < all.size()) page.nextOffset = static_cast<std::int64_t>(end);
  return page;
}

}  // namespace hydra::core
