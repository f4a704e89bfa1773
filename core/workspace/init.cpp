#include "core/workspace/init.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "core/checks/protected_paths.h"
#include "core/config/config.h"
#include "core/process/resource_limits.h"
#include "core/scoring/test_naming.h"
#include "core/util/text.h"  // oneLine: a comment stays on its line whatever a manifest held
#include "core/workspace/hydra_config.h"

namespace hydra::core {

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------
// Detection. Each ecosystem proposes what it can; detectCommands picks per command.

struct Proposal {
  std::string manifest;  // the file that justifies it, e.g. "Cargo.toml"
  std::optional<std::string> build, test, lint;
  std::optional<std::string> testFormat, lintFormat;
  std::vector<std::string> notes;  // findings worth telling even if nothing is used
};

std::optional<std::string> readSmallFile(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool fileExists(const fs::path& file) {
  std::error_code ec;
  return fs::exists(file, ec);
}

bool contains(std::string_view text, std::string_view word) {
  return text.find(word) != std::string_view::npos;
}

// INI files (setup.cfg, tox.ini) have flake8 settings under a [flake8] line.
bool hasIniSection(const fs::path& file, std::string_view section) {
  auto text = readSmallFile(file);
  if (!text) return false;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    auto first = line.find_first_not_of(" \t");
    auto last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos) continue;
    if (std::string_view(line).substr(first, last - first + 1) == "[" + std::string(section) + "]")
      return true;
  }
  return false;
}

// Which test runner an npm "test" script drives: the script text says it best,
// the declared dependencies otherwise.
std::optional<std::string> npmTestFormat(std::string_view script,
                                         const boost::json::object& package) {
  if (contains(script, "vitest")) return "vitest";
  if (contains(script, "jest")) return "jest";
  if (contains(script, "mocha")) return "mocha";
  if (contains(script, "node --test")) return "node";
  for (const char* table : {"devDependencies", "dependencies"}) {
    const auto* deps = package.if_contains(table);
    if (!deps || !deps->is_object()) continue;
    for (const char* runner : {"vitest", "jest", "mocha"})
      if (deps->as_object().contains(runner)) return std::string(runner);
  }
  return std::nullopt;
}

std::optional<Proposal> fromPackageJson(const fs::path& root) {
  auto text = readSmallFile(root / "package.json");
  if (!text) return std::nullopt;
  Proposal p;
  p.manifest = "package.json";
  boost::system::error_code ec;
  boost::json::value document = boost::json::parse(*text, ec);
  if (ec || !document.is_object()) {
    p.notes.push_back("package.json is not a JSON object (" + (ec ? ec.message() : "wrong shape") +
                      "), so its scripts were not read");
    return p;
  }
  const boost::json::object& package = document.as_object();
  const auto* scripts = package.if_contains("scripts");
  if (!scripts || !scripts->is_object()) {
    p.notes.push_back("package.json has no \"scripts\"");
    return p;
  }
  auto script = [&](const char* name) -> std::optional<std::string> {
    const auto* value = scripts->as_object().if_contains(name);
    if (!value || !value->is_string()) return std::nullopt;
    return std::string(value->as_string());
  };
  if (script("build")) p.build = "npm run build";
  if (auto test = script("test")) {
    // `npm init` writes a test script that only fails; it is no test suite.
    if (contains(*test, "no test specified")) {
      p.notes.push_back("package.json's \"test\" script is npm's placeholder, so it was not used");
    } else {
      p.test = "npm test";
      p.testFormat = npmTestFormat(*test, package);
    }
  }
  if (auto lint = script("lint")) {
    p.lint = "npm run lint";
    if (contains(*lint, "eslint")) p.lintFormat = "eslint";
  }
  return p;
}

// For ecosystems whose commands follow from the manifest's presence alone.
Proposal fixedProposal(std::string manifest, std::string build, std::string test,
                       std::string testFormat, std::optional<std::string> lint,
                       std::optional<std::string> lintFormat) {
  Proposal p;
  p.manifest = std::move(manifest);
  p.build = std::move(build);
  p.test = std::move(test);
  p.lint = std::move(lint);
  p.testFormat = std::move(testFormat);
  p.lintFormat = std::move(lintFormat);
  return p;
}

