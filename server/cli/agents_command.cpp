// `hydra agents [--json]`: each agent hydra can run here, whether its binary is
// installed, and its version. `hydra sandbox [--json]`: whether they run
// confined here, and if not, why; as text also what their checks protect.

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <iostream>

#include "core/checks/protected_paths.h"
#include "core/sandbox/network.h"
#include "core/workspace/agent_probe.h"
#include "core/workspace/workspace.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"

namespace hydra::cli {

int runAgents(const AgentsOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  auto agents = workspace.agents();

  if (options.json) {
    std::cout << jsonLine(boost::json::value_from(agents)) << "\n";
    return 0;
  }
  Style style{stdoutIsTerminal()};
  bool offPath = false;
  for (const auto& a : agents) {
    std::cout << "  " << (a.available ? style.green("✓") : style.red("✗")) << " " << a.name << "  (" << a.adapter
              << (a.configured ? "" : ", not in hydra.toml") << ")  ";
    if (a.available) {
      std::cout << a.path.value_or("") << (a.version ? "  " + style.dim(*a.version) : "");
    } else {
      std::cout << style.dim(a.problem.value_or(""));
      offPath = offPath || (a.problem && a.problem->ends_with("not found on PATH"));
    }
    std::cout << "\n";
  }
  // The PATH once, not once per agent missing from it.
  if (offPath) std::cout << "\n" << style.dim("PATH searched: " + core::searchPath()) << "\n";
  std::cout << "\nAgents run " << workspace.sandboxStatus().summary << " (docs/security.md)\n";
  return 0;
}

namespace {

// What an agent's checks are guarded against: the protected paths in force
// (hydra.toml's, or the defaults) and the runner shadows, which always are.
void printCheckProtection(core::Workspace& workspace, const Style& style) {
  std::shared_ptr<const core::Config> config;
  try {
    config = workspace.config();
  } catch (const std::exception& e) {
    std::cout << style.red("hydra.toml cannot be read: ") << e.what() << "\n";
    return;
  }
  const core::ScoringConfig& scoring = config->scoring;
  const std::vector<std::string> paths = scoring.protectedPaths.value_or(
      core::checks::defaultProtectedPathsFor(scoring.testCommand, scoring.lintCommand));
  std::string listed;
  for (const std::string& p : paths) listed += (listed.empty() ? "" : ", ") + p;
  std::cout << "Protected paths (" << (scoring.protectedPaths ? "hydra.toml" : "the defaults")
            << ", protected_mode = \"" << scoring.protectedMode << "\"): " << (listed.empty() ? "none" : listed)
            << "\n"
            << "Files an agent adds that would run in place of the test runner (pytest.py, iniconfig.py, "
               "sitecustomize.py, node_modules/...) are always left out of its checks (docs/scoring.md).\n";
}

}  // namespace

int runSandbox(const SandboxOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  const core::SandboxStatus status = workspace.sandboxStatus();
  // Each configured agent's network policy; none when hydra.toml cannot be
  // read (printCheckProtection says why).
  std::shared_ptr<const core::Config> config;
  try {
    config = workspace.config();
  } catch (const std::exception&) {
  }
  if (options.json) {
    boost::json::value out = boost::json::value_from(status);
    boost::json::array agents;
    if (config) {
      for (const auto& [name, agent] : config->agents) {
        boost::json::array hosts;
        for (const auto& host : agent.allowedHosts) hosts.emplace_back(host);
        agents.push_back(boost::json::object{{"name", name}, {"network", agent.network}, {"allowedHosts", hosts}});
      }
    }
    out.as_object()["agents"] = std::move(agents);
    std::cout << jsonLine(out) << "\n";
    return 0;
  }
  Style style{stdoutIsTerminal()};
  const std::string line = "Agents run " + status.summary;
  std::cout << (status.confined ? style.green(line) : status.refused ? style.red(line) : style.yellow(line)) << "\n";
  if (!status.confined && status.mode == "auto") {
    std::cout << "Install bubblewrap (apt install bubblewrap) to confine them; docs/security.md says what that covers.\n";
  }
  if (config && !config->agents.empty()) {
    std::cout << "Network (docs/security.md):\n";
    for (const auto& [name, agent] : config->agents) {
      std::cout << "  " << name << ": " << agent.network << ", "
                << core::sandbox::describeNetwork(agent.network, agent.allowedHosts, status.confined) << "\n";
    }
  }
  std::cout << "Limits per agent: " << status.limits.summary << "\n";
  for (const auto& [name, limits] : status.limits.agents) {
    std::cout << "  " << name << ": " << core::describeLimits(limits) << "\n";
  }
  printCheckProtection(workspace, style);
  return 0;
}

}  // namespace hydra::cli
