#pragma once

// A race's own object directory. Everything a race writes into git (its
// agents' commits, hydra's commit of each result, a collaboration's
// iterations) lands here instead of in the user's `.git/objects`, so the
// objects of results that are never merged can be dropped with the race.
//
// While the quarantine lives it is listed in the user's
// `objects/info/alternates`, so git, libgit2 and the editors read a race's
// branches as if their objects were the user's own. That has one danger,
// which shapes drop(): git does not write an object it finds in an
// alternate (it freshens the alternate's file instead), so a commit the user
// makes meanwhile may rely on an object only the quarantine holds. So a
// quarantine is dropped in this order:
//   1. its line leaves the alternates file: from then on no git of the user
//      sees it, and whatever the user writes lands in the user's store;
//   2. every object the repository still reaches (from any ref, reflog,
//      worktree HEAD or index) that only the quarantine holds, and every
//      object freshened after the race sealed it, is copied into the user's
//      store;
//   3. the directory goes.
// A merge copies the winner's objects in first (adopt()).

#include <git2.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/git/git.h"

namespace hydra::core {

// What drop() did: objects copied into the user's store (and packs, when an
// agent packed the quarantine), and what was removed.
struct QuarantineDrop {
  std::size_t adoptedObjects = 0;
  std::size_t adoptedPacks = 0;
  bool removed = false;
};

// Whether `line` of `<commonDir>/objects/info/alternates` is one hydra wrote
// for a quarantine (the git directory guard leaves those to their owners).
bool isQuarantineLine(const std::filesystem::path& commonDir, std::string_view line);

// The lock every writer of the alternates file on hydra's side holds.
std::filesystem::path alternatesLock(const std::filesystem::path& commonDir);

class ObjectQuarantine {
 public:
  // The quarantine `name` (one safe path component: the race id) of the
  // repository whose common git directory is `commonDir`: created when
  // missing, under `<commonDir>/hydra-objects/`, and listed in the
  // alternates. Throws std::system_error or a GitError naming the path.
  static ObjectQuarantine open(const std::filesystem::path& commonDir, std::string_view name);

  // The quarantine `name` if it is there (nothing is made or listed).
  static std::optional<ObjectQuarantine> find(const std::filesystem::path& commonDir, std::string_view name);

  // The quarantines present, by name (for cleanup).
  static std::vector<std::string> list(const std::filesystem::path& commonDir);

  const std::filesystem::path& path() const { return path_; }
  const std::string& name() const { return name_; }

  // The quarantine that holds commit `commitHex` (loose or packed), if any:
  // a race started from another race's result, whose objects its writes
  // (writeInto()) do not see.
  static std::optional<ObjectQuarantine> holding(const std::filesystem::path& commonDir, std::string_view commitHex);

  // Gives `repo` a store of its own whose writes go to the quarantine: this
  // quarantine, then the user's own objects and alternates, read only. Other
  // races' quarantines are left out, so no object written here is taken for
  // present because another race holds it.
  void writeInto(git_repository* repo) const;

  // The environment of a process whose git writes must land here (an
  // agent's): its objects directory, with the user's store to read from.
  std::vector<std::pair<std::string, std::string>> environment() const;

  // Moves into the quarantine the loose objects of the user's store that the
  // commits from `tipHex` back to (not including) `baseHex` brought and that
  // were written since the quarantine was made: what an agent's own `git
  // commit` wrote there (git writes where the repository's objects are).
  // Objects older than the quarantine stay. Anything the user's git came to
  // rely on meanwhile is copied back by drop(), as for every object here.
  // Returns how many it moved.
  std::size_t claim(git_repository* repo, std::string_view tipHex, std::string_view baseHex) const;

  // Notes that no writer of the race writes here any more: an object whose
  // file is touched after this was freshened by someone else's git, which
  // took it for its own (see drop()).
  void seal() const;

  // Copies into the user's store every object reachable from `commitHex`
  // that only the quarantine holds (before a merge makes it the user's).
  // Returns how many it copied.
  std::size_t adopt(std::string_view commitHex) const;

  // Steps 1 to 3 above. The caller holds whatever keeps a live race from
  // writing here (the race is over; its refs are gone or about to go).
  QuarantineDrop drop() const;

 private:
  // The store writeInto() gives a repository.
  git::OdbPtr ownStore() const;

  ObjectQuarantine(std::filesystem::path commonDir, std::string name, std::filesystem::path path)
      : commonDir_(std::move(commonDir)), name_(std::move(name)), path_(std::move(path)) {}

  std::filesystem::path commonDir_;
  std::string name_;
  std::filesystem::path path_;
};

}  // namespace hydra::core
