#pragma once

// An eval set: the cases an evaluation runs many times per agent (docs/eval.md).
// A TOML file:
//
//   [eval]      name, agents, samples, pass_k, timeout_seconds, max_concurrent_agents
//   [[cases]]   id, task, repo, base, verify_command, hidden_files,
//               fail_to_pass, pass_to_pass, build_command, test_command, lint_command
//
// read like hydra.toml: every problem is a ConfigError naming the file, line
// and column, with a "did you mean" for a misspelt key.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hydra::core::eval {

struct EvalCase {
  std::string id;    // [A-Za-z0-9_.-]+, unique in the set
  std::string task;  // what the agent is asked to do
  // The repository the case runs in, relative to the eval set's folder or
  // absolute; unset: the repository hydra runs in.
  std::optional<std::string> repo;
  std::string base = "HEAD";  // commit or ref every sample starts from
  // Decides correctness: exit 0 = solved. Runs in the sample's checkout after
  // the hidden files were copied in, confined like a check.
  std::string verifyCommand;
  // Files of the eval set (paths relative to its folder) copied to the same
  // path in a sample's checkout only after its agent finished: no agent can
  // see or edit them.
  std::vector<std::string> hiddenFiles;
  // Test names that must go from failing at the base to passing, and that
  // must keep passing (checked by name against the test command's output).
  std::vector<std::string> failToPass;
  std::vector<std::string> passToPass;
  // Overrides of [scoring]'s commands for this case.
  std::optional<std::string> buildCommand;
  std::optional<std::string> testCommand;
  std::optional<std::string> lintCommand;
  int line = 0;  // where its [[cases]] table starts, for messages
};

struct EvalSet {
  std::filesystem::path source;  // the file it came from
  std::string name;
  std::vector<std::string> agents;  // default agents (agent names of hydra.toml or built-in)
  int samples = 1;                  // n per case and agent
  std::vector<int> passK{1};        // the k of every pass@k reported
  int timeoutSeconds = 600;         // per agent run
  std::optional<int> maxConcurrentAgents;
  std::vector<EvalCase> cases;

  const EvalCase* findCase(std::string_view id) const;
  // The folder hidden files and relative repos are found in.
  std::filesystem::path folder() const;
};

// Reads an eval set from `text` (`file` names it in messages and is where its
// hidden files are looked for). Throws ConfigError.
EvalSet parseEvalSet(std::string_view text, const std::filesystem::path& file);
// Every key the reader accepts, by table ("eval", "cases"): what
// docs/eval-set.schema.json must describe.
std::map<std::string, std::vector<std::string>> acceptedEvalSetKeys();

// Reads the file. Throws ConfigError (a missing or unreadable file too).
EvalSet loadEvalSet(const std::filesystem::path& file);

// A hash of the eval set as it will run: its file and every hidden file's
// bytes (40 hex digits), so a report says which version of the set it is of.
std::string evalSetHash(const EvalSet& set);

// Whether `id` may name a case: [A-Za-z0-9_.-]+, at most 64, not "." or "..".
bool isValidCaseId(std::string_view id);

}  // namespace hydra::core::eval
