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
  // Kept in the merge's journal and handed back by finishInterruptedMerge()
  // (hydra keeps the race and the agent there).
  std::string journalNote;
  // Leave the journal in place once the branch has moved: the caller removes
  // it (clearMergeJournal) after it has recorded the merge, so that a kill in
  // between is still finished by recovery.
  bool keepJournal = false;
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
//
// Crash safety: checking the files out and moving the branch are two steps,
// and a kill between them (or during the checkout) would leave the user's
// branch where it was with some of the merge's files written over it. So
// before the first file is written the merge writes a journal,
// `<git dir>/hydra-merge.json` (whole or not at all: writeFileAtomic), with
// its owner (core/util/owner.h), the branch, the commit it points at, the
// commit it moves to and every path the merge writes; the journal goes once
// the branch has moved. finishInterruptedMerge() completes what a dead owner
// left.
MergeResult mergeBranch(const std::filesystem::path& repo, const MergeRequest& request);

// What recovery did with the journal of a merge whose hydra died.
struct InterruptedMerge {
  enum class Outcome {
    Completed,    // the files were checked out again and the branch moved: the merge is whole
    AlreadyDone,  // the branch had moved already: only the journal was left
    Abandoned,    // the branch (or HEAD) moved elsewhere since: nothing to finish
    Blocked,      // a file it writes changed since the kill, not by hydra: left alone, journal kept
  };
  Outcome outcome = Outcome::Abandoned;
  std::string outcomeOfMerge;  // "fastForward" or "merged", as the merge would have reported
  std::string targetBranch;    // e.g. "main"
  std::string commit;          // the commit the branch moves to
  std::string note;            // MergeRequest::journalNote
  std::vector<std::string> blocking;  // for Blocked: the files changed since
};

// Finishes the merge a dead hydra left half done in the repository at `repo`
// (its root), if there is one: nullopt when there is no journal or its owner
// is alive (or on another host). The merge is finished rather than undone,
// since it was asked for and its commit exists: each file it writes must be
// as before the merge, as the merge makes it, or written since the journal
// was (what the kill cut short); then those files are checked out from the
// merge, the branch moves, and the journal goes. A `.git/index.lock` written
// since the journal is the dead hydra's too, and is removed.
std::optional<InterruptedMerge> finishInterruptedMerge(const std::filesystem::path& repo);

// Removes the journal of a merge this process finished (MergeRequest::keepJournal).
void clearMergeJournal(const std::filesystem::path& repo);

}  // namespace hydra::core::merge
