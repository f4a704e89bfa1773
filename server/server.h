#pragma once

// `hydra serve`: the JSON-RPC server an editor talks to over stdio.

#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "protocol/framing.h"
#include "protocol/lifecycle.h"
#include "server/dispatcher.h"
#include "server/transport.h"

namespace hydra::server {

struct ServerOptions {
  protocol::FrameLimits limits;
  std::size_t workerThreads = 2;  // for blocking work: git, files, checks
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

  // Ends the session: stop reading, write what is queued, stop the loop.
  void finish(int exitCode);

  boost::asio::io_context io_;
  boost::asio::thread_pool pool_;
  Transport transport_;
  std::shared_ptr<Dispatcher> dispatcher_;
  std::optional<protocol::InitializeParams> client_;
  std::optional<int> exitCode_;
};

}  // namespace hydra::server
