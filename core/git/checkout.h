#pragma once

// A new worktree's first checkout, written from the object database directly:
// every file of the commit's tree on a few threads (each with its own
// repository handle), then the worktree's index from what was written (with
// each file's stat data, so the first `git status` has nothing to re-read).
// libgit2's own checkout compares every path against an index and a working
// tree that are empty here anyway, and does so one file at a time.
//
// Only for trees that need no content filters: when the repository's
// attributes or configuration could change what a file holds on disk (a
// .gitattributes anywhere in the tree, info/attributes, core.autocrlf or
// core.eol), writeTree() writes nothing and says so, and the caller uses
// libgit2's checkout.

#include <cstddef>
#include <filesystem>
#include <string>

namespace hydra::core::git {

// Writes `commit`'s tree into the empty worktree at `worktree` and its index,
// with `threads` writers (at least 1), and returns true; returns false,
// having written nothing, when content filters could apply. Throws GitError;
// a failure may leave files behind (the caller removes the worktree).
bool writeTree(const std::filesystem::path& worktree, const std::string& commit, std::size_t threads);

}  // namespace hydra::core::git
