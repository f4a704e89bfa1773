#pragma once

// A cgroup of its own for one agent run, holding its memory and process
// limits in the kernel for its whole tree (bubblewrap's process included:
// the run's first process joins it before exec, and everything it starts is
// born inside). Its counters tell hydra which limit the run went over:
//   memory: an OOM kill in it (v2 memory.events, v1 memory.oom_control oom_kill);
//   processes: a fork refused at pids.max (pids.events "max");
//   CPU: the time it used, live and exited processes together (v2 cpu.stat
//        usage_usec, v1 cpuacct.usage); no cgroup knob ends a run at a total,
//        so hydra does.
//
// Where: cgroup v2 when hydra's own cgroup hands memory and pids to its
// children (cgroup.subtree_control), else the cgroup v1 memory and pids
// hierarchies (cpuacct too when mounted) under hydra's own cgroup in each.
// Every run's cgroup is in one directory per hydra process,
// hydra.<pid>.<starttime>: its owner (docs/reliability.md). A hydra that
// died leaves it behind; the next one removes those whose owner is dead
// (removeDeadOwnersCgroups()), ending what still runs in them.

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/process/resource_limits.h"

namespace hydra::core {

struct CgroupProbe {
  bool usable = false;
  int version = 0;     // 1 or 2 when usable
  std::string where;   // the parent directories, ", "-joined
  std::string reason;  // when not usable: why, in words
};

// Whether hydra can make cgroups with memory and pids limits here. Tries
// (makes and removes a directory); does not remember.
CgroupProbe probeCgroups();

class RunCgroup {
 public:
  // A new cgroup for one run, `limits` written into it. Throws
  // std::runtime_error when it cannot be made (limitSupport() said it could).
  static std::unique_ptr<RunCgroup> create(const ResourceLimits& limits);
  // Ends whatever still runs in it (there should be nothing: the reaper ended
  // the run first) and removes it.
  ~RunCgroup();
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;

  // Descriptors of its cgroup.procs files, open for writing: the run's first
  // process writes "0" to each between fork and exec, joining it.
  const std::vector<int>& joinFds() const { return joinFds_; }

  // The limit its counters say the run went over; nullopt: none.
  std::optional<LimitKind> over() const;
  // Whether it counts the CPU time of the run (else the reaper's watch does).
  bool measuresCpu() const { return !cpuUsageFile_.empty(); }

  // Its directories, one per hierarchy.
  const std::vector<std::filesystem::path>& directories() const { return dirs_; }

 private:
  RunCgroup() = default;
  void removeDirectories();

  ResourceLimits limits_;
  std::vector<std::filesystem::path> dirs_;
  std::vector<int> joinFds_;
  std::filesystem::path memoryEvents_;  // v2 memory.events or v1 memory.oom_control
  std::filesystem::path pidsEvents_;    // pids.events
  std::filesystem::path cpuUsageFile_;  // v2 cpu.stat or v1 cpuacct.usage; empty: none
  bool cpuInMicroseconds_ = false;      // v2's cpu.stat; v1's cpuacct.usage is in ns
};

// Removes the cgroups of every hydra.<pid>.<start> directory whose owner is
// dead, SIGKILLing what still runs in them first. Returns how many it removed.
int removeDeadOwnersCgroups();

// One counter of a flat-keyed cgroup file ("oom_kill 1\n..."): the number
// after `key`, 0 when absent. Exposed for tests.
std::uint64_t cgroupCounter(const std::string& text, std::string_view key);

}  // namespace hydra::core
