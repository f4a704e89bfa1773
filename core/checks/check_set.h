#pragma once

// A check set: the configured build, test and lint commands, run one after
// another in one checkout, each as a supervised process group with [scoring]
// timeout_per_check_seconds. A failed build skips the tests and the lint.
// The unit every mode scores with: a race checks the base commit and each
// agent's result, a collaboration each iteration, an evaluation each sample.
//
// Each line a check prints is published (redacted) as a CheckOutput event, so
// the record store keeps the whole output and views can follow it; the result
// keeps its end, and the parsers read the counts from it.
//
// io thread only.

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/sandbox/mode.h"
#include "core/config/config.h"
#include "core/run/agent_run.h"
#include "core/process/process.h"
#include "core/scoring/scores.h"
#include "core/util/redact.h"

namespace hydra::core {

struct CheckSetSpec {
  std::string raceId;   // what the checks belong to: their output events carry it
  std::string subject;  // whose checks: an agent id, or "baseline"
  std::filesystem::path checkout;
  ScoringConfig config;
  // How much of a check's output its result keeps; its log keeps all of it.
  std::size_t recordedOutputBytes = 16 * 1024;
  // How much of a check's output (its end) the parsers read.
  std::size_t parsedOutputBytes = 32 * 1024 * 1024;
  // Checks run agent-written code: confined as the agents are (null: unconfined).
  std::shared_ptr<const sandbox::SandboxDecision> sandbox;
  // Where the checks run (null: here, as child processes of hydra).
  std::shared_ptr<Executor> executor;
  // Appended to each check's name in its events and log ("build" +
  // "-base-scripts"): a second run for the same subject keeps a log of its own.
  std::string checkNameSuffix;
};

class CheckSetRun : public std::enable_shared_from_this<CheckSetRun> {
 public:
  // Called once, on the io thread, with what ran (checks that are not
  // configured are nullopt; a cancelled check says so in its error).
  using Done = std::function<void(scoring::CheckSet)>;

  static std::shared_ptr<CheckSetRun> start(boost::asio::io_context& io, Publish publish,
                                            std::shared_ptr<const Redactor> redactor, CheckSetSpec spec, Done done);

  // Kills the running check; the ones after it do not run. `done` still follows.
  void cancel();
  // The running check's process group, if one runs.
  std::optional<pid_t> processGroup() const;

 private:
  CheckSetRun(boost::asio::io_context& io, Publish publish, std::shared_ptr<const Redactor> redactor,
              CheckSetSpec spec, Done done);

  enum class Step { Build, Tests, Lint, Done };
  void next(Step step);
  void run(Step step, const std::string& command);
  // The problems a build or lint output names at a place in a file.
  static std::vector<scoring::Finding> findingsIn(const std::string& output, const std::filesystem::path& checkout);
  void finished(Step step, scoring::CheckResult result);

  boost::asio::io_context& io_;
  Publish publish_;
  std::shared_ptr<const Redactor> redactor_;
  CheckSetSpec spec_;
  Done done_;
  scoring::CheckSet results_;
  std::shared_ptr<Execution> current_;
  bool cancelled_ = false;
};

// "build", "tests", "lint": the name a check has in logs, events and records.
const char* checkName(int step);

}  // namespace hydra::core
