// Taking an agent's result: the merge of its branch into the user's branch
// (and the auto-merge a race does when hydra.toml asks for it), and the
// cleanup of finished races' worktrees.

#include <spdlog/spdlog.h>

#include <git2.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "core/collab/iterations.h"
#include "core/executor/from_config.h"
#include "core/git/git.h"
#include "core/git/object_quarantine.h"
#include "core/race/escape_guard.h"
#include "core/workspace/workspace.h"

namespace hydra::core {

namespace fs = std::filesystem;

namespace {

bool merged(merge::MergeOutcome outcome) {
  return outcome == merge::MergeOutcome::FastForward || outcome == merge::MergeOutcome::Merged;
}

// "its build failed (exit 2)", "its tests failed (timed out)".
std::optional<std::string> checkConcern(const char* name, const std::optional<scoring::CheckResult>& check) {
  if (!check || check->passed()) return std::nullopt;
  std::string why;
  if (check->skipped) {
    why = "did not run (the build failed)";
  } else if (check->timedOut) {
    why = "timed out";
  } else if (!check->error.empty()) {
    why = "could not run: " + check->error;
  } else if (check->exitCode) {
    why = "failed (exit " + std::to_string(*check->exitCode) + ")";
  } else {
    why = "failed";
  }
  return std::string("its ") + name + " " + why;
}

// What an agent of `race` changed outside its worktree that hydra could
// not put back: the repository is not as the race found it, whichever agent
// is merged.
std::vector<std::string> unresolvedEscapes(const RaceRecord& race) {
  std::vector<std::string> out;
  for (const auto& agent : race.agents) {
    for (const auto& escape : agent.escapes) {
      if (escape.find("could not be put back") != std::string::npos) {
        out.push_back("agent " + agent.agentId + " changed what hydra could not put back: " + escape);
      }
    }
  }
  return out;
}

// What speaks against merging `agentId` by hand: it is not the winner, a
// check of it failed, hydra flagged it, or an agent of the race left a change
// outside its worktree that hydra could not put back. The same things a
// front end shows before it asks (docs/protocol.md, hydra/merge).
std::vector<std::string> mergeConcerns(const RaceRecord& race, const std::optional<scoring::RaceScores>& scores,
                                       const std::string& agentId) {
  std::vector<std::string> out = unresolvedEscapes(race);
  if (!scores) {
    out.push_back("the race was not scored: nothing checked its work");
    return out;
  }
  const auto it = std::find_if(scores->rankings.begin(), scores->rankings.end(),
                               [&](const scoring::AgentScore& a) { return a.agentId == agentId; });
  if (it == scores->rankings.end()) {
    out.push_back("it was not ranked: nothing checked its work");
    return out;
  }
  if (!scores->winner) {
    out.push_back("the race has no winner: every agent failed");
  } else if (*scores->winner != agentId) {
    out.push_back("it is not the winner (" + *scores->winner + " is; it ranked #" + std::to_string(it->rank) + ")");
  }
  for (const auto& [name, check] : {std::pair{"build", &it->checks.build}, std::pair{"tests", &it->checks.tests},
                                    std::pair{"lint", &it->checks.lint}}) {
    if (auto concern = checkConcern(name, *check)) out.push_back(*concern);
  }
  for (const auto& flag : it->flags) out.push_back("it is flagged: " + flag);
  return out;
}

// Copies the objects of what `request` merges from race `raceId`'s
// quarantine into the user's store, so that the merge makes them the user's
// own before a cleanup drops the quarantine. A branch that is gone is left
// to the merge to report.
void adoptMerged(const fs::path& root, const std::string& raceId, const merge::MergeRequest& request) {
  git::RepositoryPtr repo = git::openRepository(root);
  const auto quarantine = ObjectQuarantine::find(git::commonDir(repo.get()), raceId);
  if (!quarantine) return;
  git_oid commit;
  try {
    commit = git::resolveCommit(repo.get(), request.sourceCommit ? *request.sourceCommit : request.sourceBranch);
  } catch (const git::GitError&) {
    return;
  }
  const std::size_t copied = quarantine->adopt(git::toHex(commit));
  spdlog::debug("race {}: {} object(s) of its result moved into the repository's own store", raceId, copied);
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : "; ") + item;
  return out;
}

}  // namespace

