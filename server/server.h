#pragma once

// `hydra serve`: the JSON-RPC server an editor talks to over stdio.

#include <chrono>
#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>

#include "protocol/framing.h"
#include "protocol/lifecycle.h"
#include "server/dispatcher.h"
#include "server/hydra_service.h"
#include "server/transport.h"

namespace hydra::server {

struct ServerOptions {
  protocol::FrameLimits limits;
  std::size_t workerThreads = 2;  // the workspace's pool, for blocking work: git, files, records
  // How long agents get between SIGTERM and SIGKILL when the session ends.
  std::chrono::milliseconds stopGrace{750};
};

class Server {
 public:
  Server(int inFd, int outFd, ServerOptions options);
  ~Server();

  // Serves until `exit` or until the client goes away; returns the exit code
  // (0 after an orderly shutdown, 1 otherwise, as LSP prescribes).
  int run();

 private:
  using Reply = Dispatcher::Reply;

  void bindMethods();
  void onInitialize(protocol::InitializeParams params, Reply reply);
  void onInitialized(NoParams);
  void onShutdown(NoParams, Reply reply);
  void onExit(NoParams);
  void onPing(protocol::PingParams params, Reply reply);
  void onProgressCancel(const protocol::WorkDoneProgressCancelParams& params);
  // The hydra/* methods other than ping live in HydraService, made at initialize.
  HydraService& hydra();

  // Ends the session: stop reading, write what is queued, stop the loop.
  void finish(int exitCode);

  boost::asio::io_context io_;
  Transport transport_;
  std::shared_ptr<Dispatcher> dispatcher_;
  ServerOptions options_;
  std::optional<protocol::InitializeParams> client_;
  std::optional<int> exitCode_;
  std::unique_ptr<HydraService> hydra_;  // destroyed first: it uses everything above
};

}  // namespace hydra::server
