#include "core/collab/collaboration.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "core/collab/iterations.h"
#include "core/collab/prompts.h"
#include "core/config/limits.h"
#include "core/merge/diff.h"
#include "core/run/race_objects.h"
#include "core/run/worktree_setup.h"

namespace hydra::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// The most of a review kept in the record and the events.
constexpr std::size_t kMaxRecordedReview = 64 * 1024;

std::string trimmed(std::string_view text) {
  std::size_t a = text.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return "";
  std::size_t b = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(a, b - a + 1));
}

}  // namespace

Collaboration::Collaboration(RaceContext context, CollabPlan plan, Finished finished)
    : ctx_(std::move(context)), plan_(std::move(plan)), finished_(std::move(finished)) {
  settings_ = plan_.started.collaboration.value_or(CollabSettings{});
}

std::shared_ptr<Collaboration> Collaboration::start(RaceContext context, CollabPlan plan, Finished finished) {
  std::shared_ptr<Collaboration> self(new Collaboration(std::move(context), std::move(plan), std::move(finished)));
  // What the units publish after the end is dropped, as in a race.
  std::weak_ptr<Collaboration> weak = self;
  self->ctx_.run.publish = [weak, publish = self->ctx_.run.publish](RaceEventBody event) {
    auto me = weak.lock();
    if (me && me->over_) return;
    publish(std::move(event));
  };
  self->emit(self->plan_.started);
  spdlog::info("collaboration {} started: {} builds, {} reviews, on {}", self->id(), self->settings_.builder,
               self->settings_.reviewer, self->plan_.started.baseCommit.substr(0, 12));
  self->prepare();
  return self;
}

void Collaboration::emit(RaceEventBody event) {
  if (over_) return;
  ctx_.run.publish(std::move(event));
}

RunContext Collaboration::runContext() const {
  RunContext run = ctx_.run;
  if (escapes_) {
    run.onLaunch = [guard = escapes_](const std::string& agentId) { guard->started(agentId); };
    run.escapesOf = [guard = escapes_](const std::string& agentId) {
      EscapeGuard::Findings found = guard->finished(agentId);
      return RunContext::Findings{std::move(found.escapes), std::move(found.warnings)};
    };
  }
  return run;
}

bool Collaboration::quiet() const {
  if (run_ && run_->running()) return false;
  return !scoring_ || scoring_->quiet();
}

std::vector<pid_t> Collaboration::processGroups() const {
  std::vector<pid_t> groups;
  if (run_) {
    if (auto g = run_->processGroup()) groups.push_back(*g);
  }
  if (scoring_) {
    for (pid_t g : scoring_->processGroups()) groups.push_back(g);
  }
  return groups;
}

std::string Collaboration::commitMessage(int iteration, const std::string& phase) const {
  return "hydra: builder: " + collab::firstLine(plan_.started.task, 60) + " (iteration " + std::to_string(iteration) +
         ")\n\nCollaboration " + id() + ", iteration " + std::to_string(iteration) + " (" + phase + ") of " +
         settings_.builder + " (" + plan_.builder.adapter + "), reviewed by " + settings_.reviewer +
         ".\n\nTask:\n" + plan_.started.task + "\n";
}

// --- the builder ---------------------------------------------------------------------

void Collaboration::prepare() {
  busy_ = true;
  auto self = shared_from_this();
  asio::post(ctx_.run.pool, [self] {
    std::optional<Worktree> wt;
    std::string error;
    std::shared_ptr<EscapeGuard> guard;
    try {
      self->ctx_.run.worktrees.ensureExcluded();
      wt = self->ctx_.run.worktrees.create(std::string(collab::kBuilder), self->plan_.started.baseCommit, self->id());
      copyIgnoredInto(self->plan_.repoRoot, {*wt}, self->plan_.config->general.copyIgnored, self->id());
      const bool confined = self->ctx_.run.sandbox && self->ctx_.run.sandbox->confined;
      guard = std::make_shared<EscapeGuard>(self->plan_.repoRoot, !confined, self->ctx_.raceIsOver);
      // The objects the base needs: objects/ is writable to every agent, confined or not.
      try {
        guard->watchBaseObjects(self->plan_.started.baseCommit);
      } catch (const std::exception& e) {
        spdlog::error("collaboration {}: cannot read the base commit's objects; a change to them goes unnoticed: {}", self->id(),
                      e.what());
      }
    } catch (const std::exception& e) {
      if (!wt) {
        error = e.what();
      } else {
        spdlog::error("collaboration {}: cannot take a snapshot of the refs; escapes through them go unnoticed: {}",
                      self->id(), e.what());
      }
    }
    asio::post(self->ctx_.run.io, [self, wt, error, guard = std::move(guard)] {
      self->busy_ = false;
      self->escapes_ = guard;
      self->builderWorktree_ = wt;
      if (self->over_) return;
      if (self->cancelRequested_) {
        self->endEarly(RaceStatus::Cancelled);
        return;
      }
      if (!wt) {
        spdlog::error("collaboration {}: creating the builder's worktree failed: {}", self->id(), error);
        AgentFinished finished;
        finished.raceId = self->id();
        finished.agentId = std::string(collab::kBuilder);
        finished.status = AgentStatus::Failed;
        finished.finishedAt = recordNow();
        finished.error = "creating its worktree failed: " + error;
        finished.phase = RunPhase{"build", 1};
        self->emit(finished);
        self->current_ = IterationResult{};
        self->current_->iteration = 1;
        self->current_->builderStatus = AgentStatus::Failed;
        self->stop("builderFailed");
        return;
      }
      self->build(1, self->plan_.prompt, "build");
    });
  });
}

