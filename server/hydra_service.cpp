#include "server/hydra_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <filesystem>
#include <utility>
#include <variant>

#include "core/config/executor_choice.h"
#include "core/eval/report_lookup.h"
#include "core/util/text.h"
#include "hydra/version.h"
#include "protocol/methods.h"
#include "server/config_diagnostics.h"
#include "server/rpc_errors.h"

namespace hydra::server {

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace json = boost::json;
namespace method = protocol::method;
using protocol::ErrorCode;
using protocol::RpcError;

namespace {

std::string outcomeText(const core::RaceFinished& e) {
  if (e.stopReason) {
    std::string text = "collaboration " + std::string(core::toString(e.status));
    if (e.scores && e.scores->winner) {
      char score[32];
      std::snprintf(score, sizeof score, "%.1f", e.scores->rankings.front().total);
      text += "; best: " + *e.scores->winner + " (" + score + ")";
    }
    return text;
  }
  std::string text = "race " + std::string(core::toString(e.status));
  if (e.scores && e.scores->allFailed) return text + " (all agents failed)";
  if (e.scores && e.scores->winner) text += "; winner: " + *e.scores->winner;
  return text;
}

}  // namespace

HydraService::HydraService(Context context, WorkspaceFolder folder)
    : ctx_(std::move(context)), folder_(std::move(folder)) {
  if (!folder_.problem.empty()) {
    noWorkspace_ = core::WorkspaceError::notARepository(folder_.path, folder_.problem);
  } else {
    try {
      workspace_ = std::make_unique<core::Workspace>(ctx_.io, folder_.path, ctx_.workspace);
      evals_ = std::make_unique<core::eval::EvalSession>(ctx_.io, *workspace_, ctx_.workspace);
      spdlog::info("repository: {}", workspace_->root().string());
    } catch (const core::WorkspaceError& e) {
      spdlog::info("{}", e.what());
      noWorkspace_ = e;
    }
  }
  output_ = std::make_unique<OutputNotifier>(ctx_.io, ctx_.dispatcher, ctx_.transport, ctx_.output);
  if (workspace_) {
    // Events are taken on the io thread; the bus only posts a wake-up there.
    subscription_ = workspace_->bus().subscribe(core::SubscriptionOptions{
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
}

HydraService::~HydraService() {
  *alive_ = false;
  configWatch_.reset();
  subscription_.reset();
  live_.clear();
  evalProgress_.clear();
  evals_.reset();      // with the other repositories' workspaces: what still runs there is interrupted
  workspace_.reset();  // interrupts whatever still runs, writes the records
}

core::Workspace& HydraService::workspace() {
  if (!workspace_) throw toRpcError(*noWorkspace_);
  return *workspace_;
}

protocol::HydraCapabilities HydraService::capabilities() {
  protocol::HydraCapabilities caps;
  caps.version = kVersion;
  if (workspace_) caps.agents = workspace_->agentNames();
  for (auto m : method::kHydraRequests) caps.methods.emplace_back(m);
  return caps;
}

void HydraService::open() {
  if (!workspace_) return;
  reportConfig();
  watchConfig();
  asio::post(workspace_->pool(), [ws = workspace_.get()] {
    try {
      ws->recover();
    } catch (const std::exception& e) {
      spdlog::warn("could not recover races left by an earlier hydra: {}", e.what());
    }
  });
}

// --- helpers ---------------------------------------------------------------------------

template <class Fn>
void HydraService::onPool(Reply reply, Fn fn) {
  asio::post(workspace().pool(), [this, reply = std::move(reply), fn = std::move(fn)]() mutable {
    try {
      reply(fn());
    } catch (const core::WorkspaceError& e) {
      failWith(std::move(reply), e);
    } catch (const RpcError& e) {
      reply.error(e);
    } catch (const std::exception& e) {
      spdlog::error("{} failed: {}", reply.method(), e.what());
      reply.error(RpcError(ErrorCode::RequestFailed, reply.method() + " failed: " + e.what()));
    }
  });
}

void HydraService::failWith(Reply reply, const core::WorkspaceError& error) {
  if (error.kind() != core::WorkspaceError::Kind::ConfigError) {
    reply.error(toRpcError(error));
    return;
  }
  // A broken hydra.toml goes out as window/showMessage before the answer,
  // whichever request met it first: a client that sees the message first
  // knows not to show the error again.
  asio::post(ctx_.io, [this, alive = alive_, reply = std::move(reply), error]() mutable {
    if (*alive) tellConfigProblemOf(error);
    reply.error(toRpcError(error));
  });
}

void HydraService::tellConfigProblemOf(const core::WorkspaceError& error) {
  const json::object& data = error.data();
  const json::string* file = data.contains("file") ? data.at("file").if_string() : nullptr;
  const json::string* message = data.contains("message") ? data.at("message").if_string() : nullptr;
  if (!file || !message) return;
  auto number = [&](const char* key) {
    const json::value* v = data.if_contains(key);
    return v && v->is_int64() ? static_cast<int>(v->as_int64()) : 0;
  };
  tellConfigProblem(core::ConfigError(std::string(*file), number("line"), number("column"), std::string(*message)));
}

void HydraService::reportConfig(bool quietly) {
  // hydra.toml is read on the pool; what to tell the user is decided back here.
  asio::post(workspace().pool(), [this, alive = alive_, ws = &workspace(), quietly] {
    auto state = ws->configState();
    std::vector<core::ConfigWarning> warnings = state.config ? state.config->warnings : std::vector<core::ConfigWarning>{};
    asio::post(ctx_.io, [this, alive, error = std::move(state.error), warnings = std::move(warnings), quietly] {
      if (*alive) tellConfigProblem(error, quietly, warnings);
    });
  });
}

void HydraService::tellConfigProblem(const std::optional<core::ConfigError>& error, bool quietly,
                                     const std::vector<core::ConfigWarning>& warnings) {
  // The diagnostics: on the file and position the error names, once per
  // change; a file that loaded may still carry warnings (tests compared by
  // counts only), on the key they concern.
  std::string uri;
  json::array diagnostics;
  if (error) {
    fs::path file = error->file();
    if (file.is_relative()) file = workspace().root() / file;
    uri = fileUriFromPath(file.lexically_normal());
    diagnostics.push_back(configDiagnostic(file, error->line(), error->column(), kDiagnosticError,
                                           error->message() + " (races cannot start until it is fixed)"));
  } else if (!warnings.empty()) {
    const fs::path file = (workspace().root() / "hydra.toml").lexically_normal();
    uri = fileUriFromPath(file);
    for (const core::ConfigWarning& warning : warnings)
      diagnostics.push_back(configDiagnostic(file, warning.line, warning.column, kDiagnosticWarning, warning.message));
  }
  const std::string shown = uri + "\n" + json::serialize(diagnostics);
  if (shown != diagnosticsShown_) {
    if (!diagnosticsUri_.empty() && diagnosticsUri_ != uri) {
      notify(method::kPublishDiagnostics, json::object{{"uri", diagnosticsUri_}, {"diagnostics", json::array()}});
    }
    if (!uri.empty()) notify(method::kPublishDiagnostics, json::object{{"uri", uri}, {"diagnostics", diagnostics}});
    diagnosticsUri_ = uri;
    diagnosticsShown_ = shown;
  }

  const std::string problem = error ? error->what() : "";
  if (quietly || problem == shownConfigProblem_) return;
  shownConfigProblem_ = problem;
  if (problem.empty()) return;
  showMessage(protocol::MessageType::Error,
              "hydra.toml is broken: " + problem + " (races cannot start until it is fixed)");
}

void HydraService::watchConfig() {
  constexpr auto kInterval = std::chrono::seconds(2);
  if (!configWatch_) configWatch_ = std::make_unique<asio::steady_timer>(ctx_.io);
  configWatch_->expires_after(kInterval);
  configWatch_->async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (ec || !*alive || stopped_) return;
    reportConfig(true);
    watchConfig();
  });
}

void HydraService::showMessage(protocol::MessageType type, std::string message) {
  notify(method::kShowMessage, json::value_from(protocol::ShowMessageParams{type, std::move(message)}));
}

void HydraService::notify(std::string_view name, json::value params) {
  ctx_.dispatcher->notify(name, std::move(params));
}

// --- methods ---------------------------------------------------------------------------

void HydraService::agents(Reply reply) {
  reportConfig();
  // Probing runs every agent's version option: seconds, at worst.
  onPool(std::move(reply), [ws = &workspace()] {
    json::object result{{"agents", json::value_from(ws->agents())}};
    // What a client offers first when it asks for a collaboration's agents.
    if (auto config = ws->configState().config) {
      // Where a run may go: a client asks only when there is more than one.
      json::array executors;
      for (core::ExecutorKind kind : core::offeredExecutors(config->executor)) executors.emplace_back(toString(kind));
      result["executors"] = std::move(executors);
      const core::CollaborationConfig& c = config->collaboration;
      if (c.builder || c.reviewer) {
        json::object collaboration;
        if (c.builder) collaboration["builder"] = *c.builder;
        if (c.reviewer) collaboration["reviewer"] = *c.reviewer;
        result["collaboration"] = std::move(collaboration);
      }
    }
    return json::value(std::move(result));
  });
}

void HydraService::race(protocol::RaceParams params, Reply reply) {
  reportConfig();
  auto token = params.workDoneToken;
  auto shared = std::make_shared<Reply>(std::move(reply));
  workspace().startRace(
      core::RaceRequest{.task = params.task, .agents = params.agents, .baseRef = params.base,
                        .executor = core::requestedExecutorKind(params.executor)},
      [this, alive = alive_, token, shared](core::RaceSummary race) {
        if (!*alive) return;
        LiveRace& live = live_[race.raceId];
        live.agents = race.agents.size();
        protocol::WorkDoneProgressBegin begin;
        begin.title = "Racing " + std::to_string(live.agents) + (live.agents == 1 ? " agent" : " agents");
        begin.cancellable = true;
        begin.message = core::firstLine(race.task, 80);
        begin.percentage = 0;
        live.progress =
            WorkDoneProgress::begin(*ctx_.dispatcher, token, ctx_.clientCreatesProgress, std::move(begin));
        (*shared)(json::value_from(race));
      },
      [this, alive = alive_, shared](core::WorkspaceError error) {
        // The problem is shown before the answer, whichever of the two
        // readings of hydra.toml got here first: a client shows it once.
        if (*alive && error.kind() == core::WorkspaceError::Kind::ConfigError) tellConfigProblemOf(error);
        shared->error(toRpcError(error));
      });
}

void HydraService::collab(protocol::CollabParams params, Reply reply) {
  reportConfig();
  auto token = params.workDoneToken;
  auto shared = std::make_shared<Reply>(std::move(reply));
  workspace().startCollab(
      core::CollabRequest{params.task, params.builder, params.reviewer, params.maxIterations, params.untilScore,
                          params.base, core::requestedExecutorKind(params.executor)},
      [this, alive = alive_, token, shared](core::RaceSummary race) {
        if (!*alive) return;
        LiveRace& live = live_[race.raceId];
        live.agents = race.agents.size();
        const core::CollabSettings settings = race.collaboration.value_or(core::CollabSettings{});
        live.maxIterations = std::max(1, settings.maxIterations);
        protocol::WorkDoneProgressBegin begin;
        begin.title = "Collaborating: " + settings.builder + " builds, " + settings.reviewer + " reviews";
        begin.cancellable = true;
        begin.message = core::firstLine(race.task, 80);
        begin.percentage = 0;
        live.progress =
            WorkDoneProgress::begin(*ctx_.dispatcher, token, ctx_.clientCreatesProgress, std::move(begin));
        (*shared)(json::value_from(race));
      },
      [this, alive = alive_, shared](core::WorkspaceError error) {
        if (*alive && error.kind() == core::WorkspaceError::Kind::ConfigError) tellConfigProblemOf(error);
        shared->error(toRpcError(error));
      });
}

void HydraService::status(protocol::StatusParams params, Reply reply) {
  onPool(std::move(reply), [ws = &workspace(), params] {
    json::object result{{"races", json::value_from(ws->status(params.raceId))}};
    if (auto pool = ws->worktreePool()) result["pool"] = json::value_from(*pool);
    return json::value(std::move(result));
  });
}

void HydraService::races(protocol::RacesParams params, Reply reply) {
  onPool(std::move(reply), [ws = &workspace(), params] {
    return json::value_from(
        ws->races(static_cast<std::size_t>(params.offset), static_cast<std::size_t>(params.limit)));
  });
}

void HydraService::cancel(protocol::CancelRaceParams params, Reply reply) {
  // The ids are checked on the pool (they may name a race on disk); the cancel
  // itself happens on the io thread, where races run.
  auto shared = std::make_shared<Reply>(std::move(reply));
  asio::post(workspace().pool(), [this, alive = alive_, ws = &workspace(), params, shared] {
    try {
      if (params.agentId) ws->agentRecord(params.raceId, *params.agentId);
      ws->requireCancellable(params.raceId);
    } catch (const core::WorkspaceError& e) {
      shared->error(toRpcError(e));
      return;
    } catch (const std::exception& e) {
      shared->error(RpcError(ErrorCode::RequestFailed, std::string("hydra/cancel failed: ") + e.what()));
      return;
    }
    asio::post(ctx_.io, [alive, ws, params, shared] {
      if (!*alive) return;
      std::optional<std::string_view> agent;
      if (params.agentId) agent = *params.agentId;
      (*shared)(json::value_from(protocol::CancelRaceResult{ws->cancel(params.raceId, agent)}));
    });
  });
}

void HydraService::scores(protocol::RaceIdParams params, Reply reply) {
  onPool(std::move(reply), [ws = &workspace(), params] { return json::value_from(ws->scores(params.raceId)); });
}

void HydraService::diff(protocol::DiffParams params, Reply reply) {
  onPool(std::move(reply), [ws = &workspace(), params] {
    if (params.path) return json::value_from(ws->file(params.raceId, params.agentId, *params.path));
    return json::value_from(ws->diff(params.raceId, params.agentId));
  });
}

void HydraService::log(protocol::LogParams params, Reply reply) {
  onPool(std::move(reply), [ws = &workspace(), params] {
    auto stream = params.stream == "stderr" ? core::OutputStream::Stderr : core::OutputStream::Stdout;
    return json::value_from(ws->log(params.raceId, params.agentId, stream, params.offset, params.limit.value_or(0)));
  });
}

void HydraService::agentEvents(protocol::AgentEventsParams params, Reply reply) {
  onPool(std::move(reply), [ws = &workspace(), params] {
    return json::value_from(
        ws->agentEvents(params.raceId, params.agentId, params.offset, params.limit.value_or(1000)));
  });
}

void HydraService::cleanup(protocol::CleanupParams params, Reply reply) {
  reportConfig();
  onPool(std::move(reply), [ws = &workspace(), params] {
    return json::value_from(ws->cleanup(params.raceId, params.keepBranches, params.pool));
  });
}

void HydraService::merge(protocol::MergeParams params, Reply reply) {
  reportConfig();
  // The person at the editor must see a conflict or a refusal even when the
  // request came from a command that shows nothing else: both also go out
  // as window/showMessage, from the io thread, before the answer.
  asio::post(workspace().pool(), [this, alive = alive_, ws = &workspace(), params,
                                  reply = std::move(reply)]() mutable {
    std::variant<core::MergeReport, RpcError> outcome = RpcError(ErrorCode::RequestFailed, "");
    try {
      outcome = ws->merge(params.raceId, params.agentId, params.dryRun, params.keep, params.force);
    } catch (const core::WorkspaceError& e) {
      if (e.kind() == core::WorkspaceError::Kind::ConfigError) {
        failWith(std::move(reply), e);
        return;
      }
      outcome = toRpcError(e);
    } catch (const std::exception& e) {
      outcome = RpcError(ErrorCode::RequestFailed, std::string("hydra/merge failed: ") + e.what());
    }
    asio::post(ctx_.io, [this, alive, outcome = std::move(outcome), reply = std::move(reply)]() mutable {
      if (auto* result = std::get_if<core::MergeReport>(&outcome)) {
        if (*alive && result->outcome == "conflict") {
          std::string files;
          for (const auto& f : result->conflicts) files += (files.empty() ? "" : ", ") + f;
          showMessage(protocol::MessageType::Warning, "merging " + result->branch + " into " + result->targetBranch +
                                                          " conflicts in " + std::to_string(result->conflicts.size()) +
                                                          " file(s): " + files + "; nothing was changed");
        }
        reply(json::value_from(*result));
        return;
      }
      const RpcError& e = std::get<RpcError>(outcome);
      const bool refused = e.code() == static_cast<int>(ErrorCode::DirtyWorkingTree) ||
                     e.code() == static_cast<int>(ErrorCode::MergeRefused);
      if (*alive && refused) showMessage(protocol::MessageType::Error, e.what());
      reply.error(e);
    });
  });
}

// --- evaluations -------------------------------------------------------------------------

namespace {

// A broken or missing eval set: where, for the editor to show the place.
RpcError evalSetError(const core::ConfigError& e) {
  return RpcError(ErrorCode::EvalSetError, e.what(),
                  json::object{{"file", e.file().string()},
                               {"line", e.line()},
                               {"column", e.column()},
                               {"message", e.message()}});
}

std::optional<fs::path> pathOf(const std::optional<std::string>& p) {
  if (!p) return std::nullopt;
  return fs::path(*p);
}

}  // namespace

void HydraService::evalRun(protocol::EvalRunParams params, Reply reply) {
  reportConfig();
  core::eval::EvalSession& session = evalSession();
  // Reading the set, resolving the bases and probing the agents block: the pool.
  asio::post(workspace().pool(), [this, alive = alive_, &session, params = std::move(params),
                                  reply = std::move(reply)]() mutable {
    std::shared_ptr<core::eval::EvalRunner> runner;
    try {
      runner = session.prepare(core::eval::RunRequest{params.set, params.agents, params.samples, params.passK,
                                                      pathOf(params.out), pathOf(params.resume), kVersion,
                                                      core::requestedExecutorKind(params.executor)});
    } catch (const core::ConfigError& e) {
      reply.error(evalSetError(e));
      return;
    } catch (const core::WorkspaceError& e) {
      failWith(std::move(reply), e);
      return;
    } catch (const std::exception& e) {
      spdlog::error("hydra/evalRun failed: {}", e.what());
      reply.error(RpcError(ErrorCode::RequestFailed, std::string("hydra/evalRun failed: ") + e.what()));
      return;
    }
    asio::post(ctx_.io, [this, alive, runner = std::move(runner), token = params.workDoneToken,
                         reply = std::move(reply)]() mutable {
      if (!*alive || stopped_) {
        reply.error(RpcError(ErrorCode::RequestFailed, "hydra is stopping"));
        return;
      }
      startEval(std::move(runner), std::move(token), std::move(reply));
    });
  });
}

core::eval::EvalSession& HydraService::evalSession() {
  workspace();  // NotARepository when there is none
  return *evals_;
}

void HydraService::startEval(std::shared_ptr<core::eval::EvalRunner> runner,
                             std::optional<protocol::ProgressToken> token, Reply reply) {
  core::eval::EvalSession::Listener listener;
  // Before any sample: the progress begins and the request is answered, so a
  // resumed run with nothing left ends after both.
  listener.started = [this, &reply, &token](const core::eval::EvalStarted& e) {
    protocol::WorkDoneProgressBegin begin;
    begin.title = "Evaluating " + e.name;
    begin.cancellable = true;
    begin.message = e.progress.line();
    begin.percentage = e.progress.percentage();
    evalProgress_[e.evalId] = WorkDoneProgress::begin(*ctx_.dispatcher, std::move(token),
                                                      ctx_.clientCreatesProgress, std::move(begin));
    reply(core::eval::toJson(e));
  };
  listener.sample = [this](const core::eval::EvalSampleDone& e) {
    notify(method::kEvalSample, core::eval::toJson(e));
    if (auto& progress = evalProgress_[e.evalId]) {
      progress->report(protocol::WorkDoneProgressReport{{}, e.progress.line(), std::min(99, e.progress.percentage())});
    }
  };
  listener.finished = [this](const core::eval::EvalFinished& e) {
    // The progress ends first: a client that hears of the end has no progress left to close.
    if (auto progress = std::exchange(evalProgress_[e.evalId], nullptr)) {
      progress->end(protocol::WorkDoneProgressEnd{"evaluation " + std::string(core::eval::toString(e.status)) + ": " +
                                                  std::to_string(e.progress.solved) + "/" +
                                                  std::to_string(e.progress.done) + " solved"});
    }
    if (e.recordIncomplete) {
      showMessage(protocol::MessageType::Warning, "Evaluation " + e.evalId +
                                                      " could not be recorded in full: " + *e.recordIncomplete +
                                                      ". The report on disk is the last one written whole.");
    }
    notify(method::kEvalFinished, core::eval::toJson(e));
  };
  try {
    evalSession().start(std::move(runner), std::move(listener));
  } catch (const core::WorkspaceError& e) {
    failWith(std::move(reply), e);
  }
}

void HydraService::evalReport(protocol::EvalReportParams params, Reply reply) {
  std::optional<fs::path> path = pathOf(params.report);
  if (params.evalId) {
    try {
      path = evalSession().reportOf(*params.evalId);
    } catch (const core::WorkspaceError& e) {
      failWith(std::move(reply), e);
      return;
    }
  }
  onPool(std::move(reply), [ws = &workspace(), path, format = params.format]() -> json::value {
    return core::eval::toJson(core::eval::findReport(ws->root(), path, format));
  });
}

void HydraService::evalCancel(protocol::EvalIdParams params, Reply reply) {
  try {
    reply(json::value_from(protocol::CancelRaceResult{evalSession().cancel(params.evalId)}));
  } catch (const core::WorkspaceError& e) {
    failWith(std::move(reply), e);
  }
}

void HydraService::progressCancelled(const protocol::ProgressToken& token) {
  for (const auto& [id, race] : live_) {
    if (race.progress && race.progress->token() == token) {
      spdlog::info("race {} cancelled from its progress", id);
      if (workspace_) workspace_->cancel(id);
      return;
    }
  }
  for (const auto& [id, progress] : evalProgress_) {
    if (progress && progress->token() == token && evals_->cancel(id)) {
      spdlog::info("evaluation {} cancelled from its progress", id);
      return;
    }
  }
}

void HydraService::stopAll(std::function<void()> done) {
  if (configWatch_) configWatch_->cancel();
  if (stopped_ || !workspace_) {
    stopped_ = true;
    if (done) done();
    return;
  }
  stopped_ = true;
  live_.clear();
  // The session's workspace and every other repository an evaluation used.
  std::vector<core::Workspace*> workspaces{workspace_.get()};
  if (evals_) {
    evals_->stop();
    for (core::Workspace* other : evals_->otherWorkspaces()) workspaces.push_back(other);
  }
  auto left = std::make_shared<std::size_t>(workspaces.size());
  auto shared = std::make_shared<std::function<void()>>(std::move(done));
  for (core::Workspace* ws : workspaces) {
    ws->interruptAll([left, shared] {
      if (--*left == 0 && *shared) (*shared)();
    });
  }
}

// --- events ----------------------------------------------------------------------------

void HydraService::drain() {
  if (!subscription_) return;
  for (auto& event : subscription_->drain()) {
    if (stopped_) return;
    onEvent(event);
  }
}

void HydraService::onEvent(core::RaceEvent& event) {
  // An evaluation's samples are races the client never hears of: their ends
  // go to the evaluations, once their records are on disk.
  if (evals_->handle(event)) return;
  std::visit(
      [&](auto& e) {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, core::AgentOutput>) {
          output_->add(std::move(e));
        } else if constexpr (std::is_same_v<E, core::OutputDropped>) {
          output_->dropped(e);
        } else if constexpr (std::is_same_v<E, core::AgentStarted>) {
          notify(method::kAgentStarted, core::toJson(event.body));
          auto it = live_.find(e.raceId);
          if (it == live_.end() || !it->second.progress || it->second.maxIterations == 0) return;
          // A collaboration reports its phases.
          const int n = e.phase.iteration.value_or(1);
          const std::string doing = e.phase.phase == "review" ? "reviewing" : e.phase.phase == "refine" ? "refining"
                                                                                                         : "building";
          protocol::WorkDoneProgressReport report;
          report.message = "iteration " + std::to_string(n) + ": " + doing;
          report.percentage = std::min(99, (n - 1) * 100 / it->second.maxIterations);
          it->second.progress->report(std::move(report));
        } else if constexpr (std::is_same_v<E, core::IterationFinished>) {
          output_->flushRace(e.raceId);
          notify(method::kIterationFinished, core::toJson(event.body));
          auto it = live_.find(e.raceId);
          if (it == live_.end() || !it->second.progress) return;
          char score[32];
          std::snprintf(score, sizeof score, "%.1f", e.result.score ? e.result.score->total : 0.0);
          protocol::WorkDoneProgressReport report;
          report.message = "iteration " + std::to_string(e.result.iteration) + ": " +
                           (e.result.score ? "scored " + std::string(score) : std::string("not scored")) +
                           (e.result.approved ? ", approved" : "");
          report.percentage = std::min(99, e.result.iteration * 100 / std::max(1, it->second.maxIterations));
          it->second.progress->report(std::move(report));
        } else if constexpr (std::is_same_v<E, core::AgentFinished>) {
          output_->flushAgent(e.raceId, e.agentId);
          notify(method::kAgentFinished, core::toJson(event.body));
          auto it = live_.find(e.raceId);
          if (it == live_.end() || !it->second.progress || it->second.maxIterations > 0) return;
          LiveRace& race = it->second;
          race.finished = std::min(race.finished + 1, race.agents);
          protocol::WorkDoneProgressReport report;
          report.message = e.agentId + " finished (" + std::string(core::toString(e.status)) + ")";
          report.percentage = static_cast<int>(race.finished * 100 / std::max<std::size_t>(race.agents, 1));
          race.progress->report(std::move(report));
        } else if constexpr (std::is_same_v<E, core::ScoringStarted>) {
          output_->flushRace(e.raceId);
          notify(method::kScoringStarted, core::toJson(event.body));
          auto it = live_.find(e.raceId);
          if (it != live_.end() && it->second.progress) {
            it->second.progress->report(protocol::WorkDoneProgressReport{
                {}, e.iteration ? "iteration " + std::to_string(*e.iteration) + ": scoring" : "scoring the results", {}});
          }
        } else if constexpr (std::is_same_v<E, core::RaceFinished>) {
          output_->flushRace(e.raceId);
          // Sent once the race's record and scores are on disk, so a client
          // may read them as soon as it hears the race is over.
          workspace_->whenRecorded([this, alive = alive_, finished = e] {
            if (!*alive || stopped_) return;
            output_->flushRace(finished.raceId);
            json::value params = core::toJson(core::RaceEventBody(finished));
            // What finished is whole in this notification; what is on disk
            // is not (a full disk, a read-only .hydra): say so, naming the file.
            if (auto failure = workspace_->recordFailure(finished.raceId)) {
              params.as_object()["recordIncomplete"] = *failure;
              showMessage(protocol::MessageType::Warning,
                          "The record of race " + finished.raceId + " could not be written in full: " + *failure +
                              ". The results shown are whole; on disk is the last record written whole.");
            }
            notify(method::kRaceFinished, params);
            auto it = live_.find(finished.raceId);
            if (it == live_.end()) return;
            if (it->second.progress) it->second.progress->end(protocol::WorkDoneProgressEnd{outcomeText(finished)});
            live_.erase(it);
          });
        }
      },
      event.body);
}

}  // namespace hydra::server
