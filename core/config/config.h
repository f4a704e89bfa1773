#pragma once

// hydra.toml as typed structs. Every field carries its documented default, so a
// missing file or table means "use these values" (docs/configuration.md).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config/executor_kind.h"

namespace hydra::core {

// The largest [general] max_result_bytes accepted: 1 TiB (a number JSON
// tools read exactly).
inline constexpr std::int64_t kMaxResultBytesLimit = std::int64_t{1} << 40;

// hydra.toml is read whole: a larger file is refused, not read.
inline constexpr std::size_t kMaxConfigBytes = 1 << 20;

// Per-agent limits as written in hydra.toml: unset takes the default (or, in
// [agents.NAME], [general]'s), 0 means no limit. core/process/resource_limits.h
// turns them into what a run enforces.
struct ResourceLimitSettings {
  std::optional<std::int64_t> memoryMiB;  // memory_limit_mib
  std::optional<int> processes;           // max_processes
  std::optional<int> cpuSeconds;          // cpu_limit_seconds

  bool operator==(const ResourceLimitSettings&) const = default;
};

struct GeneralConfig {
  std::string workspaceDir = ".hydra-workspaces";
  int maxConcurrentAgents = 3;
  int timeoutSeconds = 600;
  // How agents and checks are confined: "auto" (bubblewrap where it works,
  // else unconfined, saying so), "bubblewrap" (or refuse to run), "off".
  std::string sandbox = "auto";
  // Ignored folders of the user's checkout (node_modules, .venv, ...) copied
  // into every new worktree, relative to the repository root.
  std::vector<std::string> copyIgnored;
  // Worktrees of finished races kept for the next ones (0: none). A pooled
  // worktree is moved to the next base by rewriting only what differs.
  int poolSize = 0;
  // Ignored folders a pooled worktree keeps (everything else the last agent
  // left is removed): a name matches at any depth, a path from the root.
  std::vector<std::string> keepIgnored;
  // Run (with sh -c, confined like the agent) in each new or reused worktree
  // before its agent starts; empty: nothing.
  std::string setupCommand;
  // A sparse checkout: only these folders (and the files at the root) are
  // written in new worktrees; empty: everything.
  std::vector<std::string> sparsePaths;
  // The largest result hydra commits: files added or changed, and their bytes
  // on disk. An agent over either ends "result too large", nothing of it
  // committed (docs/reliability.md, Heavy agents).
  int maxResultFiles = 100'000;
  std::int64_t maxResultBytes = std::int64_t{2} << 30;  // 2 GiB
  // What each agent's processes may take together (memory_limit_mib,
  // max_processes, cpu_limit_seconds); [agents.NAME] may override each.
  ResourceLimitSettings limits;

  bool operator==(const GeneralConfig&) const = default;
};

// [agents.NAME]. `adapter` defaults to NAME when NAME is a known adapter
// (claude, codex, cursor, gemini, opencode, aider), else to "command".
struct AgentConfig {
  std::string name;
  std::string adapter;
  std::string binary;                      // default: the adapter's usual binary
  std::vector<std::string> args;           // replaces the adapter's default arguments
  std::vector<std::string> extraArgs;      // appended to the adapter's arguments
  std::map<std::string, std::string> env;  // added to hydra's environment
  std::optional<int> timeoutSeconds;       // overrides [general] timeout_seconds
  // Writable inside the sandbox besides the worktree and the CLI's own state
  // directories: absolute, or "~/..." (the agent's HOME).
  std::vector<std::string> writablePaths;
  // ACP agents: how their permission requests are answered ("worktree":
  // allow what names only paths inside the worktree; "allow"; "reject").
  std::string acpPermissions = "worktree";
  // What network it reaches (core/sandbox/network.h): "open" (the host's),
  // "none" (a namespace of its own, loopback only) or "allowlist" (only
  // allowedHosts, through hydra's proxy).
  std::string network = "open";
  // "host" or "host:port"; with "allowlist" and none given, the adapter's
  // preset (Adapter::defaultAllowedHosts) is filled in when the table is read.
  std::vector<std::string> allowedHosts;
  // Its own memory_limit_mib, max_processes, cpu_limit_seconds: each one set
  // here replaces [general]'s.
  ResourceLimitSettings limits;

