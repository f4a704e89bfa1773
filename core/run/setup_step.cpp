#include "core/run/setup_step.h"

#include <boost/asio/post.hpp>

#include "core/run/agent_output.h"

namespace hydra::core {

namespace asio = boost::asio;

namespace {

// How often the processes of a setup command are looked for while it runs.
constexpr std::chrono::milliseconds kReaperScan{250};

}  // namespace

ProcessSpec SetupStep::process(const std::string& command, const std::filesystem::path& cwd,
                               std::map<std::string, std::string> env) {
  ProcessSpec process;
  process.program = "/bin/sh";
  process.args = {"-c", command};
  process.cwd = cwd;
  process.env = std::move(env);
  return process;
}

SetupStep::SetupStep(Context context, Redact redact, Output output, Done done)
    : ctx_(std::move(context)), redact_(std::move(redact)), output_(std::move(output)), done_(std::move(done)) {}

std::shared_ptr<SetupStep> SetupStep::start(Context context, ProcessSpec process, Redact redact, Output output,
                                            Done done) {
  std::shared_ptr<SetupStep> step(
      new SetupStep(std::move(context), std::move(redact), std::move(output), std::move(done)));
  step->timeout_ = process.timeout;
  auto self = step;
  step->execution_ = step->ctx_.executor.start(
      step->ctx_.io, std::move(process),
      [self](OutputStream stream, std::string line) { self->onLine(stream, std::move(line)); },
      [self](const ProcessResult& result) { self->onExit(result); }, step->ctx_.label);
  if (step->ctx_.reaper && step->execution_ && step->execution_->pid() > 0) {
    step->ctx_.reaper->attach(step->execution_->pid());
    step->ctx_.reaper->watch(step->ctx_.io.get_executor(), kReaperScan);
  }
  return step;
}

void SetupStep::cancel() {
  if (execution_) execution_->cancel();
}

pid_t SetupStep::pid() const { return execution_ ? execution_->pid() : 0; }

void SetupStep::onLine(OutputStream stream, std::string line) {
  if (!done_) return;
  if (redact_) line = redact_(stream, line);
  if (stream == OutputStream::Stderr && !line.empty()) lastStderr_ = line;
  tail_.push_back(line);
  if (tail_.size() > kTailLines) tail_.pop_front();
  if (output_) output_(stream, std::string(kMark) + line);
}

void SetupStep::onExit(const ProcessResult& result) {
  execution_.reset();
  // What the setup left running ends with it (a server it started does not
  // stay for the agent: the agent starts its own, on HYDRA_PORT).
  auto self = shared_from_this();
  asio::post(ctx_.pool, [self, result] {
    if (self->ctx_.reaper) self->ctx_.reaper->kill(self->ctx_.killGrace);
    asio::post(self->ctx_.io, [self, result] {
      // Done with what it started: the next process gets a reaper of its own.
      self->ctx_.reaper.reset();
      auto done = std::move(self->done_);
      self->done_ = nullptr;
      self->output_ = nullptr;
      self->redact_ = nullptr;
      if (done) done(outcomeOf(result, self->timeout_, self->tail_, self->lastStderr_));
    });
  });
}

SetupStep::Outcome SetupStep::outcomeOf(const ProcessResult& result, std::chrono::milliseconds timeout,
                                        const std::deque<std::string>& tail, const std::string& lastStderr) {
  Outcome outcome;
  outcome.tail = joinLines(tail);
  if (result.spawnError.empty() && !result.timedOut && !result.cancelled && result.exitCode == 0) {
    outcome.kind = Outcome::Kind::Succeeded;
    return outcome;
  }
  if (result.cancelled) {
    outcome.kind = Outcome::Kind::Cancelled;
    return outcome;
  }
  outcome.kind = Outcome::Kind::Failed;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
  std::string why = !result.spawnError.empty() ? result.spawnError
                    : result.timedOut          ? "timed out after " + std::to_string(seconds) + " s"
                    : result.exitCode          ? "exited with code " + std::to_string(*result.exitCode)
                                               : "killed by signal " + std::to_string(result.signal.value_or(0));
  // Its last word on stderr, where a failing command says why; the order of
  // its stdout and stderr lines is not kept across the two pipes.
  const std::string said = lastStderr.empty() ? lastNonEmpty(tail) : lastStderr;
  outcome.error = "setup_command " + why + (said.empty() || result.timedOut ? "" : ": " + said);
  return outcome;
}

}  // namespace hydra::core
