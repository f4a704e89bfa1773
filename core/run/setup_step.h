#pragma once

// An agent's [general] setup_command: run with sh -c in its checkout before
// the agent starts (the run supervises and confines it as it does the agent),
// its output kept, and, when it fails, why: its last word on stderr, or that
// it timed out.
//
// io thread; what it left running is ended on the pool.

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/executor/executor.h"
#include "core/process/process.h"
#include "core/process/reaper.h"

namespace hydra::core {

class SetupStep : public std::enable_shared_from_this<SetupStep> {
 public:
  // The prefix its lines carry in the agent's log.
  static constexpr std::string_view kMark = "[setup] ";

  struct Outcome {
    enum class Kind { Succeeded, Failed, Cancelled } kind = Kind::Failed;
    // Failed: "setup_command exited with code 2: <its last stderr line>",
    // "setup_command timed out after 30 s", ...
    std::string error;
    // The end of its output (redacted), for the record.
    std::string tail;
  };
  // Masks the secrets of one line of `stream`.
  using Redact = std::function<std::string(OutputStream, std::string_view)>;
  // One line, redacted and marked with kMark.
  using Output = std::function<void(OutputStream, std::string)>;
  using Done = std::function<void(const Outcome&)>;

  struct Context {
    boost::asio::io_context& io;
    boost::asio::thread_pool& pool;
    Executor& executor;
    JobLabel label;
    // Tracks what it starts (prepared for `process`), or null; what it left
    // running is ended, after `killGrace`, before done is called.
    std::shared_ptr<RunReaper> reaper;
    std::chrono::milliseconds killGrace{2000};
  };

  // How much of its output the error and the record keep.
  static constexpr std::size_t kTailLines = 20;

  // `command` as a process: /bin/sh -c, in `cwd`, with `env`. Its timeout,
  // confinement and limits are the caller's to add.
  static ProcessSpec process(const std::string& command, const std::filesystem::path& cwd,
                             std::map<std::string, std::string> env);

  // Starts `process`; `done` is called once, on the io thread, once it and
  // what it left running have ended. A failure to start is a Failed outcome.
  static std::shared_ptr<SetupStep> start(Context context, ProcessSpec process, Redact redact, Output output,
                                          Done done);

  SetupStep(const SetupStep&) = delete;
  SetupStep& operator=(const SetupStep&) = delete;

  // Ends it (SIGTERM to its process group, SIGKILL after the grace): done
  // follows, Cancelled.
  void cancel();
  // Its process group, while it runs; 0 when it has none.
  pid_t pid() const;

  // What `result` of a setup command that timed out after `timeout` comes
  // to, given the end of its output and its last non-empty stderr line.
  static Outcome outcomeOf(const ProcessResult& result, std::chrono::milliseconds timeout,
                           const std::deque<std::string>& tail, const std::string& lastStderr);

 private:
  SetupStep(Context context, Redact redact, Output output, Done done);
  void onLine(OutputStream stream, std::string line);
  void onExit(const ProcessResult& result);

  Context ctx_;
  Redact redact_;
  Output output_;
  Done done_;
  std::chrono::milliseconds timeout_{0};
  std::shared_ptr<Execution> execution_;
  std::deque<std::string> tail_;  // the end of its output, for the error
  std::string lastStderr_;        // its last non-empty stderr line: the error's reason
};

}  // namespace hydra::core
