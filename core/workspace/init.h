#pragma once

// `hydra init`: find out how a repository builds, tests and lints, and write a
// commented hydra.toml that says so.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hydra::core {

struct DetectedCommands {
  std::optional<std::string> build, test, lint;
  // The [scoring] test_format / lint_format that reads those commands' output,
  // when the ecosystem makes it certain.
  std::optional<std::string> testFormat, lintFormat;
  // [scoring] protected_paths: the project's test folders and test-runner
  // configuration found at the repository root (tests/, conftest.py,
  // jest.config.js, ...).
  std::vector<std::string> protectedPaths;
  // What was found and why each command was chosen, one sentence each.
  std::vector<std::string> evidence;
  // What will not score as well as it could, one sentence each: a test runner
  // whose output names no tests ("tests compared by counts only").
  std::vector<std::string> warnings;
};

// Looks at the manifests in `repoRoot` (not below it). Each command comes from
// the first ecosystem, in this order, that offers one: package.json scripts
// (they name the project's own entry points), Cargo.toml, go.mod,
// CMakeLists.txt, pyproject.toml. `searchPath` (PATH syntax) is where a tool
// the project does not configure is looked for (pyflakes); empty: nowhere.
DetectedCommands detectCommands(const std::filesystem::path& repoRoot, std::string_view searchPath = {});

// The known agents (claude, codex, cursor, gemini, opencode, aider) whose usual
// binary is an executable file in a directory of `searchPath` (PATH syntax).
std::vector<std::string> detectInstalledAgents(std::string_view searchPath);

// A hydra.toml documenting every table and key with its default: detected
// commands filled in, the rest commented out. parseConfig accepts it, and
// uncommenting the `# key = value` lines changes nothing. Throws
// std::invalid_argument for an agent name that isValidAgentName rejects.
std::string renderInitConfig(const DetectedCommands& detected,
                             const std::vector<std::string>& agentNames);

// Writes <repoRoot>/hydra.toml for what detectCommands finds and the agents on
// PATH, atomically (temporary file in the same directory, fsync, rename).
// Throws std::runtime_error when the file exists and !force, or on I/O errors.
void writeInitConfig(const std::filesystem::path& repoRoot, bool force);

}  // namespace hydra::core
