#pragma once

// What one agent run may take: memory, processes, CPU time, for the whole
// tree of processes it starts (sandbox on or off, root included).
//
// How they are held (limitMechanism()):
//   - a cgroup of its own per run (core/process/run_cgroup.h): cgroup v2 where
//     hydra's own cgroup can hand memory and pids to children, else cgroup v1
//     memory, pids and cpuacct hierarchies hydra can write to. The kernel
//     holds the limits for the tree together; hydra reads the cgroup's
//     counters to tell which one the run went over, and ends it.
//   - otherwise rlimits, set in the run's first process and inherited by
//     everything it starts: RLIMIT_DATA (memory, per process), RLIMIT_CPU
//     (per process), RLIMIT_NPROC (processes, per user: not for root, whom
//     the kernel exempts). What rlimits cannot hold for the tree together
//     (its memory, CPU and process count summed) hydra's RunReaper measures
//     every scan (core/process/reaper.h) and ends the run when over.
//
// HYDRA_RESOURCE_LIMITS=rlimits in hydra's environment forces the second way
// on a machine that has the first (tests cover both; docs/configuration.md).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/process/child_rlimits.h"
#include "core/process/process_table.h"

namespace hydra::core {

// What a run enforces; nullopt: no limit.
struct ResourceLimits {
  std::optional<std::uint64_t> memoryMiB;
  std::optional<int> processes;
  std::optional<int> cpuSeconds;

  bool any() const { return memoryMiB || processes || cpuSeconds; }
  bool operator==(const ResourceLimits&) const = default;
};

// The ranges hydra.toml accepts for the limits (besides 0, none): below the
// least, no CLI could start; the most are what the kernel takes.
inline constexpr std::int64_t kMinMemoryLimitMiB = 64;
inline constexpr std::int64_t kMaxMemoryLimitMiB = std::int64_t{1} << 30;  // 1 PiB
inline constexpr std::int64_t kMinProcessLimit = 8;
inline constexpr std::int64_t kMaxProcessLimit = 4'194'304;  // the kernel's largest pid_max
inline constexpr std::int64_t kMaxCpuLimitSeconds = 31'536'000;  // a year

// The defaults when hydra.toml sets nothing: half the machine's memory, 4096
// processes, no CPU limit (a real CLI sits idle waiting on its model most of
// the time; the timeout bounds it).
inline constexpr int kDefaultProcessLimit = 4096;
std::uint64_t defaultMemoryLimitMiB();

enum class LimitMechanism {
  CgroupV2,
  CgroupV1,
  Rlimits,  // with the reaper's watch of the tree
};

// "cgroup v2", "cgroup v1", "rlimits"
std::string toString(LimitMechanism mechanism);

struct LimitSupport {
  LimitMechanism mechanism = LimitMechanism::Rlimits;
  std::string where;   // the cgroups' parent directories, for a cgroup
  std::string reason;  // for rlimits: why no cgroup (or that it was asked for)
  bool processesByRlimit = false;  // RLIMIT_NPROC applies (hydra does not run as root)
};

// How limits are held on this machine, found once and then remembered.
const LimitSupport& limitSupport();

// What the living processes among `processes` take together.
struct ResourceUsage {
  std::uint64_t residentBytes = 0;
  int processes = 0;
  double cpuSeconds = 0;
};
ResourceUsage usageOf(const std::vector<ProcessInfo>& processes);

// Which limit a run is over, for its words.
enum class LimitKind { Memory, Processes, Cpu };

// "over its 4 GiB memory limit", "over its 200-process limit", "over its
// 60 s CPU limit".
std::string overLimitWords(LimitKind kind, const ResourceLimits& limits);

// The words when `usage` is over one of `limits`; nullopt within all.
std::optional<std::string> overLimit(const ResourceLimits& limits, const ResourceUsage& usage);

// "memory 4 GiB, 4096 processes, CPU unlimited": the limits, for `hydra
// sandbox` and logs.
std::string describeLimits(const ResourceLimits& limits);

// "256 MiB", "4 GiB"
std::string describeMiB(std::uint64_t mib);

// How many processes `uid` runs now (RLIMIT_NPROC counts them all).
std::uint64_t userProcessCount(uid_t uid);

// The rlimits of a run (core/process/child_rlimits.h): RLIMIT_CPU always,
// and for the rlimits mechanism RLIMIT_DATA and, when not root, RLIMIT_NPROC.
// `inCgroup`: the run has a cgroup of its own, which holds the rest.
ChildRlimits childRlimitsFor(const ResourceLimits& limits, bool inCgroup);

}  // namespace hydra::core
