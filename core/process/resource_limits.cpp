#include "core/process/resource_limits.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "core/process/run_cgroup.h"

namespace hydra::core {

std::uint64_t defaultMemoryLimitMiB() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0) return 4096;
  const std::uint64_t mib = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize) / (1024 * 1024);
  return std::max<std::uint64_t>(mib / 2, static_cast<std::uint64_t>(kMinMemoryLimitMiB));
}

std::string toString(LimitMechanism mechanism) {
  switch (mechanism) {
    case LimitMechanism::CgroupV2:
      return "cgroup v2";
    case LimitMechanism::CgroupV1:
      return "cgroup v1";
    case LimitMechanism::Rlimits:
      break;
  }
  return "rlimits";
}

const LimitSupport& limitSupport() {
  static const LimitSupport support = [] {
    LimitSupport s;
    s.processesByRlimit = ::geteuid() != 0;
    const char* forced = std::getenv("HYDRA_RESOURCE_LIMITS");
    if (forced && std::string_view(forced) == "rlimits") {
      s.reason = "HYDRA_RESOURCE_LIMITS=rlimits";
      return s;
    }
    const CgroupProbe probe = probeCgroups();
    if (!probe.usable) {
      s.reason = probe.reason;
      return s;
    }
    s.mechanism = probe.version == 2 ? LimitMechanism::CgroupV2 : LimitMechanism::CgroupV1;
    s.where = probe.where;
    return s;
  }();
  return support;
}

ResourceUsage usageOf(const std::vector<ProcessInfo>& processes) {
  static const auto pageSize = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  static const auto ticksPerSecond = static_cast<double>(::sysconf(_SC_CLK_TCK));
  ResourceUsage usage;
  std::uint64_t ticks = 0;
  for (const ProcessInfo& process : processes) {
    if (process.gone()) continue;
    ++usage.processes;
    usage.residentBytes += process.residentPages * pageSize;
    ticks += process.cpuTicks;
  }
  usage.cpuSeconds = static_cast<double>(ticks) / ticksPerSecond;
  return usage;
}

std::string describeMiB(std::uint64_t mib) {
  if (mib >= 1024 && mib % 1024 == 0) return std::to_string(mib / 1024) + " GiB";
  return std::to_string(mib) + " MiB";
}

std::string overLimitWords(LimitKind kind, const ResourceLimits& limits) {
  switch (kind) {
    case LimitKind::Memory:
      return "over its " + describeMiB(limits.memoryMiB.value_or(0)) + " memory limit";
    case LimitKind::Processes:
      return "over its " + std::to_string(limits.processes.value_or(0)) + "-process limit";
    case LimitKind::Cpu:
      break;
  }
  return "over its " + std::to_string(limits.cpuSeconds.value_or(0)) + " s CPU limit";
}

std::optional<std::string> overLimit(const ResourceLimits& limits, const ResourceUsage& usage) {
  if (limits.memoryMiB && usage.residentBytes > *limits.memoryMiB * 1024 * 1024) {
    return overLimitWords(LimitKind::Memory, limits);
  }
  if (limits.processes && usage.processes > *limits.processes) return overLimitWords(LimitKind::Processes, limits);
  if (limits.cpuSeconds && usage.cpuSeconds > *limits.cpuSeconds) return overLimitWords(LimitKind::Cpu, limits);
  return std::nullopt;
}

std::string describeLimits(const ResourceLimits& limits) {
  return "memory " + (limits.memoryMiB ? describeMiB(*limits.memoryMiB) : std::string("unlimited")) + ", " +
         (limits.processes ? std::to_string(*limits.processes) + " processes" : std::string("processes unlimited")) +
         ", CPU " + (limits.cpuSeconds ? std::to_string(*limits.cpuSeconds) + " s" : std::string("unlimited"));
}

std::uint64_t userProcessCount(uid_t uid) {
  std::uint64_t count = 0;
  DIR* proc = ::opendir("/proc");
  if (!proc) return 0;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    struct stat st {};
    if (::fstatat(::dirfd(proc), entry->d_name, &st, 0) == 0 && st.st_uid == uid) ++count;
  }
  ::closedir(proc);
  return count;
}

ChildRlimits childRlimitsFor(const ResourceLimits& limits, bool inCgroup) {
  ChildRlimits out;
  const LimitSupport& support = limitSupport();
  auto add = [&out](int resource, std::uint64_t soft, std::uint64_t hard) {
    out.limits[out.count++] = ChildRlimits::One{resource, soft, hard};
  };
  // The run's CPU time together is the cgroup's counter's or the reaper's to
  // watch, every scan; this stops one process that gets past it unseen:
  // SIGXCPU two seconds after the limit, SIGKILL a second later.
  if (limits.cpuSeconds) {
    const auto seconds = static_cast<std::uint64_t>(*limits.cpuSeconds) + 2;
    add(RLIMIT_CPU, seconds, seconds + 1);
  }
  if (inCgroup) return out;  // the cgroup holds the rest
  // RLIMIT_DATA rather than RLIMIT_AS: runtimes (V8, the JVM, Go) reserve far
  // more address space than they ever touch, and would fail at start. Half
  // again above the limit: the reaper's watch of the tree (every scan)
  // ends a run over the limit with its words; this only stops one process
  // that allocates faster than the watch looks.
  if (limits.memoryMiB) {
    const std::uint64_t bytes = *limits.memoryMiB * 1024 * 1024 / 2 * 3;
    add(RLIMIT_DATA, bytes, bytes);
  }
  // RLIMIT_NPROC counts every process of the user, hydra's and other
  // agents' included: the run may start `processes` more than run now.
  if (limits.processes && support.processesByRlimit) {
    const auto n = static_cast<std::uint64_t>(*limits.processes) + userProcessCount(::geteuid());
    add(RLIMIT_NPROC, n, n);
  }
  return out;
}

}  // namespace hydra::core
