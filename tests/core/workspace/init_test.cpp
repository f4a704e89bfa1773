#include "core/workspace/init.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "core/config/config.h"
#include "core/workspace/hydra_config.h"
#include "tests/core/config/temp_dir.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const fs::path kFile = "hydra.toml";

std::string readFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Turns every `# key = value` line into `key = value`, leaving prose alone.
std::string uncommentDefaults(const std::string& text) {
  static const std::regex setting("^# ([a-z_]+ = .*)$");
  std::istringstream lines(text);
  std::string out;
  int uncommented = 0;
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_match(line, match, setting)) {
      line = match[1];
      ++uncommented;
    }
    out += line + "\n";
  }
  EXPECT_GT(uncommented, 10) << "expected many commented defaults in:\n" << text;
  return out;
}

// Sets PATH for one test and puts the old value back.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (old_)
      ::setenv("PATH", old_->c_str(), 1);
    else
      ::unsetenv("PATH");
  }

 private:
  std::optional<std::string> old_;
};

void writeExecutable(const test::TempDir& dir, const std::string& relative) {
  fs::path file = dir.write(relative, "#!/bin/sh\nexit 0\n");
  fs::permissions(file, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
}

// ---------------------------------------------------------------------------
// Detection

TEST(DetectCommandsTest, CargoProjectUsesCargoBuildTestAndClippy) {
  test::TempDir repo;
  repo.write("Cargo.toml", "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.build, "cargo build");
  EXPECT_EQ(found.test, "cargo test");
  EXPECT_EQ(found.lint, "cargo clippy");
  EXPECT_EQ(found.testFormat, "cargo");
  EXPECT_EQ(found.lintFormat, "clippy");
  EXPECT_THAT(found.evidence, ElementsAre("build: cargo build (from Cargo.toml)",
                                          "test: cargo test (from Cargo.toml)",
                                          "lint: cargo clippy (from Cargo.toml)",
                                          "protected: Cargo.toml (tests and their runner's configuration)"));
}

TEST(DetectCommandsTest, PackageJsonUsesOnlyTheScriptsItHas) {
  test::TempDir repo;
  repo.write("package.json", R"({"name": "demo", "scripts": {"build": "tsc", "test": "vitest run"},
                                 "devDependencies": {"vitest": "^1.0.0"}})");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.build, "npm run build");
  EXPECT_EQ(found.test, "npm test");
  EXPECT_EQ(found.testFormat, "vitest");
  EXPECT_EQ(found.lint, std::nullopt);
  EXPECT_EQ(found.lintFormat, std::nullopt);
}

TEST(DetectCommandsTest, PackageJsonTestRunnerComesFromScriptOrDependencies) {
  test::TempDir repo;
  repo.write("package.json", R"({"scripts": {"test": "react-scripts test", "lint": "eslint src"},
                                 "devDependencies": {"jest": "29"}})");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.test, "npm test");
  EXPECT_EQ(found.testFormat, "jest");
  EXPECT_EQ(found.lint, "npm run lint");
  EXPECT_EQ(found.lintFormat, "eslint");
  // jest names no passing tests: init warns, in its output and in hydra.toml.
  EXPECT_THAT(found.warnings, ElementsAre(HasSubstr("tests will be compared by counts only")));
  EXPECT_THAT(renderInitConfig(found, {}), HasSubstr("# Warning: jest names no passing tests"));

  repo.write("package.json", R"({"scripts": {"test": "node --test"}})");
  EXPECT_EQ(detectCommands(repo.path()).testFormat, "node");
  EXPECT_THAT(detectCommands(repo.path()).warnings, IsEmpty());
  repo.write("package.json", R"({"scripts": {"test": "mocha 'test/**/*.js'"}})");
  EXPECT_EQ(detectCommands(repo.path()).testFormat, "mocha");
  repo.write("package.json", R"({"scripts": {"test": "./run-tests.sh"}})");
  EXPECT_EQ(detectCommands(repo.path()).testFormat, std::nullopt);
}

TEST(DetectCommandsTest, NpmPlaceholderTestScriptIsNotATestSuite) {
  test::TempDir repo;
  repo.write("package.json",
             R"({"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}})");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.test, std::nullopt);
  EXPECT_THAT(found.evidence, Contains(HasSubstr("placeholder")));
}

TEST(DetectCommandsTest, MalformedPackageJsonIsReportedNotFatal) {
  test::TempDir repo;
  repo.write("package.json", "{\"scripts\": {\"build\": ");
  repo.write("go.mod", "module example.com/demo\n\ngo 1.19\n");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.build, "go build ./...");
  EXPECT_THAT(found.evidence, Contains(HasSubstr("package.json is not a JSON object")));
}

