// `hydra agents [--json]`: each agent hydra can run here, whether its binary is
// installed, and its version.

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
  std::cout << "\nAgents run " << workspace.sandboxSummary() << " (docs/security.md)\n";
  return 0;
}

}  // namespace hydra::cli
