#include "core/checks/result_scoring.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <map>
#include <thread>

#include "core/checks/added_secrets.h"
#include "core/checks/build_script.h"
#include "core/checks/protected_paths.h"
#include "core/checks/runner_shadows.h"
#include "core/merge/diff.h"

namespace hydra::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// The worktree the base commit is checked in is named like an agent's; this id
// cannot clash with a real agent's in practice and says what it is.
constexpr const char* kBaselineWorktree = "_baseline";
// A result's checks run in "_check-<subject>", a worktree of its commit.
constexpr const char* kCheckWorktreePrefix = "_check-";
// The build with the base's build scripts runs in "_basebuild-<subject>".
constexpr const char* kBaseBuildWorktreePrefix = "_basebuild-";
// Its log: "<subject>.build-base-scripts.log".
constexpr const char* kBaseBuildCheckSuffix = "-base-scripts";
// The subject of the base commit's checks in logs and events.
constexpr const char* kBaselineSubject = "baseline";

bool anyCommand(const ScoringConfig& c) { return c.buildCommand || c.testCommand || c.lintCommand; }

// A worktree's name may not hold the '@' of an iteration's id.
std::string worktreeName(const std::string& subject, const char* prefix = kCheckWorktreePrefix) {
  std::string name = prefix + subject;
  std::replace(name.begin(), name.end(), '@', '-');
  return name;
}

}  // namespace

struct ResultScoring::Job {
  std::string subject;  // a subject's id, or kBaselineSubject
  bool baseline = false;
  bool started = false;
  bool done = false;
  std::shared_ptr<CheckSetRun> run;
  scoring::CheckSet checks;
  std::vector<std::string> protectedChanges;  // [scoring] protected_paths it changed
  std::vector<std::string> runnerShadows;     // checks/runner_shadows.h
  std::vector<std::string> addedSecrets;      // checks/added_secrets.h
  std::vector<std::string> restored;          // put back as the base has them before its checks
  // The build scripts it changed that its checks ran with (checks/build_script.h),
  // and the files it added or removed that the change follows.
  std::vector<std::string> buildScripts;
  std::vector<std::string> buildScriptFollows;
  std::optional<scoring::BuildScriptCheck> buildScript;
};

ResultScoring::ResultScoring(RunContext context, BaselineCache& baselines, ScoringSpec spec, Done done)
    : ctx_(std::move(context)), baselines_(baselines), spec_(std::move(spec)), done_(std::move(done)) {}

std::shared_ptr<ResultScoring> ResultScoring::start(RunContext context, BaselineCache& baselines, ScoringSpec spec,
                                                    Done done) {
  std::shared_ptr<ResultScoring> self(
      new ResultScoring(std::move(context), baselines, std::move(spec), std::move(done)));
  self->baseline_.commit = self->spec_.baseCommit;
  // Without any command there is nothing to compare against the base commit.
  if (anyCommand(self->spec_.config->scoring)) {
    auto job = std::make_shared<Job>();
    job->subject = kBaselineSubject;
    job->baseline = true;
    self->jobs_.push_back(job);
  }
  for (const auto& subject : self->spec_.subjects) {
    // A result too large to commit has nothing of its own to check.
    if (subject.result.tooLarge) continue;
    auto job = std::make_shared<Job>();
    job->subject = subject.id;
    self->jobs_.push_back(job);
  }
  self->left_ = self->jobs_.size();
  if (self->left_ == 0) {
    self->rank();
  } else {
    self->startJobs();
  }
  return self;
}

void ResultScoring::cancel() {
  cancelled_ = true;
  for (auto& job : jobs_) {
    if (job->run) job->run->cancel();
  }
}

bool ResultScoring::quiet() const {
  for (const auto& job : jobs_) {
    if (job->started && !job->done && job->run) return false;
  }
  return true;
}

std::vector<pid_t> ResultScoring::processGroups() const {
  std::vector<pid_t> groups;
  for (const auto& job : jobs_) {
    if (job->run) {
      if (auto g = job->run->processGroup()) groups.push_back(*g);
    }
  }
  return groups;
}

void ResultScoring::startJobs() {
  const std::size_t parallel = std::max(1u, std::thread::hardware_concurrency());
  for (auto& job : jobs_) {
    if (running_ >= parallel || cancelled_) return;
    if (job->started) continue;
    job->started = true;
    ++running_;
    if (job->baseline) {
      startBaselineJob(job);
    } else {
      startSubjectJob(job);
    }
  }
}

