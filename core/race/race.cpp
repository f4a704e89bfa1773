#include "core/race/race.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <thread>

#include "core/checks/protected_paths.h"
#include "core/merge/diff.h"

namespace hydra::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// The worktree the base commit is checked in is named like an agent's; this id
// cannot clash with a real agent's in practice and says what it is.
constexpr const char* kBaselineWorktree = "_baseline";
// An agent's checks run in "_check-<agent id>", a worktree of its commit.
constexpr const char* kCheckWorktreePrefix = "_check-";
// The subject of the base commit's checks in logs and events.
constexpr const char* kBaselineSubject = "baseline";

std::string firstLine(std::string_view text, std::size_t max = 72) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.size() > max) return std::string(line.substr(0, max - 3)) + "...";
  return std::string(line);
}

bool anyCommand(const ScoringConfig& c) { return c.buildCommand || c.testCommand || c.lintCommand; }

}  // namespace

struct Race::CheckJob {
  std::string subject;  // an agent id, or kBaselineSubject
  bool baseline = false;
  bool started = false;
  bool done = false;
  std::shared_ptr<CheckSetRun> run;
  scoring::CheckSet checks;
  std::vector<std::string> protectedChanges;  // [scoring] protected_paths the agent changed
};

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
  for (const auto& job : checkJobs_) {
    if (job->started && !job->done && job->run) return false;
  }
  return true;
}

