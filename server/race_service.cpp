#include "server/race_service.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/json/value_from.hpp>
#include <variant>

#include "core/process/process.h"
#include "hydra/version.h"
#include "protocol/methods.h"
#include "server/cli/agent_probe.h"
#include "server/rpc_errors.h"
#include "server/wire.h"

namespace hydra::server {

namespace asio = boost::asio;
namespace json = boost::json;
namespace method = protocol::method;
using protocol::ErrorCode;
using protocol::RpcError;

namespace {

// Agent names hydra/race accepts: the configured ones and every built-in adapter.
std::vector<std::string> knownAgents(const core::Config& config) {
  std::vector<std::string> names;
  for (const auto& [name, agent] : config.agents) names.push_back(name);
  for (auto adapter : core::knownAdapters()) {
    if (adapter != "command" && !config.agents.contains(std::string(adapter)))
      names.emplace_back(adapter);
  }
  return names;
}

std::string firstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 80) line = line.substr(0, 77) + "...";
  return line;
}

std::string outcomeText(core::RaceStatus status,
                        const std::optional<core::scoring::RaceScores>& scores) {
  std::string text = "race " + std::string(core::toString(status));
  if (scores && scores->winner) text += "; winner: " + *scores->winner;
  if (scores && scores->allFailed) text += " (all agents failed)";
  return text;
}

}  // namespace

RaceService::RaceService(Context context, Workspace workspace)
    : ctx_(std::move(context)), workspace_(std::move(workspace)) {
  if (workspace_.root) config_ = readConfig(*workspace_.root);
  output_ = std::make_unique<OutputNotifier>(ctx_.io, ctx_.dispatcher, ctx_.transport, ctx_.output);
  // Events are taken on the io thread; the bus only posts a wake-up there.
  subscription_ = bus_.subscribe(core::SubscriptionOptions{
      .maxEvents = 4096,
      .maxBytes = 4 * 1024 * 1024,
      .onReady =
          [this, alive = alive_, &io = ctx_.io] {
            asio::post(io, [this, alive] {
              if (*alive) drain();
            });
          },
  });
}

RaceService::~RaceService() {
  *alive_ = false;
  subscription_.reset();
  live_.clear();
  engines_.clear();  // interrupts whatever still runs
}

protocol::HydraCapabilities RaceService::capabilities() const {
  protocol::HydraCapabilities caps;
  caps.version = kVersion;
  if (config_.config) {
    for (const auto& [name, agent] : config_.config->agents) caps.agents.push_back(name);
  }
  for (auto m : method::kHydraRequests) caps.methods.emplace_back(m);
  return caps;
}

void RaceService::open() {
  if (!workspace_.root) return;
  if (config_.error) {
    shownConfigProblem_ = config_.error->what();
    showMessage(protocol::MessageType::Error, "hydra.toml is broken: " + shownConfigProblem_ +
                                                  " (races cannot start until it is fixed)");
  }
  try {
    if (config_.config) {
      engineFor(*config_.config).recover();
    } else {
      core::RaceStore(*workspace_.root).recoverInterrupted([](pid_t pgid) {
        core::killProcessGroup(pgid, std::chrono::seconds(2));
      });
    }
  } catch (const std::exception& e) {
    spdlog::warn("could not recover races left by an earlier hydra: {}", e.what());
  }
}

// --- helpers -------------------------------------------------------------------

const std::filesystem::path& RaceService::requireRoot() const {
  if (!workspace_.root) throw rpc::notARepository(workspace_.folder, workspace_.problem);
  return *workspace_.root;
}

void RaceService::reloadConfig() {
  config_ = readConfig(requireRoot());
  if (!config_.error) {
    shownConfigProblem_.clear();
    return;
  }
  std::string problem = config_.error->what();
  if (problem == shownConfigProblem_) return;
  shownConfigProblem_ = problem;
  showMessage(protocol::MessageType::Error, "hydra.toml is broken: " + problem);
}

