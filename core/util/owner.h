#pragma once

// Who made something on disk, so that another hydra can tell whether it is
// still in use: the process (pid and /proc starttime, so a later process
// that reused the pid is not mistaken for it) and the host it ran on (a
// repository on a shared file system is seen from several machines; a
// process on another host can never be tested from here).
//
// Race records carry their hydra's owner (core/records/record.h), worktrees
// carry theirs in their metadata (core/git/worktree.h). Recovery removes
// only what an owner that is Dead left; Alive and Elsewhere are left alone.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hydra::core {

struct ProcessOwner {
  int pid = 0;
  std::uint64_t startTime = 0;  // /proc starttime in clock ticks; 0: not known
  std::string host;             // empty: this host (records written before hosts were)

  // This process, on this host.
  static ProcessOwner self();

  bool operator==(const ProcessOwner&) const = default;
};

enum class OwnerLife {
  Alive,      // the same process still runs here
  Dead,       // gone, or its pid now names a later process
  Elsewhere,  // it ran on another host: cannot be tested, so never taken for dead
};

// Tests the owner's life now. An owner without a start time whose pid is
// alive is taken at its word (Alive).
OwnerLife ownerLife(const ProcessOwner& owner);

// "pid 4242 on build-7", for messages.
std::string describe(const ProcessOwner& owner);

// One word, "<pid>:<startTime>:<host>", for files whose fields are words.
std::string toWord(const ProcessOwner& owner);
// nullopt for anything toWord() cannot have written.
std::optional<ProcessOwner> parseOwnerWord(std::string_view word);

}  // namespace hydra::core
