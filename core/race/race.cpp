#include "core/race/race.h"

#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <fstream>
#include <sstream>
#include <spdlog/spdlog.h>

#include "core/config/config.h"
#include "core/git/git.h"
#include "core/race/review.h"

namespace hydra::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// Secret-looking values hydra hands to agents are masked wherever they show up.
Redactor redactorFor(const Config& config) {
  std::vector<std::string> secrets;
  for (const auto& [name, agent] : config.agents) {
    for (const auto& [key, value] : agent.env) {
      if (Redactor::isSecretName(key)) secrets.push_back(value);
    }
  }
  return Redactor(std::move(secrets));
}

std::string firstLine(std::string_view text, std::size_t max = 72) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.size() > max) return std::string(line.substr(0, max - 3)) + "...";
  return std::string(line);
}

std::int64_t millisBetween(Timestamp a, Timestamp b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

void addUsage(Usage& total, const Usage& part) {
  auto add = [](auto& into, const auto& from) {
    if (from) into = into.value_or(0) + *from;
  };
  add(total.inputTokens, part.inputTokens);
  add(total.outputTokens, part.outputTokens);
  add(total.cachedInputTokens, part.cachedInputTokens);
  add(total.costUsd, part.costUsd);
}

boost::json::object eventJson(std::string_view type, std::string_view raceId) {
  return boost::json::object{{"type", type}, {"raceId", raceId}, {"time", formatTimestamp(recordNow())}};
}

}  // namespace

std::vector<std::string> assignAgentIds(const std::vector<std::string>& names) {
  std::map<std::string, int> total, seen;
  for (const auto& n : names) total[n]++;
  std::vector<std::string> ids;
  for (const auto& n : names) {
    ids.push_back(total[n] == 1 ? n : n + "-" + std::to_string(++seen[n]));
  }
  return ids;
}

RaceEngine::RaceEngine(asio::io_context& io, fs::path repoRoot, Config config, EventBus& bus)
    : io_(io),
      repoRoot_(std::move(repoRoot)),
      config_(std::move(config)),
      bus_(bus),
      store_(repoRoot_, redactorFor(config_)),
      worktrees_(repoRoot_, config_.general.workspaceDir),
      evaluator_(io_, repoRoot_, config_.scoring, store_, worktrees_) {}

RaceEngine::~RaceEngine() {
  *alive_ = false;
  if (!races_.empty()) interruptAll(std::chrono::milliseconds(1000));
  pool_.join();
}

std::vector<RaceRecord> RaceEngine::recover() {
  auto marked = store_.recoverInterrupted([](pid_t pgid) { killProcessGroup(pgid, std::chrono::seconds(2)); });
  for (const auto& race : marked) {
    spdlog::warn("race {} was left running by a hydra that is gone; marked interrupted", race.id);
  }
  // Worktrees of races that still have a record are kept for inspection until cleanup.
  std::vector<std::string> known;
  for (const auto& race : store_.list()) {
    for (const auto& agent : race.agents) known.push_back(agent.worktree);
  }
  auto pruned = worktrees_.prune([&](const Worktree& wt) {
    return std::find(known.begin(), known.end(), wt.path.string()) != known.end();
  });
  for (const auto& wt : pruned) spdlog::info("removed worktree {} whose race no longer exists", wt.path.string());
  return marked;
}

AgentConfig RaceEngine::resolveAgent(const std::string& name) const {
  auto agent = findAgent(config_, name);
  if (!agent) {
    std::string known;
    for (const auto& [n, _] : config_.agents) known += (known.empty() ? "" : ", ") + n;
    for (auto a : knownAdapters()) {
      if (a != "command" && !config_.agents.contains(std::string(a))) known += (known.empty() ? "" : ", ") + std::string(a);
    }
    throw RaceError("unknown agent '" + name + "' (known: " + known + "); add an [agents." + name +
                    "] table to hydra.toml to define it");
  }
  return *agent;
}

