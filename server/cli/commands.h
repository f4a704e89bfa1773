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
  std::optional<std::string> executor;  // default: [executor] kind
  bool json = false;
};
int runRace(const RaceOptions& options);

struct CollabOptions {
  std::string task;
  std::optional<std::string> builder;   // default: [collaboration] builder
  std::optional<std::string> reviewer;  // default: [collaboration] reviewer
  std::optional<int> maxIterations;
  std::optional<double> until;
  std::optional<std::string> base;
  std::optional<std::string> executor;  // default: [executor] kind
  bool json = false;
};
int runCollab(const CollabOptions& options);

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
  bool pool = false;  // also empty the warm pool
};
int runCleanup(const CleanupOptions& options);

// `scores`, `diff` and `merge` take [RACE] first: a race id, or `latest`
// (the newest race), which is also what an omitted RACE means. The first word
// is the race when it is `latest` or names a race of the repository; otherwise
// it is the next argument (an agent id).
struct ScoresOptions {
  std::vector<std::string> words;  // [RACE]
  bool json = false;
};
int runScores(const ScoresOptions& options);

struct DiffOptions {
  std::vector<std::string> words;  // [RACE] AGENT [PATH]
  bool stat = false;
  bool color = false;  // --color: colour even when stdout is not a terminal
  bool noPager = false;
};
int runDiff(const DiffOptions& options);

struct EvalRunOptions {
  std::filesystem::path set;
  std::vector<std::string> agents;  // default: the set's
  std::optional<int> samples;       // default: the set's
  std::vector<int> passK;           // default: the set's
  std::optional<std::filesystem::path> out;     // default: .hydra/evals/NAME-TIME.json (or --resume's)
  std::string format = "text";
  std::optional<std::filesystem::path> resume;  // a report of an interrupted run of the same set
  std::optional<std::string> executor;          // default: [executor] kind
};
int runEvalRun(const EvalRunOptions& options);

struct EvalInitOptions {
  std::optional<std::filesystem::path> path;  // default: evals/NAME/eval.toml in the repository
  std::optional<std::string> fromRace;        // a race id or `latest`
  std::optional<std::string> agent;           // whose tests become hidden files (default: the winner)
  std::optional<std::string> name;            // default: from the race's task, or the repository's name
  std::vector<std::string> agents;            // the set's agents (default: the race's, or hydra.toml's)
  std::optional<std::string> verifyCommand;   // default: [scoring] test_command
  bool force = false;
};
int runEvalInit(const EvalInitOptions& options);

struct EvalCompareOptions {
  std::filesystem::path baseline;
  std::filesystem::path current;
  double threshold = 0.05;
  bool failOnRegression = false;
  std::string format = "text";
};
int runEvalCompare(const EvalCompareOptions& options);

struct LogOptions {
  std::vector<std::string> words;  // [RACE] AGENT
  bool stderrStream = false;       // --stderr: what it wrote on stderr
  bool noPager = false;
};
int runLog(const LogOptions& options);

struct MergeOptions {
  std::vector<std::string> words;  // [RACE] [AGENT]; no agent: the winner
  bool dryRun = false;
  bool keep = false;  // keep the race's worktrees and branches after merging
  bool force = false;  // merge an agent that is not a safe pick without asking
};
int runMerge(const MergeOptions& options);

}  // namespace hydra::cli
