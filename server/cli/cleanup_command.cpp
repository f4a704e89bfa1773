// `hydra cleanup [RACE] [--keep-branches]`: removes the worktrees (and branches)
// of a finished race, or of every race that is not running. Records stay, as history.

#include <boost/asio/io_context.hpp>
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
  auto report = workspace.cleanup(options.raceId, options.keepBranches);
  for (const auto& path : report.removed) {
    std::cout << "removed " << path << (options.keepBranches ? " (branch kept)" : " and its branch") << "\n";
  }
  std::cout << (report.removed.empty() ? "Nothing to clean up.\n"
                                       : "Cleaned up " + std::to_string(report.removed.size()) + " worktree(s).\n");
  return 0;
}

}  // namespace hydra::cli
