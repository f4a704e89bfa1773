#pragma once

// One git worktree per agent, each on its own branch, made and removed with
// libgit2. The user's working tree, index and HEAD are never touched: a
// worktree has its own index and HEAD under .git/worktrees/<name>/.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/git/object_quarantine.h"
#include "core/git/result_size.h"
#include "core/util/owner.h"

namespace hydra::core {

// What hydra remembers about a worktree (its agent, base, branch and owner,
// or the commit it holds while pooled), next to libgit2's files in
// .git/worktrees/<name>/. git ignores files it does not know there, and
// removes the whole directory when the worktree is pruned. An agent's
// sandbox mounts it read-only (core/sandbox/bubblewrap.cpp).
inline constexpr const char* kWorktreeRecordFile = "hydra";

struct Worktree {
  std::string name;            // "<agentId>-<timestamp>", also the libgit2 worktree name
  std::string agentId;         // empty for a hydra/* worktree that hydra did not make
  std::filesystem::path path;  // <repoRoot>/<workspaceDir>/<name>
  std::string branch;          // "hydra/<agentId>-<timestamp>"
  std::string baseCommit;      // hex oid; empty for a hydra/* worktree that hydra did not make
  // The hydra process that made it; nullopt for one made before owners were
  // recorded (or not by hydra), which counts as left by a dead one.
  std::optional<ProcessOwner> owner;

  bool operator==(const Worktree&) const = default;
};

// A worktree kept for reuse (the warm pool): registered with git on a detached
// HEAD, named "_pool-<id>", holding exactly `commit`'s tree plus the ignored
// folders it was told to keep, and hidden from agents like every worktree.
struct PooledWorktree {
  std::string name;
  std::filesystem::path path;
  std::string commit;        // hex oid of the tree it holds
  std::uintmax_t bytes = 0;  // on disk, measured when it was pooled

  bool operator==(const PooledWorktree&) const = default;
};

// What release() may keep.
struct PoolPolicy {
  std::size_t size = 0;                  // [general] pool_size: at most this many pooled
  std::vector<std::string> keepIgnored;  // [general] keep_ignored
};

// Makes, lists and removes the agent worktrees of one repository.
//
// Several hydra processes may share the repository (two editors' `hydra
// serve`, a terminal's `hydra race`). Every worktree records the process that
// made it (Worktree::owner, ProcessOwner::self() unless setOwner() says
// otherwise), and prune() and repairPool() remove only what a dead owner left.
// The short steps that change what the processes share (registering,
// unregistering, claiming and returning pool entries, deciding what is dead)
// run under a cross-process lock (core/util/file_lock.h) on
// .git/hydra-worktrees.lock; checkouts and directory removals run outside it.
//
// Holds no libgit2 objects: every call opens its own repository handle, so
// calls from different threads are safe as long as they concern different
// worktrees (registering and unregistering worktrees is serialised within the
// process, see worktree.cpp). Errors from git are GitError (core/git/git.h); malformed
// arguments are std::invalid_argument.
class WorktreeManager {
 public:
  // `repoRoot` is the working directory of a repository (the main one or a
  // linked worktree); `workspaceDir` is relative to it and must stay inside it.
  // Throws GitError when `repoRoot` is not a non-bare repository.
  WorktreeManager(std::filesystem::path repoRoot, std::filesystem::path workspaceDir);

  const std::filesystem::path& repoRoot() const { return repoRoot_; }
  const std::filesystem::path& workspaceDir() const { return workspaceDir_; }

  // Adds `/<workspaceDir>/` and `.hydra/` to info/exclude in the common git
  // directory (shared by every worktree), each at most once. create() and
  // createMany() call it, so the user's `git status` never lists worktrees.
  void ensureExcluded();

  // Creates branch hydra/<agentId>-<timestamp> at `baseCommit` (anything
  // git_revparse accepts that names a commit) and checks it out in a new
  // worktree. agentId and timestamp may contain only [A-Za-z0-9_-]. Throws
  // GitError (GIT_EEXISTS) when the worktree, its directory or its branch
  // already exists; a failed create leaves nothing behind.
  // `fromPool` false: a fresh checkout even when the pool has worktrees
  // (the checks that score agents never run among a previous agent's kept folders).
  Worktree create(const std::string& agentId, const std::string& baseCommit,
                  const std::string& timestamp, bool fromPool = true);

  // Creates one worktree per agent, all from the same commit. Branches and
  // worktree metadata are made one after another (quick); the checkouts, the
  // slow part, run concurrently on a bounded pool of threads, each with its
  // own repository handle. Pooled worktrees are taken first: renamed, put on
  // the new branch and moved to the new base by rewriting only the files that
  // differ. All or nothing: if one fails, those already made are removed and
  // the first error is rethrown. Results are in the order of `agentIds`.
  std::vector<Worktree> createMany(const std::vector<std::string>& agentIds,
                                   const std::string& baseCommit, const std::string& timestamp,
                                   bool fromPool = true);

  // The worktrees of this repository whose HEAD is a hydra/* branch, sorted by
  // name. Includes dangling ones whose directory has disappeared.
  std::vector<Worktree> list();