TEST(DetectCommandsTest, CMakeProjectBuildsIntoBuildAndRunsCtest) {
  test::TempDir repo;
  repo.write("CMakeLists.txt", "cmake_minimum_required(VERSION 3.20)\nproject(demo)\n");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.build, "cmake -S . -B build && cmake --build build");
  EXPECT_EQ(found.test, "ctest --test-dir build -V");
  EXPECT_EQ(found.testFormat, "ctest");
  EXPECT_EQ(found.lint, std::nullopt);
}

TEST(DetectCommandsTest, GoModuleUsesGoBuildTestAndVet) {
  test::TempDir repo;
  repo.write("go.mod", "module example.com/demo\n\ngo 1.19\n");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.build, "go build ./...");
  EXPECT_EQ(found.test, "go test ./...");
  EXPECT_EQ(found.lint, "go vet ./...");
  EXPECT_EQ(found.testFormat, "go");
  EXPECT_EQ(found.lintFormat, "go_vet");
}

TEST(DetectCommandsTest, PyprojectUsesPytestAndRuffWhenConfigured) {
  test::TempDir repo;
  repo.write("pyproject.toml", "[project]\nname = \"demo\"\n\n[tool.ruff]\nline-length = 100\n");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.build, std::nullopt);
  EXPECT_EQ(found.test, "python3 -m pytest -rA");
  EXPECT_EQ(found.testFormat, "pytest");
  EXPECT_EQ(found.lint, "ruff check .");
  EXPECT_EQ(found.lintFormat, "ruff");
}

TEST(DetectCommandsTest, PyprojectUsesFlake8FromPyprojectOrSetupCfg) {
  test::TempDir fromPyproject;
  fromPyproject.write("pyproject.toml",
                      "[project]\nname = \"demo\"\n[tool.flake8]\nmax-line-length = 100\n");
  EXPECT_EQ(detectCommands(fromPyproject.path()).lint, "flake8");

  test::TempDir fromSetupCfg;
  fromSetupCfg.write("pyproject.toml", "[project]\nname = \"demo\"\n");
  fromSetupCfg.write("setup.cfg",
                     "[metadata]\nname = demo\n\n  [flake8]  \nmax-line-length = 100\n");
  DetectedCommands found = detectCommands(fromSetupCfg.path());
  EXPECT_EQ(found.lint, "flake8");
  EXPECT_EQ(found.lintFormat, "flake8");
}

TEST(DetectCommandsTest, PyprojectWithoutLinterSettingsDetectsNoLint) {
  test::TempDir repo;
  repo.write("pyproject.toml", "[project]\nname = \"demo\"\n");
  repo.write("setup.cfg", "[metadata]\nname = demo\n# [flake8] is only mentioned here\n");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.test, "python3 -m pytest -rA");
  EXPECT_EQ(found.lint, std::nullopt);
}

// A suite written for unittest, with no sign of pytest, runs with python3 -m
// unittest -v (named per test); any sign of pytest keeps pytest.
TEST(DetectCommandsTest, PyprojectWithAUnittestSuiteUsesUnittestUnlessPytestShows) {
  test::TempDir repo;
  repo.write("pyproject.toml", "[project]\nname = \"demo\"\n");
  repo.write("tests/test_calc.py", "import unittest\n\n\nclass CalcTests(unittest.TestCase):\n    pass\n");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.test, "python3 -m unittest -v");
  EXPECT_EQ(found.testFormat, "unittest");
  EXPECT_THAT(found.evidence, Contains(HasSubstr("the tests are written for unittest")));
  EXPECT_EQ(parseConfig(renderInitConfig(found, {}), kFile).scoring.testFormat, "unittest");

  repo.write("tests/conftest.py", "");
  EXPECT_EQ(detectCommands(repo.path()).test, "python3 -m pytest -rA");
  fs::remove(repo.path() / "tests" / "conftest.py");
  repo.write("pyproject.toml", "[project]\nname = \"demo\"\n[project.optional-dependencies]\ntest = [\"pytest\"]\n");
  EXPECT_EQ(detectCommands(repo.path()).testFormat, "pytest");
}