std::optional<Proposal> fromCargo(const fs::path& root) {
  if (!fileExists(root / "Cargo.toml")) return std::nullopt;
  return fixedProposal("Cargo.toml", "cargo build", "cargo test", "cargo", "cargo clippy",
                       "clippy");
}

std::optional<Proposal> fromGoMod(const fs::path& root) {
  if (!fileExists(root / "go.mod")) return std::nullopt;
  return fixedProposal("go.mod", "go build ./...", "go test ./...", "go", "go vet ./...", "go_vet");
}

// ctest -V shows what every test printed, passing or not, so the names its
// framework prints (GoogleTest, Unity) name the test cases inside each
// executable; ctest alone names only the executables, and no environment
// variable asks ctest for verbose output or a JUnit report.
std::optional<Proposal> fromCMake(const fs::path& root) {
  if (!fileExists(root / "CMakeLists.txt")) return std::nullopt;
  return fixedProposal("CMakeLists.txt", "cmake -S . -B build && cmake --build build",
                       "ctest --test-dir build -V", "ctest", std::nullopt, std::nullopt);
}

// The directories of a PATH-syntax list; an empty entry (the current
// directory) is left out: a config generator should not depend on where it runs.
std::vector<fs::path> searchDirectories(std::string_view searchPath) {
  std::vector<fs::path> directories;
  for (size_t start = 0; start <= searchPath.size();) {
    size_t end = std::min(searchPath.find(':', start), searchPath.size());
    if (end > start) directories.emplace_back(searchPath.substr(start, end - start));
    start = end + 1;
  }
  return directories;
}

bool installed(const std::vector<fs::path>& directories, std::string_view binary) {
  return std::any_of(directories.begin(), directories.end(), [&](const fs::path& directory) {
    std::error_code ec;
    const fs::path candidate = directory / binary;
    return fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0;
  });
}

// The Python test files at the root and in tests/ or test/ (not deeper: a
// look, not a crawl), read to see which runner they are written for.
std::vector<std::string> pythonTestFiles(const fs::path& root) {
  std::vector<std::string> texts;
  for (const fs::path& dir : {root, root / "tests", root / "test"}) {
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      const bool test = (name.starts_with("test_") || name.ends_with("_test.py")) && name.ends_with(".py");
      if (!test || texts.size() >= 50) continue;
      if (auto text = readSmallFile(entry.path())) texts.push_back(std::move(*text));
    }
  }
  return texts;
}

// Whether the project runs its tests with pytest: pytest is configured
// (pytest.ini, a conftest.py, [tool.pytest...], [tool:pytest], tox's
// [pytest]), named in pyproject.toml, or imported by a test; or no test is
// written for unittest. Only a suite written for unittest with no sign of
// pytest anywhere is run with `python3 -m unittest`, which needs nothing installed.
bool usesPytest(const fs::path& root, std::string_view pyproject) {
  if (fileExists(root / "pytest.ini") || fileExists(root / "conftest.py") ||
      fileExists(root / "tests" / "conftest.py") || contains(pyproject, "pytest") ||
      hasIniSection(root / "setup.cfg", "tool:pytest") || hasIniSection(root / "tox.ini", "pytest"))
    return true;
  bool unittest = false;
  for (const std::string& text : pythonTestFiles(root)) {
    if (contains(text, "pytest")) return true;
    unittest = unittest || contains(text, "unittest");
  }
  return !unittest;
}

