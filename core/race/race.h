#pragma once

// A race: the same task given to several agents at once, each in its own
// worktree on its own branch, the results scored against the base commit and
// ranked. The architecture seed's race data flow, over the two units:
//
//   worktrees (one per agent, on the pool)
//   -> an AgentRun per agent (queued for the workspace's agent slots)
//   -> when all are done: ScoringStarted, the base commit's CheckSet (cached)
//      and each agent's CheckSet, diff sizes, ranking (scoring::rankAgents)
//   -> auto-merge of an eligible winner when hydra.toml asks for it
//   -> RaceFinished with the scores and the auto-merge outcome.
//
// The workspace plans a race (resolves agents and base, picks ids) and starts
// it; the race reports everything through its Publish function. io thread only.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/checks/baseline_cache.h"
#include "core/checks/check_set.h"
#include "core/checks/result_scoring.h"
#include "core/config/config.h"
#include "core/events/events.h"
#include "core/git/worktree.h"
#include "core/race/escape_guard.h"
#include "core/run/agent_run.h"
#include "core/run/strategy.h"

namespace hydra::core {

// A race as the workspace planned it.
struct RacePlan {
  RaceStarted started;  // id, task (as recorded: masked), base, agents with their branches and worktrees
  std::string prompt;   // the task as the user gave it, for the agents
  std::shared_ptr<const Config> config;
  std::vector<AgentConfig> agents;  // resolved, in the order of started.agents
  std::filesystem::path repoRoot;
  std::map<std::string, std::string> env;  // for every agent, on top of HYDRA_TASK
};

struct RaceContext {
  RunContext run;
  BaselineCache* baselines = nullptr;
  // Merges an agent's result into the user's branch, as `hydra merge` would;
  // called on the pool when [scoring] auto_merge picks a winner.
  std::function<AutoMergeOutcome(const std::string& raceId, const std::string& agentId)> autoMerge;
  // Whether the race of that id is over, by its record (called on the pool):
  // the records of races that are over are watched for tampering. Unset: they are not.
  std::function<bool(const std::string& raceId)> raceIsOver;
};

class Race : public Strategy, public std::enable_shared_from_this<Race> {
 public:
  // Called once, on the io thread, after the race's RaceFinished was published.
  using Finished = std::function<void(const RaceFinished&)>;

  // Publishes RaceStarted and sets the race going.
  static std::shared_ptr<Race> start(RaceContext context, RacePlan plan, Finished finished);

  Race(const Race&) = delete;
  Race& operator=(const Race&) = delete;

  // The whole race, or one agent of it. False when there is nothing left to
  // cancel (the agent, or every agent, had finished and nothing is scored).
  bool cancel(std::optional<std::string_view> agentId = std::nullopt) override;
  // hydra or its client is going away: every agent and check is killed and
  // the race ends as interrupted, now.
  void interrupt() override;
  // No process of this race (agent or check) is alive.
  bool quiet() const override;
  // The process groups of its agents and checks that run now.
  std::vector<pid_t> processGroups() const override;

  const std::string& id() const override { return plan_.started.raceId; }
  bool scoring() const { return scoring_; }
  bool hasAgent(std::string_view agentId) const;

 private:
  Race(RaceContext context, RacePlan plan, Finished finished);

  struct Agent {
    AgentPlan plan;
    std::shared_ptr<AgentRun> run;
    std::optional<AgentFinished> result;
  };

  void emit(RaceEventBody event);
  void createWorktrees();
  void worktreesCreated(std::vector<Worktree> created, std::string error);
  void agentDone(const AgentFinished& finished);
  void maybeScore();
  void startScoring();
  // The results are ranked: auto-merge when asked, then over.
  void scored(scoring::RaceScores scores);
  void over(RaceStatus status, std::optional<scoring::RaceScores> scores, std::optional<AutoMergeOutcome> merged);

  RaceContext ctx_;
  RacePlan plan_;
  Finished finished_;
  std::map<std::string, Agent> agents_;  // by agent id
  bool worktreesReady_ = false;
  bool cancelRequested_ = false;
  bool scoring_ = false;
  bool over_ = false;

  std::shared_ptr<ResultScoring> scoringRun_;
  // Escapes through the main repository's refs (null when the snapshot failed).
  std::shared_ptr<EscapeGuard> escapes_;
};

}  // namespace hydra::core