void Collaboration::build(int iteration, const std::string& prompt, const std::string& phase) {
  current_ = IterationResult{};
  current_->iteration = iteration;
  AgentRunSpec spec;
  spec.raceId = id();
  spec.agentId = std::string(collab::kBuilder);
  spec.agent = plan_.builder;
  spec.prompt = prompt;
  spec.checkout = *builderWorktree_;
  spec.timeout = std::chrono::seconds(plan_.builder.timeoutSeconds.value_or(plan_.config->general.timeoutSeconds));
  spec.limits = resourceLimitsFor(plan_.config->general.limits, plan_.builder.limits);
  spec.env = {{"HYDRA_TASK", prompt}, {"HYDRA_PHASE", phase}, {"HYDRA_ITERATION", std::to_string(iteration)}};
  spec.binaryBase = plan_.repoRoot;
  spec.commitMessage = commitMessage(iteration, phase);
  spec.resultLimits = {plan_.config->general.maxResultFiles, plan_.config->general.maxResultBytes};
  spec.phase = RunPhase{phase, iteration};
  // Once per worktree: the builder keeps its worktree from one iteration to the next.
  if (iteration == 1) spec.setupCommand = plan_.config->general.setupCommand;
  if (phase == "refine") spec.resumeSession = session_;
  spdlog::info("collaboration {}: iteration {}: {}", id(), iteration, phase);
  std::weak_ptr<Collaboration> weak = shared_from_this();
  run_ = AgentRun::start(runContext(), std::move(spec), [weak](const AgentFinished& finished) {
    if (auto self = weak.lock()) {
      // Later, not now: the run is still unwinding its own callback.
      asio::post(self->ctx_.run.io, [self, finished] { self->built(finished); });
    }
  });
}

void Collaboration::built(const AgentFinished& finished) {
  if (over_) return;
  const bool resumed = run_ && run_->resumed();
  run_.reset();
  if (cancelRequested_) {
    endEarly(RaceStatus::Cancelled);
    return;
  }
  lastBuild_ = finished;
  IterationResult& it = *current_;
  it.commit = finished.commit;
  it.builderStatus = finished.status;
  it.resumed = resumed;
  it.builderDurationMs = finished.durationMs;
  it.builderUsage = finished.usage;
  if (finished.sessionId) session_ = finished.sessionId;

  emit(ScoringStarted{id(), it.iteration});
  ScoringSpec spec;
  spec.raceId = id();
  spec.baseCommit = plan_.started.baseCommit;
  spec.repoRoot = plan_.repoRoot;
  spec.config = plan_.config;
  spec.subjects.push_back({collab::iterationId(it.iteration), settings_.builder, finished});
  std::weak_ptr<Collaboration> weak = shared_from_this();
  scoring_ = ResultScoring::start(ctx_.run, *ctx_.baselines, std::move(spec), [weak](scoring::RaceScores scores) {
    if (auto self = weak.lock()) self->scored(std::move(scores));
  });
}

void Collaboration::scored(scoring::RaceScores scores) {
  if (over_) return;
  scoring_.reset();
  baseline_ = scores.baseline;
  IterationResult& it = *current_;
  if (!scores.rankings.empty()) it.score = scores.rankings.front();
  spdlog::info("collaboration {}: iteration {} scored {:.1f}", id(), it.iteration, it.score ? it.score->total : 0.0);

  if (it.builderStatus != AgentStatus::Completed) {
    stop("builderFailed");
    return;
  }
  if (!done_.empty() && done_.back().commit == it.commit) {
    stop("unchanged");
    return;
  }
  // A round that is flagged (it changed a protected file, had tool calls
  // denied) or cannot win never ends the loop on its score: the reviewer runs.
  if (!settings_.reviewEveryRound && it.score && it.score->eligible() && it.score->flags.empty() &&
      it.score->total >= settings_.untilScore) {
    stop("untilScore");
    return;
  }
  if (it.iteration >= settings_.maxIterations) {
    stop("maxIterations");
    return;
  }
  // On disk before the review starts: a crash during it loses nothing.
  emit(IterationScored{id(), it});
  review();
}

