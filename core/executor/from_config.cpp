#include "core/executor/from_config.h"

#include "core/executor/slurm_executor.h"
#include "core/git/git.h"

namespace hydra::core {

namespace fs = std::filesystem;

fs::path jobsDirectory(const fs::path& workspaceDir) { return workspaceDir / "_jobs"; }

std::shared_ptr<Executor> executorFromConfig(const ExecutorConfig& config, ExecutorKind kind,
                                             const fs::path& workspaceDir, const fs::path& repositoryRoot) {
  if (kind == ExecutorKind::Local) return nullptr;
  SlurmSettings settings;
  settings.partition = config.partition;
  settings.account = config.account;
  settings.timeLimit = config.timeLimit;
  settings.extraArgs = config.extraArgs;
  settings.slurmConf = config.slurmConf;
  if (config.hydraBinary) {
    settings.runner = *config.hydraBinary;
  } else {
    std::error_code ec;
    settings.runner = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw SlurmError("cannot tell where this hydra is (" + ec.message() + "): set [executor] hydra_binary");
  }
  settings.jobsDir = jobsDirectory(workspaceDir);
  const fs::path gitDir = git::commonDir(git::openRepository(repositoryRoot).get());
  checkSlurmReady(settings, {workspaceDir, gitDir, settings.runner});
  return SlurmExecutor::create(std::move(settings));
}

}  // namespace hydra::core
