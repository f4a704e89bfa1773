#include "core/race/review.h"

#include <spdlog/spdlog.h>

#include <git2.h>

#include "core/git/git.h"
#include "core/git/worktree.h"

namespace hydra::core {

const AgentRecord& resultOf(const RaceRecord& race, const std::string& agentId) {
  const AgentRecord* agent = race.findAgent(agentId);
  if (!agent) {
    std::string known;
    for (const auto& a : race.agents) known += (known.empty() ? "" : ", ") + a.agentId;
    throw ReviewError(ReviewError::Kind::UnknownAgent,
                      "race " + race.id + " has no agent '" + agentId + "' (its agents: " + known + ")");
  }
  if (!agent->commit) {
    throw ReviewError(ReviewError::Kind::NoResult, "agent '" + agentId + "' of race " + race.id +
                                                       " left no result commit (" +
                                                       std::string(toString(agent->status)) + ")");
  }
  return *agent;
}

std::string chooseAgent(const RaceRecord& race, const std::optional<scoring::RaceScores>& scores,
                        const std::optional<std::string>& agentId) {
  if (agentId) return *agentId;
  if (!scores || !scores->winner) {
    throw ReviewError(ReviewError::Kind::NotScored,
                      "race " + race.id + " has no winner yet (it is not scored); name the agent to merge");
  }
  return *scores->winner;
}

RaceMerge mergeRaceAgent(const std::filesystem::path& repoRoot, const Config& config, const RaceRecord& race,
                         const std::string& agentId, bool dryRun, bool keep) {
  if (race.status == RaceStatus::Running) {
    throw ReviewError(ReviewError::Kind::RaceRunning, "race " + race.id + " is still running");
  }
  const AgentRecord& agent = resultOf(race, agentId);
  RaceMerge out;
  out.agentId = agentId;
  out.branch = agent.branch;

  merge::MergeRequest request;
  request.sourceBranch = agent.branch;
  request.dryRun = dryRun;
  std::string task = race.task.substr(0, race.task.find('\n'));
  request.message = "Merge " + agent.branch + " (hydra race " + race.id + ")\n\nTask: " + task + "\n";
  try {
    out.result = merge::mergeBranch(repoRoot, request);
  } catch (const git::GitError& e) {
    if (e.code() != GIT_ENOTFOUND) throw;
    throw ReviewError(ReviewError::Kind::NoResult,
                      "branch " + agent.branch + " no longer exists (the race was merged or cleaned up)");
  }

  bool merged = out.result.outcome == merge::MergeOutcome::FastForward ||
                out.result.outcome == merge::MergeOutcome::Merged;
  if (!dryRun && merged && !keep) {
    WorktreeManager worktrees(repoRoot, config.general.workspaceDir);
    for (const auto& wt : worktrees.list()) {
      bool ofThisRace = false;
      for (const auto& a : race.agents) ofThisRace |= wt.branch == a.branch || wt.path.string() == a.worktree;
      if (!ofThisRace) continue;
      try {
        worktrees.remove(wt, true);
      } catch (const std::exception& e) {
        spdlog::warn("could not remove {}: {}", wt.path.string(), e.what());
      }
    }
    out.cleanedUp = true;
  }
  return out;
}

}  // namespace hydra::core
