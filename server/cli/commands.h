#pragma once

// The terminal commands of the hydra binary. Each returns the process exit code
// and throws CommandError for what the user must fix.

#include <optional>
#include <string>
#include <vector>

namespace hydra::cli {

struct RaceOptions {
  std::string task;
  std::vector<std::string> agents;
  std::optional<std::string> base;
  bool json = false;
};
int runRace(const RaceOptions& options);

struct StatusOptions {
  std::optional<std::string> raceId;
  bool json = false;
};
int runStatus(const StatusOptions& options);

struct AgentsOptions {
  bool json = false;
};
int runAgents(const AgentsOptions& options);

struct InitOptions {
  bool force = false;
};
int runInit(const InitOptions& options);

struct CleanupOptions {
  std::optional<std::string> raceId;  // default: every race that is not running
  bool keepBranches = false;
};
int runCleanup(const CleanupOptions& options);

}  // namespace hydra::cli
