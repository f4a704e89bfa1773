#include "server/hydra_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <filesystem>
#include <variant>

#include "core/config/executor_choice.h"
#include "core/guard/records.h"
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
  evals_.clear();
  for (auto& [root, other] : others_) other.subscription.reset();
  others_.clear();     // like the workspace: what still runs there is interrupted
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
      for (const std::string& kind : core::offeredExecutors(config->executor)) executors.emplace_back(kind);
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
      core::RaceRequest{.task = params.task, .agents = params.agents, .baseRef = params.base, .executor = params.executor},
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
                          params.base, params.executor},
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

std::string progressLine(int done, int total, int solved, double costUsd) {
  char cost[32];
  std::snprintf(cost, sizeof cost, "$%.4f", costUsd);
  return std::to_string(done) + "/" + std::to_string(total) + " samples · " + std::to_string(solved) + " solved · " +
         cost;
}

// The newest report under .hydra/evals, by when it was last written.
std::optional<fs::path> newestReport(const fs::path& root) {
  std::error_code ec;
  std::optional<fs::path> newest;
  fs::file_time_type newestTime{};
  for (const auto& entry : fs::directory_iterator(root / ".hydra" / core::guard::kEvalReportsFolder, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".json") continue;
    auto time = entry.last_write_time(ec);
    if (ec) continue;
    if (!newest || time > newestTime || (time == newestTime && entry.path() > *newest)) {
      newest = entry.path();
      newestTime = time;
    }
  }
  return newest;
}

}  // namespace