RaceRecord RaceEngine::start(const RaceRequest& request) {
  if (request.task.find_first_not_of(" \t\r\n") == std::string::npos) throw RaceError("the task is empty");
  if (request.agents.empty()) throw RaceError("no agents given");

  std::string baseRef = request.baseRef.value_or("HEAD");
  std::string baseCommit;
  try {
    auto repo = git::openRepository(repoRoot_);
    baseCommit = git::toHex(git::resolveCommit(repo.get(), baseRef));
  } catch (const git::GitError& e) {
    throw RaceError("cannot use '" + baseRef + "' as the base: " + e.what());
  }

  // Every agent is resolved before the race takes an id, which creates its
  // directory: a refused request leaves nothing behind.
  std::vector<AgentConfig> resolved;
  for (const auto& name : request.agents) {
    resolved.push_back(resolveAgent(name));
    if (!findAdapter(resolved.back().adapter)) {
      throw RaceError("agent '" + name + "' names unknown adapter '" + resolved.back().adapter + "'");
    }
  }

  Race race(io_);
  RaceRecord& record = race.record;
  record.id = store_.newRaceId();
  record.task = request.task;
  record.baseRef = baseRef;
  record.baseCommit = baseCommit;
  record.repoRoot = repoRoot_.string();
  record.createdAt = recordNow();
  record.status = RaceStatus::Running;
  record.hydraPid = ::getpid();
  record.hydraStartTime = processStartTime(::getpid()).value_or(0);

  auto ids = assignAgentIds(request.agents);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    AgentRun run;
    run.agentId = ids[i];
    run.config = std::move(resolved[i]);
    run.adapter = findAdapter(run.config.adapter);
    std::string name = run.agentId + "-" + record.id;
    run.worktree.name = name;
    run.worktree.agentId = run.agentId;
    run.worktree.path = worktrees_.workspaceDir() / name;
    run.worktree.branch = "hydra/" + name;
    run.worktree.baseCommit = baseCommit;

    AgentRecord agent;
    agent.agentId = run.agentId;
    agent.agent = request.agents[i];
    agent.adapter = run.config.adapter;
    agent.branch = run.worktree.branch;
    agent.worktree = run.worktree.path.string();
    agent.status = AgentStatus::Queued;
    record.agents.push_back(std::move(agent));
    race.agents.emplace(run.agentId, std::move(run));
  }

  std::string id = record.id;
  races_.emplace(id, std::move(race));
  Race& stored = races_.at(id);
  save(stored);
  auto started = eventJson("raceStarted", id);
  started["task"] = request.task;
  started["baseCommit"] = baseCommit;
  store_.appendEvent(id, started);
  bus_.publish(RaceStarted{id, request.task, baseRef, baseCommit});
  spdlog::info("race {} started: {} agent(s) on {}", id, ids.size(), baseCommit.substr(0, 12));

  createWorktrees(id);
  return stored.record;
}

void RaceEngine::createWorktrees(const std::string& raceId) {
  const Race& race = races_.at(raceId);
  std::vector<std::string> ids;
  for (const auto& a : race.record.agents) ids.push_back(a.agentId);
  std::string base = race.record.baseCommit;
  asio::post(pool_, [this, alive = alive_, raceId, ids, base] {
    std::vector<Worktree> created;
    std::string error;
    try {
      worktrees_.ensureExcluded();
      created = worktrees_.createMany(ids, base, raceId);
    } catch (const std::exception& e) {
      error = e.what();
    }
    asio::post(io_, [this, alive, raceId, created = std::move(created), error = std::move(error)]() mutable {
      if (*alive) worktreesCreated(raceId, std::move(created), std::move(error));
    });
  });
}

