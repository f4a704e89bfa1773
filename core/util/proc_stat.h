#pragma once

// Reading /proc about processes hydra started, to tell a live one from a
// later process that reused its number.

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace hydra::core {

// Field 22 (starttime, in clock ticks since boot) of /proc/<pid>/stat, or
// nullopt when no such process is alive (zombies count as gone).
std::optional<std::uint64_t> processStartTime(pid_t pid);

}  // namespace hydra::core