// pyflakes needs no configuration: proposed (with its format, since it exits 1
// whenever it finds anything) where it is installed and nothing else is configured.
TEST(DetectCommandsTest, PyprojectWithoutLinterSettingsUsesAnInstalledPyflakes) {
  test::TempDir repo;
  repo.write("pyproject.toml", "[project]\nname = \"demo\"\n");
  test::TempDir bin;
  writeExecutable(bin, "pyflakes3");
  DetectedCommands found = detectCommands(repo.path(), bin.path().string());
  EXPECT_EQ(found.lint, "pyflakes3 .");
  EXPECT_EQ(found.lintFormat, "pyflakes");
  EXPECT_THAT(found.evidence, Contains("lint: pyflakes3 . (from pyproject.toml)"));
  EXPECT_EQ(parseConfig(renderInitConfig(found, {}), kFile).scoring.lintFormat, "pyflakes");

  writeExecutable(bin, "pyflakes");
  EXPECT_EQ(detectCommands(repo.path(), bin.path().string()).lint, "pyflakes .");
  repo.write("ruff.toml", "");
  EXPECT_EQ(detectCommands(repo.path(), bin.path().string()).lint, "ruff check .");
}

TEST(DetectCommandsTest, ProposesTheTestFoldersAndRunnerConfigurationAsProtected) {
  test::TempDir repo;
  repo.write("pyproject.toml", "[project]\nname = \"demo\"\n");
  repo.write("tests/test_login.py", "def test_login():\n    pass\n");
  repo.write("pytest.ini", "[pytest]\n");
  repo.write("web/jest.config.js", "module.exports = {};\n");  // not at the root: not proposed
  repo.write("jest.config.ts", "export default {};\n");
  DetectedCommands found = detectCommands(repo.path());
  // The default protected paths this project has files for, written out.
  EXPECT_THAT(found.protectedPaths,
              ElementsAre("conftest.py", "jest.config.*", "pyproject.toml", "pytest.ini", "tests/"));
  EXPECT_THAT(found.evidence, Contains("protected: conftest.py, jest.config.*, pyproject.toml, pytest.ini, tests/ "
                                       "(tests and their runner's configuration)"));

  const Config config = parseConfig(renderInitConfig(found, {}), kFile);
  EXPECT_EQ(config.scoring.protectedPaths, found.protectedPaths);
  // Written out, they show in hydra.toml.
  EXPECT_THAT(renderInitConfig(found, {}), HasSubstr("\"pyproject.toml\""));
  EXPECT_EQ(config.scoring.protectedMode, "flag");

  test::TempDir go;
  go.write("go.mod", "module demo\n");
  EXPECT_THAT(detectCommands(go.path()).protectedPaths, ElementsAre("*_test.go", "go.mod"));
  test::TempDir cargo;
  cargo.write("Cargo.toml", "[package]\nname = \"demo\"\n");
  EXPECT_THAT(detectCommands(cargo.path()).protectedPaths, ElementsAre("Cargo.toml"));
}

TEST(DetectCommandsTest, InvalidPyprojectStillGivesPytestAndSaysWhy) {
  test::TempDir repo;
  repo.write("pyproject.toml", "[project\nname = \"demo\"\n");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.test, "python3 -m pytest -rA");
  EXPECT_THAT(found.evidence, Contains(HasSubstr("pyproject.toml is not valid TOML (line 1")));
}

TEST(DetectCommandsTest, EachCommandComesFromTheFirstEcosystemOfferingIt) {
  test::TempDir repo;
  repo.write("package.json", R"({"scripts": {"build": "vite build", "test": "jest"}})");
  repo.write("Cargo.toml", "[workspace]\nmembers = []\n");
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.build, "npm run build");
  EXPECT_EQ(found.test, "npm test");
  EXPECT_EQ(found.testFormat, "jest");
  EXPECT_EQ(found.lint, "cargo clippy");  // package.json has no lint script
  EXPECT_EQ(found.lintFormat, "clippy");
  EXPECT_THAT(found.evidence, Contains("lint: cargo clippy (from Cargo.toml)"));

  test::TempDir mixed;
  mixed.write("CMakeLists.txt", "project(demo)\n");
  mixed.write("pyproject.toml", "[tool.ruff]\n");
  found = detectCommands(mixed.path());
  EXPECT_EQ(found.test, "ctest --test-dir build -V");
  EXPECT_EQ(found.lint, "ruff check .");
}

TEST(DetectCommandsTest, EmptyRepositoryDetectsNothingAndSaysSo) {
  test::TempDir repo;
  DetectedCommands found = detectCommands(repo.path());
  EXPECT_EQ(found.build, std::nullopt);
  EXPECT_EQ(found.test, std::nullopt);
  EXPECT_EQ(found.lint, std::nullopt);
  EXPECT_THAT(found.evidence, ElementsAre(HasSubstr("no package.json, Cargo.toml")));
}