void HydraService::evalRun(protocol::EvalRunParams params, Reply reply) {
  reportConfig();
  // Reading the set, resolving the bases and probing the agents block: the pool.
  asio::post(workspace().pool(), [this, alive = alive_, ws = &workspace(), params = std::move(params),
                                  reply = std::move(reply)]() mutable {
    std::shared_ptr<core::eval::EvalRunner> runner;
    try {
      auto path = [](const std::optional<std::string>& p) -> std::optional<fs::path> {
        if (!p) return std::nullopt;
        return fs::path(*p);
      };
      core::eval::RunOptions options = core::eval::resolve(
          core::eval::RunRequest{params.set, params.agents, params.samples, params.passK, path(params.out),
                                 path(params.resume), kVersion, params.executor},
          ws->root());
      runner = core::eval::EvalRunner::prepare(*ws, std::move(options),
                                               [this](const fs::path& root) -> core::Workspace& {
                                                 return otherWorkspace(root);
                                               });
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

core::Workspace& HydraService::otherWorkspace(const fs::path& root) {
  std::lock_guard lock(othersMutex_);
  OtherWorkspace& other = others_[root];
  if (other.workspace) return *other.workspace;
  auto ws = std::make_unique<core::Workspace>(ctx_.io, root, ctx_.workspace);
  try {
    ws->recover();
  } catch (const std::exception& e) {
    spdlog::warn("could not recover races left in {} by an earlier hydra: {}", root.string(), e.what());
  }
  spdlog::info("eval cases also run in {}", ws->root().string());
  core::Workspace* raw = ws.get();
  // Its samples end the way the main workspace's do: recorded, then handed on.
  other.subscription = raw->bus().subscribe(core::SubscriptionOptions{
      .maxEvents = 4096,
      .maxBytes = 4 * 1024 * 1024,
      .onReady =
          [this, alive = alive_, raw, root] {
            asio::post(ctx_.io, [this, alive, raw, root] {
              if (!*alive || stopped_) return;
              std::shared_ptr<core::Subscription> subscription;
              {
                std::lock_guard lock(othersMutex_);
                subscription = others_[root].subscription;
              }
              if (!subscription) return;  // being set up: it drains what came at the next wake-up
              for (auto& event : subscription->drain()) {
                if (!std::holds_alternative<core::RaceFinished>(event.body)) continue;
                raw->whenRecorded([this, alive, raw, event] {
                  if (!*alive || stopped_) return;
                  for (auto& [id, e] : evals_) {
                    if (!e.runner->finished()) e.runner->handle(*raw, event);
                  }
                });
              }
            });
          },
  });
  other.workspace = std::move(ws);
  return *raw;
}

void HydraService::startEval(std::shared_ptr<core::eval::EvalRunner> runner,
                             std::optional<protocol::ProgressToken> token, Reply reply) {
  const core::eval::RunOptions& options = runner->options();
  const std::string id = core::eval::evalId(options);
  if (auto it = evals_.find(id); it != evals_.end() && !it->second.runner->finished()) {
    reply.error(RpcError(ErrorCode::InvalidParams,
                         "evaluation " + id + " is already writing " + options.out.string() + "; wait for it or cancel it",
                         json::object{{"evalId", id}}));
    return;
  }
  LiveEval& live = evals_[id];
  live = LiveEval{runner, nullptr, options.out, 0};

  protocol::WorkDoneProgressBegin begin;
  begin.title = "Evaluating " + options.set.name;
  begin.cancellable = true;
  begin.message = progressLine(runner->done(), runner->total(), runner->solved(), 0);
  begin.percentage = runner->total() > 0 ? runner->done() * 100 / runner->total() : 0;
  live.progress = WorkDoneProgress::begin(*ctx_.dispatcher, std::move(token), ctx_.clientCreatesProgress,
                                          std::move(begin));

  json::array agents;
  for (const auto& a : options.agents) agents.emplace_back(a);
  json::array passK;
  for (int k : options.passK) passK.emplace_back(k);
  reply(json::object{{"evalId", id},
                     {"name", options.set.name},
                     {"report", options.out.string()},
                     {"cases", options.set.cases.size()},
                     {"agents", std::move(agents)},
                     {"samples", options.samples},
                     {"passK", std::move(passK)},
                     {"total", runner->total()},
                     {"done", runner->done()}});

  // The answer goes first; a resumed run with nothing left ends at once.
  runner->run(
      [this, alive = alive_, id](const core::eval::Sample& sample, int done, int total) {
        if (!*alive || stopped_) return;
        auto it = evals_.find(id);
        if (it == evals_.end()) return;
        LiveEval& e = it->second;
        e.costUsd += sample.costUsd.value_or(0.0);
        const int solved = e.runner->solved();
        notify(method::kEvalSample, json::object{{"evalId", id},
                                                 {"done", done},
                                                 {"total", total},
                                                 {"solved", solved},
                                                 {"sample", json::value_from(sample)}});
        if (e.progress) {
          protocol::WorkDoneProgressReport report;
          report.message = progressLine(done, total, solved, e.costUsd);
          report.percentage = total > 0 ? std::min(99, done * 100 / total) : 0;
          e.progress->report(std::move(report));
        }
      },
      [this, alive = alive_, id](const core::eval::Report&) {
        if (!*alive || stopped_) return;
        auto it = evals_.find(id);
        if (it == evals_.end()) return;
        LiveEval& e = it->second;
        const int done = e.runner->done();
        const int total = e.runner->total();
        const int solved = e.runner->solved();
        const std::string status = e.runner->cancelled() ? "cancelled" : "completed";
        // The progress ends first: a client that hears of the end has no progress left to close.
        if (e.progress) {
          e.progress->end(protocol::WorkDoneProgressEnd{"evaluation " + status + ": " + std::to_string(solved) + "/" +
                                                        std::to_string(done) + " solved"});
          e.progress.reset();
        }
        json::object params{{"evalId", id}, {"status", status}, {"report", e.report.string()},
                            {"done", done},  {"total", total},   {"solved", solved}};
        if (auto failure = e.runner->recordFailure()) {
          params["recordIncomplete"] = *failure;
          showMessage(protocol::MessageType::Warning,
                      "Evaluation " + id + " could not be recorded in full: " + *failure +
                          ". The report on disk is the last one written whole.");
        }
        notify(method::kEvalFinished, params);
      });
}

void HydraService::evalReport(protocol::EvalReportParams params, Reply reply) {
  std::optional<fs::path> path;
  if (params.evalId) {
    auto it = evals_.find(*params.evalId);
    if (it == evals_.end()) {
      reply.error(RpcError(ErrorCode::InvalidParams, "no evaluation '" + *params.evalId + "' in this session",
                           json::object{{"evalId", *params.evalId}}));
      return;
    }
    path = it->second.report;
  } else if (params.report) {
    path = fs::path(*params.report);
  }
  onPool(std::move(reply), [ws = &workspace(), path, format = params.format]() -> json::value {
    fs::path file;
    if (path) {
      file = path->is_absolute() ? *path : ws->root() / *path;
    } else if (auto newest = newestReport(ws->root())) {
      file = *newest;
    } else {
      throw RpcError(ErrorCode::InvalidParams, "no eval report yet in " +
                                                   (ws->root() / ".hydra" / core::guard::kEvalReportsFolder).string() +
                                                   ": run an eval set first");
    }
    core::eval::Report report;
    try {
      report = core::eval::readReportFile(file);
    } catch (const std::runtime_error& e) {
      throw RpcError(ErrorCode::InvalidParams, e.what(), json::object{{"path", file.string()}});
    }
    json::object result{{"path", file.string()}, {"report", json::value_from(report)}};
    if (format == "text") result["text"] = core::eval::renderText(report);
    if (format == "markdown") result["text"] = core::eval::renderMarkdown(report);
    return result;
  });
}

void HydraService::evalCancel(protocol::EvalIdParams params, Reply reply) {
  auto it = evals_.find(params.evalId);
  if (it == evals_.end()) {
    reply.error(RpcError(ErrorCode::InvalidParams, "no evaluation '" + params.evalId + "' in this session",
                         json::object{{"evalId", params.evalId}}));
    return;
  }
  const bool running = !it->second.runner->finished();
  if (running) {
    spdlog::info("evaluation {} cancelled", params.evalId);
    it->second.runner->cancel();
  }
  reply(json::value_from(protocol::CancelRaceResult{running}));
}

void HydraService::progressCancelled(const protocol::ProgressToken& token) {
  for (const auto& [id, race] : live_) {
    if (race.progress && race.progress->token() == token) {
      spdlog::info("race {} cancelled from its progress", id);
      if (workspace_) workspace_->cancel(id);
      return;
    }
  }
  for (const auto& [id, e] : evals_) {
    if (e.progress && e.progress->token() == token && !e.runner->finished()) {
      spdlog::info("evaluation {} cancelled from its progress", id);
      e.runner->cancel();
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
  {
    std::lock_guard lock(othersMutex_);
    for (auto& [root, other] : others_) workspaces.push_back(other.workspace.get());
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
  const std::string& raceId = core::raceIdOf(event.body);
  if (const auto* started = std::get_if<core::RaceStarted>(&event.body); started && started->kind == core::RunKind::Sample) {
    sampleRaces_.insert(started->raceId);
  }
  if (sampleRaces_.contains(raceId)) {
    if (std::holds_alternative<core::RaceFinished>(event.body)) {
      sampleRaces_.erase(raceId);
      workspace_->whenRecorded([this, alive = alive_, event] {
        if (!*alive || stopped_) return;
        for (auto& [id, e] : evals_) {
          if (!e.runner->finished()) e.runner->handle(event);
        }
      });
    }
    return;
  }
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
