#pragma once
// The executors worth offering for one run of a repository (hydra/agents'
// `executors`, docs/protocol.md): a client asks which one only when there is
// a choice. Any run may name either kind, but "slurm" is a choice only where
// hydra.toml's [executor] prepares it: kind = "slurm", or any Slurm setting.

#include <vector>

#include "core/config/config.h"

namespace hydra::core {

// The default ([executor] kind) first; one entry, "local", when nothing in
// hydra.toml speaks of Slurm.
inline std::vector<ExecutorKind> offeredExecutors(const ExecutorConfig& executor) {
  const bool slurmSet = executor.partition || executor.account || executor.timeLimit || !executor.extraArgs.empty() ||
                        executor.slurmConf || executor.hydraBinary;
  if (executor.kind == ExecutorKind::Slurm) return {ExecutorKind::Slurm, ExecutorKind::Local};
  if (slurmSet) return {executor.kind, ExecutorKind::Slurm};
  return {executor.kind};
}

}  // namespace hydra::core
