#include "core/eval/init_set.h"

#include <algorithm>

#include "core/collab/iterations.h"
#include "core/merge/diff.h"
#include "core/util/atomic_file.h"
#include "core/workspace/errors.h"

namespace hydra::core::eval {

namespace fs = std::filesystem;

namespace {

// The commit holding an agent's result: a race's agent, or a collaboration's
// iteration ("builder@2").
std::string resultCommit(const RaceRecord& race, const std::string& agentId) {
  if (auto n = collab::parseIterationId(agentId)) {
    const IterationResult* it = race.findIteration(*n);
    if (!it) throw WorkspaceError::invalidRequest("race " + race.id + " has no iteration " + std::to_string(*n));
    if (!it->commit) throw WorkspaceError::invalidRequest(agentId + " of race " + race.id + " left no commit");
    return *it->commit;
  }
  const AgentRecord* agent = race.findAgent(agentId);
  if (!agent) throw WorkspaceError::invalidRequest("race " + race.id + " has no agent '" + agentId + "'");
  if (!agent->commit) {
    throw WorkspaceError::invalidRequest(agentId + " of race " + race.id + " left no commit: nothing to take tests from");
  }
  return *agent->commit;
}

// The best-ranked eligible agent without flags, when the race has a winner:
// a flagged winner (changed protected test files, say) is no ground truth.
std::optional<std::string> bestUnflagged(const scoring::RaceScores& scores) {
  if (!scores.winner) return std::nullopt;
  for (const auto& a : scores.rankings) {
    if (a.eligible() && a.flags.empty()) return a.agentId;
  }
  return std::nullopt;
}

// Refuses to replace `file` unless asked to.
void checkReplace(const fs::path& file, bool force) {
  if (fs::exists(file) && !force) throw WorkspaceError::invalidRequest(file.string() + " exists; pass --force to replace it");
}

}  // namespace

TakenCase caseFromRace(Workspace& workspace, const std::string& raceId, const std::optional<std::string>& agentId,
                       const std::string& verifyCommand) {
  RaceRecord race;
  std::optional<std::string> winner;
  try {
    race = workspace.record(raceId);
    // The user's own pick, when they merged one, is what the case is built
    // from; else the best agent hydra would merge without asking.
    if (!agentId) winner = race.merged ? race.merged->agentId : bestUnflagged(workspace.scores(raceId));
  } catch (const WorkspaceError& e) {
    if (e.kind() == WorkspaceError::Kind::NotScored) {
      throw WorkspaceError::invalidRequest("race " + raceId + " has no winner (" + e.what() +
                                           "); name an agent with --agent");
    }
    throw;
  }
  const std::string agent = agentId ? *agentId : winner.value_or("");
  if (agent.empty()) {
    throw WorkspaceError::invalidRequest("race " + raceId + " has no winner without flags; name an agent with --agent");
  }
  const std::string commit = resultCommit(race, agent);
  const fs::path root = workspace.root();

  TakenCase taken;
  RaceCase& c = taken.evalCase;
  c.id = slugOf(race.task);
  c.task = race.task;
  c.baseCommit = race.baseCommit;
  c.verifyCommand = verifyCommand;
  c.raceId = race.id;
  c.agentId = agent;
  for (const auto& file : merge::diffCommits(root, race.baseCommit, commit).files) {
    if (file.status == "deleted" || !isTestPath(file.path)) continue;
    auto versions = merge::fileVersions(root, race.baseCommit, commit, file.path);
    if (!versions.agent) continue;
    c.hiddenFiles.push_back(file.path);
    taken.hidden.push_back(HiddenFile{file.path, *versions.agent});
  }
  for (const auto& a : race.agents) {
    if (a.agentId == collab::kReviewer) continue;  // a collaboration's builder is what an eval runs
    if (std::find(taken.agents.begin(), taken.agents.end(), a.agent) == taken.agents.end()) {
      taken.agents.push_back(a.agent);
    }
  }
  return taken;
}

InitResult initSet(Workspace& workspace, const InitRequest& request) {
  const fs::path root = workspace.root();
  std::shared_ptr<const Config> config = workspace.config();
  std::optional<std::string> verify = request.verifyCommand ? request.verifyCommand : config->scoring.testCommand;
  // A case from a race is verified in a fresh checkout of an agent's work,
  // where nothing is built yet (no build folder for ctest, say): it builds first.
  const auto& build = config->scoring.buildCommand;
  if (request.fromRace && !request.verifyCommand && verify && !verify->empty() && build && !build->empty()) {
    verify = "(" + *build + ") && (" + *verify + ")";
  }
  if (!verify || verify->empty()) {
    throw WorkspaceError::invalidRequest(
        "no verify command: hydra.toml's [scoring] has no test_command; pass --verify-command CMD");
  }

  InitResult result;
  SetHeader header;
  header.agents = request.agents;
  if (request.fromRace) {
    const std::string raceId = workspace.resolveRaceId(*request.fromRace);
    result.fromRace = caseFromRace(workspace, raceId, request.agent, *verify);
    if (header.agents.empty()) header.agents = result.fromRace->agents;
    header.name = request.name.value_or(slugOf(result.fromRace->evalCase.task));
  } else {
    if (header.agents.empty()) {
      for (const auto& [name, agent] : config->agents) header.agents.push_back(name);
    }
    if (header.agents.empty()) {
      for (const auto& info : workspace.agents()) {
        if (info.available) header.agents.push_back(info.name);
      }
    }
    header.name = request.name.value_or(slugOf(root.filename().string()));
  }
  if (header.name.empty() || header.name.find_first_of("/\\") != std::string::npos) {
    throw WorkspaceError::invalidRequest("--name must be a plain name, not '" + header.name + "'");
  }

  result.path = request.path ? fs::absolute(*request.path) : root / "evals" / header.name / "eval.toml";
  checkReplace(result.path, request.force);
  const fs::path folder = result.path.parent_path();
  fs::create_directories(folder);
  if (result.fromRace) {
    for (const auto& file : result.fromRace->hidden) {
      const fs::path target = folder / file.path;
      checkReplace(target, request.force);
      fs::create_directories(target.parent_path());
      writeFileAtomic(target, file.contents);
    }
  }
  writeFileAtomic(result.path, result.fromRace ? setFromRace(header, result.fromRace->evalCase)
                                               : templateSet(header, *verify));
  // What was written reads back as an eval set, or this is hydra's bug.
  result.set = loadEvalSet(result.path);
  return result;
}

}  // namespace hydra::core::eval