const core::Config& RaceService::requireConfig() {
  reloadConfig();
  if (config_.error) throw rpc::configError(*config_.error);
  return *config_.config;
}

core::RaceEngine& RaceService::engineFor(const core::Config& config) {
  if (engines_.empty() || !(engines_.back()->config() == config)) {
    // Races already running keep the engine (and settings) they started with.
    engines_.push_back(std::make_unique<core::RaceEngine>(ctx_.io, requireRoot(), config, bus_));
    releaseIdleEngines();
  }
  return *engines_.back();
}

void RaceService::releaseIdleEngines() {
  if (engines_.size() < 2) return;
  for (auto it = engines_.begin(); it + 1 != engines_.end();) {
    bool used = (*it)->runningRaces() > 0;
    for (const auto& [id, race] : live_) used |= race.engine == it->get();
    it = used ? it + 1 : engines_.erase(it);
  }
}

LiveRaces RaceService::liveRaces() const {
  LiveRaces live;
  for (const auto& [id, race] : live_) (race.scoring ? live.scoring : live.running).insert(id);
  return live;
}

template <class Fn>
void RaceService::onPool(Reply reply, Fn fn) {
  asio::post(ctx_.pool, [reply = std::move(reply), fn = std::move(fn)]() mutable {
    try {
      reply(fn());
    } catch (const RpcError& e) {
      reply.error(e);
    } catch (const std::exception& e) {
      spdlog::error("{} failed: {}", reply.method(), e.what());
      reply.error(RpcError(ErrorCode::RequestFailed, reply.method() + " failed: " + e.what()));
    }
  });
}

void RaceService::showMessage(protocol::MessageType type, std::string message) {
  notify(method::kShowMessage,
         json::value_from(protocol::ShowMessageParams{type, std::move(message)}));
}

void RaceService::notify(std::string_view name, json::value params) {
  ctx_.dispatcher->notify(name, std::move(params));
}

// --- methods -------------------------------------------------------------------

void RaceService::agents(Reply reply) {
  auto root = requireRoot();
  core::Config config = requireConfig();
  // Probing runs every agent's `--version`: seconds, at worst.
  onPool(std::move(reply), [root, config] {
    protocol::AgentsResult result;
    for (const auto& probe : cli::probeAgents(config, root))
      result.agents.push_back(wire::toWire(probe));
    return json::value_from(result);
  });
}

void RaceService::race(protocol::RaceParams params, Reply reply) {
  const core::Config& config = requireConfig();
  for (const auto& name : params.agents) {
    if (!core::findAgent(config, name)) throw rpc::unknownAgentName(name, knownAgents(config));
  }
  core::RaceRecord record;
  core::RaceEngine* engine = nullptr;
  try {
    engine = &engineFor(config);
    record = engine->start(core::RaceRequest{params.task, params.agents, params.base});
  } catch (const core::RaceError& e) {
    throw rpc::raceRefused(e.what());
  } catch (const std::invalid_argument& e) {  // e.g. a workspace_dir outside the repository
    throw rpc::raceRefused(e.what());
  }

  LiveRace& race = live_[record.id];
  race.engine = engine;
  race.agents = record.agents.size();
  protocol::WorkDoneProgressBegin begin;
  begin.title = "Racing " + std::to_string(race.agents) + (race.agents == 1 ? " agent" : " agents");
  begin.cancellable = true;
  begin.message = firstLine(record.task);
  begin.percentage = 0;
  race.progress = WorkDoneProgress::begin(*ctx_.dispatcher, params.workDoneToken,
                                          ctx_.clientCreatesProgress, std::move(begin));
  reply(json::value_from(wire::toWire(record)));
}

void RaceService::status(protocol::StatusParams params, Reply reply) {
  auto root = requireRoot();
  onPool(std::move(reply), [root, params, live = liveRaces()] {
    return json::value_from(queries::status(root, params.raceId, live));
  });
}

void RaceService::races(protocol::RacesParams params, Reply reply) {
  auto root = requireRoot();
  onPool(std::move(reply), [root, params, live = liveRaces()] {
    return json::value_from(queries::races(root, params, live));
  });
}

