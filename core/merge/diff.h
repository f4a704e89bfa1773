#pragma once

// What an agent changed, for review: the files it touched with line counts,
// the unified patch, and both versions of one file. Everything compares two
// commits' trees (like `git diff <base> <agent>`), never a working tree, so an
// agent still writing files cannot make the review inconsistent.
//
// Rename detection is always on (like git's default diff.renames); binary
// files are recognised the way git does (a NUL byte in the first 8000 bytes,
// or a `binary`/`-diff` attribute). Each call opens its own repository handle:
// calls from different threads are safe. libgit2 must be initialised (see
// git::LibGit2). Errors from git are git::GitError.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace hydra::core::merge {

struct FileChange {
  std::string path;     // the path in the agent's commit (the old path for a deletion)
  std::string oldPath;  // for "renamed" only: the path in the base commit; empty otherwise
  std::string status;   // "added", "modified", "deleted", "renamed" or "typechange"
  int additions = 0;    // lines, as `git diff --numstat` counts them; 0 for binary files
  int deletions = 0;
  bool binary = false;

  bool operator==(const FileChange&) const = default;
};

struct DiffSummary {
  std::vector<FileChange> files;  // sorted by path, as git lists them
  int additions = 0;              // sums over `files`
  int deletions = 0;
};

// The files that differ between the two commits (anything `git rev-parse`
// accepts that names a commit), with the numbers `git diff --numstat` prints.
// A path whose type changed (file <-> symlink) is one "typechange" entry whose
// counts are those of git's deletion and addition together.
DiffSummary diffCommits(const std::filesystem::path& repo, const std::string& baseCommit,
                        const std::string& agentCommit);

// The git-style patch ("diff --git a/... b/...", 3 lines of context) from
// base to agent, limited to one path when `path` is given (matching either
// side of a rename). Empty when nothing, or nothing at `path`, changed.
std::string unifiedPatch(const std::filesystem::path& repo, const std::string& baseCommit,
                         const std::string& agentCommit,
                         const std::optional<std::string>& path = std::nullopt);

struct FileVersions {
  std::optional<std::string> base;   // bytes at the base commit; nullopt when added
  std::optional<std::string> agent;  // bytes at the agent's commit; nullopt when deleted
  bool binary = false;               // either side is binary

  bool operator==(const FileVersions&) const = default;
};

// Both versions of one changed path, read from the objects the diff names.
// For a rename, the new path gives the old contents as `base` and the new ones
// as `agent`; so does the old path, unless a new file took its place.
// Throws std::invalid_argument for a path that is empty, absolute, has a
// "..", "." or empty component, or is not among the agent's changes: whatever
// a caller passes, only files the agent changed can be read.
FileVersions fileVersions(const std::filesystem::path& repo, const std::string& baseCommit,
                          const std::string& agentCommit, const std::string& path);

}  // namespace hydra::core::merge
