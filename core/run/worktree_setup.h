#pragma once

// What a new worktree gets before its agent starts, whichever mode made it.

#include <filesystem>
#include <string>
#include <vector>

#include "core/git/worktree.h"

namespace hydra::core {

// [general] copy_ignored into each of `worktrees` (core/git/copy_ignored.h).
// What cannot be copied is said once in the log, and the agents start anyway:
// they can still install it. Blocking (copies files): the pool.
void copyIgnoredInto(const std::filesystem::path& repoRoot, const std::vector<Worktree>& worktrees,
                     const std::vector<std::string>& folders, const std::string& raceId);

}  // namespace hydra::core
