#include "core/workspace/workspace.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "core/adapter/adapter.h"
#include "core/collab/iterations.h"
#include "core/executor/from_config.h"
#include "core/executor/slurm_executor.h"
#include "core/git/git.h"
#include "core/process/process.h"
#include "core/sandbox/mode.h"
#include "core/sandbox/probe.h"
#include "core/workspace/agent_probe.h"
#include "core/workspace/hydra_config.h"

namespace hydra::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

fs::path repositoryRoot(const fs::path& folder) {
  try {
    auto repo = git::discoverRepository(folder);
    return git::workdir(repo.get());
  } catch (const git::GitError& e) {
    throw WorkspaceError::notARepository(folder, e.what());
  }
}

// Secret-looking values hydra hands to agents are masked wherever they show up.
std::shared_ptr<const Redactor> redactorFor(const Config& config) {
  std::vector<std::string> secrets;
  for (const auto& [name, agent] : config.agents) {
    for (const auto& [key, value] : agent.env) {
      if (Redactor::isSecretName(key)) secrets.push_back(value);
    }
  }
  return std::make_shared<const Redactor>(std::move(secrets));
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

std::shared_ptr<const Redactor> Workspace::diffRedactor() {
  auto config = configState().config;
  return config ? redactorFor(*config) : std::make_shared<const Redactor>();
}

// A race as planned on the pool, before it exists on the io thread.
struct Workspace::Plan {
  RacePlan race;
  std::shared_ptr<const Redactor> redactor;
  std::shared_ptr<const sandbox::SandboxDecision> sandbox;
  std::shared_ptr<Executor> executor;  // null: local
};

Workspace::Workspace(asio::io_context& io, const fs::path& folder, WorkspaceOptions options)
    : io_(io),
      options_(options),
      root_(repositoryRoot(folder)),
      pool_(std::max<std::size_t>(1, options.threads)),
      store_(root_),
      baselines_(defaultBaselineCacheDir(root_)),
      slots_([this] { return maxAgents_.load(); }) {
  recorder_ = std::make_unique<RaceRecorder>(bus_, store_, asio::make_strand(pool_));
  configState();
}

Workspace::~Workspace() {
  // No io_context runs any more: the agents and checks are killed here and
  // now, not by the timers a cancel would arm.
  std::vector<pid_t> groups;
  for (const auto& [id, race] : races_) {
    for (pid_t g : race->processGroups()) groups.push_back(g);
  }
  for (const auto& race : dying_) {
    for (pid_t g : race->processGroups()) groups.push_back(g);
  }
  // A race that ends leaves races_: interrupt copies.
  auto running = races_;
  for (auto& [id, race] : running) race->interrupt();
  if (!groups.empty()) killProcessGroups(groups, options_.killGrace);
  races_.clear();
  dying_.clear();
  recorder_.reset();  // writes what is queued, on the pool
  pool_.join();
}

// --- configuration -------------------------------------------------------------------

ConfigState Workspace::configState() {
  std::lock_guard lock(configMutex_);
  fs::path file = root_ / "hydra.toml";
  std::error_code ec;
  std::optional<fs::file_time_type> time;
  std::optional<std::uintmax_t> size;
  if (auto t = fs::last_write_time(file, ec); !ec) time = t;
  if (auto s = fs::file_size(file, ec); !ec) size = s;
  if (configRead_ && time == configTime_ && size == configSize_) return config_;
  configRead_ = true;
  configTime_ = time;
  configSize_ = size;
  try {
    config_.config = std::make_shared<const Config>(loadConfig(root_));
    config_.error.reset();
    maxAgents_ = config_.config->general.maxConcurrentAgents;
  } catch (const ConfigError& e) {
    // Said where it matters, once: the error of whatever needed the config,
    // and hydra serve's diagnostics on hydra.toml. A log line would repeat it.
    spdlog::debug("{}", e.what());
    config_.config.reset();
    config_.error = e;
  }
  return config_;
}

std::shared_ptr<const Config> Workspace::config() {
  auto state = configState();
  if (state.error) throw WorkspaceError::config(*state.error);
  return state.config;
}

std::vector<std::string> Workspace::knownAgentNames(const Config& config) const {
  std::vector<std::string> names;
  for (const auto& [name, agent] : config.agents) names.push_back(name);
  for (auto adapter : adapterNames()) {
    if (findAdapter(adapter)->defaultBinary().empty()) continue;  // "command" needs a table of its own
    if (!config.agents.contains(std::string(adapter))) names.emplace_back(adapter);
  }
  return names;
}

// --- lifecycle -------------------------------------------------------------------------

std::vector<RaceRecord> Workspace::recover() {
  auto marked = store_.recoverInterrupted([](pid_t pgid) { killProcessGroup(pgid, std::chrono::seconds(2)); });
  store_.removeAbandoned();
  finishInterruptedMerge();
  for (const auto& race : marked) {
    spdlog::warn("race {} was left running by a hydra that is gone; marked interrupted", race.id);
    if (race.executor != ExecutorKind::Slurm) continue;
    // Its cluster jobs went on without it: they end now, found by the
    // comment each carries (whether or not the record got their ids).
    try {
      auto slurmConf = race.slurmConf.empty() ? std::nullopt : std::optional<fs::path>(race.slurmConf);
      auto cancelled = cancelRaceJobs(race.id, slurmConf);
      if (!cancelled.empty()) spdlog::warn("race {}: cancelled {} Slurm job(s) it left", race.id, cancelled.size());
    } catch (const std::exception& e) {
      spdlog::error("race {}: could not end the Slurm jobs it may have left: {}", race.id, e.what());
    }
  }
  // Worktrees of races that still have a record are kept for inspection until cleanup.
  std::vector<std::string> known;
  for (const auto& race : store_.list()) {
    for (const auto& agent : race.agents) known.push_back(agent.worktree);
  }
  {
    std::lock_guard lock(liveMutex_);
    for (const auto& [id, live] : live_) {
      for (const auto& agent : live.record.agents) known.push_back(agent.worktree);
    }
  }
  try {
    auto config = configState().config;
    auto& worktrees = worktreesFor(config ? config->general.workspaceDir : GeneralConfig{}.workspaceDir);
    // Only what a dead hydra left goes (prune() asks each worktree's owner):
    // the checks, baselines and agents of races that other hydras run now stay.
    auto pruned = worktrees.prune([&](const Worktree& wt) {
      return std::find(known.begin(), known.end(), wt.path.string()) != known.end();
    });
    for (const auto& wt : pruned) spdlog::info("removed worktree {} whose race no longer exists", wt.path.string());
    for (const auto& path : worktrees.repairPool()) {
      spdlog::info("removed {}, left half pooled by a hydra that stopped", path.string());
    }
  } catch (const std::exception& e) {
    spdlog::warn("could not prune worktrees: {}", e.what());
  }
  spdlog::info("recovery done: {} race(s) marked interrupted", marked.size());
  return marked;
}

void Workspace::flush() { recorder_->flush(); }

std::optional<std::string> Workspace::recordFailure(const std::string& raceId) const {
  return recorder_->failure(raceId);
}

void Workspace::whenRecorded(std::function<void()> fn) {
  recorder_->afterWritten([&io = io_, fn = std::move(fn)]() mutable { asio::post(io, std::move(fn)); });
}

WorktreeManager& Workspace::worktreesFor(const fs::path& workspaceDir) {
  std::lock_guard lock(worktreesMutex_);
  auto& manager = worktrees_[workspaceDir];
  if (!manager) {
    try {
      manager = std::make_unique<WorktreeManager>(root_, workspaceDir);
    } catch (const std::invalid_argument& e) {  // e.g. a workspace_dir outside the repository
      worktrees_.erase(workspaceDir);
      throw WorkspaceError::raceRefused(e.what());
    }
  }
  return *manager;
}

WorktreeManager& Workspace::worktreesFor(const GeneralConfig& general) {
  WorktreeManager& manager = worktreesFor(general.workspaceDir);
  manager.setSparsePaths(general.sparsePaths);
  return manager;
}

// --- races ---------------------------------------------------------------------------------

Workspace::Plan Workspace::plan(const RaceRequest& request, const CollabRequest* collab) {
  if (blank(request.task)) throw WorkspaceError::invalidRequest("the task is empty");
  if (request.agents.empty()) throw WorkspaceError::invalidRequest("no agents given");
  auto config = this->config();

  // Every agent is resolved and found before the race takes an id, which
  // creates its directory: a refused request leaves nothing behind.
  std::vector<AgentConfig> resolved;
  for (const auto& name : request.agents) {
    auto agent = findAgent(*config, name);
    if (!agent) throw WorkspaceError::unknownAgentName(name, knownAgentNames(*config));
    if (!findAdapter(agent->adapter)) {
      throw WorkspaceError::raceRefused("agent '" + name + "' names unknown adapter '" + agent->adapter + "'");
    }
    if (auto problem = agentProblem(*agent, root_))
      throw WorkspaceError::agentUnavailable(name, *problem,
                                             problem->ends_with("not found on PATH") ? searchPath() : std::string());
    resolved.push_back(*agent);
  }

  std::string baseRef = request.baseRef.value_or("HEAD");
  std::string baseCommit;
  try {
    auto repo = git::openRepository(root_);
    baseCommit = git::toHex(git::resolveCommit(repo.get(), baseRef));
  } catch (const git::GitError& e) {
    throw WorkspaceError::raceRefused("cannot use '" + baseRef + "' as the base: " + e.what());
  }
  fs::path workspaceDir = worktreesFor(config->general.workspaceDir).workspaceDir();

  // Where it runs, decided before the race takes an id (which creates its
  // directory): a refused request leaves nothing behind.
  const ExecutorKind executorKind = request.executor.value_or(config->executor.kind);
  std::shared_ptr<Executor> executor;
  if (executorKind != ExecutorKind::Local) {
    for (const auto& agent : resolved) {
      if (findAdapter(agent.adapter)->speaksOverStdin()) {
        throw WorkspaceError::raceRefused("agent '" + agent.name + "' is spoken to over its stdin (ACP), which a " +
                                          std::string(toString(executorKind)) + " job does not have: run it with the local executor");
      }
    }
  }
  try {
    executor = executorFromConfig(config->executor, executorKind, workspaceDir, root_);
  } catch (const std::exception& e) {
    throw WorkspaceError::raceRefused("the " + std::string(toString(executorKind)) + " executor cannot be used: " + e.what());
  }

  auto redactor = redactorFor(*config);
  Plan plan;
  plan.redactor = redactor;
  RaceStarted& started = plan.race.started;
  started.raceId = store_.newRaceId();
  // Until the race launches its folder holds only its claim: a plan refused
  // from here on gives the folder back rather than leave it empty.
  struct Unclaim {
    RaceStore& store;
    std::string raceId;
    bool launched = false;
    ~Unclaim() {
      if (!launched) store.abandon(raceId);
    }
  } unclaim{store_, started.raceId};
  // What is recorded and shown is masked; the agents get the task as it was given.
  started.task = redactor->redact(request.task);
  plan.race.prompt = request.task;
  started.baseRef = baseRef;
  started.baseCommit = baseCommit;
  started.repoRoot = root_.string();
  started.createdAt = recordNow();
  const ProcessOwner self = ProcessOwner::self();
  started.hydraPid = self.pid;
  started.hydraStartTime = self.startTime;
  started.hydraHost = self.host;
  auto ids = collab ? std::vector<std::string>{std::string(collab::kBuilder), std::string(collab::kReviewer)}
                   : assignAgentIds(request.agents);
  if (collab) {
    started.kind = RunKind::Collab;
    const CollaborationConfig& c = config->collaboration;
    started.collaboration = CollabSettings{
        .builder = request.agents.at(0),
        .reviewer = request.agents.at(1),
        .maxIterations = collab->maxIterations.value_or(c.maxIterations),
        .untilScore = collab->untilScore.value_or(c.untilScore.value_or(config->scoring.thresholds.autoMergeMinimum)),
        .approveMarker = c.approveMarker,
        .reviewEveryRound = c.reviewEveryRound,
    };
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::string name = ids[i] + "-" + started.raceId;
    started.agents.push_back(AgentPlan{ids[i], request.agents[i], resolved[i].adapter, "hydra/" + name,
                                       (workspaceDir / name).string()});
  }
  // Decided per race, with the probe run once per process.
  auto mode = sandbox::parseSandboxMode(config->general.sandbox).value_or(sandbox::SandboxMode::Auto);
  try {
    plan.sandbox = std::make_shared<const sandbox::SandboxDecision>(
        sandbox::decideSandbox(mode, sandbox::cachedSandboxProbe()));
  } catch (const sandbox::SandboxError& e) {
    throw WorkspaceError::raceRefused(e.what());
  }
  started.sandbox = plan.sandbox->confined ? "bubblewrap" : "unconfined";
  started.sandboxWarning = plan.sandbox->warning;
  if (!plan.sandbox->warning.empty()) spdlog::warn("race {}: {}", started.raceId, plan.sandbox->warning);
  plan.executor = std::move(executor);
  started.executor = executorKind;
  if (executorKind == ExecutorKind::Slurm && config->executor.slurmConf) started.slurmConf = config->executor.slurmConf->string();
  if (request.scoring) {
    auto copy = std::make_shared<Config>(*config);
    copy->scoring = *request.scoring;
    config = copy;
  }
  if (request.timeoutSeconds) {
    for (auto& agent : resolved) agent.timeoutSeconds = *request.timeoutSeconds;
  }
  if (!collab) started.kind = request.kind;
  plan.race.env = request.env;
  plan.race.config = config;
  plan.race.agents = std::move(resolved);
  plan.race.repoRoot = root_;
  unclaim.launched = true;
  return plan;
}

void Workspace::startRace(RaceRequest request, std::function<void(RaceSummary)> started,
                          std::function<void(WorkspaceError)> refused) {
  asio::post(pool_, [this, request = std::move(request), started = std::move(started),
                     refused = std::move(refused)]() mutable {
    try {
      Plan planned = plan(request);
      asio::post(io_, [this, planned = std::move(planned), started = std::move(started)]() mutable {
        launch(std::move(planned), std::move(started));
      });
    } catch (const WorkspaceError& e) {
      asio::post(io_, [e, refused = std::move(refused)] { refused(e); });
    } catch (const std::exception& e) {
      auto error = WorkspaceError::raceRefused(std::string("the race could not start: ") + e.what());
      asio::post(io_, [error, refused = std::move(refused)] { refused(error); });
    }
  });
}

void Workspace::startCollab(CollabRequest request, std::function<void(RaceSummary)> started,
                            std::function<void(WorkspaceError)> refused) {
  asio::post(pool_, [this, request = std::move(request), started = std::move(started),
                     refused = std::move(refused)]() mutable {
    try {
      if (blank(request.task)) throw WorkspaceError::invalidRequest("the task is empty");
      if (request.maxIterations && *request.maxIterations < 1) {
        throw WorkspaceError::invalidRequest("maxIterations must be at least 1");
      }
      if (request.untilScore && !(*request.untilScore >= 0 && *request.untilScore <= 100)) {
        throw WorkspaceError::invalidRequest("untilScore must be between 0 and 100");
      }
      auto config = this->config();
      auto builder = request.builder ? request.builder : config->collaboration.builder;
      auto reviewer = request.reviewer ? request.reviewer : config->collaboration.reviewer;
      if (!builder || !reviewer) {
        throw WorkspaceError::invalidRequest(
            std::string("no ") + (!builder ? "builder" : "reviewer") +
            " given, and hydra.toml's [collaboration] names none");
      }
      RaceRequest race{request.task, {*builder, *reviewer}, request.baseRef};
      race.executor = request.executor;
      Plan planned = plan(race, &request);
      asio::post(io_, [this, planned = std::move(planned), started = std::move(started)]() mutable {
        launch(std::move(planned), std::move(started));
      });
    } catch (const WorkspaceError& e) {
      asio::post(io_, [e, refused = std::move(refused)] { refused(e); });
    } catch (const std::exception& e) {
      auto error = WorkspaceError::raceRefused(std::string("the collaboration could not start: ") + e.what());
      asio::post(io_, [error, refused = std::move(refused)] { refused(error); });
    }
  });
}

void Workspace::launch(Plan planned, std::function<void(RaceSummary)> started) {
  RaceContext ctx{
      .run = RunContext{.io = io_,
                        .pool = pool_,
                        .publish = [this](RaceEventBody event) { emit(std::move(event)); },
                        .slots = slots_,
                        .worktrees = worktreesFor(planned.race.config->general),
                        .redactor = planned.redactor,
                        .readGate = [this] { return recorder_->backlog() < RaceRecorder::kMaxBacklog; },
                        .sandbox = planned.sandbox,
                        .executor = planned.executor},
      .baselines = &baselines_,
      .autoMerge = [this](const std::string& raceId, const std::string& agentId) { return autoMerge(raceId, agentId); },
      .raceIsOver =
          [this](const std::string& raceId) {
            try {
              auto race = store_.load(raceId);
              // A folder claimed for a race whose record is not written yet
              // (another race or sample starting beside this one) is under way.
              if (!race) {
                std::error_code ec;
                return !std::filesystem::exists(store_.raceDir(raceId) / "owner", ec);
              }
              return race->status != RaceStatus::Running;
            } catch (const std::exception&) {
              return true;  // unreadable: watched as it is
            }
          },
  };
  std::string raceId = planned.race.started.raceId;
  RaceRecord record = RaceRecord::started(planned.race.started);
  auto ended = [this](const RaceFinished& finished) {
    auto it = races_.find(finished.raceId);
    if (it == races_.end()) return;
    // Let go later, not inside the race's own callback.
    asio::post(io_, [race = it->second] {});
    races_.erase(it);
  };
  std::shared_ptr<Strategy> run;
  if (planned.race.started.kind == RunKind::Collab) {
    CollabPlan plan{.started = std::move(planned.race.started),
                    .prompt = std::move(planned.race.prompt),
                    .config = planned.race.config,
                    .builder = planned.race.agents.at(0),
                    .reviewer = planned.race.agents.at(1),
                    .repoRoot = planned.race.repoRoot};
    run = Collaboration::start(std::move(ctx), std::move(plan), ended);
  } else {
    run = Race::start(std::move(ctx), std::move(planned.race), ended);
  }
  races_.emplace(raceId, run);
  started(summarize(record, false, std::nullopt));
}

void Workspace::emit(RaceEventBody event) {
  const std::string raceId = raceIdOf(event);
  if (auto* s = std::get_if<RaceStarted>(&event)) {
    std::lock_guard lock(liveMutex_);
    Live& live = live_[raceId];
    live.record = RaceRecord::started(*s);
  } else if (!std::holds_alternative<AgentOutput>(event) && !std::holds_alternative<CheckOutput>(event)) {
    std::lock_guard lock(liveMutex_);
    auto it = live_.find(raceId);
    if (it != live_.end()) {
      it->second.record.apply(event);
      if (std::holds_alternative<ScoringStarted>(event)) it->second.scoring = true;
      if (auto* f = std::get_if<RaceFinished>(&event)) {
        it->second.scoring = false;
        it->second.scores = f->scores;
      }
    }
  }
  bool finished = std::holds_alternative<RaceFinished>(event);
  bus_.publish(std::move(event));
  if (finished) {
    // Once its end is on disk, the record there is the truth.
    recorder_->afterWritten([this, raceId] {
      // Not on disk in full: what this process holds is the only whole copy.
      if (recorder_->failure(raceId)) return;
      std::lock_guard lock(liveMutex_);
      live_.erase(raceId);
    });
  }
}

bool Workspace::cancel(std::string_view raceId, std::optional<std::string_view> agentId) {
  auto it = races_.find(raceId);
  if (it == races_.end()) return false;
  return it->second->cancel(agentId);
}

std::size_t Workspace::runningRaces() const {
  std::lock_guard lock(liveMutex_);
  std::size_t n = 0;
  for (const auto& [id, live] : live_) n += live.record.status == RaceStatus::Running ? 1 : 0;
  return n;
}

void Workspace::interruptAll(std::function<void()> done) {
  // A race that ends leaves races_: interrupt copies.
  auto running = races_;
  for (auto& [id, race] : running) {
    race->interrupt();
    dying_.push_back(race);
  }
  races_.clear();
  auto deadline = std::chrono::steady_clock::now() + 2 * options_.killGrace;
  // Done once the races are quiet and their records say they were interrupted.
  auto recorded = [this, done = std::move(done)]() mutable {
    whenRecorded([done = std::move(done)] {
      if (done) done();
    });
  };
  checkQuiet(std::make_shared<std::function<void()>>(std::move(recorded)), deadline);
}

void Workspace::checkQuiet(std::shared_ptr<std::function<void()>> done, std::chrono::steady_clock::time_point deadline) {
  std::erase_if(dying_, [](const std::shared_ptr<Strategy>& race) { return race->quiet(); });
  if (dying_.empty() || std::chrono::steady_clock::now() >= deadline) {
    if (!dying_.empty()) spdlog::warn("{} race(s) still had processes when hydra stopped waiting", dying_.size());
    if (*done) (*done)();
    return;
  }
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(20));
  timer->async_wait([this, timer, done, deadline](boost::system::error_code) { checkQuiet(done, deadline); });
}

std::optional<Workspace::Live> Workspace::live(const std::string& raceId) const {
  std::lock_guard lock(liveMutex_);
  auto it = live_.find(raceId);
  if (it == live_.end()) return std::nullopt;
  return it->second;
}

bool Workspace::busy(const std::string& raceId) const {
  std::lock_guard lock(liveMutex_);
  auto it = live_.find(raceId);
  return it != live_.end() && (it->second.record.status == RaceStatus::Running || it->second.scoring);
}

}  // namespace hydra::core