MergeReport Workspace::mergeAgent(const RaceRecord& race, const std::string& agentId, bool dryRun, bool keep,
                                  bool manual) {
  const AgentRecord agent = withResult(race, agentId);
  merge::MergeRequest request;
  request.sourceBranch = agent.branch;
  // A collaboration's iteration: its commit, which may be behind the branch's tip.
  if (race.isCollab()) request.sourceCommit = agent.commit;
  request.dryRun = dryRun;
  // What recovery needs to record a merge it finishes in its race.
  request.journalNote = race.id + " " + agentId + (manual ? " manual" : " automatic");
  request.keepJournal = manual;
  std::string task = race.task.substr(0, race.task.find('\n'));
  request.message = race.isCollab() ? "Merge " + agentId + " of " + agent.branch + " (hydra collaboration " + race.id +
                                          ")\n\nTask: " + task + "\n"
                                    : "Merge " + agent.branch + " (hydra race " + race.id + ")\n\nTask: " + task + "\n";
  merge::MergeResult result;
  try {
    // Races under way here must not take the merge for an agent's escape.
    std::optional<OwnRepositoryChange> own;
    if (!dryRun) {
      own.emplace(root_);
      adoptMerged(root_, race.id, request);
    }
    result = merge::mergeBranch(root_, request);
  } catch (const git::GitError& e) {
    if (e.code() != GIT_ENOTFOUND) throw;
    throw WorkspaceError::noResult(race, agent,
                                   "its branch " + agent.branch + " no longer exists (the race was merged or cleaned up)");
  } catch (const merge::MergeRefused& e) {
    throw WorkspaceError::mergeRefused(e);
  }

  MergeReport out;
  out.outcome = std::string(merge::toString(result.outcome));
  out.agentId = agentId;
  out.branch = agent.branch;
  out.targetBranch = result.targetBranch;
  out.dryRun = dryRun;
  out.files = result.files;
  out.conflicts = result.conflicts;
  out.commit = result.commit;
  if (!dryRun && merged(result.outcome) && !keep) {
    auto config = configState().config;
    auto& worktrees = worktreesFor(config ? config->general : GeneralConfig{});
    std::vector<Worktree> done;
    for (const auto& wt : worktrees.list()) {
      bool ofThisRace = std::any_of(race.agents.begin(), race.agents.end(), [&](const AgentRecord& a) {
        return wt.branch == a.branch || wt.path.string() == a.worktree;
      });
      if (ofThisRace) done.push_back(wt);
    }
    try {
      worktrees.release(done, true, poolPolicy());
    } catch (const std::exception& e) {
      spdlog::warn("race {}: could not remove every worktree: {}", race.id, e.what());
    }
    out.cleanedUp = true;
    // A merge by hand comes after the race has sealed its objects: with its
    // branches gone, what the merge did not take goes too. (An auto-merge
    // runs before the seal; the race's cleanup drops its quarantine.)
    if (manual) dropQuarantines(worktrees, {race});
  }
  return out;
}

void Workspace::finishInterruptedMerge() {
  std::optional<merge::InterruptedMerge> found;
  try {
    // Races under way here must not take the finished merge for an agent's escape.
    OwnRepositoryChange own(root_);
    found = merge::finishInterruptedMerge(root_);
  } catch (const std::exception& e) {
    spdlog::error("could not finish the merge that a hydra that stopped left half done: {}", e.what());
    return;
  }
  if (!found) return;
  using Outcome = merge::InterruptedMerge::Outcome;
  switch (found->outcome) {
    case Outcome::Blocked:
      spdlog::error("a merge into {} was interrupted, and files it writes changed since: {}; they are left as they are "
                    "(the merge's journal, .git/hydra-merge.json, says what it would write)",
                    found->targetBranch, joined(found->blocking));
      return;
    case Outcome::Abandoned:
      spdlog::info("a merge into {} was interrupted and the branch has moved on since; nothing to finish",
                   found->targetBranch);
      return;
    case Outcome::Completed:
      spdlog::warn("finished the merge into {} ({}) that a hydra that stopped left half done", found->targetBranch,
                   found->commit.substr(0, 12));
      break;
    case Outcome::AlreadyDone:
      break;
  }
  std::istringstream words(found->note);
  std::string raceId, agentId, how;
  words >> raceId >> agentId >> how;
  if (raceId.empty() || !isValidId(raceId)) return;
  try {
    std::optional<RaceRecord> race = store_.load(raceId);
    if (!race || race->merged) return;
    race->merged = MergeRecord{.agentId = agentId,
                               .outcome = found->outcomeOfMerge,
                               .targetBranch = found->targetBranch,
                               .commit = found->commit,
                               .mergedAt = std::chrono::system_clock::now(),
                               .automatic = how == "automatic"};
    store_.save(*race);
  } catch (const std::exception& e) {
    spdlog::warn("race {}: merged, but its record could not be updated: {}", raceId, e.what());
  }
}