void RaceEngine::worktreesCreated(const std::string& raceId, std::vector<Worktree> created, std::string error) {
  auto it = races_.find(raceId);
  if (it == races_.end()) return;
  Race& race = it->second;
  race.worktreesReady = true;
  if (!error.empty()) {
    spdlog::error("race {}: creating worktrees failed: {}", raceId, error);
    for (auto& [id, run] : race.agents) agentDone(race, run, AgentStatus::Failed, "creating its worktree failed: " + error);
    return;
  }
  for (auto& wt : created) {
    auto run = race.agents.find(wt.agentId);
    if (run != race.agents.end()) run->second.worktree = wt;
  }
  for (const auto& agent : race.record.agents) {
    AgentRun& run = race.agents.at(agent.agentId);
    if (race.cancelRequested || run.cancelRequested) {
      agentDone(race, run, AgentStatus::Cancelled, std::nullopt);
    } else {
      queue_.emplace_back(raceId, agent.agentId);
    }
  }
  pump();
}

void RaceEngine::pump() {
  auto limit = static_cast<std::size_t>(std::max(1, config_.general.maxConcurrentAgents));
  while (runningAgents_ < limit && !queue_.empty()) {
    auto [raceId, agentId] = queue_.front();
    queue_.pop_front();
    auto race = races_.find(raceId);
    if (race == races_.end()) continue;
    AgentRun& run = race->second.agents.at(agentId);
    if (run.finished) continue;
    launch(race->second, run);
  }
}

std::map<std::string, std::string> RaceEngine::agentEnvironment(
    const Race& race, const AgentRun& run, const std::map<std::string, std::string>& adapterEnv) const {
  std::map<std::string, std::string> env = adapterEnv;
  for (const auto& [k, v] : run.config.env) env[k] = v;
  env["HYDRA_TASK"] = race.record.task;
  env["HYDRA_AGENT_ID"] = run.agentId;
  env["HYDRA_WORKTREE"] = run.worktree.path.string();
  env["HYDRA_RACE_ID"] = race.record.id;
  return env;
}

void RaceEngine::launch(Race& race, AgentRun& run) {
  const std::string raceId = race.record.id;
  const std::string agentId = run.agentId;
  Invocation inv = run.adapter->invocation(run.config, race.record.task);

  // A binary given as a path is relative to the repository root, where hydra.toml is.
  std::string program = inv.program;
  if (program.find('/') != std::string::npos && !fs::path(program).is_absolute()) {
    program = (repoRoot_ / program).lexically_normal().string();
  }

  ProcessSpec spec;
  spec.program = program;
  spec.args = inv.args;
  spec.cwd = run.worktree.path;
  spec.env = agentEnvironment(race, run, inv.env);
  spec.timeout = std::chrono::seconds(run.config.timeoutSeconds.value_or(config_.general.timeoutSeconds));

  run.parser = run.adapter->parser();
  run.log = store_.openLog(raceId, agentId);
  ++runningAgents_;

  AgentRecord* agent = race.record.findAgent(agentId);
  agent->status = AgentStatus::Running;
  agent->startedAt = recordNow();
  run.process = Process::start(
      io_, std::move(spec),
      [this, alive = alive_, raceId, agentId](OutputStream stream, std::string line) {
        if (*alive) onLine(raceId, agentId, stream, std::move(line));
      },
      [this, alive = alive_, raceId, agentId](const ProcessResult& result) {
        if (*alive) onExit(raceId, agentId, result);
      });
  if (run.process->pid() > 0) {
    agent->pid = run.process->pid();
    agent->processGroup = run.process->processGroup();
    agent->pidStartTime = processStartTime(run.process->pid());
  }
  save(race);
  auto ev = eventJson("agentStarted", raceId);
  ev["agentId"] = agentId;
  store_.appendEvent(raceId, ev);
  bus_.publish(AgentStarted{raceId, agentId, agent->agent, agent->branch, agent->worktree});
  spdlog::info("race {}: {} started ({} {})", raceId, agentId, inv.program, run.process->pid());
}

