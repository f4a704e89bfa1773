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

struct SandboxOptions {
  bool json = false;
};
int runSandbox(const SandboxOptions& options);

struct InitOptions {
  bool force = false;
};
int runInit(const InitOptions& options);

struct CleanupOptions {
  std::optional<std::string> raceId;  // default: every race that is not running
  bool keepBranches = false;
};
int runCleanup(const CleanupOptions& options);

struct ScoresOptions {
  std::string raceId;
  bool json = false;
};
int runScores(const ScoresOptions& options);

struct DiffOptions {
  std::string raceId;
  std::string agentId;
  std::optional<std::string> path;
  bool stat = false;
};
int runDiff(const DiffOptions& options);

struct MergeOptions {
  std::string raceId;
  std::optional<std::string> agentId;  // default: the winner
  bool dryRun = false;
  bool keep = false;  // keep the race's worktrees and branches after merging
};
int runMerge(const MergeOptions& options);

}  // namespace hydra::cli
