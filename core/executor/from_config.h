#pragma once

// The executor a race uses: [executor] in hydra.toml, or the kind the
// command line or the editor asked for instead (--executor).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/executor/executor.h"

namespace hydra::core {

// Null for Local (units then run child processes of hydra). For Slurm:
// job directories go to `workspaceDir`/_jobs, and Slurm is checked first
// (checkSlurmReady) with the workspace, the git directory of the repository
// at `repositoryRoot` and the runner as the paths the nodes need. Throws
// SlurmError or git::GitError.
std::shared_ptr<Executor> executorFromConfig(const ExecutorConfig& config, ExecutorKind kind,
                                             const std::filesystem::path& workspaceDir,
                                             const std::filesystem::path& repositoryRoot);

// Where a cluster job's directories go below a workspace directory.
std::filesystem::path jobsDirectory(const std::filesystem::path& workspaceDir);

}  // namespace hydra::core