MergeReport Workspace::merge(const std::string& raceId, const std::optional<std::string>& agentId, bool dryRun,
                             bool keep, bool force) {
  // What a killed merge left is finished first: the race may be the one it was merging.
  if (!dryRun) finishInterruptedMerge();
  RaceRecord race = record(raceId);
  if (race.status == RaceStatus::Running || busy(raceId)) {
    throw WorkspaceError::raceRunning(raceId, "its results can be merged once it has finished");
  }
  if (agentId && !(race.isCollab() && collab::parseIterationId(*agentId)) &&
      (!isValidId(*agentId) || !race.findAgent(*agentId))) {
    throw WorkspaceError::unknownAgent(race, *agentId);
  }
  // A race gives one result: once taken, its branches are usually gone, and
  // taking a second agent's on top is a choice for git, not for hydra.
  if (race.merged) throw WorkspaceError::alreadyMerged(race);
  std::string chosen;
  auto scores = scoresIfAny(raceId);
  if (agentId) {
    // No result at all says more than "not eligible"; a collaboration's
    // "builder" is its latest iteration.
    chosen = withResult(race, *agentId).agentId;
    // What can never win is never merged either: a failed run's half-done work, a run that was stopped.
    if (scores) {
      for (const auto& a : scores->rankings) {
        if (a.agentId == chosen && !a.eligible()) {
          throw WorkspaceError(WorkspaceError::Kind::MergeRefused,
                               "agent " + chosen + " " + a.ineligible + "; only an eligible agent is merged",
                               boost::json::object{{"reason", "ineligible"}, {"agentId", chosen},
                                                   {"ineligible", a.ineligible}});
        }
      }
    }
  } else {
    if (!scores || !scores->winner) {
      throw WorkspaceError(WorkspaceError::Kind::NotScored,
                           "race " + raceId + " has no winner" +
                               (scores ? " (all agents failed)" : " (it was not scored)") +
                               "; name the agent to merge",
                           boost::json::object{{"raceId", raceId}, {"state", toString(race.status)}});
    }
    chosen = *scores->winner;
  }
  // The rails of the front ends: a pick hydra would not make is said, and
  // made only when asked for with force.
  std::vector<std::string> concerns = mergeConcerns(race, scores, chosen);
  if (!concerns.empty() && !force && !dryRun) {
    boost::json::array listed;
    for (const auto& c : concerns) listed.emplace_back(c);
    throw WorkspaceError(WorkspaceError::Kind::MergeRefused,
                         "agent " + chosen + " is not a safe pick: " + joined(concerns) + "; merge it with force to take it anyway",
                         boost::json::object{{"reason", "needsForce"}, {"agentId", chosen}, {"concerns", std::move(listed)}});
  }
  MergeReport report = mergeAgent(race, chosen, dryRun, keep, true);
  report.concerns = std::move(concerns);
  if (!dryRun && isMergedOutcome(report.outcome)) {
    race.merged = MergeRecord{.agentId = chosen,
                              .outcome = report.outcome,
                              .targetBranch = report.targetBranch,
                              .commit = report.commit,
                              .mergedAt = std::chrono::system_clock::now(),
                              .automatic = false};
    try {
      store_.save(race);
    } catch (const std::exception& e) {
      // The merge is done and git holds it; only the mark on the race is lost.
      spdlog::warn("race {}: merged, but its record could not be updated: {}", raceId, e.what());
    }
    // The race says it now: the journal that would have told recovery goes.
    try {
      merge::clearMergeJournal(root_);
    } catch (const std::exception& e) {
      spdlog::warn("race {}: merged, but its merge journal could not be removed: {}", raceId, e.what());
    }
  }
  return report;
}

AutoMergeOutcome Workspace::autoMerge(const std::string& raceId, const std::string& agentId) {
  AutoMergeOutcome outcome;
  outcome.agentId = agentId;
  try {
    const RaceRecord race = record(raceId);
    // What is left of an escape is the user's to look at before anything is merged.
    if (auto unresolved = unresolvedEscapes(race); !unresolved.empty()) {
      outcome.outcome = "refused";
      outcome.error = joined(unresolved);
      return outcome;
    }
    MergeReport report = mergeAgent(race, agentId, false, false);
    outcome.outcome = report.outcome;
    outcome.targetBranch = report.targetBranch;
    outcome.commit = report.commit;
    outcome.conflicts = report.conflicts;
  } catch (const std::exception& e) {
    outcome.outcome = "refused";
    outcome.error = e.what();
  }
  return outcome;
}

