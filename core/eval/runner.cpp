#include "core/eval/runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <set>
#include <tuple>

#include "core/eval/stats.h"
#include "core/git/git.h"
#include "core/guard/records.h"
#include "core/util/atomic_file.h"
#include "core/util/timestamp.h"

namespace hydra::core::eval {

namespace fs = std::filesystem;

namespace {

// [scoring] as the case wants it: its own commands where it names them.
ScoringConfig scoringFor(const ScoringConfig& base, const EvalCase& c) {
  ScoringConfig out = base;
  if (c.buildCommand) out.buildCommand = c.buildCommand;
  if (c.testCommand) out.testCommand = c.testCommand;
  if (c.lintCommand) out.lintCommand = c.lintCommand;
  return out;
}

// The first of `names` that did not pass in `tests` (by its name, or the end
// of a runner's full name: "test_add" matches "tests/test_calc.py::test_add").
std::optional<std::string> firstNotPassing(const std::vector<std::string>& names, const scoring::CheckResult* tests) {
  for (const auto& name : names) {
    bool passed = false;
    if (tests) {
      for (const auto& [full, outcome] : tests->testCases) {
        const bool same = full == name || (full.size() > name.size() + 2 &&
                                           full.compare(full.size() - name.size(), name.size(), name) == 0 &&
                                           full.compare(full.size() - name.size() - 2, 2, "::") == 0);
        if (same && outcome == scoring::TestOutcome::Passed) passed = true;
      }
    }
    if (!passed) return name;
  }
  return std::nullopt;
}

// 20261126T031500: when a run started, for its report's name.
std::string fileStamp() {
  std::string stamp = formatTimestamp(recordNow()).substr(0, 19);
  std::string out;
  for (char c : stamp) {
    if (c != '-' && c != ':') out += c;
  }
  return out;
}

// A hidden file that every sample's checkout already holds: the eval set's
// folder is inside the repository and the base commit has the file there.
// The hidden file and the path it has in the base commit.
std::optional<std::pair<std::string, std::string>> hiddenFileAtBase(git_repository* repo, const git_oid& base,
                                                                    const EvalSet& set, const EvalCase& c,
                                                                    const fs::path& root) {
  std::error_code ec;
  const fs::path folder = fs::weakly_canonical(set.folder(), ec);
  const fs::path top = fs::weakly_canonical(root, ec);
  const fs::path inside = folder.lexically_relative(top);
  if (inside.empty() || *inside.begin() == "..") return std::nullopt;
  git::CommitPtr commit = git::lookupCommit(repo, base);
  git_tree* rawTree = nullptr;
  git::check(git_commit_tree(&rawTree, commit.get()), "reading the tree of a case's base");
  git::TreePtr tree(rawTree);
  for (const auto& hidden : c.hiddenFiles) {
    const std::string path = (inside / hidden).lexically_normal().generic_string();
    git_tree_entry* entry = nullptr;
    if (git_tree_entry_bypath(&entry, tree.get(), path.c_str()) == 0) {
      git_tree_entry_free(entry);
      return std::pair(hidden, path);
    }
  }
  return std::nullopt;
}

fs::path underRoot(const fs::path& path, const fs::path& root) {
  return path.is_absolute() ? path : root / path;
}

}  // namespace

RunOptions resolve(const RunRequest& request, const fs::path& root) {
  RunOptions run;
  run.set = loadEvalSet(underRoot(request.set, root));
  const EvalSet& set = run.set;
  run.agents = request.agents.empty() ? set.agents : request.agents;
  run.samples = request.samples.value_or(set.samples);
  run.passK = request.passK.empty() ? set.passK : request.passK;
  run.hydraVersion = request.hydraVersion;
  run.executor = request.executor;
  if (request.resume) {
    const fs::path resume = underRoot(*request.resume, root);
    try {
      run.resumeFrom = readReportFile(resume);
    } catch (const std::runtime_error& e) {
      throw WorkspaceError::invalidRequest(e.what());
    }
    if (run.resumeFrom->name != set.name) {
      throw WorkspaceError::invalidRequest(resume.string() + " is a report of eval set '" + run.resumeFrom->name +
                                           "', not '" + set.name + "'");
    }
  }
  run.out = request.out      ? underRoot(*request.out, root)
            : request.resume ? underRoot(*request.resume, root)
                             : root / ".hydra" / guard::kEvalReportsFolder / (set.name + "-" + fileStamp() + ".json");
  return run;
}

std::string evalId(const RunOptions& options) { return options.out.stem().string(); }

EvalRunner::EvalRunner(Workspace& workspace, RunOptions options)
    : workspace_(workspace), options_(std::move(options)) {}

int EvalRunner::solved() const {
  return static_cast<int>(
      std::count_if(report_.samples.begin(), report_.samples.end(), [](const Sample& s) { return s.solved; }));
}

std::shared_ptr<EvalRunner> EvalRunner::prepare(Workspace& workspace, RunOptions options, const WorkspaceFor& others) {
  if (options.agents.empty()) {
    throw WorkspaceError::invalidRequest("no agents: name them with --agents or in the eval set's [eval] agents");
  }
  std::shared_ptr<EvalRunner> self(new EvalRunner(workspace, std::move(options)));
  RunOptions& o = self->options_;
  Report& r = self->report_;
  r.name = o.set.name;
  r.hydraVersion = o.hydraVersion;
  r.evalSetHash = evalSetHash(o.set);
  r.startedAt = formatTimestamp(recordNow());
  r.passK = o.passK;
  // Each case runs in its repository: the workspace's, or the one it names.
  std::error_code ec;
  const fs::path mainRoot = fs::weakly_canonical(workspace.root(), ec);
  for (const auto& c : o.set.cases) {
    Workspace* ws = &workspace;
    if (c.repo) {
      const fs::path repo = fs::weakly_canonical(
          fs::path(*c.repo).is_absolute() ? fs::path(*c.repo) : o.set.folder() / *c.repo, ec);
      if (repo != mainRoot) {
        if (!others) {
          throw WorkspaceError::invalidRequest("case '" + c.id + "' runs in " + repo.string() +
                                               ", another repository than " + mainRoot.string());
        }
        ws = &others(repo);
        if (fs::weakly_canonical(ws->root(), ec) != repo) {
          throw WorkspaceError::invalidRequest("case '" + c.id + "': its repo " + repo.string() +
                                               " is not a repository's top folder (that is " + ws->root().string() + ")");
        }
      }
    }
    self->workspaces_[c.id] = ws;
  }
  for (const auto& c : o.set.cases) {
    Workspace& ws = *self->workspaces_.at(c.id);
    auto repo = git::openRepository(ws.root());
    git_oid base{};
    try {
      base = git::resolveCommit(repo.get(), c.base);
    } catch (const git::GitError& e) {
      throw WorkspaceError::invalidRequest("case '" + c.id + "': cannot use '" + c.base + "' as the base in " +
                                           ws.root().string() + ": " + e.what());
    }
    r.baseCommits[c.id] = git::toHex(base);
    if (auto visible = hiddenFileAtBase(repo.get(), base, o.set, c, ws.root())) {
      throw WorkspaceError::invalidRequest(
          "case '" + c.id + "': its hidden file " + visible->first + " is committed at its base " +
          r.baseCommits[c.id].substr(0, 12) + " as " + visible->second +
          ", where every agent can read it; keep the eval set out of the commits its cases start from");
    }
  }
  // Every agent is known and installed before anything runs, in every
  // repository the cases use (each has its own hydra.toml).
  std::set<Workspace*> used;
  for (const auto& [id, ws] : self->workspaces_) used.insert(ws);
  for (Workspace* ws : used) {
    const std::vector<AgentInfo> infos = ws->agents();
    std::vector<std::string> known;
    for (const auto& info : infos) known.push_back(info.name);
    for (const auto& name : o.agents) {
      auto info = std::find_if(infos.begin(), infos.end(), [&](const AgentInfo& i) { return i.name == name; });
      if (info == infos.end()) throw WorkspaceError::unknownAgentName(name, known);
      if (!info->available) throw WorkspaceError::agentUnavailable(name, info->problem.value_or("not installed"));
      if (ws == &workspace || !r.agentVersions.contains(name)) r.agentVersions[name] = info->version.value_or("");
    }
  }
  // What a resumed run already has stays; the rest is to do, case by case.
  std::set<std::tuple<std::string, std::string, int>> already;
  if (o.resumeFrom) {
    for (const auto& s : o.resumeFrom->samples) {
      if (!o.set.findCase(s.caseId) || s.index >= o.samples ||
          std::find(o.agents.begin(), o.agents.end(), s.agent) == o.agents.end()) {
        continue;
      }
      if (already.insert({s.caseId, s.agent, s.index}).second) r.samples.push_back(s);
    }
    if (!o.resumeFrom->startedAt.empty()) r.startedAt = o.resumeFrom->startedAt;
  }
  for (const auto& c : o.set.cases) {
    for (int i = 0; i < o.samples; ++i) {
      for (const auto& agent : o.agents) {
        ++self->total_;
        if (!already.contains({c.id, agent, i})) self->jobs_.push_back(Job{&c, agent, i, ""});
      }
    }
  }
  self->limit_ = o.set.maxConcurrentAgents.value_or(workspace.config()->general.maxConcurrentAgents);
  return self;
}

void EvalRunner::run(OnSample onSample, Done done) {
  onSample_ = std::move(onSample);
  done_ = std::move(done);
  write();
  next();
  finishIfDone();
}

void EvalRunner::next() {
  while (!cancelled_ && nextJob_ < jobs_.size() &&
         running_.size() + starting_ + busy_ < static_cast<std::size_t>(std::max(1, limit_))) {
    launch(nextJob_++);
  }
}

void EvalRunner::launch(std::size_t index) {
  Job& job = jobs_[index];
  ++starting_;
  RaceRequest request;
  request.task = job.evalCase->task;
  request.agents = {job.agent};
  request.baseRef = report_.baseCommits.at(job.evalCase->id);
  request.kind = RunKind::Sample;
  request.env = {{"HYDRA_CASE_ID", job.evalCase->id}, {"HYDRA_SAMPLE", std::to_string(job.index)}};
  request.timeoutSeconds = options_.set.timeoutSeconds;
  request.executor = options_.executor;
  request.scoring = scoringFor(workspaces_.at(job.evalCase->id)->config()->scoring, *job.evalCase);
  std::weak_ptr<EvalRunner> weak = shared_from_this();
  Workspace& ws = *workspaces_.at(job.evalCase->id);
  ws.startRace(
      std::move(request),
      [weak, index](RaceSummary started) {
        auto self = weak.lock();
        if (!self) return;
        --self->starting_;
        self->jobs_[index].raceId = started.raceId;
        Workspace* ws = self->workspaces_.at(self->jobs_[index].evalCase->id);
        self->running_[{ws, started.raceId}] = index;
        if (self->cancelled_) ws->cancel(started.raceId);
      },
      [weak, index](WorkspaceError error) {
        auto self = weak.lock();
        if (!self) return;
        --self->starting_;
        const Job& job = self->jobs_[index];
        Sample s;
        s.caseId = job.evalCase->id;
        s.agent = job.agent;
        s.index = job.index;
        s.status = "failed";
        s.error = error.what();
        self->record(std::move(s));
        self->next();
        self->finishIfDone();
      });
}

void EvalRunner::handle(const RaceEvent& event) { handle(workspace_, event); }

void EvalRunner::handle(const Workspace& from, const RaceEvent& event) {
  const auto* finished = std::get_if<RaceFinished>(&event.body);
  if (!finished) return;
  auto it = running_.find({&from, finished->raceId});
  if (it == running_.end()) return;
  std::size_t index = it->second;
  running_.erase(it);
  ++busy_;
  raceOver(index, *finished);
}

void EvalRunner::raceOver(std::size_t index, const RaceFinished& finished) {
  const Job& job = jobs_[index];
  if (cancelled_ || finished.status == RaceStatus::Cancelled || finished.status == RaceStatus::Interrupted) {
    --busy_;  // a sample that did not run to its end is not a sample
    finishIfDone();
    return;
  }
  AgentRecord agent;
  try {
    RaceRecord race = workspaces_.at(job.evalCase->id)->record(job.raceId);
    if (!race.agents.empty()) agent = race.agents.front();
  } catch (const std::exception& e) {
    spdlog::warn("eval {}: the record of sample race {} is unreadable: {}", options_.set.name, job.raceId, e.what());
  }
  if (!agent.commit || agent.status != AgentStatus::Completed) {
    verified(index, finished, agent, std::nullopt);
    return;
  }
  VerifyRequest verify;
  verify.raceId = job.raceId;
  verify.agentId = agent.agentId;
  verify.command = job.evalCase->verifyCommand;
  verify.filesFrom = options_.set.folder();
  verify.files = job.evalCase->hiddenFiles;
  verify.timeoutSeconds = options_.set.timeoutSeconds;
  std::weak_ptr<EvalRunner> weak = shared_from_this();
  workspaces_.at(job.evalCase->id)->startVerify(std::move(verify), [weak, index, finished, agent](scoring::CheckResult result) {
    if (auto self = weak.lock()) self->verified(index, finished, agent, std::move(result));
  });
}

void EvalRunner::verified(std::size_t index, const RaceFinished& finished, const AgentRecord& agent,
                          std::optional<scoring::CheckResult> verification) {
  --busy_;
  const Job& job = jobs_[index];
  Sample s;
  s.caseId = job.evalCase->id;
  s.agent = job.agent;
  s.index = job.index;
  s.status = std::string(toString(agent.status));
  s.commit = agent.commit;
  s.latencyMs = agent.durationMs.value_or(0);
  s.error = agent.error;
  if (agent.usage) {
    s.costUsd = agent.usage->costUsd;
    s.inputTokens = agent.usage->inputTokens;
    s.outputTokens = agent.usage->outputTokens;
  }
  const scoring::AgentScore* score =
      finished.scores && !finished.scores->rankings.empty() ? &finished.scores->rankings.front() : nullptr;
  if (score) {
    s.score = score->total;
    const auto& checks = score->checks;
    s.builds = !checks.build || checks.build->passed();
    if (checks.tests && checks.tests->tests) {
      s.testsPassed = checks.tests->tests->passed;
      s.testsFailed = checks.tests->tests->failed;
    }
    if (checks.lint && checks.lint->lint) s.lintWarnings = checks.lint->lint->warnings;
  } else {
    s.builds = agent.status == AgentStatus::Completed;
  }
  if (verification) {
    s.solved = verification->passed();
    // The verification's tests count where the scoring had none to count.
    if (s.testsPassed + s.testsFailed == 0 && verification->tests) {
      s.testsPassed = verification->tests->passed;
      s.testsFailed = verification->tests->failed;
    }
    if (!verification->error.empty()) s.error = "verification could not run: " + verification->error;
    s.verifyOutput = verification->output;
  }
  // fail_to_pass and pass_to_pass: named tests of the scoring's test run must pass too.
  if (s.solved) {
    const scoring::CheckResult* tests = score && score->checks.tests ? &*score->checks.tests : nullptr;
    const EvalCase& c = *job.evalCase;
    if (auto missing = firstNotPassing(c.failToPass, tests)) {
      s.solved = false;
      s.error = "fail_to_pass: " + *missing + " did not pass";
    } else if (auto broken = firstNotPassing(c.passToPass, tests)) {
      s.solved = false;
      s.error = "pass_to_pass: " + *broken + " did not pass";
    }
  }
  s.forgetestScore = forgetestScore(s.builds && agent.status == AgentStatus::Completed, s.testsPassed,
                                    s.testsFailed, s.lintWarnings);
  // A result that could never win a race (it changed nothing, failed, timed
  // out, escaped) solves nothing and scores nothing, whatever its checks say:
  // a base that already builds and passes must not earn "changed nothing" 83.
  if (score && !score->eligible()) {
    s.solved = false;
    s.score = 0;
    s.forgetestScore = 0;
    if (!s.error) s.error = score->ineligible;
  }
  record(std::move(s));
  next();
  finishIfDone();
}

void EvalRunner::record(Sample sample) {
  report_.samples.push_back(sample);
  // In the set's order whatever order they finished in: case, sample, agent.
  auto rank = [this](const Sample& s) {
    std::size_t c = 0;
    while (c < options_.set.cases.size() && options_.set.cases[c].id != s.caseId) ++c;
    auto a = std::find(options_.agents.begin(), options_.agents.end(), s.agent) - options_.agents.begin();
    return std::tuple(c, s.index, a);
  };
  std::stable_sort(report_.samples.begin(), report_.samples.end(),
                   [&](const Sample& x, const Sample& y) { return rank(x) < rank(y); });
  write();
  if (onSample_) onSample_(sample, static_cast<int>(report_.samples.size()), total_);
}

void EvalRunner::write() {
  aggregate(report_);
  try {
    if (!options_.out.parent_path().empty()) fs::create_directories(options_.out.parent_path());
    writeFileAtomic(options_.out, boost::json::serialize(boost::json::value_from(report_)) + "\n");
    writeFailure_.reset();
  } catch (const std::exception& e) {
    // e.what() names the file and says why.
    const std::string message = std::string("writing the report failed: ") + e.what();
    // Written after every sample: on a full disk each write fails alike; say it once.
    if (writeFailure_ != message) spdlog::error("eval {}: {}", options_.set.name, message);
    writeFailure_ = message;
  }
}

std::optional<std::string> EvalRunner::recordFailure() const {
  if (writeFailure_) return writeFailure_;
  for (const Job& job : jobs_) {
    if (job.raceId.empty()) continue;
    if (auto failure = workspaces_.at(job.evalCase->id)->recordFailure(job.raceId)) {
      return "sample race " + job.raceId + ": " + *failure;
    }
  }
  return std::nullopt;
}

void EvalRunner::cancel() {
  if (cancelled_ || finished_) return;
  cancelled_ = true;
  for (const auto& [race, job] : running_) workspaces_.at(jobs_[job].evalCase->id)->cancel(race.second);
  finishIfDone();
}

void EvalRunner::finishIfDone() {
  if (finished_) return;
  const bool allStarted = cancelled_ || nextJob_ >= jobs_.size();
  if (!allStarted || !running_.empty() || starting_ > 0 || busy_ > 0) return;
  finished_ = true;
  // A cancelled run is not finished: its report says so by having no end.
  if (!cancelled_) report_.finishedAt = formatTimestamp(recordNow());
  write();
  auto done = std::move(done_);
  if (done) done(report_);
}

}  // namespace hydra::core::eval
