#pragma once

// A worktree's index file changed in place of libgit2's git_index: for moving
// a pooled worktree to a new base (core/git/checkout.h, moveTree), where a few
// entries change in an index of maybe 100,000. libgit2 parses every entry into
// its own structures and hashes the file with a collision-detecting SHA-1 on
// the way in and out, which on a large repository costs more than everything
// else a warm race start does. Here the entries that stay are copied as bytes.
//
// Only what hydra itself writes is handled: index versions 2 and 3, and
// optional extensions. The cached tree (TREE) stays, invalidated along the
// paths that changed; the others are dropped (the untracked cache, say: it
// only speeds git up, and would be stale). Anything else, a
// required extension, version 4's compressed paths, a wrong checksum, makes
// patchIndex() change nothing and return false: the caller then uses libgit2.

#include <sys/stat.h>

#include <git2.h>

#include <filesystem>
#include <string>
#include <vector>

namespace hydra::core::git {

// One entry to add or replace: what was written at `path` and its blob.
struct IndexUpdate {
  std::string path;  // relative, '/'-separated
  git_oid id{};
  git_filemode_t mode = GIT_FILEMODE_BLOB;
  struct stat written {};
};

// The index entry of a file as `st` (lstat or fstat) found it, holding blob
// `id`; `path` must outlive the entry.
git_index_entry indexEntryFromStat(const struct stat& st, git_filemode_t mode, const git_oid& id, const char* path);

// Removes the entries at `removed` and adds or replaces `updated` in the index
// file `index`, written anew under index.lock and renamed over it. Nothing is
// followed as a link in the index's directory: an index that is a link, a
// FIFO, a device or larger than 1 GiB is not read, and an index.lock that
// exists (another writer's lock, or anything planted there) is left alone.
// Returns false, having changed nothing, in those cases and when the file is
// not one it can handle.
// Throws GitError when the new file cannot be written.
bool patchIndex(const std::filesystem::path& index, const std::vector<std::string>& removed,
                std::vector<IndexUpdate> updated);

}  // namespace hydra::core::git
