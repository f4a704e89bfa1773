#pragma once

// A collaboration: one builder agent and one reviewer agent in rounds, the
// architecture seed's second mode, over the same units as a race:
//
//   the builder's worktree (branch hydra/builder-<id>)
//   -> iteration 1: an AgentRun of the builder with the task; its work committed
//   -> ResultScoring of that commit on its own ("builder@1")
//   -> unless it is good enough: an AgentRun of the reviewer in a fresh
//      checkout of the commit (its changes are thrown away), with
//      review_prompt_template; its final message is the review
//   -> unless the review approves: the builder again in the same worktree
//      with refine_prompt_template (continuing its CLI session when its
//      adapter can): iteration 2, committed and scored; and so on
//   -> RaceFinished with the iterations ranked (the best wins, ties to the
//      later one), and auto-merge of the winner under the race's rules.
//
// It stops when an iteration reaches until_score, the review contains the
// approve marker, max_iterations are done, the builder changes nothing in a
// refinement, or either agent fails. Every iteration is published
// (IterationFinished) and recorded with the races. io thread only.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/checks/result_scoring.h"
#include "core/config/config.h"
#include "core/events/events.h"
#include "core/git/worktree.h"
#include "core/race/escape_guard.h"
#include "core/race/race.h"
#include "core/run/agent_run.h"
#include "core/run/strategy.h"

namespace hydra::core {

// A collaboration as the workspace planned it.
struct CollabPlan {
  // kind "collab": the agents "builder" and "reviewer" (builder first), and
  // the settings (CollabSettings).
  RaceStarted started;
  std::string prompt;  // the task as the user gave it, for the agents
  std::shared_ptr<const Config> config;
  AgentConfig builder;
  AgentConfig reviewer;
  std::filesystem::path repoRoot;
};

class Collaboration : public Strategy, public std::enable_shared_from_this<Collaboration> {
 public:
  // Called once, on the io thread, after its RaceFinished was published.
  using Finished = std::function<void(const RaceFinished&)>;

  // Publishes RaceStarted and sets the collaboration going.
  static std::shared_ptr<Collaboration> start(RaceContext context, CollabPlan plan, Finished finished);

  Collaboration(const Collaboration&) = delete;
  Collaboration& operator=(const Collaboration&) = delete;

  const std::string& id() const override { return plan_.started.raceId; }
  // The builder and the reviewer work in turns: cancelling either (or no
  // agent) cancels the collaboration. The iterations done so far are kept.
  bool cancel(std::optional<std::string_view> agentId = std::nullopt) override;
  void interrupt() override;
  bool quiet() const override;
  std::vector<pid_t> processGroups() const override;

 private:
  Collaboration(RaceContext context, CollabPlan plan, Finished finished);

  void emit(RaceEventBody event);
  RunContext runContext() const;
  void prepare();
  void build(int iteration, const std::string& prompt, const std::string& phase);
  void built(const AgentFinished& finished);
  void scored(scoring::RaceScores scores);
  void review();
  void reviewed(const AgentFinished& finished);
  // The current iteration is the last: publishes it with `reason`, then ends.
  void stop(const std::string& reason);
  // Ends as cancelled or interrupted, keeping a scored current iteration.
  void endEarly(RaceStatus status);
  void conclude();
  void over(RaceStatus status, std::optional<scoring::RaceScores> scores, std::optional<AutoMergeOutcome> merged);
  std::optional<scoring::RaceScores> scoresSoFar() const;
  std::string commitMessage(int iteration, const std::string& phase) const;

  RaceContext ctx_;
  CollabPlan plan_;
  Finished finished_;
  CollabSettings settings_;

  std::optional<Worktree> builderWorktree_;
  std::shared_ptr<EscapeGuard> escapes_;
  std::shared_ptr<AgentRun> run_;
  std::shared_ptr<ResultScoring> scoring_;
  bool busy_ = false;  // work on the pool (worktrees) is under way

  std::vector<IterationResult> done_;  // published iterations
  std::optional<IterationResult> current_;
  AgentFinished lastBuild_;
  std::string diff_;  // the current iteration's diff against the base
  std::optional<std::string> session_;  // the builder's CLI session, to continue
  scoring::Baseline baseline_;
  std::optional<std::string> stopReason_;

  bool cancelRequested_ = false;
  bool over_ = false;
};

}  // namespace hydra::core
