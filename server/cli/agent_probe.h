#pragma once

// Which agents can run here: configured ones, and every built-in adapter.
// Shared by `hydra agents` and the server's hydra/agents.

#include <filesystem>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "core/config/config.h"

namespace hydra::cli {

struct AgentProbe {
  std::string name;
  std::string adapter;
  std::string binary;      // as configured
  bool configured = false;  // has an [agents.NAME] table
  bool available = false;
  std::string path;     // where the binary was found
  std::string version;  // first line of `binary --version`, when it answers within a few seconds
  std::string problem;  // why it is unavailable
};

std::vector<AgentProbe> probeAgents(const core::Config& config, const std::filesystem::path& repoRoot);
boost::json::object toJson(const AgentProbe& probe);

}  // namespace hydra::cli