  bool operator==(const AgentConfig&) const = default;
};

struct ScoringWeights {
  double build = 30;
  double tests = 30;
  double lint = 15;
  double diffSize = 15;
  double speed = 10;

  bool operator==(const ScoringWeights&) const = default;
};

struct ScoringThresholds {
  double autoMergeMinimum = 85.0;
  double failMaximum = 30.0;

  bool operator==(const ScoringThresholds&) const = default;
};

struct ScoringConfig {
  ScoringWeights weights;
  std::optional<std::string> buildCommand;
  std::optional<std::string> testCommand;
  std::optional<std::string> lintCommand;
  std::optional<std::string> testFormat;  // a parser name; default: detected from the output
  std::optional<std::string> lintFormat;
  std::optional<std::string> junitReport;  // path of a JUnit XML report, relative to the worktree
  int timeoutPerCheckSeconds = 120;
  // Files an agent is not scored on changing (globs, core/checks/protected_paths.h):
  // "flag" shows a change there and rules out auto-merge; "restore" also runs
  // its checks with the base versions put back. Unset: the test runners' and
  // linters' configuration files (checks::defaultProtectedPaths()); an empty
  // list protects nothing but the runner shadows (core/checks/runner_shadows.h).
  std::optional<std::vector<std::string>> protectedPaths;
  std::string protectedMode = "flag";
  bool autoMerge = false;
  ScoringThresholds thresholds;

  bool operator==(const ScoringConfig&) const = default;
};

// [collaboration]: a builder agent and a reviewer agent in rounds (hydra collab).
struct CollaborationConfig {
  // The agents `hydra collab` uses when none are given.
  std::optional<std::string> builder;
  std::optional<std::string> reviewer;
  int maxIterations = 3;
  // An iteration scoring this much ends the loop; unset: [scoring.thresholds] auto_merge_minimum.
  std::optional<double> untilScore;
  // Every round but the last is reviewed, whatever its score: only the
  // reviewer's approval (or max_iterations) ends the loop.
  bool reviewEveryRound = false;
  // A review containing this ends the loop: the reviewer approves.
  std::string approveMarker = "LGTM";
  // {task}, {diff}, {scores} and {approve_marker}.
  std::string reviewPromptTemplate =
      "You are reviewing another engineer's change. Do not modify any file.\n\n"
      "The task it was made for:\n{task}\n\n"
      "Its diff against the base commit:\n{diff}\n\n"
      "Its scores (build, tests, lint against the base commit):\n{scores}\n\n"
      "Review it for bugs, security issues, missing tests and code quality. Answer with what must change, "
      "most important first. If nothing must change, answer with {approve_marker} alone.";
  // {task}, {review}, {diff} and {scores}.
  std::string refinePromptTemplate =
      "Your change for this task was reviewed.\n\n"
      "The task:\n{task}\n\n"
      "Your diff so far against the base commit:\n{diff}\n\n"
      "Its scores:\n{scores}\n\n"
      "The review:\n{review}\n\n"
      "Change the working tree to address the review. Keep what is right; do not start over.";

  bool operator==(const CollaborationConfig&) const = default;
};

// [executor]: where agent runs and checks execute (core/executor/).
struct ExecutorConfig {
  ExecutorKind kind = ExecutorKind::Local;  // --executor overrides it
  // Slurm only: sbatch's --partition, --account and --time (unset: the
  // cluster's defaults; --time from each command's timeout), more sbatch
  // options, and the slurm.conf to use (unset: SLURM_CONF, or Slurm's own).
  std::optional<std::string> partition;
  std::optional<std::string> account;
  std::optional<std::string> timeLimit;
  std::vector<std::string> extraArgs;
  std::optional<std::filesystem::path> slurmConf;  // absolute
  // The hydra binary the nodes run; unset: this hydra's own path.
  std::optional<std::filesystem::path> hydraBinary;  // absolute

