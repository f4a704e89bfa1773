#pragma once

// Which agents can run here: is each binary installed, and which version.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/workspace/results.h"

namespace hydra::core {

// Where the agent's binary is: a path with a '/' relative to the repository
// root, or a name looked up on hydra's PATH. nullopt when it is not there.
std::optional<std::filesystem::path> locateAgentBinary(const AgentConfig& agent, const std::filesystem::path& repoRoot);

// Why the agent cannot run here (its binary is missing or not executable), or
// nullopt: "'claude' not found on PATH", without the PATH, which a list of
// agents says once and an error about one agent adds (searchPath()).
std::optional<std::string> agentProblem(const AgentConfig& agent, const std::filesystem::path& repoRoot);

// The PATH hydra looks agents' binaries up on.
std::string searchPath();

// Each of `names` (resolved in `config`), with whether its binary is installed
// and the first line its version option prints (asked of all at once, a few
// seconds at most). Blocking.
std::vector<AgentInfo> probeAgents(const Config& config, const std::vector<std::string>& names,
                                   const std::filesystem::path& repoRoot);

}  // namespace hydra::core
