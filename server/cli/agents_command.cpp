// `hydra agents [--json]`: each agent hydra can run here, whether its binary is
// installed, and its version.

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <iostream>

#include "core/adapter/adapter.h"
#include "core/process/process.h"
#include "server/cli/agent_probe.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"

namespace hydra::cli {

int runAgents(const AgentsOptions& options) {
  auto root = findRepositoryRoot(std::filesystem::current_path());
  auto config = loadRepositoryConfig(root);
  auto probes = probeAgents(config, root);

  if (options.json) {
    boost::json::array out;
    for (const auto& p : probes) out.push_back(toJson(p));
    std::cout << boost::json::serialize(out) << "\n";
    return 0;
  }
  Style style{stdoutIsTerminal()};
  for (const auto& p : probes) {
    std::cout << "  " << (p.available ? style.green("✓") : style.red("✗")) << " " << p.name << "  ("
              << p.adapter << (p.configured ? "" : ", not in hydra.toml") << ")  ";
    if (p.available) {
      std::cout << p.path << (p.version.empty() ? "" : "  " + style.dim(p.version));
    } else {
      std::cout << style.dim(p.problem);
    }
    std::cout << "\n";
  }
  return 0;
}

}  // namespace hydra::cli
