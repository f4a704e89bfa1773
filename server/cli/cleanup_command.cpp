// `hydra cleanup [RACE] [--keep-branches]`: removes the worktrees (and branches)
// of a finished race, or of every race that is not running. Records stay, as history.

#include <iostream>

#include "core/git/worktree.h"
#include "core/process/process.h"
#include "core/race/store.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"

namespace hydra::cli {

int runCleanup(const CleanupOptions& options) {
  auto root = findRepositoryRoot(std::filesystem::current_path());
  auto config = loadRepositoryConfig(root);
  core::RaceStore store(root);
  // A race whose hydra died is no longer running: mark it so it can be cleaned.
  store.recoverInterrupted([](pid_t pgid) { core::killProcessGroup(pgid, std::chrono::seconds(2)); });

  std::vector<core::RaceRecord> races;
  if (options.raceId) {
    if (!core::isValidId(*options.raceId)) throw CommandError("'" + *options.raceId + "' is not a race id", 2);
    auto race = store.load(*options.raceId);
    if (!race) throw CommandError("no race '" + *options.raceId + "'", 2);
    if (race->status == core::RaceStatus::Running) {
      throw CommandError("race " + race->id + " is still running; cancel it first", 2);
    }
    races.push_back(*race);
  } else {
    for (auto& r : store.list()) {
      if (r.status != core::RaceStatus::Running) races.push_back(std::move(r));
    }
  }

  core::WorktreeManager worktrees(root, config.general.workspaceDir);
  auto existing = worktrees.list();
  std::size_t removed = 0;
  for (const auto& race : races) {
    for (const auto& agent : race.agents) {
      for (const auto& wt : existing) {
        if (wt.path.string() != agent.worktree && wt.branch != agent.branch) continue;
        worktrees.remove(wt, !options.keepBranches);
        ++removed;
        std::cout << "removed " << wt.path.string() << (options.keepBranches ? "" : " and branch " + wt.branch)
                  << "\n";
      }
    }
  }
  std::cout << (removed == 0 ? "Nothing to clean up.\n"
                             : "Cleaned up " + std::to_string(removed) + " worktree(s).\n");
  return 0;
}

}  // namespace hydra::cli