void Workspace::dropQuarantines(const WorktreeManager& worktrees, const std::vector<RaceRecord>& finished) {
  // The objects of the races cleaned up now, and of races whose records are
  // gone, go once their branches have: what the repository still reaches
  // (a kept branch, a merge) is copied into its own store first
  // (core/git/object_quarantine.h). A quarantine of a race under way (here or
  // in another hydra) is never dropped: that race is neither finished nor gone.
  std::vector<ObjectQuarantine> doomed;
  // A finished race's own, even one a kill left without its owner's mark.
  for (const RaceRecord& race : finished) {
    if (auto quarantine = ObjectQuarantine::find(worktrees.commonDir(), race.id)) doomed.push_back(std::move(*quarantine));
  }
  for (ObjectQuarantine& quarantine : worktrees.quarantines()) {
    const bool listed = std::any_of(doomed.begin(), doomed.end(),
                                    [&](const ObjectQuarantine& q) { return q.name() == quarantine.name(); });
    std::error_code ec;
    const bool gone = isValidId(quarantine.name()) && !fs::exists(store_.raceDir(quarantine.name()), ec) && !ec;
    if (!listed && gone) doomed.push_back(std::move(quarantine));
  }
  for (const ObjectQuarantine& quarantine : doomed) {
    try {
      const QuarantineDrop dropped = quarantine.drop();
      spdlog::info("race {}: dropped its objects' quarantine ({} object(s) and {} pack(s) the repository still "
                   "reaches kept)", quarantine.name(), dropped.adoptedObjects, dropped.adoptedPacks);
    } catch (const std::exception& e) {
      spdlog::warn("race {}: could not drop its objects' quarantine {}: {}", quarantine.name(),
                   quarantine.path().string(), e.what());
    }
  }
}

PoolPolicy Workspace::poolPolicy() {
  auto config = configState().config;
  if (!config) return {};
  return PoolPolicy{static_cast<std::size_t>(config->general.poolSize), config->general.keepIgnored};
}

std::optional<PoolStatus> Workspace::worktreePool() {
  auto config = configState().config;
  if (!config) return std::nullopt;
  PoolStatus status;
  status.size = static_cast<std::size_t>(config->general.poolSize);
  for (const auto& p : worktreesFor(config->general.workspaceDir).pool()) {
    ++status.worktrees;
    status.bytes += p.bytes;
  }
  return status;
}

CleanupReport Workspace::cleanup(const std::optional<std::string>& raceId, bool keepBranches, bool emptyPool) {
  std::vector<RaceRecord> finished;
  if (raceId) {
    RaceRecord race = record(*raceId);
    if (race.status == RaceStatus::Running || busy(*raceId)) {
      throw WorkspaceError::raceRunning(*raceId, "its worktrees are in use");
    }
    finished.push_back(std::move(race));
  } else {
    for (auto& race : allRaces()) {
      if (race.status != RaceStatus::Running && !busy(race.id)) finished.push_back(std::move(race));
    }
  }

  auto& worktrees = worktreesFor(config()->general);
  auto existing = worktrees.list();
  CleanupReport out;
  const PoolPolicy policy = poolPolicy();
  for (const auto& race : finished) {
    // What the cluster jobs of a race left for inspection (the directories of
    // jobs that ended without their runner's result) goes with its worktrees.
    std::error_code ignored;
    fs::remove_all(jobsDirectory(worktrees.workspaceDir()) / race.id, ignored);
    std::vector<Worktree> done;
    for (const auto& agent : race.agents) {
      auto wt = std::find_if(existing.begin(), existing.end(), [&](const Worktree& w) {
        return w.path.string() == agent.worktree || w.branch == agent.branch;
      });
      if (wt == existing.end()) continue;
      done.push_back(*wt);
      existing.erase(wt);
    }
    if (done.empty()) continue;
    const std::vector<Worktree> pooled = worktrees.release(done, !keepBranches, policy);
    for (const auto& wt : done) out.removed.push_back(wt.path.string());
    for (const auto& wt : pooled) out.pooled.push_back(wt.path.string());
    spdlog::info("race {}: removed {} worktree(s), {} of them kept in the pool", race.id, done.size(), pooled.size());
  }
  // What a hydra killed while removing a worktree left half unregistered
  // (git can no longer open it, so list() above does not see it): recovery
  // keeps it while a race's record names it, so it goes here with its race.
  // Worktrees of races not cleaned up now stay.
  std::vector<std::string> kept;
  for (const auto& race : allRaces()) {
    const bool cleaned = std::any_of(finished.begin(), finished.end(), [&](const RaceRecord& r) { return r.id == race.id; });
    if (cleaned) continue;
    for (const auto& agent : race.agents) kept.push_back(agent.worktree);
  }
  const auto isKept = [&kept](const Worktree& w) {
    return std::find(kept.begin(), kept.end(), w.path.string()) != kept.end();
  };
  for (const auto& wt : worktrees.prune(isKept, !keepBranches)) {
    out.removed.push_back(wt.path.string());
  }
  dropQuarantines(worktrees, finished);
  if (emptyPool) {
    for (const auto& p : worktrees.emptyPool()) {
      out.poolRemoved.push_back(p.path.string());
      out.poolBytesFreed += p.bytes;
    }
  }
  return out;
}

}  // namespace hydra::core