  // Removes the worktree's directory and its metadata (.git/worktrees/<name>)
  // and, when asked, its branch. Keeping the branch keeps the agent's commits.
  // Succeeds for a worktree that is already partly gone. Refuses a locked worktree.
  void remove(const Worktree& worktree, bool deleteBranch = true);

  // remove() for each, directories concurrently; tries them all, then rethrows
  // the first error.
  void removeAll(const std::vector<Worktree>& worktrees, bool deleteBranch = true);

  // Removes (with their branches, unless `deleteBranches` is false) the
  // listed worktrees for which isLive is false and whose owner is dead
  // (ownerLife() says Dead; a worktree without an owner counts as dead), e.g.
  // those left behind by a crashed race, and the half-made or half-removed
  // registrations such a race left, and the branches a hydra killed while
  // removing their worktrees had yet to delete. A worktree of a live process,
  // or of one on another host, is never removed. Returns what it removed.
  std::vector<Worktree> prune(const std::function<bool(const Worktree&)>& isLive, bool deleteBranches = true);

  // Done with these worktrees: while the pool holds fewer than policy.size,
  // each is reset to its base commit (core/git/checkout.h, resetTree) and
  // pooled, its branch deleted when asked (else kept, with the agent's
  // commits); the others, and any that cannot be pooled (content filters, a
  // lock), are removed like remove() does. Returns those pooled.
  std::vector<Worktree> release(const std::vector<Worktree>& worktrees, bool deleteBranch, const PoolPolicy& policy);

  // The pooled worktrees, sorted by name.
  std::vector<PooledWorktree> pool();

  // Removes every pooled worktree; returns what it removed.
  std::vector<PooledWorktree> emptyPool();

  // Removes what a hydra killed while pooling or taking a worktree from the
  // pool left half done: pool entries whose metadata, directory or links do
  // not agree, and directories of the workspace named like pooled worktrees
  // that git does not know. An entry being pooled by a live process (its
  // owner is alive, or on another host) is left to it. Returns the paths removed.
  std::vector<std::filesystem::path> repairPool();

  // Stages everything in the worktree like `git add -A` (new, modified and
  // deleted files; ignored files stay out) into the worktree's own index and
  // commits it on the worktree's branch as "hydra <hydra@localhost>". Returns
  // the new commit id, or nullopt when the tree is unchanged. Throws GitError
  // if the worktree's HEAD is no longer its branch. Checks `cancel` (may be
  // null) before staging each file and throws ResultCancelled
  // (core/git/result_size.h) once it is true, nothing committed. Blobs are
  // streamed from disk into the object store (no file is held in memory).
  // With what measureResult() found (`measured`, taken just before, nothing
  // written in the worktree since), only the files it found new, changed or
  // racily clean are staged and those it found gone removed, so committing
  // costs what changed; its largeFiles are written by hydra itself, a
  // megabyte at a time, checking `cancel` between pieces, so even a single
  // huge file stops within a moment. Without it, or when the walk was not
  // exact, everything is staged as `git add -A` would.
  // With a `quarantine` (core/git/object_quarantine.h) every object it
  // writes lands there, not in the user's store, and errors name it.
  std::optional<std::string> commitAll(const Worktree& worktree, const std::string& message,
                                       const std::atomic<bool>* cancel = nullptr,
                                       const ResultSize* measured = nullptr,
                                       const ObjectQuarantine* quarantine = nullptr);

  // The object quarantine of race `raceId` in this repository, made and
  // listed in the alternates when missing. It notes this workspace
  // (repoRoot()) as its owner: the checkouts of one repository share its
  // quarantines, but each has races of its own.
  ObjectQuarantine quarantine(std::string_view raceId) const;

  // The quarantines this workspace made, by race id (for cleanup).
  std::vector<ObjectQuarantine> quarantines() const;

  // The common git directory (shared by every worktree).
  const std::filesystem::path& commonDir() const { return commonDir_; }

  // The commit the worktree's branch points at now (hex).
  std::string headCommit(const Worktree& worktree);

  // [general] sparse_paths for the worktrees made from now on (core/git/checkout.h,
  // writeTree): only these folders and the root's files are written. Sparse
  // worktrees are neither pooled nor taken from the pool. Empty: everything.
  void setSparsePaths(std::vector<std::string> paths);
  std::vector<std::string> sparsePaths() const;

  // The owner recorded on the worktrees made (and pool entries returned) from
  // now on; ProcessOwner::self() by default. For tests that play another process.
  void setOwner(ProcessOwner owner);
  ProcessOwner owner() const;

 private:
  std::filesystem::path repoRoot_;      // canonical working directory
  std::filesystem::path workspaceDir_;  // canonical, inside repoRoot_
  std::filesystem::path commonDir_;     // the shared .git directory
  mutable std::mutex sparseMutex_;
  std::vector<std::string> sparse_;     // sparse_paths
  ProcessOwner owner_ = ProcessOwner::self();  // guarded by sparseMutex_

  // Resets `wt` and puts it in the pool; false when it cannot be pooled.
  bool poolOne(const Worktree& wt, bool deleteBranch, const std::vector<std::string>& keep);
};

}  // namespace hydra::core
