#pragma once

// Escapes through git refs. An agent that can run git on the main repository
// (unconfined, or with the object store and ref folders writable) can move
// the user's branches, delete tags or repoint HEAD; a later merge would then
// build on its commit. hydra takes a snapshot of every ref when a race
// starts, compares after each agent, and puts back what an agent changed.

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hydra::core::guard {

// Where a ref points: a commit (or any object) id, or another ref's name.
struct RefTarget {
  std::string oid;       // hex, for a direct ref
  std::string symbolic;  // the target's name, for a symbolic ref (HEAD)

  bool operator==(const RefTarget&) const = default;
  // "3f2a9c1" or "-> refs/heads/main".
  std::string describe() const;
};

// Every ref of a repository, loose and packed, and its HEAD (by name "HEAD",
// symbolic or detached).
struct RefSnapshot {
  std::map<std::string, RefTarget> refs;
};

// Reads the refs of the repository whose working directory (or .git) is
// `repository`, through a fresh handle, so that nothing cached hides a
// change. Throws GitError.
RefSnapshot snapshotRefs(const std::filesystem::path& repository);

struct RefChange {
  enum class Kind { Created, Deleted, Moved };
  std::string name;
  Kind kind = Kind::Moved;
  std::optional<RefTarget> before;  // unset for Created
  std::optional<RefTarget> after;   // unset for Deleted

  bool operator==(const RefChange&) const = default;
  // "refs/heads/main moved from 3f2a9c1 to 8e01b44", "refs/tags/v1 deleted (was 3f2a9c1)".
  std::string describe() const;
};

std::string_view toString(RefChange::Kind kind);  // "created", "deleted", "moved"

// What differs between two snapshots, by name, except the refs in `allowed`
// (full names, e.g. the run's own branch "refs/heads/hydra/claude-20261121-120411").
std::vector<RefChange> compareRefs(const RefSnapshot& before, const RefSnapshot& after,
                                   const std::set<std::string>& allowed = {});

struct RestoreReport {
  std::vector<RefChange> restored;
  std::vector<std::pair<RefChange, std::string>> failed;  // with libgit2's reason
};

// Undoes `changes` in the repository: created refs are deleted, moved and
// deleted ones are set back to where they were (with a reflog entry saying
// so). Deletions go first, so a ref that took the place of another (D/F
// conflicts) is out of the way. A ref that cannot be put back (its commit
// was pruned, a stale lock file) is reported, not thrown.
RestoreReport restoreRefs(const std::filesystem::path& repository,
                          const std::vector<RefChange>& changes);

}  // namespace hydra::core::guard
