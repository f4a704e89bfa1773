#pragma once

// Escapes through the main repository's refs, caught while a race runs. A
// confined agent cannot write the main repository's refs; an unconfined one
// can move your branches, plant or delete refs, or repoint HEAD, and a later
// merge would build on its commit.
//
// The guard takes a snapshot of every ref when the race's worktrees exist
// and compares after each agent. A change outside hydra's own branches
// (refs/heads/hydra/...) is put back at once, and it is an escape of every
// agent that was running since the last comparison: unconfined, hydra cannot
// tell which of them did it, so none of them may win.
//
// It watches hydra's own records (.hydra/, see core/guard/records.h) the
// same way: a change hydra did not make is an escape of every agent that was
// running; records are not put back (hydra's own record of the race says
// what changed).
//
// Unconfined, it also watches the shared git directory's settings (config,
// hooks/, info/, object alternates; see core/guard/git_dir.h): a change
// there would run the agent's code in the user's next git command, so it is
// put back at once and is an escape of every agent that was running.
//
// Confined or not, it watches the loose objects the base commit needs (see
// guard::snapshotBaseObjects): one overwritten is put back, an escape of every
// agent that was running.
//
// Unconfined, it also watches the user's checkout (HEAD, index, every file
// `git status` lists, with its content): a change there may be the user's
// own, so it is a warning for every agent that was running, not an escape.
// Thread-safe.

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/guard/checkout.h"
#include "core/guard/git_dir.h"
#include "core/guard/records.h"
#include "core/guard/refs.h"

namespace hydra::core {

class EscapeGuard {
 public:
  // Takes the snapshot of `repository`'s refs and records now, and of its
  // checkout and git directory's settings when `watchCheckout` (unconfined). `finished(raceId)`: whether a race of the
  // records is over. Throws git::GitError.
  explicit EscapeGuard(std::filesystem::path repository, bool watchCheckout = false,
                       const std::function<bool(const std::string&)>& finished = {});
  ~EscapeGuard();
  EscapeGuard(const EscapeGuard&) = delete;
  EscapeGuard& operator=(const EscapeGuard&) = delete;

  struct Findings {
    std::vector<std::string> escapes;   // AgentFinished::escapes
    std::vector<std::string> warnings;  // changes in the user's checkout meanwhile
  };

  // Also watches the loose objects commit `baseCommit` needs (see
  // guard::snapshotBaseObjects), confined or not: `objects/` stays writable to
  // every agent. Throws git::GitError.
  void watchBaseObjects(const std::string& baseCommit);

  // `agentId` starts running.
  void started(const std::string& agentId);
  // `agentId` ended: compares the refs with the snapshot, puts back what
  // changed, and returns what every agent that ran meanwhile is charged with
  // (for `agentId`: also what an earlier comparison found while it ran).
  // Each entry is for people: "moved refs/heads/main from 3f2a9c1 to
  // 8e01b44 (put back)".
  Findings finished(const std::string& agentId);

 private:
  friend class OwnRepositoryChange;
  void beforeOwnChange();
  void afterOwnChange();
  // Adds `said` to that list of every agent running now.
  void chargeRunningLocked(std::vector<std::string> Findings::*list, const std::vector<std::string>& said);
  void compareLocked();
  void compareCheckoutLocked();
  void compareRecordsLocked();
  void compareGitDirLocked();

  std::filesystem::path repository_;
  std::mutex mutex_;
  guard::RefSnapshot snapshot_;
  std::set<std::string> running_;
  std::map<std::string, Findings> charged_;
  std::optional<guard::CheckoutSnapshot> checkout_;
  std::optional<guard::GitDirSnapshot> gitDir_;
  std::optional<guard::GitDirSnapshot> baseObjects_;
  std::optional<guard::RecordsSnapshot> records_;
};

// A change hydra itself makes to a repository's refs or checkout while races
// may run there (a merge of an earlier race). Every guard of that repository
// first compares, charging what changed until now to the agents that ran,
// and takes its snapshots again once the change is made, so the change is
// neither charged to anyone nor put back. A ref an agent moves during the
// change itself goes unnoticed.
class OwnRepositoryChange {
 public:
  explicit OwnRepositoryChange(std::filesystem::path repository);
  ~OwnRepositoryChange();
  OwnRepositoryChange(const OwnRepositoryChange&) = delete;
  OwnRepositoryChange& operator=(const OwnRepositoryChange&) = delete;

 private:
  std::filesystem::path repository_;
};

// Whether a ref belongs to hydra itself (its agents' branches), and so may move during a race.
bool isHydraRef(const std::string& name);

}  // namespace hydra::core
