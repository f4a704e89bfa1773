#pragma once

// Where agent runs and checks execute. Every mode's units (AgentRun,
// CheckSetRun, verification) start their commands through an Executor and
// hold the Execution it returns; the race, collaboration and evaluation code
// above them never learn which one it is.
//
//   local   a child process of hydra (Process): today's behaviour
//   slurm   a batch job on a Slurm cluster (slurm_executor.h), run on a node by
//           `hydra run-job` (job_runner.h), which confines and supervises it
//           there as hydra does here
//
// A Kubernetes Jobs executor would be a third implementation of the same
// interface (docs/scaling.md).

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "core/config/executor_kind.h"
#include "core/process/execution.h"
#include "core/process/process.h"

namespace hydra::core {

// What a command is for: names its cluster job, and lets a restarted hydra
// find the jobs of a race it must end.
struct JobLabel {
  std::string raceId;
  std::string subject;  // an agent id, or "baseline"
  std::string role;     // "agent", "setup", "build", "tests", "lint", "verify"
};

class Executor {
 public:
  using LineHandler = Process::LineHandler;
  using ExitHandler = Process::ExitHandler;

  virtual ~Executor() = default;

  // What races record and `hydra status` shows.
  virtual ExecutorKind kind() const = 0;
  // Whether what it starts is a child of hydra on this machine, whose process
  // group hydra signals and whose leftovers the caller's RunReaper finds.
  // Otherwise the executor's own supervisor does that where the command runs,
  // and reports how many it ended (ProcessResult::leftRunningEnded).
  virtual bool local() const = 0;
  // Whether a command may have its stdin written to (ProcessSpec::stdinPipe).
  virtual bool canWriteStdin() const = 0;

  // Starts `spec` (its timeout and kill grace included) and reports as
  // Process::start does: lines in order per stream as valid UTF-8, then the
  // end once, on `io`. A command that cannot be started ends with
  // ProcessResult::spawnError, never by throwing.
  virtual std::shared_ptr<Execution> start(boost::asio::io_context& io, ProcessSpec spec, LineHandler onLine,
                                           ExitHandler onExit, const JobLabel& label) = 0;
};

// Child processes of hydra.
class LocalExecutor final : public Executor {
 public:
  ExecutorKind kind() const override { return ExecutorKind::Local; }
  bool local() const override { return true; }
  bool canWriteStdin() const override { return true; }
  std::shared_ptr<Execution> start(boost::asio::io_context& io, ProcessSpec spec, LineHandler onLine,
                                   ExitHandler onExit, const JobLabel& label) override;
};

// The one local executor; what a unit uses when it is given none.
std::shared_ptr<Executor> localExecutor();

}  // namespace hydra::core
