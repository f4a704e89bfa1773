#pragma once

// A linked worktree's `.git` is a file, "gitdir: <metadata dir>", that ties
// it to the main repository. An agent that deletes or rewrites it (its own
// worktree is writable) leaves hydra unable to commit its work, or makes it
// commit into another repository. Confined, the file is bound read-only;
// unconfined, hydra checks it after the agent and writes it back.

#include <filesystem>

namespace hydra::core::guard {

// Whether `worktree`/.git is the regular file that points at `gitMetadata`.
bool worktreeLinkIntact(const std::filesystem::path& worktree,
                        const std::filesystem::path& gitMetadata);

// Replaces whatever `worktree`/.git is now (a file, a directory, nothing)
// with the link to `gitMetadata`. Throws std::filesystem::filesystem_error or std::system_error.
void restoreWorktreeLink(const std::filesystem::path& worktree,
                         const std::filesystem::path& gitMetadata);

}  // namespace hydra::core::guard
