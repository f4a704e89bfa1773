#pragma once

// Merging the winning agent's branch into the user's branch, in the user's
// own working tree, with libgit2 and in the order of its merge example:
// repository state, HEAD, merge analysis, then up to date / fast-forward /
// merge commit.
//
// The one promise that shapes the rest: a merge either completes or changes
// nothing. The merge is computed in memory first; a conflict is reported with
// its paths and leaves no MERGE_HEAD, no conflicted index and no conflict
// markers behind, and neither a conflict nor a dry run writes even a loose
// object. The user's uncommitted work is never overwritten: the merge is
// refused when it would touch a file with uncommitted changes (or an
// untracked file in its way), and changes to other files survive it.
//
// libgit2 must be initialised (see git::LibGit2). Each call opens its own
// repository handle. Errors from git (an unknown branch, a bare repository)
// are git::GitError; refusals are MergeRefused.

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hydra::core::merge {

enum class MergeOutcome { FastForward, Merged, Conflict, UpToDate };

// "fastForward", "merged", "conflict", "upToDate".
std::string_view toString(MergeOutcome outcome);

struct MergeRequest {
  std::string sourceBranch;  // e.g. "hydra/claude-20261121-101500"; anything naming a ref
  bool dryRun = false;       // analyse and merge in memory, report, change nothing
  std::string message;       // of the merge commit; empty means "Merge <sourceBranch>"
  // Merge this commit of the branch instead of its tip (a collaboration's
  // earlier iteration); it must be the tip or one of its ancestors.
  std::optional<std::string> sourceCommit;
};

struct MergeResult {
  MergeOutcome outcome = MergeOutcome::UpToDate;
  std::vector<std::string> files;      // paths the merge changes (or would), sorted
  std::vector<std::string> conflicts;  // paths both sides changed incompatibly, sorted
  std::optional<std::string> commit;   // the new HEAD, set only when HEAD moved
  std::string targetBranch;            // the branch merged into, e.g. "main"
};

// Why a merge was not even attempted. Nothing was changed.
class MergeRefused : public std::runtime_error {
 public:
  enum class Reason {
    MergeInProgress,   // a merge, rebase, cherry-pick, revert, bisect or am is under way
    DetachedHead,      // HEAD is not a branch: there is nothing to merge into
    DirtyWorkingTree,  // uncommitted or untracked files are where the merge would write
    UnbornHead,        // the current branch has no commit yet
  };

  MergeRefused(Reason reason, const std::string& message, std::vector<std::string> files = {})
      : std::runtime_error(message), reason_(reason), files_(std::move(files)) {}

  Reason reason() const noexcept { return reason_; }
  // For DirtyWorkingTree: the dirty paths the merge would change, sorted.
  const std::vector<std::string>& files() const noexcept { return files_; }

 private:
  Reason reason_;
  std::vector<std::string> files_;
};

// "mergeInProgress", "detachedHead", "dirtyWorkingTree", "unbornHead".
std::string_view toString(MergeRefused::Reason reason);

// Merges `request.sourceBranch` into the branch HEAD points at, in the
// working tree of the repository at `repo` (its root directory).
//
// - Already contained: UpToDate, nothing changes.
// - HEAD is an ancestor: FastForward, the branch moves (unless the
//   repository's merge.ff is false, which asks for a merge commit instead).
// - Otherwise: Merged, a commit with two parents (author and committer from
//   the repository's user.name/user.email, else "hydra <hydra@localhost>"),
//   or Conflict with nothing changed.
// FastForward and Merged check out only the files the merge changes, with a
// safe checkout. A dry run reports the same outcome, files and conflicts and
// applies the same refusals, but changes nothing.
MergeResult mergeBranch(const std::filesystem::path& repo, const MergeRequest& request);

}  // namespace hydra::core::merge