void RaceService::cancel(protocol::CancelRaceParams params, Reply reply) {
  auto root = requireRoot();
  auto it = live_.find(params.raceId);
  if (it == live_.end()) {
    // Not running here: nothing to cancel, but the ids must still name something.
    onPool(std::move(reply), [root, params] {
      core::RaceStore store(root);
      auto race = queries::loadRace(store, params.raceId);
      if (params.agentId) queries::agentOf(race, *params.agentId);
      return json::value_from(protocol::CancelRaceResult{false});
    });
    return;
  }
  LiveRace& race = it->second;
  bool cancelled = false;
  if (params.agentId) {
    auto record = race.engine->find(params.raceId);
    if (record) queries::agentOf(*record, *params.agentId);
    cancelled = race.engine->cancel(params.raceId, *params.agentId);
  } else {
    cancelled = cancelRace(params.raceId);
  }
  reply(json::value_from(protocol::CancelRaceResult{cancelled}));
}

void RaceService::scores(protocol::RaceIdParams params, Reply reply) {
  auto root = requireRoot();
  onPool(std::move(reply), [root, params, live = liveRaces()] {
    return json::value_from(queries::scores(root, params.raceId, live));
  });
}

void RaceService::diff(protocol::DiffParams params, Reply reply) {
  auto root = requireRoot();
  onPool(std::move(reply), [root, params] { return queries::diff(root, params); });
}

void RaceService::log(protocol::LogParams params, Reply reply) {
  auto root = requireRoot();
  onPool(std::move(reply), [root, params] { return json::value_from(queries::log(root, params)); });
}

void RaceService::cleanup(protocol::CleanupParams params, Reply reply) {
  auto root = requireRoot();
  core::Config config = requireConfig();
  onPool(std::move(reply), [root, config, params, live = liveRaces()] {
    return json::value_from(queries::cleanup(root, config, params, live));
  });
}

void RaceService::merge(protocol::MergeParams params, Reply reply) {
  auto root = requireRoot();
  core::Config config = requireConfig();
  // The person at the editor must see a conflict or a refusal even when the
  // request came from a command that shows nothing else: both also go out
  // as window/showMessage, from the io thread, before the answer.
  asio::post(ctx_.pool, [this, alive = alive_, &io = ctx_.io, root, config, params,
                         live = liveRaces(), reply = std::move(reply)]() mutable {
    std::variant<protocol::MergeResult, RpcError> outcome = RpcError(ErrorCode::RequestFailed, "");
    try {
      outcome = queries::merge(root, config, params, live);
    } catch (const RpcError& e) {
      outcome = e;
    } catch (const std::exception& e) {
      outcome = RpcError(ErrorCode::RequestFailed, std::string("hydra/merge failed: ") + e.what());
    }
    asio::post(io, [this, alive, outcome = std::move(outcome), reply = std::move(reply)]() mutable {
      if (auto* result = std::get_if<protocol::MergeResult>(&outcome)) {
        if (*alive && result->outcome == "conflict") {
          std::string files;
          for (const auto& f : result->conflicts) files += (files.empty() ? "" : ", ") + f;
          showMessage(protocol::MessageType::Warning,
                      "merging " + result->branch + " into " + result->targetBranch +
                          " conflicts in " + std::to_string(result->conflicts.size()) +
                          " file(s): " + files + "; nothing was changed");
        }
        reply(json::value_from(*result));
        return;
      }
      const RpcError& e = std::get<RpcError>(outcome);
      bool refused = e.code() == static_cast<int>(ErrorCode::DirtyWorkingTree) ||
                     e.code() == static_cast<int>(ErrorCode::MergeRefused);
      if (*alive && refused) showMessage(protocol::MessageType::Error, e.what());
      reply.error(e);
    });
  });
}

void RaceService::progressCancelled(const protocol::ProgressToken& token) {
  for (const auto& [id, race] : live_) {
    if (race.progress && race.progress->token() == token) {
      spdlog::info("race {} cancelled from its progress", id);
      cancelRace(std::string(id));
      return;
    }
  }
}

