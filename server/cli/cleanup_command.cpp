// `hydra cleanup [RACE] [--keep-branches] [--pool]`: removes the worktrees (and
// branches) of a finished race, or of every race that is not running, keeping
// up to [general] pool_size of them in the warm pool; --pool empties the pool.
// Records stay, as history.

#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <iostream>

#include "core/workspace/workspace.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"

namespace hydra::cli {

int runCleanup(const CleanupOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  // A race whose hydra died is no longer running: mark it so it can be cleaned.
  workspace.recover();
  std::optional<std::string> raceId;
  if (options.raceId) raceId = workspace.resolveRaceId(*options.raceId);
  auto report = workspace.cleanup(raceId, options.keepBranches, options.pool);
  for (const auto& path : report.removed) {
    const bool pooled = std::find(report.pooled.begin(), report.pooled.end(), path) != report.pooled.end();
    std::cout << (pooled ? "pooled " : "removed ") << path
              << (options.keepBranches ? " (branch kept)" : " and its branch") << "\n";
  }
  std::cout << (report.removed.empty() ? "Nothing to clean up.\n"
                                       : "Cleaned up " + std::to_string(report.removed.size()) + " worktree(s)" +
                                             (report.pooled.empty() ? std::string()
                                                                    : ", " + std::to_string(report.pooled.size()) +
                                                                          " kept in the pool for the next races") +
                                             ".\n");
  if (options.pool) {
    std::cout << (report.poolRemoved.empty()
                      ? std::string("The pool was empty.\n")
                      : "Emptied the pool: " + std::to_string(report.poolRemoved.size()) + " worktree(s), " +
                            formatBytes(report.poolBytesFreed) + " freed.\n");
  }
  return 0;
}

}  // namespace hydra::cli
