#include "core/race/race.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <thread>

#include "core/config/limits.h"
#include "core/run/race_objects.h"
#include "core/run/worktree_setup.h"
#include "core/util/text.h"

namespace hydra::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;

Race::Race(RaceContext context, RacePlan plan, Finished finished)
    : ctx_(std::move(context)), plan_(std::move(plan)), finished_(std::move(finished)) {
  for (const auto& a : plan_.started.agents) agents_[a.agentId].plan = a;
}

std::shared_ptr<Race> Race::start(RaceContext context, RacePlan plan, Finished finished) {
  std::shared_ptr<Race> race(new Race(std::move(context), std::move(plan), std::move(finished)));
  // Everything the units publish goes through the race, which stops it once the race is over.
  std::weak_ptr<Race> weak = race;
  race->ctx_.run.publish = [weak, publish = race->ctx_.run.publish](RaceEventBody event) {
    auto self = weak.lock();
    if (self && self->over_) return;
    publish(std::move(event));
  };
  race->emit(race->plan_.started);
  spdlog::info("race {} started: {} agent(s) on {}", race->id(), race->agents_.size(),
               race->plan_.started.baseCommit.substr(0, 12));
  race->createWorktrees();
  return race;
}

void Race::emit(RaceEventBody event) {
  if (over_) return;
  ctx_.run.publish(std::move(event));
}

bool Race::hasAgent(std::string_view agentId) const { return agents_.contains(std::string(agentId)); }

bool Race::quiet() const {
  for (const auto& [id, agent] : agents_) {
    if (agent.run && agent.run->running()) return false;
  }
  return !scoringRun_ || scoringRun_->quiet();
}

std::vector<pid_t> Race::processGroups() const {
  std::vector<pid_t> groups;
  for (const auto& [id, agent] : agents_) {
    if (agent.run) {
      if (auto g = agent.run->processGroup()) groups.push_back(*g);
    }
  }
  if (scoringRun_) {
    for (pid_t g : scoringRun_->processGroups()) groups.push_back(g);
  }
  return groups;
}

// --- agents ----------------------------------------------------------------------


void Race::createWorktrees() {
  std::vector<std::string> ids;
  for (const auto& a : plan_.started.agents) ids.push_back(a.agentId);
  auto self = shared_from_this();
  asio::post(ctx_.run.pool, [self, ids] {
    std::vector<Worktree> created;
    std::string error;
    std::shared_ptr<EscapeGuard> guard;
    try {
      self->ctx_.run.worktrees.ensureExcluded();
      created = self->ctx_.run.worktrees.createMany(ids, self->plan_.started.baseCommit, self->id());
      copyIgnoredInto(self->plan_.repoRoot, created, self->plan_.config->general.copyIgnored, self->id());
      // The refs as they are with the race's branches made: what no agent may change.
      // Unconfined agents can also write into the user's checkout: watched too.
      const bool confined = self->ctx_.run.sandbox && self->ctx_.run.sandbox->confined;
      // hydra's records too: those of a finished race never change again but by hydra.
      guard = std::make_shared<EscapeGuard>(self->plan_.repoRoot, !confined, self->ctx_.raceIsOver);
      // The objects the base needs: objects/ is writable to every agent, confined or not.
      try {
        guard->watchBaseObjects(self->plan_.started.baseCommit);
      } catch (const std::exception& e) {
        spdlog::error("race {}: cannot read the base commit's objects; a change to them goes unnoticed: {}", self->id(),
                      e.what());
      }
    } catch (const std::exception& e) {
      if (created.empty()) {
        error = e.what();
      } else {
        spdlog::error("race {}: cannot take a snapshot of the refs; escapes through them go unnoticed: {}",
                      self->id(), e.what());
      }
    }
    asio::post(self->ctx_.run.io, [self, created = std::move(created), error = std::move(error),
                                   guard = std::move(guard)]() mutable {
      self->escapes_ = std::move(guard);
      self->worktreesCreated(std::move(created), std::move(error));
    });
  });
}

