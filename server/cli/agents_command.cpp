// `hydra agents [--json]`: each agent hydra can run here, whether its binary is
// installed, and its version. `hydra sandbox [--json]`: whether they run
// confined here, and if not, why.

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <iostream>

#include "core/workspace/workspace.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"

namespace hydra::cli {

int runAgents(const AgentsOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  auto agents = workspace.agents();

  if (options.json) {
    std::cout << boost::json::serialize(boost::json::value_from(agents)) << "\n";
    return 0;
  }
  Style style{stdoutIsTerminal()};
  for (const auto& a : agents) {
    std::cout << "  " << (a.available ? style.green("✓") : style.red("✗")) << " " << a.name << "  (" << a.adapter
              << (a.configured ? "" : ", not in hydra.toml") << ")  ";
    if (a.available) {
      std::cout << a.path.value_or("") << (a.version ? "  " + style.dim(*a.version) : "");
    } else {
      std::cout << style.dim(a.problem.value_or(""));
    }
    std::cout << "\n";
  }
  std::cout << "\nAgents run " << workspace.sandboxStatus().summary << " (docs/security.md)\n";
  return 0;
}

int runSandbox(const SandboxOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  const core::SandboxStatus status = workspace.sandboxStatus();
  if (options.json) {
    std::cout << boost::json::serialize(boost::json::value_from(status)) << "\n";
    return 0;
  }
  Style style{stdoutIsTerminal()};
  const std::string line = "Agents run " + status.summary;
  std::cout << (status.confined ? style.green(line) : status.refused ? style.red(line) : style.yellow(line)) << "\n";
  if (!status.confined && status.mode == "auto") {
    std::cout << "Install bubblewrap (apt install bubblewrap) to confine them; docs/security.md says what that covers.\n";
  }
  return 0;
}

}  // namespace hydra::cli
