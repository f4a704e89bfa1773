// The hydra binary: `hydra serve` for editors, and the same engine from the terminal.

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <spdlog/spdlog.h>

#include "hydra/version.h"
#include "server/logging.h"
#include "server/server.h"

namespace {

struct GlobalOptions {
  std::string logLevel = "info";
  std::optional<std::string> logFile;
};

int serve(const GlobalOptions& global, std::size_t maxMessageBytes) {
  hydra::server::setupLogging(global.logLevel, global.logFile);
  // A client that disappears must turn into a write error, not a dead server.
  ::signal(SIGPIPE, SIG_IGN);
  hydra::server::ServerOptions options;
  options.limits.maxContentLength = maxMessageBytes;
  spdlog::info("hydra {} serving on stdio (pid {})", hydra::kVersion, ::getpid());
  hydra::server::Server server(STDIN_FILENO, STDOUT_FILENO, options);
  int code = server.run();
  spdlog::info("hydra exiting with code {}", code);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hydra: race AI coding agents on the same task, score the results, merge the winner"};
  app.set_version_flag("--version", std::string(hydra::kName) + " " + hydra::kVersion);
  app.require_subcommand(0, 1);
  app.fallthrough();  // global options may follow the subcommand

  GlobalOptions global;
  app.add_option("--log-level", global.logLevel, "Log verbosity")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(hydra::server::kLogLevels),
                                                     std::end(hydra::server::kLogLevels))))
      ->capture_default_str();
  app.add_option("--log-file", global.logFile, "Write logs to this file instead of stderr");
  bool stdio = false;
  app.add_flag("--stdio", stdio, "Run the JSON-RPC server on stdin/stdout (same as `hydra serve`)");

  std::size_t maxMessageBytes = hydra::protocol::kDefaultMaxMessageBytes;
  CLI::App* serveCmd = app.add_subcommand("serve", "Run the JSON-RPC server on stdin/stdout for an editor");
  serveCmd->add_option("--max-message-size", maxMessageBytes, "Largest accepted message body, in bytes")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 32))
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);

  try {
    if (stdio || serveCmd->parsed()) return serve(global, maxMessageBytes);
    std::cout << app.help();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "hydra: " << e.what() << "\n";
    return 1;
  }
}