std::optional<Proposal> fromPyproject(const fs::path& root, std::string_view searchPath) {
  auto text = readSmallFile(root / "pyproject.toml");
  if (!text) return std::nullopt;
  Proposal p;
  p.manifest = "pyproject.toml";
  if (usesPytest(root, *text)) {
    // -rA names every test in the summary, so tests are compared by name.
    p.test = "python3 -m pytest -rA";
    p.testFormat = "pytest";
  } else {
    // -v names every test with its verdict.
    p.test = "python3 -m unittest -v";
    p.testFormat = "unittest";
    p.notes.push_back("the tests are written for unittest and nothing configures pytest, so python3 -m unittest runs them");
  }
  bool ruff = fileExists(root / "ruff.toml") || fileExists(root / ".ruff.toml");
  bool flake8 = fileExists(root / ".flake8") || hasIniSection(root / "setup.cfg", "flake8") ||
                hasIniSection(root / "tox.ini", "flake8");
  try {
    toml::table project = toml::parse(*text, std::string_view("pyproject.toml"));
    ruff = ruff || project.at_path("tool.ruff").is_table();
    flake8 = flake8 || project.at_path("tool.flake8").is_table();
  } catch (const toml::parse_error& error) {
    p.notes.push_back("pyproject.toml is not valid TOML (line " +
                      std::to_string(error.source().begin.line) + ": " +
                      std::string(error.description()) + "), so its [tool] tables were not read");
  }
  if (ruff) {
    p.lint = "ruff check .";
    p.lintFormat = "ruff";
  } else if (flake8) {
    p.lint = "flake8";
    p.lintFormat = "flake8";
  } else {
    // pyflakes needs no configuration: proposed when it is installed (pip's
    // `pyflakes`, Debian's `pyflakes3`). It exits 1 whenever it finds
    // anything, so lint_format matters: the findings are compared with the base's.
    const std::vector<fs::path> directories = searchDirectories(searchPath);
    for (const char* binary : {"pyflakes", "pyflakes3"}) {
      if (!installed(directories, binary)) continue;
      p.lint = std::string(binary) + " .";
      p.lintFormat = "pyflakes";
      p.notes.push_back(std::string("no ruff or flake8 configuration, and ") + binary + " is installed");
      break;
    }
  }
  return p;
}

// ---------------------------------------------------------------------------
// Rendering.

std::string tomlString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04X",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string tomlNumber(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string joinWords(std::span<const std::string_view> words) {
  std::string out;
  for (std::string_view word : words) out += (out.empty() ? "" : ", ") + std::string(word);
  return out;
}

