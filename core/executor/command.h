#pragma once

// Short commands hydra runs for itself (a scheduler's sbatch, squeue,
// scancel), their output collected. Through Process, like every child hydra
// starts, so the reaper never takes one for an agent's leftover.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/process/execution.h"

namespace hydra::core {

struct CommandOutput {
  ProcessResult result;
  std::string out;  // stdout, lines joined with '\n'
  std::string err;  // stderr, the same

  bool succeeded() const { return result.spawnError.empty() && result.exitCode == 0 && !result.timedOut; }
  // Why it failed, for an error message: its stderr's last line, or how it ended.
  std::string failure() const;
};

// Runs `program args...` with `env` on top of hydra's environment; `done` on `io`.
void runCommand(boost::asio::io_context& io, const std::string& program, const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env, std::chrono::milliseconds timeout,
                std::function<void(CommandOutput)> done);

// The same, blocking, on a private io_context. Any thread.
CommandOutput runCommandSync(const std::string& program, const std::vector<std::string>& args,
                             const std::map<std::string, std::string>& env, std::chrono::milliseconds timeout);

}  // namespace hydra::core