// --- the reviewer -------------------------------------------------------------------

void Collaboration::review() {
  busy_ = true;
  const std::string commit = current_->commit.value_or(plan_.started.baseCommit);
  auto self = shared_from_this();
  asio::post(ctx_.run.pool, [self, commit] {
    std::string diff;
    std::optional<Worktree> wt;
    std::string error;
    try {
      diff = merge::unifiedPatch(self->plan_.repoRoot, self->plan_.started.baseCommit, commit);
      wt = self->ctx_.run.worktrees.create(std::string(collab::kReviewer), commit, self->id());
    } catch (const std::exception& e) {
      error = e.what();
    }
    asio::post(self->ctx_.run.io, [self, diff = std::move(diff), wt, error] {
      self->busy_ = false;
      if (self->over_) return;
      self->diff_ = diff;
      if (self->cancelRequested_ || !wt) {
        if (wt) {
          asio::post(self->ctx_.run.pool, [self, wt] {
            try {
              self->ctx_.run.worktrees.remove(*wt, true);
            } catch (const std::exception& e) {
              spdlog::warn("could not remove the reviewer's worktree {}: {}", wt->path.string(), e.what());
            }
          });
        }
        if (self->cancelRequested_) {
          self->endEarly(RaceStatus::Cancelled);
          return;
        }
        spdlog::error("collaboration {}: the reviewer's checkout failed: {}", self->id(), error);
        AgentFinished finished;
        finished.raceId = self->id();
        finished.agentId = std::string(collab::kReviewer);
        finished.status = AgentStatus::Failed;
        finished.finishedAt = recordNow();
        finished.error = "creating its checkout failed: " + error;
        finished.phase = RunPhase{"review", self->current_->iteration};
        self->emit(finished);
        self->current_->reviewStatus = AgentStatus::Failed;
        self->stop("reviewerFailed");
        return;
      }
      const IterationResult& it = *self->current_;
      const std::string whereAll = "git diff " + self->plan_.started.baseCommit.substr(0, 12) + " " +
                                   it.commit.value_or(self->plan_.started.baseCommit).substr(0, 12);
      const std::string prompt = collab::expandTemplate(
          self->plan_.config->collaboration.reviewPromptTemplate,
          {{"task", self->plan_.prompt},
           {"diff", diff.empty() ? std::string("(no changes)") : collab::bounded(diff, collab::kMaxDiffBytes, whereAll)},
           {"scores", it.score ? collab::scoresText(*it.score) : std::string("(not scored)")},
           {"approve_marker", self->settings_.approveMarker}});
      AgentRunSpec spec;
      spec.raceId = self->id();
      spec.agentId = std::string(collab::kReviewer);
      spec.agent = self->plan_.reviewer;
      spec.prompt = prompt;
      spec.checkout = *wt;
      spec.timeout = std::chrono::seconds(
          self->plan_.reviewer.timeoutSeconds.value_or(self->plan_.config->general.timeoutSeconds));
      spec.limits = resourceLimitsFor(self->plan_.config->general.limits, self->plan_.reviewer.limits);
      spec.env = {{"HYDRA_TASK", prompt}, {"HYDRA_PHASE", "review"}, {"HYDRA_ITERATION", std::to_string(it.iteration)}};
      spec.binaryBase = self->plan_.repoRoot;
      spec.phase = RunPhase{"review", it.iteration};
      spec.setupCommand = self->plan_.config->general.setupCommand;
      spdlog::info("collaboration {}: iteration {}: review", self->id(), it.iteration);
      std::weak_ptr<Collaboration> weak = self;
      Worktree checkout = *wt;
      self->run_ = AgentRun::start(self->runContext(), std::move(spec), [weak, checkout](const AgentFinished& finished) {
        auto me = weak.lock();
        if (!me) return;
        // The reviewer's checkout goes, whatever it changed; then the loop goes on.
        asio::post(me->ctx_.run.pool, [me, checkout, finished] {
          try {
            me->ctx_.run.worktrees.remove(checkout, true);
          } catch (const std::exception& e) {
            spdlog::warn("could not remove the reviewer's worktree {}: {}", checkout.path.string(), e.what());
          }
          asio::post(me->ctx_.run.io, [me, finished] { me->reviewed(finished); });
        });
      });
    });
  });
}