std::vector<pid_t> Race::processGroups() const {
  std::vector<pid_t> groups;
  for (const auto& [id, agent] : agents_) {
    if (agent.run) {
      if (auto g = agent.run->processGroup()) groups.push_back(*g);
    }
  }
  for (const auto& job : checkJobs_) {
    if (job->run) {
      if (auto g = job->run->processGroup()) groups.push_back(*g);
    }
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
      // The refs as they are with the race's branches made: what no agent may change.
      // Unconfined agents can also write into the user's checkout: watched too.
      const bool confined = self->ctx_.run.sandbox && self->ctx_.run.sandbox->confined;
      // hydra's records too: those of a finished race never change again but by hydra.
      guard = std::make_shared<EscapeGuard>(self->plan_.repoRoot, !confined, self->ctx_.raceIsOver);
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
    spec.env = {{"HYDRA_TASK", plan_.prompt}};
    spec.binaryBase = plan_.repoRoot;
    spec.commitMessage = "hydra: " + plan.agentId + ": " + firstLine(started.task) + "\n\nRace " + id() +
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
    for (auto& job : checkJobs_) {
      if (job->run) job->run->cancel();
    }
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
  for (auto& job : checkJobs_) {
    if (job->run) job->run->cancel();
  }
  over(RaceStatus::Interrupted, std::nullopt, std::nullopt);
}

// --- scoring -----------------------------------------------------------------------

void Race::startScoring() {
  scoring_ = true;
  emit(ScoringStarted{id()});
  spdlog::info("race {}: scoring", id());
  baseline_.commit = plan_.started.baseCommit;
  // Without any command there is nothing to compare against the base commit.
  if (anyCommand(plan_.config->scoring)) {
    auto job = std::make_shared<CheckJob>();
    job->subject = kBaselineSubject;
    job->baseline = true;
    checkJobs_.push_back(job);
  }
  for (const auto& a : plan_.started.agents) {
    auto job = std::make_shared<CheckJob>();
    job->subject = a.agentId;
    checkJobs_.push_back(job);
  }
  checksLeft_ = checkJobs_.size();
  if (checksLeft_ == 0) {
    rank();
    return;
  }
  startCheckJobs();
}

void Race::startCheckJobs() {
  const std::size_t parallel = std::max(1u, std::thread::hardware_concurrency());
  auto self = shared_from_this();
  const ScoringConfig& scoringConfig = plan_.config->scoring;
  for (auto& job : checkJobs_) {
    if (checksRunning_ >= parallel || over_) return;
    if (job->started) continue;
    job->started = true;
    ++checksRunning_;

    auto runIn = [self, job, &scoringConfig](const fs::path& checkout, std::function<void()> then) {
      CheckSetSpec spec;
      spec.raceId = self->id();
      spec.subject = job->subject;
      spec.checkout = checkout;
      spec.config = scoringConfig;
      spec.sandbox = self->ctx_.run.sandbox;
      job->run = CheckSetRun::start(self->ctx_.run.io, self->ctx_.run.publish, self->ctx_.run.redactor,
                                    std::move(spec), [job, then = std::move(then)](scoring::CheckSet checks) {
                                      job->checks = std::move(checks);
                                      then();
                                    });
    };

    if (!job->baseline) {
      // What a merge would take: the agent's commit, checked out afresh in a
      // worktree of its own. Its live worktree may hold files it did not
      // commit (ignored ones among them), or what another agent wrote there
      // after it finished. An agent without a commit changed nothing: the base.
      const Agent& agent = agents_.at(job->subject);
      const std::string commit =
          agent.result && agent.result->commit ? *agent.result->commit : plan_.started.baseCommit;
      asio::post(ctx_.run.pool, [self, job, runIn, commit] {
        std::optional<Worktree> wt;
        std::string error;
        try {
          wt = self->ctx_.run.worktrees.create(kCheckWorktreePrefix + job->subject, commit, self->id());
        } catch (const std::exception& e) {
          error = "could not check out its result: " + std::string(e.what());
        }
        if (wt) {
          try {
            self->guardProtectedPaths(*job, commit, wt->path);
          } catch (const std::exception& e) {
            error = "could not put back its protected files: " + std::string(e.what());
          }
        }
        asio::post(self->ctx_.run.io, [self, job, runIn, wt, error] {
          if (!error.empty()) {
            spdlog::error("race {}: {}: {}", self->id(), job->subject, error);
            const ScoringConfig& config = self->plan_.config->scoring;
            auto failed = [&](const std::optional<std::string>& command) -> std::optional<scoring::CheckResult> {
              if (!command) return std::nullopt;
              scoring::CheckResult r;
              r.command = *command;
              r.error = error;
              return r;
            };
            job->checks =
                scoring::CheckSet{failed(config.buildCommand), failed(config.testCommand), failed(config.lintCommand)};
            if (wt) {
              self->removeCheckWorktree(*wt);
            } else {
              self->checkJobDone();
            }
            return;
          }
          runIn(wt->path, [self, wt] { self->removeCheckWorktree(*wt); });
        });
      });
      continue;
    }

    // The base commit: from the cache, or checked in a worktree of its own
    // (never the user's working tree, which may be dirty or busy).
    asio::post(ctx_.run.pool, [self, job, runIn] {
      const ScoringConfig& config = self->plan_.config->scoring;
      const std::string& base = self->plan_.started.baseCommit;
      if (auto cached = self->ctx_.baselines->load(base, config)) {
        asio::post(self->ctx_.run.io, [self, cached = *cached] {
          self->baseline_ = cached;
          spdlog::info("race {}: baseline of {} from the cache", self->id(), self->baseline_.commit.substr(0, 12));
          self->checkJobDone();
        });
        return;
      }
      std::optional<Worktree> wt;
      std::string error;
      try {
        wt = self->ctx_.run.worktrees.create(kBaselineWorktree, base, self->id());
      } catch (const std::exception& e) {
        error = e.what();
      }
      asio::post(self->ctx_.run.io, [self, job, runIn, wt, error] {
        if (!wt) {
          spdlog::error("race {}: could not create the baseline worktree: {}", self->id(), error);
          self->checkJobDone();
          return;
        }
        runIn(wt->path, [self, job, wt] {
          self->baseline_.checks = job->checks;
          const bool keep = !self->over_;
          self->removeCheckWorktree(*wt, [self, keep] {
            if (keep) self->ctx_.baselines->save(self->baseline_, self->plan_.config->scoring);
          });
        });
      });
    });
  }
}

void Race::guardProtectedPaths(CheckJob& job, const std::string& commit, const fs::path& checkout) {
  const ScoringConfig& config = plan_.config->scoring;
  if (config.protectedPaths.empty() || commit == plan_.started.baseCommit) return;
  const merge::DiffSummary diff = merge::diffCommits(plan_.repoRoot, plan_.started.baseCommit, commit);
  job.protectedChanges = checks::protectedChanges(diff.files, config.protectedPaths);
  if (job.protectedChanges.empty()) return;
  spdlog::info("race {}: {} changed protected files: {}", id(), job.subject, job.protectedChanges.size());
  if (config.protectedMode != "restore") return;
  for (const std::string& line : checks::restoreProtected(plan_.repoRoot, plan_.started.baseCommit, checkout,
                                                          job.protectedChanges)) {
    spdlog::info("race {}: {}'s checks: {}", id(), job.subject, line);
  }
}

void Race::removeCheckWorktree(const Worktree& wt, std::function<void()> first) {
  auto self = shared_from_this();
  asio::post(ctx_.run.pool, [self, wt, first = std::move(first)] {
    if (first) first();
    try {
      self->ctx_.run.worktrees.remove(wt, true);
    } catch (const std::exception& e) {
      spdlog::warn("could not remove the worktree {} the checks ran in: {}", wt.path.string(), e.what());
    }
    asio::post(self->ctx_.run.io, [self] { self->checkJobDone(); });
  });
}

void Race::checkJobDone() {
  --checksRunning_;
  if (over_) return;
  if (--checksLeft_ == 0) {
    rank();
    return;
  }
  startCheckJobs();
}

void Race::rank() {
  // Diff sizes come from libgit2: the base commit against each agent's result commit.
  std::vector<std::pair<std::string, std::optional<std::string>>> commits;
  for (const auto& a : plan_.started.agents) commits.emplace_back(a.agentId, agents_.at(a.agentId).result->commit);
  auto self = shared_from_this();
  asio::post(ctx_.run.pool, [self, commits] {
    std::map<std::string, scoring::DiffStats> diffs;
    for (const auto& [agentId, commit] : commits) {
      scoring::DiffStats d;
      if (commit) {
        try {
          auto summary = merge::diffCommits(self->plan_.repoRoot, self->plan_.started.baseCommit, *commit);
          d = scoring::DiffStats{summary.additions, summary.deletions, static_cast<int>(summary.files.size())};
        } catch (const std::exception& e) {
          spdlog::warn("race {}: diff of {} failed: {}", self->id(), agentId, e.what());
        }
      }
      diffs[agentId] = d;
    }
    asio::post(self->ctx_.run.io, [self, diffs = std::move(diffs)] {
      if (self->over_) return;
      std::vector<scoring::AgentScore> scored;
      for (const auto& a : self->plan_.started.agents) {
        const Agent& agent = self->agents_.at(a.agentId);
        scoring::AgentScore s;
        s.agentId = a.agentId;
        s.agent = a.agent;
        s.status = agent.result->status;
        s.durationMs = agent.result->durationMs;
        s.escaped = !agent.result->escapes.empty();
        s.deniedToolCalls = agent.result->deniedToolCalls;
        s.diff = diffs.at(a.agentId);
        for (const auto& job : self->checkJobs_) {
          if (job->baseline || job->subject != a.agentId) continue;
          s.checks = job->checks;
          s.protectedChanges = job->protectedChanges;
          if (!s.protectedChanges.empty()) s.protectedMode = self->plan_.config->scoring.protectedMode;
        }
        scored.push_back(std::move(s));
      }
      const ScoringConfig& config = self->plan_.config->scoring;
      scoring::RaceScores scores = scoring::rankAgents(self->id(), std::move(scored), self->baseline_, config);
      if (scores.winner) spdlog::info("race {}: {} wins", self->id(), *scores.winner);
      bool anyCompleted = std::any_of(scores.rankings.begin(), scores.rankings.end(),
                                      [](const auto& a) { return a.status == AgentStatus::Completed; });
      RaceStatus status = anyCompleted ? RaceStatus::Completed : RaceStatus::Failed;
      if (!(config.autoMerge && scores.autoMergeEligible && scores.winner && self->ctx_.autoMerge)) {
        self->over(status, std::move(scores), std::nullopt);
        return;
      }
      // [scoring] auto_merge = true and the winner reached auto_merge_minimum:
      // merge it as `hydra merge` would. A refused or conflicting merge changes
      // nothing and is reported; the race ends all the same.
      std::string winner = *scores.winner;
      asio::post(self->ctx_.run.pool, [self, winner, status, scores = std::move(scores)]() mutable {
        AutoMergeOutcome outcome = self->ctx_.autoMerge(self->id(), winner);
        asio::post(self->ctx_.run.io, [self, status, scores = std::move(scores), outcome = std::move(outcome)]() mutable {
          spdlog::info("race {}: auto-merge of {}: {}", self->id(), outcome.agentId, outcome.outcome);
          self->over(status, std::move(scores), std::move(outcome));
        });
      });
    });
  });
}

void Race::over(RaceStatus status, std::optional<scoring::RaceScores> scores,
                std::optional<AutoMergeOutcome> merged) {
  if (over_) return;
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
