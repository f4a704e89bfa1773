#pragma once

// The rlimits a child sets on itself between fork and exec, where it may only
// make system calls: prepared whole in the parent (childRlimitsFor(),
// core/process/resource_limits.h), applied by Process.

#include <cstdint>

namespace hydra::core {

struct ChildRlimits {
  struct One {
    int resource = 0;  // RLIMIT_*
    std::uint64_t soft = 0;
    std::uint64_t hard = 0;
  };
  One limits[3];
  int count = 0;
};

}  // namespace hydra::core