void RaceEngine::onLine(const std::string& raceId, const std::string& agentId, OutputStream stream, std::string line) {
  auto race = races_.find(raceId);
  if (race == races_.end()) return;
  AgentRun& run = race->second.agents.at(agentId);
  if (run.log) run.log->write(stream, line);
  std::vector<AgentEvent> events;
  if (stream == OutputStream::Stdout) events = run.parser->parseLine(line);
  for (const auto& e : events) {
    if (e.kind == EventKind::Usage && e.usage) {
      run.sawUsage = true;
      addUsage(run.usage, *e.usage);
    } else if (e.kind == EventKind::Summary && e.usage) {
      run.summaryUsage = e.usage;
    }
  }
  bus_.publish(AgentOutput{raceId, agentId, stream, std::move(line), std::move(events)});
}

void RaceEngine::publishOutputEvents(const Race& race, const AgentRun& run, std::vector<AgentEvent> events) {
  if (events.empty()) return;
  bus_.publish(AgentOutput{race.record.id, run.agentId, OutputStream::Stdout, "", std::move(events)});
}

void RaceEngine::onExit(const std::string& raceId, const std::string& agentId, const ProcessResult& result) {
  auto it = races_.find(raceId);
  if (it == races_.end()) return;
  Race& race = it->second;
  AgentRun& run = race.agents.at(agentId);
  --runningAgents_;

  auto tail = run.parser->finish();
  for (const auto& e : tail) {
    if (e.kind == EventKind::Summary && e.usage) run.summaryUsage = e.usage;
  }
  publishOutputEvents(race, run, std::move(tail));
  if (run.log) run.log->sync();

  AgentRecord* agent = race.record.findAgent(agentId);
  agent->finishedAt = recordNow();
  if (agent->startedAt) agent->durationMs = millisBetween(*agent->startedAt, *agent->finishedAt);
  agent->exitCode = result.exitCode;
  agent->signal = result.signal;
  if (run.summaryUsage) {
    agent->usage = run.summaryUsage;
  } else if (run.sawUsage) {
    agent->usage = run.usage;
  }

  AgentStatus status;
  std::optional<std::string> error;
  if (!result.spawnError.empty()) {
    status = AgentStatus::Failed;
    error = result.spawnError;
  } else if (result.cancelled) {
    status = AgentStatus::Cancelled;
  } else if (result.timedOut) {
    status = AgentStatus::TimedOut;
    error = "timed out after " +
            std::to_string(run.config.timeoutSeconds.value_or(config_.general.timeoutSeconds)) + " s";
  } else if (result.exitCode == 0) {
    status = AgentStatus::Completed;
  } else {
    status = AgentStatus::Failed;
    error = result.exitCode ? "exited with code " + std::to_string(*result.exitCode)
                            : "killed by signal " + std::to_string(result.signal.value_or(0));
  }
  pump();
  commitResult(raceId, agentId, status, std::move(error));
}

void RaceEngine::commitResult(const std::string& raceId, const std::string& agentId, AgentStatus status,
                              std::optional<std::string> error) {
  Race& race = races_.at(raceId);
  AgentRun& run = race.agents.at(agentId);
  Worktree wt = run.worktree;
  std::string message = "hydra: " + agentId + ": " + firstLine(race.record.task) + "\n\nRace " + raceId +
                        ", agent " + agentId + " (" + run.config.adapter + "), " + std::string(toString(status)) +
                        ".\n\nTask:\n" + race.record.task + "\n";
  asio::post(pool_, [this, alive = alive_, raceId, agentId, wt, message, status, error]() mutable {
    std::optional<std::string> commit;
    std::string commitError;
    try {
      worktrees_.commitAll(wt, message);
      commit = worktrees_.headCommit(wt);
    } catch (const std::exception& e) {
      commitError = e.what();
    }
    asio::post(io_, [this, alive, raceId, agentId, status, error, commit, commitError]() mutable {
      if (!*alive) return;
      auto it = races_.find(raceId);
      if (it == races_.end()) return;
      AgentRun& run = it->second.agents.at(agentId);
      AgentRecord* agent = it->second.record.findAgent(agentId);
      agent->commit = commit;
      if (!commitError.empty()) {
        spdlog::error("race {}: committing {}'s work failed: {}", raceId, agentId, commitError);
        if (!error) error = "committing its work failed: " + commitError;
      }
      agentDone(it->second, run, status, error);
    });
  });
}