void Race::worktreesCreated(std::vector<Worktree> created, std::string error) {
  worktreesReady_ = true;
  if (over_) return;
  if (!error.empty()) spdlog::error("race {}: creating worktrees failed: {}", id(), error);
  const RaceStarted& started = plan_.started;
  for (std::size_t i = 0; i < started.agents.size(); ++i) {
    const AgentPlan& plan = started.agents[i];
    Agent& agent = agents_.at(plan.agentId);
    if (agent.result) continue;  // cancelled while its worktree was made
    auto wt = std::find_if(created.begin(), created.end(), [&](const Worktree& w) { return w.agentId == plan.agentId; });
    if (!error.empty() || wt == created.end() || cancelRequested_) {
      AgentFinished finished;
      finished.raceId = id();
      finished.agentId = plan.agentId;
      finished.finishedAt = recordNow();
      if (cancelRequested_) {
        finished.status = AgentStatus::Cancelled;
      } else {
        finished.status = AgentStatus::Failed;
        finished.error = "creating its worktree failed: " + (error.empty() ? std::string("not created") : error);
      }
      emit(finished);
      agentDone(finished);
      continue;
    }
    const AgentConfig& config = plan_.agents[i];
    AgentRunSpec spec;
    spec.raceId = id();
    spec.agentId = plan.agentId;
    spec.agent = config;
    spec.prompt = plan_.prompt;
    spec.checkout = *wt;
    spec.timeout = std::chrono::seconds(config.timeoutSeconds.value_or(plan_.config->general.timeoutSeconds));
    spec.limits = resourceLimitsFor(plan_.config->general.limits, config.limits);
    spec.env = plan_.env;
    spec.env["HYDRA_TASK"] = plan_.prompt;
    spec.binaryBase = plan_.repoRoot;
    spec.setupCommand = plan_.config->general.setupCommand;
    spec.resultLimits = {plan_.config->general.maxResultFiles, plan_.config->general.maxResultBytes};
    spec.commitMessage = "hydra: " + plan.agentId + ": " + firstLine(started.task, 72) + "\n\nRace " + id() +
                         ", agent " + plan.agentId + " (" + config.adapter + ").\n\nTask:\n" + started.task + "\n";
    std::weak_ptr<Race> weak = shared_from_this();
    RunContext run = ctx_.run;
    if (escapes_) {
      run.onLaunch = [guard = escapes_](const std::string& agentId) { guard->started(agentId); };
      run.escapesOf = [guard = escapes_](const std::string& agentId) {
        EscapeGuard::Findings found = guard->finished(agentId);
        return RunContext::Findings{std::move(found.escapes), std::move(found.warnings)};
      };
    }
    agent.run = AgentRun::start(run, std::move(spec), [weak](const AgentFinished& finished) {
      if (auto self = weak.lock()) self->agentDone(finished);
    });
  }
}

void Race::agentDone(const AgentFinished& finished) {
  auto it = agents_.find(finished.agentId);
  if (it == agents_.end()) return;
  it->second.result = finished;
  // Later, not now: callers may still be iterating over this race's agents.
  auto self = shared_from_this();
  asio::post(ctx_.run.io, [self] { self->maybeScore(); });
}

void Race::maybeScore() {
  if (over_ || scoring_) return;
  for (const auto& [agentId, agent] : agents_) {
    if (!agent.result) return;
  }
  if (cancelRequested_) {
    over(RaceStatus::Cancelled, std::nullopt, std::nullopt);
    return;
  }
  startScoring();
}

