#pragma once

// A new worktree's first checkout, written from the object database directly:
// every file of the commit's tree on a few threads (each with its own
// repository handle), then the worktree's index from what was written (with
// each file's stat data, so the first `git status` has nothing to re-read).
// libgit2's own checkout compares every path against an index and a working
// tree that are empty here anyway, and does so one file at a time.
//
// The same writer moves a pooled worktree from one commit to another.
//
// Only for trees that need no content filters: when the repository's
// attributes or configuration could change what a file holds on disk (a
// .gitattributes anywhere in the tree, info/attributes, core.autocrlf or
// core.eol), writeTree() writes nothing and says so, and the caller uses
// libgit2's checkout.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hydra::core::git {

// [general] sparse_paths: whether `path` (relative, '/'-separated) is written
// in a sparse checkout of `sparse` (folders relative to the root): files at
// the root and below one of the folders are. An empty `sparse` takes all.
bool inSparseCheckout(std::string_view path, const std::vector<std::string>& sparse);

// Writes `commit`'s tree into the empty worktree at `worktree` and its index,
// with `threads` writers (at least 1), and returns true; returns false,
// having written nothing, when content filters could apply. Throws GitError;
// a failure may leave files behind (the caller removes the worktree). With a
// `sparse` list, only what inSparseCheckout() takes is written; the index
// holds every file, the others marked skip-worktree, as git's sparse checkout.
bool writeTree(const std::filesystem::path& worktree, const std::string& commit, std::size_t threads,
               const std::vector<std::string>& sparse = {});

// Makes a full checkout sparse: removes the files outside `sparse` (and the
// folders left empty) and marks them skip-worktree in the index. For
// worktrees libgit2 checked out (content filters).
void sparsify(const std::filesystem::path& worktree, const std::vector<std::string>& sparse);

// For the warm pool (core/git/worktree.h): makes the used worktree at
// `worktree` hold exactly `commit`'s tree again, plus the ignored folders
// `keep` names (a name matches a folder of that name at any depth, a path with
// '/' that folder only; a folder is kept only where git ignores it and the
// tree has nothing). Nothing on disk is trusted: a tracked file stays only
// when its content hashes to the tree's blob, its type and executable bit
// match and it has no other link; everything else is removed or rewritten.
// The index is written anew. Returns the bytes the worktree then takes on
// disk, or nullopt, having changed nothing, when content filters could apply.
std::optional<std::uintmax_t> resetTree(const std::filesystem::path& worktree, const std::string& commit,
                                        const std::vector<std::string>& keep);

// Moves a worktree that holds exactly `from`'s tree (as resetTree() leaves
// it, and an index to match) to `to`'s: only the paths that differ between
// the two trees are removed or written, and only their index entries change.
// A kept folder where `to` tracks something is removed. Returns false, having
// changed nothing, when content filters could apply.
bool moveTree(const std::filesystem::path& worktree, const std::string& from, const std::string& to);

}  // namespace hydra::core::git
