#pragma once

// A command that was started and is being supervised, wherever it runs: a
// child process of hydra (Process), or a job on a cluster that hydra follows
// (core/executor/). Agent runs and checks hold one of these; only the
// executor that started it knows which it is.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/process/output_stream.h"

namespace hydra::core {

struct ProcessResult {
  // Exactly one of exitCode and signal is set, unless the spawn failed. (If
  // something else in hydra reaps the child first, its status is lost and
  // exitCode is -1.)
  std::optional<int> exitCode;
  std::optional<int> signal;
  bool timedOut = false;
  bool cancelled = false;
  std::string spawnError;  // non-empty when the program could not be started
  std::chrono::system_clock::time_point startedAt, endedAt;  // endedAt: when the child exited
  // A command that ran elsewhere (a cluster job): how many processes it left
  // running were ended there once it exited, by the supervisor beside it. A
  // local Process leaves that to its caller's RunReaper and says 0.
  int leftRunningEnded = 0;
};

class Execution {
 public:
  virtual ~Execution() = default;

  // Ends it: result.cancelled = true. Safe from any thread; nothing once it has ended.
  virtual void cancel() = 0;
  // The same, for a command whose work is done (an ACP agent that answered
  // and does not exit by itself): result.cancelled stays false.
  virtual void terminate() = 0;
  // Its stdin, when it was started with one (ProcessSpec::stdinPipe).
  virtual void write(std::string data) = 0;
  virtual void closeStdin() = 0;

  // Its process on this machine, which leads its own process group: -1 when it
  // runs elsewhere or could not be started.
  virtual pid_t pid() const = 0;
};

}  // namespace hydra::core
