#include "server/server.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>

#include "hydra/version.h"
#include "protocol/methods.h"
#include "server/progress.h"
#include "server/workspace_folder.h"

namespace hydra::server {

namespace asio = boost::asio;
namespace method = protocol::method;

Server::Server(int inFd, int outFd, ServerOptions options)
    : transport_(io_, inFd, outFd, options.limits), options_(options) {
  dispatcher_ = std::make_shared<Dispatcher>(io_.get_executor(), [this](const protocol::Message& message) {
    transport_.send(protocol::serialize(message));
  });
  // Backpressure: answers are built before the send queue can bound them.
  dispatcher_->onBusyChanged([this](bool busy) {
    if (busy) {
      transport_.pauseReading();
    } else {
      transport_.resumeReading();
    }
  });
  bindMethods();
}

Server::~Server() {
  dispatcher_->abandonPending();
  hydra_.reset();
}

// The whole protocol surface, in one table.
void Server::bindMethods() {
  Dispatcher& d = *dispatcher_;
  d.bind<protocol::InitializeParams>(method::kInitialize, [this](auto p, Reply r) { onInitialize(std::move(p), std::move(r)); });
  d.bindNotification<NoParams>(method::kInitialized, [this](auto p) { onInitialized(p); });
  d.bind<NoParams>(method::kShutdown, [this](auto p, Reply r) { onShutdown(p, std::move(r)); });
  d.bindNotification<json::value>(method::kExit, [this](const json::value&) { onExit(NoParams{}); });
  d.bindNotification<json::value>(method::kSetTrace, [](const json::value&) {});
  d.bind<protocol::PingParams>(method::kPing, [this](auto p, Reply r) { onPing(std::move(p), std::move(r)); });
  d.bindNotification<protocol::WorkDoneProgressCancelParams>(method::kWorkDoneProgressCancel,
                                                             [this](const auto& p) { onProgressCancel(p); });

  d.bind<NoParams>(method::kAgents, [this](NoParams, Reply r) { hydra().agents(std::move(r)); });
  d.bind<protocol::RaceParams>(method::kRace, [this](auto p, Reply r) { hydra().race(std::move(p), std::move(r)); });
  d.bind<protocol::CollabParams>(method::kCollab,
                                 [this](auto p, Reply r) { hydra().collab(std::move(p), std::move(r)); });
  d.bind<protocol::StatusParams>(method::kStatus,
                                 [this](auto p, Reply r) { hydra().status(std::move(p), std::move(r)); });
  d.bind<protocol::CancelRaceParams>(method::kCancel,
                                     [this](auto p, Reply r) { hydra().cancel(std::move(p), std::move(r)); });
  d.bind<protocol::RaceIdParams>(method::kScores,
                                 [this](auto p, Reply r) { hydra().scores(std::move(p), std::move(r)); });
  d.bind<protocol::DiffParams>(method::kDiff, [this](auto p, Reply r) { hydra().diff(std::move(p), std::move(r)); });
  d.bind<protocol::MergeParams>(method::kMerge,
                                [this](auto p, Reply r) { hydra().merge(std::move(p), std::move(r)); });
  d.bind<protocol::LogParams>(method::kLog, [this](auto p, Reply r) { hydra().log(std::move(p), std::move(r)); });
  d.bind<protocol::RacesParams>(method::kRaces, [this](auto p, Reply r) { hydra().races(std::move(p), std::move(r)); });
  d.bind<protocol::CleanupParams>(method::kCleanup,
                                  [this](auto p, Reply r) { hydra().cleanup(std::move(p), std::move(r)); });
  d.bind<protocol::AgentEventsParams>(method::kAgentEvents,
                                      [this](auto p, Reply r) { hydra().agentEvents(std::move(p), std::move(r)); });
  d.bind<protocol::EvalRunParams>(method::kEvalRun,
                                  [this](auto p, Reply r) { hydra().evalRun(std::move(p), std::move(r)); });
  d.bind<protocol::EvalReportParams>(method::kEvalReport,
                                     [this](auto p, Reply r) { hydra().evalReport(std::move(p), std::move(r)); });
  d.bind<protocol::EvalIdParams>(method::kEvalCancel,
                                 [this](auto p, Reply r) { hydra().evalCancel(std::move(p), std::move(r)); });
}

HydraService& Server::hydra() {
  // The dispatcher lets no hydra/* request through before initialize, which makes the service.
  if (!hydra_) throw std::logic_error("hydra/* request before initialize");
  return *hydra_;
}

int Server::run() {
  transport_.start(Transport::Handlers{
      .onFrame = [this](std::string body) { dispatcher_->handle(body); },
      .onFrameError = [this](const protocol::FrameError& e) { dispatcher_->handleFrameError(e); },
      .onClosed =
          [this] {
            bool orderly = dispatcher_->shutdownRequested();
            spdlog::info("client closed the connection{}", orderly ? "" : " without shutdown");
            finish(orderly ? 0 : 1);
          },
  });
  io_.run();
  return exitCode_.value_or(1);
}

void Server::finish(int exitCode) {
  if (exitCode_) return;
  exitCode_ = exitCode;
  dispatcher_->abandonPending();
  // Nobody is left to watch the races: no agent may outlive the session.
  auto close = [this] { transport_.closeAfterDrain([this] { io_.stop(); }); };
  if (hydra_) {
    hydra_->stopAll(close);
  } else {
    close();
  }
}

void Server::onInitialize(protocol::InitializeParams params, Reply reply) {
  if (params.clientInfo) {
    spdlog::info("client: {} {}", params.clientInfo->name, params.clientInfo->version.value_or(""));
  }
  hydra_ = std::make_unique<HydraService>(
      HydraService::Context{.io = io_,
                            .dispatcher = dispatcher_,
                            .transport = transport_,
                            .clientCreatesProgress = params.supportsWorkDoneProgress(),
                            .output = {},
                            .workspace = {.threads = options_.workerThreads, .killGrace = options_.stopGrace}},
      workspaceFolder(params));
  client_ = std::move(params);
  dispatcher_->setState(Dispatcher::State::Running);

  json::object capabilities;
  capabilities["hydra"] = json::value_from(hydra_->capabilities());
  reply(json::value_from(protocol::InitializeResult{
      std::move(capabilities), protocol::ServerInfo{kName, kVersion}}));
  // After the answer: LSP wants nothing from the server before it.
  hydra_->open();
}

void Server::onInitialized(NoParams) { spdlog::debug("client initialized"); }

void Server::onShutdown(NoParams, Reply reply) {
  dispatcher_->setState(Dispatcher::State::ShutDown);
  // The editor is closing: its races end with it, before the answer.
  if (!hydra_) {
    reply(nullptr);
    return;
  }
  auto shared = std::make_shared<Reply>(std::move(reply));
  hydra_->stopAll([shared] { (*shared)(nullptr); });
}

void Server::onProgressCancel(const protocol::WorkDoneProgressCancelParams& params) {
  if (hydra_) hydra_->progressCancelled(params.token);
}

void Server::onExit(NoParams) { finish(dispatcher_->shutdownRequested() ? 0 : 1); }

void Server::onPing(protocol::PingParams params, Reply reply) {
  protocol::WorkDoneProgressBegin begin;
  begin.title = "hydra/ping";
  begin.cancellable = true;
  auto progress = WorkDoneProgress::begin(*dispatcher_, params.workDoneToken, false, std::move(begin));
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(params.delayMs.value_or(0)));
  reply.onCancel([timer] { timer->cancel(); });
  timer->async_wait([this, timer, progress, data = std::move(params.data),
                     reply = std::move(reply)](boost::system::error_code ec) mutable {
    if (ec) {  // cancelled: the dispatcher has answered already
      progress->end(protocol::WorkDoneProgressEnd{"cancelled"});
      return;
    }
    progress->end(protocol::WorkDoneProgressEnd{});
    // The answer is made on a worker thread: a ping also proves the pool is alive.
    auto answer = [data = std::move(data), reply = std::move(reply)]() mutable {
      reply(json::value_from(protocol::PingResult{std::move(data), kVersion}));
    };
    if (hydra_ && hydra_->pool()) {
      asio::post(*hydra_->pool(), std::move(answer));
    } else {
      asio::post(io_, std::move(answer));
    }
  });
}

}  // namespace hydra::server
