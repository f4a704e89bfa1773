#include "core/config/limits.h"

namespace hydra::core {

ResourceLimits resourceLimitsFor(const ResourceLimitSettings& general, const ResourceLimitSettings& agent) {
  auto pick = [](auto own, auto shared, auto fallback) -> decltype(fallback) {
    if (own) return *own;
    if (shared) return *shared;
    return fallback;
  };
  ResourceLimits limits;
  if (auto mib = pick(agent.memoryMiB, general.memoryMiB, static_cast<std::int64_t>(defaultMemoryLimitMiB()))) {
    limits.memoryMiB = static_cast<std::uint64_t>(mib);
  }
  if (int n = pick(agent.processes, general.processes, kDefaultProcessLimit)) limits.processes = n;
  if (int s = pick(agent.cpuSeconds, general.cpuSeconds, 0)) limits.cpuSeconds = s;
  return limits;
}

}  // namespace hydra::core
