#include "core/run/worktree_setup.h"

#include <spdlog/spdlog.h>

#include "core/git/copy_ignored.h"

namespace hydra::core {

namespace fs = std::filesystem;

void copyIgnoredInto(const fs::path& repoRoot, const std::vector<Worktree>& worktrees,
                     const std::vector<std::string>& folders, const std::string& raceId) {
  if (folders.empty()) return;
  std::vector<std::string> todo = folders;
  for (std::size_t i = 0; i < worktrees.size(); ++i) {
    git::CopyReport report = git::copyIgnored(repoRoot, worktrees[i].path, todo);
    if (i == 0) {
      // The same for every worktree: said once, and only what worked is tried again.
      for (const auto& problem : report.problems) spdlog::warn("race {}: copy_ignored: {}", raceId, problem);
      todo = report.copied;
      todo.insert(todo.end(), report.present.begin(), report.present.end());
      if (!report.copied.empty()) {
        std::string names;
        for (const auto& f : report.copied) names += (names.empty() ? "" : ", ") + f;
        spdlog::info("race {}: copy_ignored: {} file(s) of {} into each worktree ({} cloned)", raceId, report.files,
                     names, report.cloned);
      }
    } else {
      for (const auto& problem : report.problems) {
        spdlog::warn("race {}: copy_ignored into {}: {}", raceId, worktrees[i].name, problem);
      }
    }
    if (todo.empty()) return;
  }
}

}  // namespace hydra::core
