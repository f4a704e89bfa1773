#pragma once

// A linked worktree's `.git` is a file, "gitdir: <metadata dir>", that ties
// it to the main repository. An agent that deletes or rewrites it (its own
// worktree is writable) leaves hydra unable to commit its work, or makes it
// commit into another repository. Confined, the file is bound read-only;
// unconfined, hydra checks it after the agent and writes it back.
//
// Both go through the worktree opened as a directory (core/util/safe_fs.h):
// a worktree swapped for a symbolic link (to the user's checkout, say) is
// refused, never written through, and a link planted as `.git` is replaced,
// not followed.

#include <filesystem>

#include "core/util/safe_fs.h"

namespace hydra::core::guard {

// Whether `worktree`/.git is the regular file that points at `gitMetadata`.
bool worktreeLinkIntact(const SafeDir& worktree, const std::filesystem::path& gitMetadata);
// The same by path: false when `worktree` itself is not a directory (a link).
bool worktreeLinkIntact(const std::filesystem::path& worktree,
                        const std::filesystem::path& gitMetadata);

// Replaces whatever `worktree`/.git is now (a file, a directory, a link,
// nothing) with the link to `gitMetadata`. Throws std::system_error.
void restoreWorktreeLink(const SafeDir& worktree, const std::filesystem::path& gitMetadata);
// The same by path; a `worktree` that is a symbolic link is refused with
// SwappedPathError naming it.
void restoreWorktreeLink(const std::filesystem::path& worktree,
                         const std::filesystem::path& gitMetadata);

}  // namespace hydra::core::guard