void RaceEngine::agentDone(Race& race, AgentRun& run, AgentStatus status, std::optional<std::string> error) {
  if (run.finished) return;
  run.finished = true;
  run.process.reset();
  run.log.reset();
  AgentRecord* agent = race.record.findAgent(run.agentId);
  agent->status = status;
  agent->error = error;
  if (!agent->finishedAt) agent->finishedAt = recordNow();
  save(race);

  AgentFinished finished;
  finished.raceId = race.record.id;
  finished.agentId = run.agentId;
  finished.status = status;
  finished.exitCode = agent->exitCode;
  finished.signal = agent->signal;
  finished.durationMs = agent->durationMs.value_or(0);
  finished.usage = agent->usage;
  finished.error = error;
  auto ev = eventJson("agentFinished", race.record.id);
  ev["agentId"] = run.agentId;
  ev["status"] = toString(status);
  if (agent->exitCode) ev["exitCode"] = *agent->exitCode;
  if (error) ev["error"] = *error;
  store_.appendEvent(race.record.id, ev);
  bus_.publish(std::move(finished));
  spdlog::info("race {}: {} {}{}", race.record.id, run.agentId, toString(status), error ? " (" + *error + ")" : "");
  // Later, not now: callers may still be iterating over this race's agents.
  asio::post(io_, [this, alive = alive_, raceId = race.record.id] {
    if (*alive) maybeFinishRace(raceId);
  });
}

void RaceEngine::maybeFinishRace(const std::string& raceId) {
  auto it = races_.find(raceId);
  if (it == races_.end()) return;
  Race& race = it->second;
  for (const auto& [id, run] : race.agents) {
    if (!run.finished) return;
  }
  if (race.cancelRequested) {
    raceOver(raceId, RaceStatus::Cancelled);
    return;
  }
  if (race.scoring) return;
  race.scoring = true;
  store_.appendEvent(raceId, eventJson("scoringStarted", raceId));
  bus_.publish(ScoringStarted{raceId});
  spdlog::info("race {}: scoring", raceId);
  evaluator_.evaluate(race.record, [this, raceId](scoring::RaceScores scores) {
    if (scores.winner) spdlog::info("race {}: {} wins", raceId, *scores.winner);
    bool anyCompleted = false;
    for (const auto& a : scores.rankings) anyCompleted |= a.status == AgentStatus::Completed;
    RaceStatus status = anyCompleted ? RaceStatus::Completed : RaceStatus::Failed;
    if (config_.scoring.autoMerge && scores.autoMergeEligible && scores.winner) {
      autoMerge(raceId, *scores.winner, status);
    } else {
      raceOver(raceId, status);
    }
  });
}

// [scoring] auto_merge = true and the winner reached auto_merge_minimum: merge
// it as `hydra merge` would, then end the race. A refused or conflicting merge
// changes nothing and is recorded; the race ends all the same.
void RaceEngine::autoMerge(const std::string& raceId, const std::string& agentId, RaceStatus status) {
  RaceRecord record = races_.at(raceId).record;
  record.status = status;
  asio::post(pool_, [this, alive = alive_, record, agentId, status] {
    boost::json::object ev = eventJson("autoMerge", record.id);
    ev["agentId"] = agentId;
    try {
      RaceMerge merged = mergeRaceAgent(repoRoot_, config_, record, agentId, false, false);
      ev["outcome"] = merge::toString(merged.result.outcome);
      if (merged.result.commit) ev["commit"] = *merged.result.commit;
      if (!merged.result.conflicts.empty()) {
        boost::json::array files;
        for (const auto& f : merged.result.conflicts) files.emplace_back(f);
        ev["conflicts"] = std::move(files);
      }
    } catch (const std::exception& e) {
      ev["outcome"] = "refused";
      ev["error"] = e.what();
    }
    asio::post(io_, [this, alive, raceId = record.id, ev = std::move(ev), status] {
      if (!*alive) return;
      store_.appendEvent(raceId, ev);
      spdlog::info("race {}: auto-merge of {}: {}", raceId, ev.at("agentId").as_string().c_str(),
                   ev.at("outcome").as_string().c_str());
      raceOver(raceId, status);
    });
  });
}