void ResultScoring::startSubjectJob(const std::shared_ptr<Job>& job) {
  // What a merge would take: the result's commit, checked out afresh in a
  // worktree of its own. Its live worktree may hold files it did not commit
  // (ignored ones among them), or what another agent wrote there after it
  // finished. A result without a commit changed nothing: the base.
  auto subject = std::find_if(spec_.subjects.begin(), spec_.subjects.end(),
                              [&](const ScoringSubject& s) { return s.id == job->subject; });
  const std::string commit =
      subject != spec_.subjects.end() && subject->result.commit ? *subject->result.commit : spec_.baseCommit;
  auto self = shared_from_this();
  if (!anyCommand(spec_.config->scoring)) {
    // No check to run: no checkout to make. Its protected files are still named.
    asio::post(ctx_.pool, [self, job, commit] {
      try {
        self->guardProtectedPaths(*job, commit, std::nullopt);
      } catch (const std::exception& e) {
        spdlog::error("race {}: {}: could not compare its protected files: {}", self->spec_.raceId, job->subject,
                      e.what());
      }
      asio::post(self->ctx_.io, [self, job] {
        job->done = true;
        self->jobDone();
      });
    });
    return;
  }
  asio::post(ctx_.pool, [self, job, commit] {
    std::optional<Worktree> wt;
    std::string error;
    try {
      // Fresh, never from the pool: a previous agent's kept folders must not sway a score.
      wt = self->ctx_.worktrees.create(worktreeName(job->subject), commit, self->spec_.raceId, false);
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
    asio::post(self->ctx_.io, [self, job, wt, error, commit] {
      if (!error.empty()) {
        spdlog::error("race {}: {}: {}", self->spec_.raceId, job->subject, error);
        const ScoringConfig& config = self->spec_.config->scoring;
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
          self->removeWorktree(*wt);
        } else {
          self->jobDone();
        }
        return;
      }
      if (self->cancelled_) {
        self->removeWorktree(*wt);
        return;
      }
      self->runChecks(job, wt->path, [self, job, wt, commit] {
        // Its build passed, with build scripts of its own: does it with the base's?
        const bool built = job->checks.build && job->checks.build->passed();
        if (!built || job->buildScripts.empty() || self->cancelled_) {
          self->removeWorktree(*wt);
          return;
        }
        self->removeWorktree(*wt, {}, false);
        self->startBaseScriptBuild(job, commit);
      });
    });
  });
}

void ResultScoring::startBaseScriptBuild(const std::shared_ptr<Job>& job, const std::string& commit) {
  // A fresh checkout: what the agent's own build left behind (outputs a
  // neutered script only touched) must not make the base's look up to date.
  auto self = shared_from_this();
  job->done = false;  // a check runs again
  asio::post(ctx_.pool, [self, job, commit] {
    std::optional<Worktree> wt;
    std::string error;
    try {
      wt = self->ctx_.worktrees.create(worktreeName(job->subject, kBaseBuildWorktreePrefix), commit,
                                       self->spec_.raceId, false);
      std::vector<std::string> restored = job->restored;
      restored.insert(restored.end(), job->buildScripts.begin(), job->buildScripts.end());
      for (const std::string& line : checks::restoreProtected(self->spec_.repoRoot, self->spec_.baseCommit, wt->path,
                                                              restored)) {
        spdlog::info("race {}: {}'s build with the base's build scripts: {}", self->spec_.raceId, job->subject, line);
      }
    } catch (const std::exception& e) {
      error = "could not check it out with the base's build scripts: " + std::string(e.what());
    }
    asio::post(self->ctx_.io, [self, job, wt, error] {
      auto record = [job](scoring::CheckResult build) {
        job->buildScript = scoring::BuildScriptCheck{job->buildScripts, std::move(build), job->buildScriptFollows};
      };
      if (!error.empty() || self->cancelled_) {
        job->done = true;
        if (!error.empty()) {
          spdlog::error("race {}: {}: {}", self->spec_.raceId, job->subject, error);
          scoring::CheckResult failed;
          failed.command = *self->spec_.config->scoring.buildCommand;
          failed.error = error;
          record(std::move(failed));
        }
        if (wt) {
          self->removeWorktree(*wt);
        } else {
          self->jobDone();
        }
        return;
      }
      CheckSetSpec spec;
      spec.raceId = self->spec_.raceId;
      spec.subject = job->subject;
      spec.checkout = wt->path;
      spec.config = self->spec_.config->scoring;
      spec.config.testCommand.reset();
      spec.config.lintCommand.reset();
      spec.sandbox = self->ctx_.sandbox;
      spec.executor = self->ctx_.executor;
      spec.checkNameSuffix = kBaseBuildCheckSuffix;
      job->run = CheckSetRun::start(self->ctx_.io, self->ctx_.publish, self->ctx_.redactor, std::move(spec),
                                    [self, job, wt, record](scoring::CheckSet checks) {
                                      if (checks.build) record(std::move(*checks.build));
                                      job->done = true;
                                      self->removeWorktree(*wt);
                                    });
    });
  });
}

