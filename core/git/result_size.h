#pragma once

// How big an agent's result is before hydra commits it: the files it added or
// changed in its worktree, and their bytes, found from directory entries and
// the worktree's index alone (no file is opened), so counting costs the same
// for a 5 GB file as for an empty one. Counting stops as soon as a limit is
// passed: an agent that wrote millions of files costs a walk of just over
// the limit, not of everything.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace hydra::core {

// Files from this size on are committed piece by piece (ResultSize::largeFiles).
inline constexpr std::int64_t kStreamedFileBytes = std::int64_t{1} << 20;

// [general] max_result_files and max_result_bytes.
struct ResultLimits {
  std::int64_t maxFiles = 100'000;
  std::int64_t maxBytes = std::int64_t{2} << 30;
};

struct ResultSize {
  std::int64_t files = 0;  // added or changed, as counted (deleted files are not)
  std::int64_t bytes = 0;  // their sizes on disk
  // A limit was passed and counting stopped there: the result holds at least
  // `files` files and `bytes` bytes.
  bool overLimit = false;
  // The added or changed regular files of at least kStreamedFileBytes,
  // relative to the worktree: what WorktreeManager::commitAll() writes in
  // pieces, checking for a cancel between them. At most maxBytes /
  // kStreamedFileBytes of them.
  std::vector<std::string> largeFiles;
  // What a commit needs to stage, found by the same walk, so that committing
  // costs what changed and not another pass over every file (only when not
  // overLimit): the files to stage (new, changed, and those racily clean:
  // modified in the clock tick the index was written, whose stat data cannot
  // tell), and the tracked files no longer there. `exact` is false when the
  // walk met what only libgit2's own `add -A` handles (a nested repository,
  // a submodule, a conflicted index): the commit then stages everything.
  std::vector<std::string> toStage;
  std::vector<std::string> gone;
  bool exact = false;

  // "result too large: more than 100000 files (max_result_files = 100000);
  // counted 100001 files, 12.3 MB before stopping". Only for overLimit.
  std::string describe(const ResultLimits& limits) const;
};

// Thrown by measureResult() and WorktreeManager::commitAll() when their
// `cancel` flag became true while they walked the worktree.
struct ResultCancelled : std::runtime_error {
  ResultCancelled() : std::runtime_error("cancelled while committing its work") {}
};

// Measures what `worktree` (a linked worktree of a repository, with its own
// index) holds that a `git add -A` would stage as new or changed: files
// missing from its index, or whose size or modification time differs from
// their index entry. Files and folders git ignores, and `.git` entries, are
// skipped. Links are counted with their own size. Checks `cancel` (may be
// null) at every entry. Throws GitError when the worktree cannot be opened.
ResultSize measureResult(const std::filesystem::path& worktree, const ResultLimits& limits,
                         const std::atomic<bool>* cancel = nullptr);

}  // namespace hydra::core
