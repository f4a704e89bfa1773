#include "core/scoring/evaluator.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <fstream>
#include <spdlog/spdlog.h>
#include <sstream>

#include "core/merge/diff.h"
#include "core/process/process.h"
#include "core/scoring/parsers.h"
#include "core/util/atomic_file.h"

namespace hydra::core::scoring {

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// The worktree the baseline runs in is named like an agent's; this id cannot
// clash with a real agent's in practice and says what it is.
constexpr const char* kBaselineSubject = "_baseline";

std::uint64_t fnv1a(std::string_view data, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string baselineKey(const std::string& baseCommit, const ScoringConfig& c) {
  std::uint64_t h = 1469598103934665603ull;
  for (const std::string& part :
       {baseCommit, c.buildCommand.value_or(""), c.testCommand.value_or(""), c.lintCommand.value_or(""),
        c.testFormat.value_or(""), c.lintFormat.value_or(""), c.junitReport.value_or("")}) {
    h = fnv1a(part, h);
    h = fnv1a(std::string_view("\0", 1), h);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

struct Evaluator::Job {
  std::string subject;  // kBaselineSubject or an agent id
  bool isBaseline = false;
  AgentScore score;
  std::string worktree;
  std::optional<std::string> commit;
  bool started = false;
  std::shared_ptr<Process> current;  // the check running now
};

struct Evaluator::Evaluation {
  explicit Evaluation(asio::io_context& io) : work(io.get_executor()) {}
  // Keeps the io_context running while git work happens on the pool.
  asio::executor_work_guard<asio::io_context::executor_type> work;
  RaceRecord race;
  Done done;
  std::vector<Job> jobs;
  Baseline baseline;
  std::size_t remaining = 0;
  bool cancelled = false;
};

// The output of one check as it arrives: all of it to the log, its end to the parsers.
struct Evaluator::CheckRun {
  std::unique_ptr<AgentLog> log;
  std::string tail;
  std::size_t totalBytes = 0;
  std::size_t cap = 0;

  void add(OutputStream stream, const std::string& line) {
    if (log) log->write(stream, line);
    totalBytes += line.size() + 1;
    tail += line;
    tail += '\n';
    if (tail.size() > cap + cap / 4) tail.erase(0, tail.size() - cap);
  }
};

Evaluator::Evaluator(asio::io_context& io, fs::path repoRoot, ScoringConfig config, RaceStore& store,
                     WorktreeManager& worktrees, EvaluatorOptions options)
    : io_(io),
      repoRoot_(std::move(repoRoot)),
      config_(std::move(config)),
      store_(store),
      worktrees_(worktrees),
      options_(options) {}

Evaluator::~Evaluator() {
  *alive_ = false;
  for (auto& [id, ev] : evaluations_) {
    for (auto& job : ev->jobs) {
      if (job.current) job.current->cancel();
    }
  }
  pool_.join();
}

std::optional<Baseline> Evaluator::cachedBaseline(const std::string& baseCommit) const {
  fs::path file = cacheDir() / ("baseline-" + baselineKey(baseCommit, config_) + ".json");
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    Baseline b = json::value_to<Baseline>(json::parse(ss.str()));
    if (b.commit != baseCommit) return std::nullopt;
    b.fromCache = true;
    return b;
  } catch (const std::exception& e) {
    spdlog::warn("ignoring unreadable baseline cache {}: {}", file.string(), e.what());
    return std::nullopt;
  }
}

void Evaluator::saveBaseline(const Baseline& baseline) const {
  // A baseline cut short says nothing reliable about the base commit.
  for (const auto* c : {&baseline.checks.build, &baseline.checks.tests, &baseline.checks.lint}) {
    if (*c && ((*c)->timedOut || !(*c)->error.empty())) return;
  }
  try {
    fs::create_directories(cacheDir());
    fs::path file = cacheDir() / ("baseline-" + baselineKey(baseline.commit, config_) + ".json");
    writeFileAtomic(file, json::serialize(json::value_from(baseline)));
  } catch (const std::exception& e) {
    spdlog::warn("could not cache the baseline: {}", e.what());
  }
}

void Evaluator::evaluate(const RaceRecord& race, Done done) {
  auto ev = std::make_shared<Evaluation>(io_);
  ev->race = race;
  ev->done = std::move(done);
  ev->baseline.commit = race.baseCommit;

  // Without any command there is nothing to compare against the base commit.
  if (config_.buildCommand || config_.testCommand || config_.lintCommand) {
    Job base;
    base.subject = kBaselineSubject;
    base.isBaseline = true;
    ev->jobs.push_back(std::move(base));
  }
  for (const auto& agent : race.agents) {
    Job job;
    job.subject = agent.agentId;
    job.score.agentId = agent.agentId;
    job.score.agent = agent.agent;
    job.score.status = agent.status;
    job.score.durationMs = agent.durationMs;
    job.worktree = agent.worktree;
    job.commit = agent.commit;
    ev->jobs.push_back(std::move(job));
  }
  ev->remaining = ev->jobs.size();
  evaluations_[race.id] = ev;
  startJobs();
}

void Evaluator::cancel(const std::string& raceId) {
  auto it = evaluations_.find(raceId);
  if (it == evaluations_.end()) return;
  it->second->cancelled = true;
  for (auto& job : it->second->jobs) {
    if (job.current) job.current->cancel();
  }
}

void Evaluator::startJobs() {
  for (auto& [id, ev] : evaluations_) {
    if (ev->cancelled) continue;
    for (auto& job : ev->jobs) {
      if (runningJobs_ >= options_.parallelism) return;
      if (job.started) continue;
      job.started = true;
      ++runningJobs_;
      if (job.isBaseline) {
        runBaseline(ev, job);
      } else {
        runAgent(ev, job);
      }
    }
  }
}

void Evaluator::runBaseline(const std::shared_ptr<Evaluation>& ev, Job& job) {
  if (auto cached = cachedBaseline(ev->race.baseCommit)) {
    ev->baseline = *cached;
    spdlog::info("race {}: baseline of {} from the cache", ev->race.id, ev->race.baseCommit.substr(0, 12));
    asio::post(io_, [this, ev] { jobDone(ev); });
    return;
  }
  // Never the user's working tree, which may be dirty or busy: a worktree of its own.
  std::string raceId = ev->race.id;
  std::string base = ev->race.baseCommit;
  asio::post(pool_, [this, alive = alive_, ev, raceId, base, &job] {
    std::optional<Worktree> wt;
    std::string error;
    try {
      wt = worktrees_.create(kBaselineSubject, base, raceId);
    } catch (const std::exception& e) {
      error = e.what();
    }
    asio::post(io_, [this, alive, ev, wt, error, &job] {
      if (!*alive) return;
      if (!wt) {
        spdlog::error("race {}: could not create the baseline worktree: {}", ev->race.id, error);
        jobDone(ev);
        return;
      }
      job.worktree = wt->path.string();
      runChecks(ev, job, wt->path, [this, alive, ev, wt](CheckSet checks) {
        ev->baseline.checks = std::move(checks);
        if (!ev->cancelled) saveBaseline(ev->baseline);
        asio::post(pool_, [this, alive, ev, wt] {
          try {
            worktrees_.remove(*wt, true);
          } catch (const std::exception& e) {
            spdlog::warn("could not remove the baseline worktree {}: {}", wt->path.string(), e.what());
          }
          asio::post(io_, [this, alive, ev] {
            if (*alive) jobDone(ev);
          });
        });
      });
    });
  });
}

void Evaluator::runAgent(const std::shared_ptr<Evaluation>& ev, Job& job) {
  std::error_code ec;
  if (job.worktree.empty() || !fs::is_directory(job.worktree, ec)) {
    auto missing = [&](const std::optional<std::string>& command) -> std::optional<CheckResult> {
      if (!command) return std::nullopt;
      CheckResult r;
      r.command = *command;
      r.error = "the agent's worktree " + job.worktree + " does not exist";
      return r;
    };
    job.score.checks = CheckSet{missing(config_.buildCommand), missing(config_.testCommand),
                                missing(config_.lintCommand)};
    asio::post(io_, [this, ev] { jobDone(ev); });
    return;
  }
  runChecks(ev, job, job.worktree, [this, ev, &job](CheckSet checks) {
    job.score.checks = std::move(checks);
    jobDone(ev);
  });
}

void Evaluator::runChecks(const std::shared_ptr<Evaluation>& ev, Job& job, fs::path cwd,
                          std::function<void(CheckSet)> done) {
  auto set = std::make_shared<CheckSet>();
  auto skipped = [](const std::string& command) {
    CheckResult r;
    r.command = command;
    r.skipped = true;
    return r;
  };
  auto lint = [this, ev, &job, cwd, set, done, skipped] {
    if (!config_.lintCommand || ev->cancelled) return done(*set);
    if (set->build && !set->build->passed()) {
      set->lint = skipped(*config_.lintCommand);
      return done(*set);
    }
    runCheck(ev, job.subject, "lint", *config_.lintCommand, cwd, [set, done](CheckResult r) {
      set->lint = std::move(r);
      done(*set);
    });
  };
  auto tests = [this, ev, &job, cwd, set, lint, skipped] {
    if (!config_.testCommand || ev->cancelled) return lint();
    if (set->build && !set->build->passed()) {
      set->tests = skipped(*config_.testCommand);
      return lint();
    }
    runCheck(ev, job.subject, "tests", *config_.testCommand, cwd, [set, lint](CheckResult r) {
      set->tests = std::move(r);
      lint();
    });
  };
  if (!config_.buildCommand || ev->cancelled) return tests();
  runCheck(ev, job.subject, "build", *config_.buildCommand, cwd, [set, tests](CheckResult r) {
    set->build = std::move(r);
    tests();
  });
}

void Evaluator::runCheck(const std::shared_ptr<Evaluation>& ev, const std::string& subject, const std::string& check,
                         const std::string& command, const fs::path& cwd, std::function<void(CheckResult)> done) {
  auto run = std::make_shared<CheckRun>();
  run->cap = options_.parsedOutputBytes;
  try {
    run->log = store_.openCheckLog(ev->race.id, subject, check);
  } catch (const std::exception& e) {
    spdlog::warn("race {}: no log for the {} check of {}: {}", ev->race.id, check, subject, e.what());
  }

  ProcessSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", command};
  spec.cwd = cwd;
  // Test runners that watch by default (jest, vitest) run once under CI.
  spec.env = {{"CI", "true"}, {"HYDRA_CHECK", check}};
  spec.timeout = std::chrono::seconds(config_.timeoutPerCheckSeconds);
  spec.killGrace = std::chrono::seconds(2);

  Job* job = nullptr;
  for (auto& j : ev->jobs) {
    if (j.subject == subject) job = &j;
  }
  auto started = std::chrono::steady_clock::now();
  auto process = Process::start(
      io_, std::move(spec), [run](OutputStream stream, std::string line) { run->add(stream, line); },
      [this, alive = alive_, ev, job, run, check, command, cwd, started, done](const ProcessResult& result) {
        if (!*alive) return;
        if (job) job->current.reset();
        CheckResult r;
        r.command = command;
        r.exitCode = result.exitCode;
        r.signal = result.signal;
        r.timedOut = result.timedOut;
        r.error = result.spawnError;
        if (result.timedOut) r.error = "timed out after " + std::to_string(config_.timeoutPerCheckSeconds) + " s";
        if (result.cancelled) r.error = "cancelled";
        r.durationMs = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
                           .count();
        r.outputTruncated = run->tail.size() > options_.recordedOutputBytes || run->totalBytes > run->tail.size();
        r.output = store_.redactor().redact(run->tail.size() > options_.recordedOutputBytes
                                                ? run->tail.substr(run->tail.size() - options_.recordedOutputBytes)
                                                : run->tail);
        if (check == "tests") {
          std::optional<TestParse> parsed;
          if (config_.junitReport) {
            std::string why;
            parsed = parseJUnitReport(cwd / *config_.junitReport, &why);
            if (!parsed) spdlog::info("no JUnit report for {}: {}", cwd.string(), why);
          } else {
            parsed = parseTestOutput(run->tail, config_.testFormat);
          }
          if (parsed) {
            r.tests = parsed->counts;
            r.format = parsed->format;
          }
        } else if (check == "lint") {
          if (auto parsed = parseLintOutput(run->tail, config_.lintFormat)) {
            r.lint = parsed->counts;
            r.format = parsed->format;
          }
        }
        if (run->log) run->log->sync();
        done(std::move(r));
      });
  if (job) job->current = process;
}

void Evaluator::jobDone(const std::shared_ptr<Evaluation>& ev) {
  --runningJobs_;
  if (--ev->remaining == 0) finish(ev);
  startJobs();
}

void Evaluator::finish(const std::shared_ptr<Evaluation>& ev) {
  if (ev->cancelled) {
    evaluations_.erase(ev->race.id);
    return;
  }
  // Diff sizes come from libgit2: base commit against each agent's result commit.
  asio::post(pool_, [this, alive = alive_, ev] {
    std::vector<DiffStats> diffs;
    for (const auto& job : ev->jobs) {
      DiffStats d;
      if (!job.isBaseline && job.commit) {
        try {
          auto summary = merge::diffCommits(repoRoot_, ev->race.baseCommit, *job.commit);
          d = DiffStats{summary.additions, summary.deletions, static_cast<int>(summary.files.size())};
        } catch (const std::exception& e) {
          spdlog::warn("race {}: diff of {} failed: {}", ev->race.id, job.subject, e.what());
        }
      }
      diffs.push_back(d);
    }
    asio::post(io_, [this, alive, ev, diffs = std::move(diffs)] {
      if (!*alive) return;
      std::vector<AgentScore> agents;
      for (std::size_t i = 0; i < ev->jobs.size(); ++i) {
        if (ev->jobs[i].isBaseline) continue;
        AgentScore s = ev->jobs[i].score;
        s.diff = diffs[i];
        agents.push_back(std::move(s));
      }
      RaceScores scores = rankAgents(ev->race.id, std::move(agents), ev->baseline, config_);
      try {
        writeFileAtomic(store_.scoresPath(ev->race.id), json::serialize(json::value_from(scores)));
      } catch (const std::exception& e) {
        spdlog::error("race {}: saving scores failed: {}", ev->race.id, e.what());
      }
      evaluations_.erase(ev->race.id);
      ev->done(std::move(scores));
    });
  });
}

}  // namespace hydra::core::scoring