void RaceEngine::raceOver(const std::string& raceId, RaceStatus status) {
  auto it = races_.find(raceId);
  if (it == races_.end()) return;
  Race& race = it->second;
  race.record.status = status;
  race.record.finishedAt = recordNow();
  save(race);
  auto ev = eventJson("raceFinished", raceId);
  ev["status"] = toString(status);
  store_.appendEvent(raceId, ev);
  races_.erase(it);
  bus_.publish(RaceFinished{raceId, status});
  spdlog::info("race {} {}", raceId, toString(status));
}

std::optional<scoring::RaceScores> RaceEngine::scores(std::string_view raceId) const {
  if (!isValidId(raceId)) return std::nullopt;
  try {
    return scoring::readScores(store_.scoresPath(raceId));
  } catch (const std::exception& e) {
    spdlog::warn("race {}: unreadable scores.json: {}", raceId, e.what());
    return std::nullopt;
  }
}

bool RaceEngine::cancel(std::string_view raceId, std::optional<std::string_view> agentId) {
  auto it = races_.find(raceId);
  if (it == races_.end()) return false;
  Race& race = it->second;
  bool any = false;
  if (!agentId) race.cancelRequested = true;
  if (race.scoring) {
    if (agentId) return false;  // every agent has finished
    evaluator_.cancel(race.record.id);
    raceOver(race.record.id, RaceStatus::Cancelled);
    return true;
  }
  for (auto& [id, run] : race.agents) {
    if (agentId && id != *agentId) continue;
    if (run.finished || run.cancelRequested) continue;
    run.cancelRequested = true;
    any = true;
    if (run.process) {
      run.process->cancel();  // onExit follows
    } else if (race.worktreesReady) {
      // Queued, never started.
      agentDone(race, run, AgentStatus::Cancelled, std::nullopt);
    }
  }
  return any || (!agentId && race.cancelRequested);
}

std::optional<RaceRecord> RaceEngine::find(std::string_view raceId) const {
  auto it = races_.find(raceId);
  if (it != races_.end()) return it->second.record;
  return store_.load(raceId);
}

bool RaceEngine::running(std::string_view raceId) const { return races_.find(raceId) != races_.end(); }

void RaceEngine::interruptAll(std::chrono::milliseconds grace) {
  std::vector<pid_t> groups;
  for (auto& [id, race] : races_) {
    for (auto& [agentId, run] : race.agents) {
      if (run.process && run.process->pid() > 0) groups.push_back(run.process->processGroup());
    }
  }
  for (auto& [id, race] : races_) {
    if (race.scoring) evaluator_.cancel(id);
  }
  killProcessGroups(groups, grace);
  for (auto& [id, race] : races_) {
    for (auto& agent : race.record.agents) {
      if (agent.status == AgentStatus::Running || agent.status == AgentStatus::Queued) {
        agent.status = AgentStatus::Interrupted;
        agent.finishedAt = recordNow();
      }
    }
    race.record.status = RaceStatus::Interrupted;
    race.record.finishedAt = recordNow();
    save(race);
    auto ev = eventJson("raceFinished", id);
    ev["status"] = toString(RaceStatus::Interrupted);
    store_.appendEvent(id, ev);
  }
  races_.clear();
  queue_.clear();
  runningAgents_ = 0;
}

void RaceEngine::save(Race& race) {
  try {
    store_.save(race.record);
  } catch (const std::exception& e) {
    spdlog::error("race {}: saving its record failed: {}", race.record.id, e.what());
  }
}

}  // namespace hydra::core