void Collaboration::reviewed(const AgentFinished& finished) {
  if (over_) return;
  run_.reset();
  if (cancelRequested_) {
    endEarly(RaceStatus::Cancelled);
    return;
  }
  IterationResult& it = *current_;
  it.reviewStatus = finished.status;
  it.reviewDurationMs = finished.durationMs;
  it.reviewUsage = finished.usage;
  std::string review = trimmed(finished.finalMessage);
  if (review.size() > kMaxRecordedReview) review = collab::bounded(review, kMaxRecordedReview, "hydra log");
  if (!review.empty()) it.review = review;
  if (finished.status != AgentStatus::Completed || review.empty() || !finished.escapes.empty()) {
    stop("reviewerFailed");
    return;
  }
  it.approved = collab::approves(review, settings_.approveMarker);
  if (it.approved) {
    stop("approved");
    return;
  }
  emit(IterationFinished{id(), it, true});
  done_.push_back(it);

  const std::string whereAll = "git diff " + plan_.started.baseCommit.substr(0, 12) + " " +
                               it.commit.value_or(plan_.started.baseCommit).substr(0, 12);
  const std::string prompt = collab::expandTemplate(
      plan_.config->collaboration.refinePromptTemplate,
      {{"task", plan_.prompt},
       {"review", collab::bounded(review, collab::kMaxReviewBytes, "hydra log")},
       {"diff", diff_.empty() ? std::string("(no changes)") : collab::bounded(diff_, collab::kMaxDiffBytes, whereAll)},
       {"scores", it.score ? collab::scoresText(*it.score) : std::string("(not scored)")}});
  build(it.iteration + 1, prompt, "refine");
}

// --- the end ----------------------------------------------------------------------------

void Collaboration::stop(const std::string& reason) {
  stopReason_ = reason;
  current_->stopReason = reason;
  spdlog::info("collaboration {}: stops after iteration {}: {}", id(), current_->iteration, reason);
  emit(IterationFinished{id(), *current_, false});
  done_.push_back(*current_);
  current_.reset();
  conclude();
}

std::optional<scoring::RaceScores> Collaboration::scoresSoFar() const {
  bool any = std::any_of(done_.begin(), done_.end(), [](const IterationResult& x) { return x.score.has_value(); });
  if (!any) return std::nullopt;
  return collab::rankIterations(id(), done_, baseline_, plan_.config->scoring);
}

void Collaboration::conclude() {
  auto scores = scoresSoFar();
  bool anyCompleted = std::any_of(done_.begin(), done_.end(),
                                  [](const IterationResult& x) { return x.builderStatus == AgentStatus::Completed; });
  RaceStatus status = anyCompleted ? RaceStatus::Completed : RaceStatus::Failed;
  const ScoringConfig& config = plan_.config->scoring;
  if (!(scores && config.autoMerge && scores->autoMergeEligible && scores->winner && ctx_.autoMerge)) {
    over(status, std::move(scores), std::nullopt);
    return;
  }
  std::string winner = *scores->winner;
  auto self = shared_from_this();
  asio::post(ctx_.run.pool, [self, winner, status, scores = std::move(*scores)]() mutable {
    AutoMergeOutcome outcome = self->ctx_.autoMerge(self->id(), winner);
    asio::post(self->ctx_.run.io, [self, status, scores = std::move(scores), outcome = std::move(outcome)]() mutable {
      spdlog::info("collaboration {}: auto-merge of {}: {}", self->id(), outcome.agentId, outcome.outcome);
      self->over(status, std::move(scores), std::move(outcome));
    });
  });
}

void Collaboration::endEarly(RaceStatus status) {
  if (over_) return;
  const std::string reason = status == RaceStatus::Cancelled ? "cancelled" : "interrupted";
  stopReason_ = reason;
  // An iteration that was built and scored is kept: it can still be looked at and merged.
  if (current_ && current_->score) {
    current_->stopReason = reason;
    emit(IterationFinished{id(), *current_, false});
    done_.push_back(*current_);
  }
  current_.reset();
  over(status, scoresSoFar(), std::nullopt);
}

bool Collaboration::cancel(std::optional<std::string_view> agentId) {
  if (over_) return false;
  if (agentId && *agentId != collab::kBuilder && *agentId != collab::kReviewer) return false;
  if (cancelRequested_) return true;
  cancelRequested_ = true;
  if (run_) {
    run_->cancel();  // built() or reviewed() ends it
  } else if (scoring_) {
    scoring_->cancel();
    endEarly(RaceStatus::Cancelled);
  } else if (!busy_) {
    endEarly(RaceStatus::Cancelled);
  }
  // Otherwise a worktree is being made: the collaboration ends when it is.
  return true;
}

void Collaboration::interrupt() {
  if (over_) return;
  if (run_) run_->cancel();
  if (scoring_) scoring_->cancel();
  endEarly(RaceStatus::Interrupted);
}

void Collaboration::over(RaceStatus status, std::optional<scoring::RaceScores> scores,
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
  finished.stopReason = stopReason_;
  emit(finished);
  over_ = true;
  spdlog::info("collaboration {} {}", id(), toString(status));
  auto done = std::move(finished_);
  if (done) done(finished);
}

}  // namespace hydra::core