class ConfigWriter {
 public:
  void comment(std::string_view text) {
    out_ += (text.empty() ? "#" : "# " + std::string(text)) + "\n";
  }
  void blank() { out_ += "\n"; }
  void table(std::string_view name) { out_ += "[" + std::string(name) + "]\n"; }
  void setting(std::string_view key, std::string_view value) {
    out_ += std::string(key) + " = " + std::string(value) + "\n";
  }
  // A default, shown so it can be uncommented and changed.
  void defaultSetting(std::string_view key, std::string_view value, std::string_view note = {}) {
    out_ += "# " + std::string(key) + " = " + std::string(value);
    if (!note.empty()) out_ += "  # " + std::string(note);
    out_ += "\n";
  }
  // A detected value is written out; without one, the empty default is shown.
  void detected(std::string_view key, const std::optional<std::string>& value,
                std::string_view missing) {
    if (value)
      setting(key, tomlString(*value));
    else
      defaultSetting(key, "\"\"", missing);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

void renderHeader(ConfigWriter& w, const DetectedCommands& detected) {
  w.comment("hydra.toml: how hydra races coding agents in this repository.");
  w.comment("Every key is optional. A commented-out `key = value` line shows the default:");
  w.comment("remove its leading \"# \" to change it. The full reference is docs/configuration.md");
  w.comment("in hydra's sources.");
  if (!detected.evidence.empty()) {
    w.comment("");
    w.comment("What `hydra init` found:");
    for (const std::string& line : detected.evidence) w.comment("  - " + oneLine(line));
  }
  for (const std::string& line : detected.warnings) w.comment("Warning: " + oneLine(line));
  w.blank();
}

void renderGeneral(ConfigWriter& w) {
  const GeneralConfig defaults;
  w.table("general");
  w.comment(
      "Directory for the agents' worktrees, relative to the repository root (it must stay inside "
      "it).");
  w.defaultSetting("workspace_dir", tomlString(defaults.workspaceDir));
  w.comment("How many agents run at the same time; the others wait for a free slot.");
  w.defaultSetting("max_concurrent_agents", std::to_string(defaults.maxConcurrentAgents));
  w.comment("Seconds an agent may run before it is stopped, together with its child processes.");
  w.defaultSetting("timeout_seconds", std::to_string(defaults.timeoutSeconds));
  w.comment("How agents and their checks are confined: \"auto\" (bubblewrap where it works, else");
  w.comment("unconfined, saying so), \"bubblewrap\" (confined or not at all), \"off\". See docs/security.md.");
  w.defaultSetting("sandbox", tomlString(defaults.sandbox));
  w.comment("Folders of your checkout that git ignores, copied into every new worktree so agents");
  w.comment("start with dependencies installed (cloned where the file system can).");
  w.defaultSetting("copy_ignored", "[]", "e.g. [\"node_modules\", \".venv\"]");
  w.comment("Worktrees of finished races kept (after merge or cleanup) and reused by the next race,");
  w.comment("which then rewrites only the files that differ: a race starts in milliseconds.");
  w.defaultSetting("pool_size", std::to_string(defaults.poolSize), "e.g. 8");
  w.comment("The largest result hydra commits: files an agent added or changed, and their bytes.");
  w.comment("An agent over either ends \"result too large\" and nothing of it is committed.");
  w.defaultSetting("max_result_files", std::to_string(defaults.maxResultFiles));
  w.defaultSetting("max_result_bytes", std::to_string(defaults.maxResultBytes), "2 GiB");
  w.comment("What one agent's processes may take together; over one it is killed and cannot win (0: no limit).");
  w.comment("memory_limit_mib: e.g. 4096 (default: half the machine's memory).");
  w.comment("max_processes: e.g. 500 (default: " + std::to_string(kDefaultProcessLimit) + ").");
  w.comment("cpu_limit_seconds: e.g. 1800 (default: none).");
  w.comment("Ignored folders a pooled worktree keeps, so installs stay warm; all else an agent left is removed.");
  w.defaultSetting("keep_ignored", "[]", "e.g. [\"node_modules\", \".venv\", \"target\"]");
  w.comment("Very large repositories: only these folders (and the files at the root) in each worktree.");
  w.defaultSetting("sparse_paths", "[]", "e.g. [\"services/api\", \"libs/common\"]");
  w.comment("setup_command: a shell command run in each new or reused worktree before its agent");
  w.comment("starts, confined like the agent; its output is in the agent's log, and if it fails the agent");
  w.comment("does not run (\"setupFailed\"). For example: setup_command = \"npm ci\" (default: none).");
  w.blank();
}

void renderAgent(ConfigWriter& w, const std::string& name) {
  auto usualBinary = defaultAgentBinary(name);
  std::string adapter = usualBinary ? name : "command";
  w.table("agents." + name);
  w.comment("Adapter that drives it: " + joinWords(knownAdapters()) + ".");
  w.comment("Default: the table's name when it is one of these, else \"command\" (any program).");
  w.defaultSetting("adapter", tomlString(adapter));
  if (usualBinary) {
    w.comment("The program to run, looked up on PATH when it has no '/'.");
    w.defaultSetting("binary", tomlString(*usualBinary));
  } else {
    w.comment(
        "The program to run, looked up on PATH when it has no '/'. The \"command\" adapter needs "
        "it.");
    w.setting("binary", tomlString(name));
  }
  w.comment("args: replaces the adapter's own arguments (default: the adapter's arguments).");
  w.comment("Arguments appended to the adapter's.");
  w.defaultSetting("extra_args", "[]");
  w.comment("Environment variables added to hydra's own for this agent.");
  w.defaultSetting("env", "{}");
  w.comment(
      "timeout_seconds: overrides [general] timeout_seconds for this agent (default: that value).");
  for (std::string_view key : {"memory_limit_mib", "max_processes", "cpu_limit_seconds"}) {
    w.comment(std::string(key) + ": overrides [general] " + std::string(key) + " for this agent (0: no limit).");
  }
  w.comment(
      "writable_paths: more places it may write inside the sandbox, absolute or \"~/...\" (default: "
      "none).");
  w.comment("What network it reaches: open (the host's), none (nothing), or allowlist (only allowed_hosts,");
  w.comment("through hydra's proxy; docs/security.md).");
  w.defaultSetting("network", "\"open\"");
  w.comment("allowed_hosts: with network = \"allowlist\", host names or host:port it may reach (default: its");
  w.comment("CLI's model API, docs/agents.md).");
  if (name.ends_with("-acp") || name == "acp") {
    w.comment("How its permission requests are answered: worktree (allow what stays in its worktree),");
    w.comment("allow or reject.");
    w.defaultSetting("acp_permissions", "\"worktree\"");
  } else {
    w.comment("acp_permissions: ACP agents only: worktree, allow or reject (default: worktree).");
  }
  w.blank();
}

void renderAgents(ConfigWriter& w, const std::vector<std::string>& agentNames) {
  w.comment("One [agents.NAME] table per agent; NAME (letters, digits, '_', '-') becomes part of");
  w.comment("branch names. An agent named after an adapter works without a table.");
  if (agentNames.empty()) {
    w.comment("No agent CLI was found on PATH. For example:");
    w.comment("  [agents.claude]");
    w.comment("  extra_args = [\"--allowedTools\", \"Edit,Write,Bash\"]");
    w.blank();
    return;
  }
  w.blank();
  for (const std::string& name : agentNames) renderAgent(w, name);
}

void renderScoring(ConfigWriter& w, const DetectedCommands& detected) {
  const ScoringConfig defaults;
  const ScoringWeights& weights = defaults.weights;
  w.table("scoring");
  w.comment(
      "Weight of each part of the score: numbers >= 0, not all zero. A weight left out keeps its "
      "default.");
  w.defaultSetting("weights", "{ build = " + tomlNumber(weights.build) +
                                  ", tests = " + tomlNumber(weights.tests) +
                                  ", lint = " + tomlNumber(weights.lint) +
                                  ", diff_size = " + tomlNumber(weights.diffSize) +
                                  ", speed = " + tomlNumber(weights.speed) + " }");
  w.comment("Shell commands run in each agent's worktree, and in the repository for the baseline.");
  w.comment("An empty string, the default, skips that check.");
  w.detected("build_command", detected.build, "no build command detected");
  w.detected("test_command", detected.test, "no test command detected");
  w.detected("lint_command", detected.lint, "no lint command detected");
  w.comment("How to read the test output: " + joinWords(knownTestFormats()) + ".");
  if (detected.testFormat)
    w.setting("test_format", tomlString(*detected.testFormat));
  else
    w.comment("test_format: default: recognised from the output.");
  w.comment("How to read the lint output: " + joinWords(knownLintFormats()) + ".");
  if (detected.lintFormat)
    w.setting("lint_format", tomlString(*detected.lintFormat));
  else
    w.comment("lint_format: default: recognised from the output.");
  w.comment(
      "junit_report: a JUnit XML report the test command writes, relative to the worktree "
      "(default: none).");
  w.comment("Files an agent is not scored on changing (globs; docs/configuration.md): a change");
  w.comment("there is shown and rules out auto-merge. protected_mode = \"restore\" also runs its");
  w.comment("checks with the base versions put back; keep \"flag\" when tasks may need to edit tests.");
  w.comment("Unset, it is the test runners' and linters' configuration files and the scripts the");
  w.comment("test and lint commands run (a Makefile for `make test`); files an agent adds");
  w.comment("that would run in place of the test runner (a pytest.py) are always left out of its checks.");
  if (detected.protectedPaths.empty()) {
    std::string list;
    for (const std::string& p : checks::defaultProtectedPaths()) list += (list.empty() ? "" : ", ") + tomlString(p);
    w.comment("protected_paths: default: [" + list + "].");
  } else {
    std::string list;
    for (const std::string& p : detected.protectedPaths) list += (list.empty() ? "" : ", ") + tomlString(p);
    w.setting("protected_paths", "[" + list + "]");
  }
  w.defaultSetting("protected_mode", tomlString(defaults.protectedMode));
  w.comment("Seconds each build, test or lint command may run.");
  w.defaultSetting("timeout_per_check_seconds", std::to_string(defaults.timeoutPerCheckSeconds));
  w.comment("Merge the winner without asking when its score reaches auto_merge_minimum.");
  w.defaultSetting("auto_merge", defaults.autoMerge ? "true" : "false");
  w.blank();

  w.table("scoring.thresholds");
  w.comment("Scores run from 0 to 100. At or above auto_merge_minimum a winner may be merged");
  w.comment("automatically; at or below fail_maximum a result counts as failed.");
  w.defaultSetting("auto_merge_minimum", tomlNumber(defaults.thresholds.autoMergeMinimum));
  w.defaultSetting("fail_maximum", tomlNumber(defaults.thresholds.failMaximum));
  w.blank();
}

void renderCollaboration(ConfigWriter& w) {
  const CollaborationConfig defaults;
  w.table("collaboration");
  w.comment("hydra collab: a builder agent works on the task, a reviewer reviews each result, the");
  w.comment("builder refines it; every round is committed and scored like a race's result.");
  w.comment("builder: the agent hydra collab builds with when the command line names none, e.g. \"claude\".");
  w.comment("reviewer: the agent that reviews when the command line names none, e.g. \"codex\".");
  w.comment("Builder rounds at most (the first build and the refinements).");
  w.defaultSetting("max_iterations", std::to_string(defaults.maxIterations));
  w.comment("until_score: a round scoring this much ends the loop, e.g. 90 (default: [scoring.thresholds]");
  w.comment("auto_merge_minimum).");
  w.comment("Every round but the last is reviewed, whatever its score: only an approval or");
  w.comment("max_iterations ends the loop (for a reviewer that asks for what no check measures).");
  w.defaultSetting("review_every_round", defaults.reviewEveryRound ? "true" : "false");
  w.comment("A review containing this approves the result and ends the loop.");
  w.defaultSetting("approve_marker", tomlString(defaults.approveMarker));
  w.comment("The reviewer's prompt: {task}, {diff} (the builder's diff against the base), {scores}");
  w.comment("(the score breakdown with the failing checks' output) and {approve_marker}.");
  w.defaultSetting("review_prompt_template", tomlString(defaults.reviewPromptTemplate));
  w.comment("The builder's prompt for each refinement: {task}, {review}, {diff} and {scores}.");
  w.defaultSetting("refine_prompt_template", tomlString(defaults.refinePromptTemplate));
}

void renderExecutor(ConfigWriter& w) {
  const ExecutorConfig defaults;
  w.table("executor");
  w.comment("Where agents and their checks run: \"local\" (here), or \"slurm\" (each one a batch job on a");
  w.comment("Slurm cluster whose nodes share this repository's file system; docs/scaling.md).");
  w.comment("--executor on hydra race, collab and eval run overrides it.");
  w.defaultSetting("kind", tomlString(toString(defaults.kind)));
  w.comment("The rest is for Slurm only.");
  w.comment("partition: sbatch's --partition (default: the cluster's default partition).");
  w.comment("account: sbatch's --account (default: the user's default account).");
  w.comment("time_limit: sbatch's --time, minutes or \"[days-]hours:minutes:seconds\" (default: each");
  w.comment("run's timeout plus a margin).");
  w.comment("extra_args: more sbatch options, e.g. [\"--cpus-per-task=4\", \"--mem=8G\"] (default: none).");
  w.comment("slurm_conf: the slurm.conf to use, absolute (default: SLURM_CONF, or Slurm's own).");
  w.comment("hydra_binary: the hydra the nodes run, at a path they see (default: this hydra's path).");
}

// ---------------------------------------------------------------------------
// Writing.

[[noreturn]] void throwErrno(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

// A file descriptor that is closed, and a temporary file that is removed,
// whatever path the write takes.
class TemporaryFile {
 public:
  explicit TemporaryFile(const fs::path& directory) {
    std::random_device entropy;
    for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
      path_ = directory / (".hydra.toml." + std::to_string(::getpid()) + "." +
                           std::to_string(entropy()) + ".tmp");
      // 0666 so the umask decides, as for any file the user creates.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST)
        throwErrno("cannot create a temporary file in " + directory.string());
    }
    if (fd_ < 0) throwErrno("cannot create a temporary file in " + directory.string());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  void writeAll(std::string_view text) {
    while (!text.empty()) {
      ssize_t written = ::write(fd_, text.data(), text.size());
      if (written < 0 && errno == EINTR) continue;
      if (written < 0) throwErrno("cannot write " + path_.string());
      text.remove_prefix(static_cast<size_t>(written));
    }
  }

  // Durable before it gets its real name, so a crash leaves the old file or the
  // new one, never a truncated one.
  void syncAndClose() {
    if (::fsync(fd_) != 0) throwErrno("cannot sync " + path_.string());
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throwErrno("cannot close " + path_.string());
  }

  const fs::path& path() const { return path_; }
  // After a rename the name is gone; nothing is left to remove.
  void released() { path_.clear(); }

 private:
  fs::path path_;
  int fd_ = -1;
};

void syncDirectory(const fs::path& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throwErrno("cannot open " + directory.string());
  int rc = ::fsync(fd);
  int savedErrno = errno;
  ::close(fd);
  errno = savedErrno;
  if (rc != 0) throwErrno("cannot sync " + directory.string());
}

std::string alreadyExists(const fs::path& target) {
  return target.string() + " already exists; hydra init --force replaces it";
}

// What an agent must not be scored on changing: the folders tests live in,
// and the files that tell a runner how to run them (a conftest.py can mark
// every test passed). Only what exists at the root, or is pytest's
// conftest.py, which may sit anywhere.
std::vector<std::string> detectProtectedPaths(const fs::path& root, const std::vector<Proposal>& proposals) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const char* folder : {"tests", "test", "spec", "__tests__", "testdata"}) {
    if (fs::is_directory(root / folder, ec)) out.push_back(std::string(folder) + "/");
  }
  const bool python = std::any_of(proposals.begin(), proposals.end(),
                                  [](const Proposal& p) { return p.manifest == "pyproject.toml"; });
  if (python || fileExists(root / "conftest.py")) out.push_back("conftest.py");
  // The runners' and linters' configuration hydra protects when protected_paths
  // is unset, as far as this project has it: written out, the list replaces them.
  std::vector<std::string> patterns = checks::defaultProtectedPaths();
  for (const Proposal& p : proposals) {
    for (const std::string& script : checks::defaultProtectedPathsFor(p.test, p.lint)) patterns.push_back(script);
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    for (const std::string& pattern : patterns) {
      if (checks::matchesProtected(pattern, name)) out.push_back(pattern);
    }
    if (name.rfind("karma.conf.", 0) == 0) out.push_back(name);
  }
  if (fileExists(root / "go.mod")) out.push_back("*_test.go");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

DetectedCommands detectCommands(const fs::path& repoRoot, std::string_view searchPath) {
  const std::array<std::function<std::optional<Proposal>(const fs::path&)>, 5> ecosystems{
      fromPackageJson, fromCargo, fromGoMod, fromCMake,
      [searchPath](const fs::path& root) { return fromPyproject(root, searchPath); }};
  std::vector<Proposal> proposals;
  for (const auto& ecosystem : ecosystems)
    if (auto proposal = ecosystem(repoRoot)) proposals.push_back(std::move(*proposal));

  DetectedCommands found;
  found.protectedPaths = detectProtectedPaths(repoRoot, proposals);
  auto tellProtected = [&found] {
    if (found.protectedPaths.empty()) return;
    std::string listed;
    for (const std::string& p : found.protectedPaths) listed += (listed.empty() ? "" : ", ") + p;
    found.evidence.push_back("protected: " + listed + " (tests and their runner's configuration)");
  };
  if (proposals.empty()) {
    found.evidence.push_back(
        "no package.json, Cargo.toml, go.mod, CMakeLists.txt or pyproject.toml at the repository "
        "root");
    tellProtected();
    return found;
  }
  for (const Proposal& p : proposals)
    for (const std::string& note : p.notes) found.evidence.push_back(note);

  auto firstOffering = [&](std::optional<std::string> Proposal::*command) -> const Proposal* {
    for (const Proposal& p : proposals)
      if (p.*command) return &p;
    return nullptr;
  };
  auto record = [&](const char* what, const std::string& command, const Proposal& p) {
    found.evidence.push_back(std::string(what) + ": " + command + " (from " + p.manifest + ")");
  };
  // A format belongs to the command whose output it reads, so both come from one proposal.
  if (const Proposal* p = firstOffering(&Proposal::build)) {
    found.build = p->build;
    record("build", *p->build, *p);
  }
  if (const Proposal* p = firstOffering(&Proposal::test)) {
    found.test = p->test;
    found.testFormat = p->testFormat;
    record("test", *p->test, *p);
    // A runner that names no passing test lets a deleted test read as a
    // passing one (docs/scoring.md, Tests by name); the diagnostics of
    // hydra.toml say the same from the same decision.
    if (auto reason = scoring::testsByCountsOnlyReason(*found.test, found.testFormat, false))
      found.warnings.push_back(std::move(*reason));
  }
  if (const Proposal* p = firstOffering(&Proposal::lint)) {
    found.lint = p->lint;
    found.lintFormat = p->lintFormat;
    record("lint", *p->lint, *p);
  }
  tellProtected();
  return found;
}

std::vector<std::string> detectInstalledAgents(std::string_view searchPath) {
  const std::vector<fs::path> directories = searchDirectories(searchPath);
  std::vector<std::string> agents;
  for (std::string_view adapter : knownAdapters()) {
    auto binary = defaultAgentBinary(adapter);
    if (binary && installed(directories, *binary)) agents.emplace_back(adapter);
  }
  return agents;
}

std::string renderInitConfig(const DetectedCommands& detected,
                             const std::vector<std::string>& agentNames) {
  for (const std::string& name : agentNames)
    if (!isValidAgentName(name))
      throw std::invalid_argument("agent name '" + name +
                                  "' may only contain letters, digits, '_' and '-'");
  ConfigWriter w;
  renderHeader(w, detected);
  renderGeneral(w);
  renderAgents(w, agentNames);
  renderScoring(w, detected);
  renderCollaboration(w);
  w.blank();
  renderExecutor(w);
  return w.take();
}

void writeInitConfig(const fs::path& repoRoot, bool force) {
  std::error_code ec;
  if (!fs::is_directory(repoRoot, ec))
    throw std::runtime_error(repoRoot.string() + " is not a directory");
  const fs::path target = repoRoot / "hydra.toml";
  // Checked before any work so the common refusal is quick; the link below is
  // what makes it hold against a file appearing in between.
  if (!force && fs::exists(fs::symlink_status(target, ec)))
    throw std::runtime_error(alreadyExists(target));

  const char* path = std::getenv("PATH");
  std::string text = renderInitConfig(detectCommands(repoRoot, path ? path : ""),
                                      detectInstalledAgents(path ? path : ""));

  TemporaryFile temporary(repoRoot);
  temporary.writeAll(text);
  temporary.syncAndClose();
  if (force) {
    if (::rename(temporary.path().c_str(), target.c_str()) != 0)
      throwErrno("cannot create " + target.string());
    temporary.released();
  } else if (::link(temporary.path().c_str(), target.c_str()) != 0) {
    // link, unlike rename, never replaces an existing file.
    if (errno == EEXIST) throw std::runtime_error(alreadyExists(target));
    throwErrno("cannot create " + target.string());
  }
  syncDirectory(repoRoot);
}

}  // namespace hydra::core
