#pragma once

// Scoring results of agent runs, the part every mode shares: the base commit's
// checks (from the cache, or run in a worktree of their own), each result's
// checks in a fresh worktree of its commit (never the agent's live worktree,
// which may hold what it did not commit), the protected paths put back first,
// the diff sizes, and scoring::rankAgents over them all.
//
// A race scores all its agents at once; a collaboration scores each iteration
// of its builder on its own as it comes. io thread only; the git work runs on
// the pool.

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/checks/baseline_cache.h"
#include "core/checks/check_set.h"
#include "core/config/config.h"
#include "core/events/events.h"
#include "core/run/agent_run.h"

namespace hydra::core {

// One result to score.
struct ScoringSubject {
  std::string id;     // an agent id, or an iteration ("builder@2"): the id in the rankings and check logs
  std::string agent;  // the configured agent name
  AgentFinished result;  // status, duration, commit, escapes, denied tool calls
};

struct ScoringSpec {
  std::string raceId;
  std::string baseCommit;
  std::filesystem::path repoRoot;
  std::shared_ptr<const Config> config;
  std::vector<ScoringSubject> subjects;
};

class ResultScoring : public std::enable_shared_from_this<ResultScoring> {
 public:
  // Called once, on the io thread, with the ranked scores; never after cancel().
  using Done = std::function<void(scoring::RaceScores)>;

  // Starts the checks; `context.publish` receives their CheckOutput.
  static std::shared_ptr<ResultScoring> start(RunContext context, BaselineCache& baselines, ScoringSpec spec,
                                              Done done);

  ResultScoring(const ResultScoring&) = delete;
  ResultScoring& operator=(const ResultScoring&) = delete;

  // Kills the checks that run; `done` is not called. Worktrees are still removed.
  void cancel();
  // No check process runs.
  bool quiet() const;
  std::vector<pid_t> processGroups() const;

 private:
  ResultScoring(RunContext context, BaselineCache& baselines, ScoringSpec spec, Done done);
  struct Job;

  void startJobs();
  void startSubjectJob(const std::shared_ptr<Job>& job);
  void startBaselineJob(const std::shared_ptr<Job>& job);
  // The configured checks of `job` in `checkout`; `then` once they are done.
  void runChecks(const std::shared_ptr<Job>& job, const std::filesystem::path& checkout, std::function<void()> then);
  // On the pool: which protected files `commit` changed, put back in its
  // `checkout` as the base has them under protected_mode "restore" (no
  // checkout: no check runs, nothing to put back).
  void guardProtectedPaths(Job& job, const std::string& commit, const std::optional<std::filesystem::path>& checkout);
  // Its build again, in a fresh checkout of `commit` with the base's versions
  // of the build scripts it changed (checks/build_script.h); then jobDone().
  void startBaseScriptBuild(const std::shared_ptr<Job>& job, const std::string& commit);
  // On the pool: `first`, then removes a worktree the checks ran in; then
  // jobDone() unless the job has more to run.
  void removeWorktree(const Worktree& wt, std::function<void()> first = {}, bool finishesJob = true);
  void jobDone();
  void rank();

  RunContext ctx_;
  BaselineCache& baselines_;
  ScoringSpec spec_;
  Done done_;
  std::vector<std::shared_ptr<Job>> jobs_;
  std::size_t running_ = 0;
  std::size_t left_ = 0;
  scoring::Baseline baseline_;
  bool cancelled_ = false;
};

}  // namespace hydra::core