  bool operator==(const ExecutorConfig&) const = default;
};

// Something in hydra.toml that works but will not do what the user likely
// wants (tests compared by counts only), at the key it concerns. Not an
// error: races run. 1-based line and column, 0 when unknown.
struct ConfigWarning {
  int line = 0;
  int column = 0;
  std::string message;

  bool operator==(const ConfigWarning&) const = default;
};

struct Config {
  std::filesystem::path source;  // the file it came from; empty when defaults only
  GeneralConfig general;
  std::map<std::string, AgentConfig> agents;  // by name
  ScoringConfig scoring;
  CollaborationConfig collaboration;
  ExecutorConfig executor;
  // In file order; hydra.toml's diagnostics show them (severity warning).
  std::vector<ConfigWarning> warnings;

  bool operator==(const Config&) const = default;
};

// A problem in hydra.toml, located so a person (or an editor) can jump to it.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::filesystem::path file, int line, int column, std::string message)
      : std::runtime_error(format(file, line, column, message)),
        file_(std::move(file)),
        line_(line),
        column_(column),
        message_(std::move(message)) {}

  const std::filesystem::path& file() const { return file_; }
  int line() const { return line_; }      // 1-based; 0 when unknown
  int column() const { return column_; }  // 1-based; 0 when unknown
  const std::string& message() const { return message_; }

 private:
  static std::string format(const std::filesystem::path& file, int line, int column,
                            const std::string& message) {
    std::string out = file.string();
    if (line > 0) out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
    return out + ": " + message;
  }
  std::filesystem::path file_;
  int line_;
  int column_;
  std::string message_;
};

// The names hydra.toml may use that units above config/ define: the
// adapters (with each one's usual binary and preset hosts), the network
// modes and host rules, the test and lint formats, the protected-path
// patterns and the Slurm options hydra sets itself. config/ only parses:
// it checks these names with what it is given, so each error still says the
// file, line and column, and it includes none of those units.
// core/workspace/hydra_config.h fills them from the units' registries.
struct ConfigNames {
  std::vector<std::string_view> adapters;
  // The binary an adapter runs when [agents.NAME] gives none; nullopt for
  // none (the "command" adapter) and unknown names.
  std::function<std::optional<std::string>(std::string_view adapter)> defaultBinary;
  // The hosts network = "allowlist" allows when allowed_hosts is not given.
  std::function<std::vector<std::string>(std::string_view adapter)> defaultAllowedHosts;
  std::vector<std::string_view> networkModes;
  // Why an allowed_hosts entry is no host rule; empty when it is one.
  std::function<std::string(std::string_view entry)> hostRuleProblem;
  std::vector<std::string_view> testFormats;
  std::vector<std::string_view> lintFormats;
  // Why a protected_paths pattern is refused; empty when it is accepted.
  std::function<std::string(std::string_view pattern)> protectedPatternProblem;
  // Whether an [executor] extra_args entry sets what hydra sets for every job.
  std::function<bool(std::string_view arg)> reservedJobOption;
  // Why a test command's output will not name its tests (a warning); nullopt
  // when it will.
  std::function<std::optional<std::string>(std::string_view command, std::optional<std::string_view> format,
                                           bool junitReport)>
      testsByCountsOnlyReason;
};

// Reads `<repoRoot>/hydra.toml`; defaults when the file does not exist.
// Throws ConfigError for anything wrong in it, and when it is not a regular
// file (a FIFO is never waited on) or is larger than kMaxConfigBytes.
Config loadConfig(const std::filesystem::path& repoRoot, const ConfigNames& names);

// Parses TOML text; `file` only names it in errors.
Config parseConfig(std::string_view text, const std::filesystem::path& file, const ConfigNames& names);

// Agent names become part of branch and directory names: [A-Za-z0-9_-]+.
bool isValidAgentName(std::string_view name);

// Every key the parser accepts, by table: "" (top level), "general", "agents.*"
// (any [agents.NAME]), "scoring", "scoring.weights", "scoring.thresholds",
// "collaboration", "executor". Drawn from the parser's own tables, so docs and the JSON
// schema can be checked against it.
std::map<std::string, std::vector<std::string>> acceptedConfigKeys();

}  // namespace hydra::core