void ResultScoring::startBaselineJob(const std::shared_ptr<Job>& job) {
  // The base commit: from the cache, or checked in a worktree of its own
  // (never the user's working tree, which may be dirty or busy).
  auto self = shared_from_this();
  asio::post(ctx_.pool, [self, job] {
    const ScoringConfig& config = self->spec_.config->scoring;
    const std::string& base = self->spec_.baseCommit;
    if (auto cached = self->baselines_.load(base, config)) {
      asio::post(self->ctx_.io, [self, job, cached = *cached] {
        self->baseline_ = cached;
        job->done = true;
        spdlog::info("race {}: baseline of {} from the cache", self->spec_.raceId, self->baseline_.commit.substr(0, 12));
        self->jobDone();
      });
      return;
    }
    std::optional<Worktree> wt;
    std::string error;
    try {
      wt = self->ctx_.worktrees.create(kBaselineWorktree, base, self->spec_.raceId, false);
    } catch (const std::exception& e) {
      error = e.what();
    }
    asio::post(self->ctx_.io, [self, job, wt, error] {
      if (!wt) {
        spdlog::error("race {}: could not create the baseline worktree: {}", self->spec_.raceId, error);
        job->done = true;
        self->jobDone();
        return;
      }
      if (self->cancelled_) {
        self->removeWorktree(*wt);
        return;
      }
      self->runChecks(job, wt->path, [self, job, wt] {
        self->baseline_.checks = job->checks;
        const bool keep = !self->cancelled_;
        self->removeWorktree(*wt, [self, keep] {
          if (keep) self->baselines_.save(self->baseline_, self->spec_.config->scoring);
        });
      });
    });
  });
}

void ResultScoring::runChecks(const std::shared_ptr<Job>& job, const fs::path& checkout, std::function<void()> then) {
  CheckSetSpec spec;
  spec.raceId = spec_.raceId;
  spec.subject = job->subject;
  spec.checkout = checkout;
  spec.config = spec_.config->scoring;
  spec.sandbox = ctx_.sandbox;
  spec.executor = ctx_.executor;
  job->run = CheckSetRun::start(ctx_.io, ctx_.publish, ctx_.redactor, std::move(spec),
                                [job, then = std::move(then)](scoring::CheckSet checks) {
                                  job->checks = std::move(checks);
                                  job->done = true;
                                  then();
                                });
}

