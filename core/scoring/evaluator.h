#pragma once

// Scores a finished race: runs the configured build, test and lint commands on
// the base commit (once per base and commands, cached) and in every agent's
// worktree, measures each agent's diff, and ranks them (scores.h).
//
// Checks run as supervised process groups (killed as a group on timeout or
// cancel) with [scoring] timeout_per_check_seconds. Agents are evaluated in
// parallel up to a bound; each agent's checks run in order, and a failed build
// skips its tests and lint. Everything runs on the io_context's thread except
// git work, which goes to the evaluator's own thread pool.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "core/config/config.h"
#include "core/git/worktree.h"
#include "core/race/record.h"
#include "core/race/store.h"
#include "core/scoring/scores.h"

namespace hydra::core::scoring {

struct EvaluatorOptions {
  // How many worktrees are checked at once (the baseline counts as one).
  std::size_t parallelism = std::max(1u, std::thread::hardware_concurrency());
  // How much of a check's output its record keeps; the log keeps all of it.
  std::size_t recordedOutputBytes = 16 * 1024;
  // How much of a check's output (its end) the parsers read.
  std::size_t parsedOutputBytes = 32 * 1024 * 1024;
};

// The cache key of a baseline: the base commit and the exact commands and formats.
std::string baselineKey(const std::string& baseCommit, const ScoringConfig& config);

class Evaluator {
 public:
  using Done = std::function<void(RaceScores)>;

  Evaluator(boost::asio::io_context& io, std::filesystem::path repoRoot, ScoringConfig config, RaceStore& store,
            WorktreeManager& worktrees, EvaluatorOptions options = {});
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Scores `race` (its agents must have finished); `done` runs on the io thread.
  void evaluate(const RaceRecord& race, Done done);
  // Stops a race's evaluation: running checks are killed; `done` is not called.
  void cancel(const std::string& raceId);
  bool evaluating(const std::string& raceId) const { return evaluations_.contains(raceId); }

  // Reads the cached baseline for this base and these commands, if any.
  std::optional<Baseline> cachedBaseline(const std::string& baseCommit) const;
  std::filesystem::path cacheDir() const { return repoRoot_ / ".hydra" / "cache"; }

 private:
  struct Evaluation;
  struct Job;
  struct CheckRun;

  void startJobs();
  void runBaseline(const std::shared_ptr<Evaluation>& ev, Job& job);
  void runAgent(const std::shared_ptr<Evaluation>& ev, Job& job);
  void runChecks(const std::shared_ptr<Evaluation>& ev, Job& job, std::filesystem::path cwd,
                 std::function<void(CheckSet)> done);
  void runCheck(const std::shared_ptr<Evaluation>& ev, const std::string& subject, const std::string& check,
                const std::string& command, const std::filesystem::path& cwd,
                std::function<void(CheckResult)> done);
  void jobDone(const std::shared_ptr<Evaluation>& ev);
  void finish(const std::shared_ptr<Evaluation>& ev);
  void saveBaseline(const Baseline& baseline) const;

  boost::asio::io_context& io_;
  std::filesystem::path repoRoot_;
  ScoringConfig config_;
  RaceStore& store_;
  WorktreeManager& worktrees_;
  EvaluatorOptions options_;
  boost::asio::thread_pool pool_{2};
  std::map<std::string, std::shared_ptr<Evaluation>> evaluations_;
  std::size_t runningJobs_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace hydra::core::scoring