TEST(DetectInstalledAgentsTest, FindsExecutableUsualBinariesOnThePath) {
  test::TempDir first;
  test::TempDir second;
  writeExecutable(first, "claude");
  writeExecutable(second, "cursor-agent");
  second.write("codex", "not executable\n");  // present but not runnable
  fs::create_directories(second.path() / "gemini");
  fs::create_directories(second.path() / "aider");
  fs::permissions(second.path() / "aider",
                  fs::perms::owner_all);  // an executable directory is no program
  writeExecutable(second, "cursor");      // cursor's binary is cursor-agent, not cursor

  std::string path = ":" + first.path().string() + "::" + second.path().string() + ":";
  EXPECT_THAT(detectInstalledAgents(path), ElementsAre("claude", "cursor"));
  EXPECT_THAT(detectInstalledAgents(""), IsEmpty());
}

// ---------------------------------------------------------------------------
// Rendering

DetectedCommands cargoDetection() {
  test::TempDir repo;
  repo.write("Cargo.toml", "[package]\nname = \"demo\"\n");
  return detectCommands(repo.path());
}

TEST(RenderInitConfigTest, RendersDetectedCommandsAndParsesBack) {
  std::string text = renderInitConfig(cargoDetection(), {"claude", "codex"});
  Config config = parseConfig(text, kFile);
  EXPECT_EQ(config.scoring.buildCommand, "cargo build");
  EXPECT_EQ(config.scoring.testCommand, "cargo test");
  EXPECT_EQ(config.scoring.lintCommand, "cargo clippy");
  EXPECT_EQ(config.scoring.testFormat, "cargo");
  EXPECT_EQ(config.scoring.lintFormat, "clippy");
  ASSERT_EQ(config.agents.size(), 2u);
  EXPECT_EQ(config.agents.at("claude"), *findAgent(Config{}, "claude"));
  EXPECT_EQ(config.agents.at("codex"), *findAgent(Config{}, "codex"));
  EXPECT_EQ(config.general, GeneralConfig{});
  EXPECT_EQ(config.collaboration, CollaborationConfig{});
  EXPECT_THAT(text, HasSubstr("#   - build: cargo build (from Cargo.toml)"));
}

TEST(RenderInitConfigTest, UndetectedCommandsAreCommentedOut) {
  std::string text = renderInitConfig(DetectedCommands{}, {});
  EXPECT_THAT(text, AllOf(HasSubstr("# build_command = \"\""), HasSubstr("# test_command = \"\""),
                          HasSubstr("# lint_command = \"\"")));
  Config config = parseConfig(text, kFile);
  Config defaults;
  defaults.source = kFile;
  EXPECT_EQ(config, defaults);
}

TEST(RenderInitConfigTest, DocumentsEveryTableAndKey) {
  std::string text = renderInitConfig(DetectedCommands{}, {"claude"});
  for (const auto& [table, keys] : acceptedConfigKeys()) {
    if (table.empty() || table == "scoring.weights")
      continue;  // top level: the tables; weights: inline
    std::string header = table == "agents.*" ? "[agents.claude]" : "[" + table + "]";
    EXPECT_THAT(text, HasSubstr("\n" + header + "\n")) << table;
    for (const std::string& key : keys) {
      if (key == "thresholds") continue;  // a table of its own, checked above
      bool documented = text.find("\n# " + key + " = ") != std::string::npos ||
                        text.find("\n# " + key + ": ") != std::string::npos ||
                        text.find("\n" + key + " = ") != std::string::npos;
      EXPECT_TRUE(documented) << table << "." << key << " is not in:\n" << text;
    }
  }
  EXPECT_THAT(
      text,
      HasSubstr("# weights = { build = 30, tests = 30, lint = 15, diff_size = 15, speed = 10 }"));
}

TEST(RenderInitConfigTest, UncommentingTheDefaultsChangesNothing) {
  for (const DetectedCommands& detected : {DetectedCommands{}, cargoDetection()}) {
    std::string text = renderInitConfig(detected, {"claude", "cursor", "my-script"});
    Config asWritten = parseConfig(text, kFile);
    Config uncommented = parseConfig(uncommentDefaults(text), kFile);
    EXPECT_EQ(uncommented, asWritten) << uncommentDefaults(text);
  }
}