void ResultScoring::guardProtectedPaths(Job& job, const std::string& commit, const std::optional<fs::path>& checkout) {
  const ScoringConfig& config = spec_.config->scoring;
  if (commit == spec_.baseCommit) return;
  const merge::DiffSummary diff = merge::diffCommits(spec_.repoRoot, spec_.baseCommit, commit);
  job.protectedChanges =
      checks::protectedChanges(diff.files, config.protectedPaths.value_or(checks::defaultProtectedPathsFor(
                                               config.testCommand, config.lintCommand)));
  // The runner the user configured judges, never one the agent supplied:
  // its shadows are protected whatever the paths and taken out whatever the mode.
  job.runnerShadows = checks::runnerShadows(diff.files, checks::rootNames(spec_.repoRoot, spec_.baseCommit),
                                            checks::shadowableModules());
  // A secret it wrote into a file would be committed and shown by every diff.
  if (ctx_.redactor) {
    job.addedSecrets = checks::addedSecrets(merge::unifiedPatch(spec_.repoRoot, spec_.baseCommit, commit), *ctx_.redactor);
    if (!job.addedSecrets.empty()) {
      spdlog::warn("race {}: {} adds what looks like a secret in {} places", spec_.raceId, job.subject, job.addedSecrets.size());
    }
  }
  std::vector<std::string> restored = job.runnerShadows;
  if (config.protectedMode == "restore") {
    restored.insert(restored.end(), job.protectedChanges.begin(), job.protectedChanges.end());
  }
  std::sort(restored.begin(), restored.end());
  restored.erase(std::unique(restored.begin(), restored.end()), restored.end());
  job.restored = restored;
  // The build scripts it changed and its checks still run with its own
  // versions of: its build runs again with the base's (startBaseScriptBuild).
  if (config.buildCommand) {
    const std::vector<std::string> patterns =
        checks::buildScriptPatterns(*config.buildCommand, spec_.repoRoot, spec_.baseCommit);
    for (std::string& path : checks::protectedChanges(diff.files, patterns)) {
      if (!std::binary_search(restored.begin(), restored.end(), path)) job.buildScripts.push_back(std::move(path));
    }
    if (!job.buildScripts.empty()) {
      job.buildScriptFollows =
          checks::filesTheScriptChangeFollows(spec_.repoRoot, spec_.baseCommit, commit, diff.files, job.buildScripts);
      spdlog::info("race {}: {} changed build scripts: {}", spec_.raceId, job.subject, job.buildScripts.size());
    }
  }
  if (restored.empty() && job.protectedChanges.empty()) return;
  spdlog::info("race {}: {} changed protected files: {}, added runner shadows: {}", spec_.raceId, job.subject,
               job.protectedChanges.size(), job.runnerShadows.size());
  if (!checkout) return;
  for (const std::string& line : checks::restoreProtected(spec_.repoRoot, spec_.baseCommit, *checkout, restored)) {
    spdlog::info("race {}: {}'s checks: {}", spec_.raceId, job.subject, line);
  }
}

void ResultScoring::removeWorktree(const Worktree& wt, std::function<void()> first, bool finishesJob) {
  auto self = shared_from_this();
  asio::post(ctx_.pool, [self, wt, first = std::move(first), finishesJob] {
    if (first) first();
    try {
      self->ctx_.worktrees.remove(wt, true);
    } catch (const std::exception& e) {
      spdlog::warn("could not remove the worktree {} the checks ran in: {}", wt.path.string(), e.what());
    }
    if (finishesJob) asio::post(self->ctx_.io, [self] { self->jobDone(); });
  });
}

void ResultScoring::jobDone() {
  --running_;
  if (cancelled_) return;
  if (--left_ == 0) {
    rank();
    return;
  }
  startJobs();
}

void ResultScoring::rank() {
  // Diff sizes come from libgit2: the base commit against each result's commit.
  auto self = shared_from_this();
  asio::post(ctx_.pool, [self] {
    std::map<std::string, scoring::DiffStats> diffs;
    for (const auto& subject : self->spec_.subjects) {
      scoring::DiffStats d;
      if (subject.result.commit) {
        try {
          auto summary = merge::diffCommits(self->spec_.repoRoot, self->spec_.baseCommit, *subject.result.commit);
          d = scoring::DiffStats{summary.additions, summary.deletions, static_cast<int>(summary.files.size())};
        } catch (const std::exception& e) {
          spdlog::warn("race {}: diff of {} failed: {}", self->spec_.raceId, subject.id, e.what());
        }
      }
      diffs[subject.id] = d;
    }
    asio::post(self->ctx_.io, [self, diffs = std::move(diffs)] {
      if (self->cancelled_) return;
      std::vector<scoring::AgentScore> scored;
      for (const auto& subject : self->spec_.subjects) {
        const AgentFinished& result = subject.result;
        scoring::AgentScore s;
        s.agentId = subject.id;
        s.agent = subject.agent;
        s.status = result.status;
        s.durationMs = result.durationMs;
        s.escaped = !result.escapes.empty();
        s.overLimit = result.tooLarge.value_or(result.overLimit.value_or(""));
        s.deniedToolCalls = result.deniedToolCalls;
        s.diff = diffs.at(subject.id);
        for (const auto& job : self->jobs_) {
          if (job->baseline || job->subject != subject.id) continue;
          s.checks = job->checks;
          s.protectedChanges = job->protectedChanges;
          if (!s.protectedChanges.empty()) s.protectedMode = self->spec_.config->scoring.protectedMode;
          s.runnerShadows = job->runnerShadows;
          s.addedSecrets = job->addedSecrets;
          s.buildScript = job->buildScript;
        }
        scored.push_back(std::move(s));
      }
      auto done = std::move(self->done_);
      if (done) {
        done(scoring::rankAgents(self->spec_.raceId, std::move(scored), self->baseline_,
                                 self->spec_.config->scoring));
      }
    });
  });
}

}  // namespace hydra::core