bool Race::cancel(std::optional<std::string_view> agentId) {
  if (over_) return false;
  if (agentId) {
    auto it = agents_.find(std::string(*agentId));
    if (it == agents_.end() || it->second.result) return false;
    Agent& agent = it->second;
    if (agent.run) return agent.run->cancel();
    // Its worktree is still being made: it never starts.
    AgentFinished finished;
    finished.raceId = id();
    finished.agentId = agent.plan.agentId;
    finished.status = AgentStatus::Cancelled;
    finished.finishedAt = recordNow();
    emit(finished);
    agentDone(finished);
    return true;
  }
  cancelRequested_ = true;
  if (scoring_) {
    if (scoringRun_) scoringRun_->cancel();
    over(RaceStatus::Cancelled, std::nullopt, std::nullopt);
    return true;
  }
  for (auto& [id, agent] : agents_) {
    if (agent.run && !agent.run->finished()) agent.run->cancel();
  }
  // Agents that never started end when their worktrees are ready; if all had
  // finished already, the race ends here.
  if (worktreesReady_) {
    auto self = shared_from_this();
    asio::post(ctx_.run.io, [self] { self->maybeScore(); });
  }
  return true;
}

void Race::interrupt() {
  if (over_) return;
  for (auto& [id, agent] : agents_) {
    if (agent.run) agent.run->cancel();
  }
  if (scoringRun_) scoringRun_->cancel();
  over(RaceStatus::Interrupted, std::nullopt, std::nullopt);
}

// --- scoring -----------------------------------------------------------------------

void Race::startScoring() {
  scoring_ = true;
  emit(ScoringStarted{id(), std::nullopt});
  spdlog::info("race {}: scoring", id());
  ScoringSpec spec;
  spec.raceId = id();
  spec.baseCommit = plan_.started.baseCommit;
  spec.repoRoot = plan_.repoRoot;
  spec.config = plan_.config;
  for (const auto& a : plan_.started.agents) spec.subjects.push_back({a.agentId, a.agent, *agents_.at(a.agentId).result});
  std::weak_ptr<Race> weak = shared_from_this();
  scoringRun_ = ResultScoring::start(ctx_.run, *ctx_.baselines, std::move(spec), [weak](scoring::RaceScores scores) {
    if (auto self = weak.lock()) self->scored(std::move(scores));
  });
}

void Race::scored(scoring::RaceScores scores) {
  if (over_) return;
  if (scores.winner) spdlog::info("race {}: {} wins", id(), *scores.winner);
  bool anyCompleted = std::any_of(scores.rankings.begin(), scores.rankings.end(),
                                  [](const auto& a) { return a.status == AgentStatus::Completed; });
  RaceStatus status = anyCompleted ? RaceStatus::Completed : RaceStatus::Failed;
  const ScoringConfig& config = plan_.config->scoring;
  if (!(config.autoMerge && scores.autoMergeEligible && scores.winner && ctx_.autoMerge)) {
    over(status, std::move(scores), std::nullopt);
    return;
  }
  // [scoring] auto_merge = true and the winner reached auto_merge_minimum:
  // merge it as `hydra merge` would. A refused or conflicting merge changes
  // nothing and is reported; the race ends all the same.
  std::string winner = *scores.winner;
  auto self = shared_from_this();
  asio::post(ctx_.run.pool, [self, winner, status, scores = std::move(scores)]() mutable {
    AutoMergeOutcome outcome = self->ctx_.autoMerge(self->id(), winner);
    asio::post(self->ctx_.run.io, [self, status, scores = std::move(scores), outcome = std::move(outcome)]() mutable {
      spdlog::info("race {}: auto-merge of {}: {}", self->id(), outcome.agentId, outcome.outcome);
      self->over(status, std::move(scores), std::move(outcome));
    });
  });
}

void Race::over(RaceStatus status, std::optional<scoring::RaceScores> scores,
                std::optional<AutoMergeOutcome> merged) {
  if (over_) return;
  // Its agents write no more: before anyone hears it is over (a cleanup may follow).
  sealRaceObjects(ctx_.run.worktrees, id());
  RaceFinished finished;
  finished.raceId = id();
  finished.status = status;
  finished.finishedAt = recordNow();
  finished.scores = std::move(scores);
  finished.autoMerge = std::move(merged);
  emit(finished);
  over_ = true;
  spdlog::info("race {} {}", id(), toString(status));
  auto done = std::move(finished_);
  if (done) done(finished);
}

}  // namespace hydra::core