TEST(RenderInitConfigTest, UnknownAgentNameGetsTheCommandAdapterAndItsBinary) {
  Config config = parseConfig(renderInitConfig(DetectedCommands{}, {"my-script"}), kFile);
  const AgentConfig& agent = config.agents.at("my-script");
  EXPECT_EQ(agent.adapter, "command");
  EXPECT_EQ(agent.binary, "my-script");
}

TEST(RenderInitConfigTest, InvalidAgentNameIsRejected) {
  EXPECT_THROW(renderInitConfig(DetectedCommands{}, {"bad name"}), std::invalid_argument);
  EXPECT_THROW(renderInitConfig(DetectedCommands{}, {""}), std::invalid_argument);
}

TEST(RenderInitConfigTest, CommandsAndEvidenceSurviveQuotingExactly) {
  DetectedCommands detected;
  detected.build = "make CFLAGS=\"-O2 -g\" && echo C:\\done\ttab";
  detected.test = "printf 'a\\nb'\n";
  detected.evidence = {"a note\nspanning lines\r\nwith [brackets] = and \"quotes\""};
  std::string text = renderInitConfig(detected, {});
  Config config = parseConfig(text, kFile);
  EXPECT_EQ(config.scoring.buildCommand, detected.build);
  EXPECT_EQ(config.scoring.testCommand, detected.test);
  // A comment stays on its line: a line break (and any run of them) is one space.
  EXPECT_THAT(text, HasSubstr("#   - a note spanning lines with [brackets]"));
}

// ---------------------------------------------------------------------------
// Writing

// Leftover temporary files would show up next to hydra.toml.
std::vector<std::string> filesIn(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(WriteInitConfigTest, WritesAConfigThatLoadsWithDetectedCommandsAndAgents) {
  test::TempDir repo;
  test::TempDir bin;
  repo.write("go.mod", "module example.com/demo\n");
  writeExecutable(bin, "codex");
  ScopedPath path(bin.path().string());

  writeInitConfig(repo.path(), false);

  EXPECT_THAT(filesIn(repo.path()), ElementsAre("go.mod", "hydra.toml"));
  Config config = loadConfig(repo.path());
  EXPECT_EQ(config.scoring.testCommand, "go test ./...");
  ASSERT_EQ(config.agents.size(), 1u);
  EXPECT_EQ(config.agents.at("codex").binary, "codex");
}

TEST(WriteInitConfigTest, FileModeFollowsTheUmask) {
  test::TempDir repo;
  ScopedPath path("");
  mode_t mask = ::umask(027);
  writeInitConfig(repo.path(), false);
  ::umask(mask);
  auto perms = fs::status(repo.path() / "hydra.toml").permissions();
  EXPECT_EQ(perms, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST(WriteInitConfigTest, RefusesToReplaceAnExistingFileWithoutForce) {
  test::TempDir repo;
  repo.write("hydra.toml", "# mine\n");
  ScopedPath path("");
  try {
    writeInitConfig(repo.path(), false);
    FAIL() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), AllOf(HasSubstr((repo.path() / "hydra.toml").string()),
                                    HasSubstr("already exists"), HasSubstr("--force")));
  }
  EXPECT_EQ(readFile(repo.path() / "hydra.toml"), "# mine\n");
  EXPECT_THAT(filesIn(repo.path()), ElementsAre("hydra.toml"));
}

TEST(WriteInitConfigTest, RefusesADanglingSymlinkToo) {
  test::TempDir repo;
  fs::create_symlink(repo.path() / "missing.toml", repo.path() / "hydra.toml");
  ScopedPath path("");
  EXPECT_THROW(writeInitConfig(repo.path(), false), std::runtime_error);
  EXPECT_FALSE(fs::exists(repo.path() / "missing.toml"));
}

TEST(WriteInitConfigTest, ForceReplacesTheFile) {
  test::TempDir repo;
  repo.write("hydra.toml", "# mine\n");
  repo.write("Cargo.toml", "[package]\nname = \"demo\"\n");
  ScopedPath path("");
  writeInitConfig(repo.path(), true);
  EXPECT_EQ(loadConfig(repo.path()).scoring.buildCommand, "cargo build");
  EXPECT_THAT(filesIn(repo.path()), ElementsAre("Cargo.toml", "hydra.toml"));
}

TEST(WriteInitConfigTest, MissingRepositoryIsAnError) {
  test::TempDir parent;
  EXPECT_THROW(writeInitConfig(parent.path() / "absent", false), std::runtime_error);
}

}  // namespace
}  // namespace hydra::core