bool RaceService::cancelRace(const std::string& raceId) {
  auto it = live_.find(raceId);
  if (it == live_.end()) return false;
  return it->second.engine->cancel(raceId);
}

void RaceService::stopAll(std::chrono::milliseconds grace) {
  if (stopped_) return;
  stopped_ = true;
  for (auto& engine : engines_) engine->interruptAll(grace);
  // Whatever else hydra started (checks of a scoring, version probes) goes too.
  core::ProcessRegistry::instance().killAll(grace);
  live_.clear();
}

// --- events --------------------------------------------------------------------

void RaceService::drain() {
  if (!subscription_) return;
  for (auto& event : subscription_->drain()) {
    if (stopped_) return;
    std::visit([this](auto& e) { on(e); }, event.body);
  }
}

void RaceService::on(const core::AgentStarted& e) {
  notify(method::kAgentStarted, json::value_from(wire::toWire(e)));
}

void RaceService::on(const core::AgentFinished& e) {
  output_->flushAgent(e.raceId, e.agentId);
  notify(method::kAgentFinished, json::value_from(wire::toWire(e)));
  auto it = live_.find(e.raceId);
  if (it == live_.end() || !it->second.progress) return;
  LiveRace& race = it->second;
  race.finished = std::min(race.finished + 1, race.agents);
  protocol::WorkDoneProgressReport report;
  report.message = e.agentId + " finished (" + std::string(core::toString(e.status)) + ")";
  report.percentage = static_cast<int>(race.finished * 100 / std::max<std::size_t>(race.agents, 1));
  race.progress->report(std::move(report));
}

void RaceService::on(const core::ScoringStarted& e) {
  output_->flushRace(e.raceId);
  notify(method::kScoringStarted, json::value_from(protocol::ScoringStartedParams{e.raceId}));
  auto it = live_.find(e.raceId);
  if (it == live_.end()) return;
  it->second.scoring = true;
  if (it->second.progress)
    it->second.progress->report(protocol::WorkDoneProgressReport{{}, "scoring the results", {}});
}

void RaceService::on(const core::RaceFinished& e) {
  output_->flushRace(e.raceId);
  if (e.status != core::RaceStatus::Completed) {
    finish(e.raceId, e.status, std::nullopt);
    return;
  }
  // Scored: the rankings are in the race's scores.json, which is read off the io thread.
  auto done = [this, alive = alive_, e](std::optional<core::scoring::RaceScores> scores) {
    if (*alive && !stopped_) finish(e.raceId, e.status, scores);
  };
  asio::post(ctx_.pool, [&io = ctx_.io, root = requireRoot(), raceId = e.raceId, done] {
    std::optional<core::scoring::RaceScores> scores;
    try {
      scores = queries::readScores(core::RaceStore(root), raceId);
    } catch (const std::exception& error) {
      spdlog::error("race {}: {}", raceId, error.what());
    }
    asio::post(io, [done, scores = std::move(scores)] { done(scores); });
  });
}

void RaceService::finish(const std::string& raceId, core::RaceStatus status,
                         const std::optional<core::scoring::RaceScores>& scores) {
  output_->flushRace(raceId);
  protocol::RaceFinishedParams params;
  params.raceId = raceId;
  params.status = std::string(core::toString(status));
  if (scores) {
    for (const auto& a : scores->rankings) params.rankings.push_back(wire::toWire(a));
    params.winner = scores->winner;
    params.autoMergeEligible = scores->autoMergeEligible;
    params.allFailed = scores->allFailed;
  }
  notify(method::kRaceFinished, json::value_from(params));

  auto it = live_.find(raceId);
  if (it == live_.end()) return;
  if (it->second.progress)
    it->second.progress->end(protocol::WorkDoneProgressEnd{outcomeText(status, scores)});
  live_.erase(it);
  releaseIdleEngines();
}

}  // namespace hydra::server
