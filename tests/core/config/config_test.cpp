#include "core/config/config.h"
#include "core/config/executor_choice.h"
#include "core/config/limits.h"
#include "core/process/resource_limits.h"
#include "core/workspace/hydra_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/core/config/temp_dir.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::HasSubstr;
using ::testing::Pair;

const fs::path kFile = "/repo/hydra.toml";

// The ConfigError that parsing `text` must raise.
ConfigError errorFor(std::string_view text) {
  try {
    parseConfig(text, kFile);
  } catch (const ConfigError& error) {
    return error;
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return ConfigError(kFile, 0, 0, "<none>");
}

void expectError(std::string_view text, int line, int column, std::string_view message) {
  ConfigError error = errorFor(text);
  EXPECT_EQ(error.file(), kFile);
  EXPECT_EQ(error.line(), line) << error.what();
  EXPECT_EQ(error.column(), column) << error.what();
  EXPECT_EQ(error.message(), message);
}

// ---------------------------------------------------------------------------
// Defaults and valid files

TEST(ConfigTest, MissingFileGivesDefaults) {
  test::TempDir repo;
  Config config = loadConfig(repo.path());
  EXPECT_EQ(config, Config{});
  EXPECT_TRUE(config.source.empty());
  EXPECT_EQ(config.general.workspaceDir, ".hydra-workspaces");
  EXPECT_EQ(config.general.maxConcurrentAgents, 3);
  EXPECT_EQ(config.general.timeoutSeconds, 600);
  EXPECT_TRUE(config.agents.empty());
  EXPECT_EQ(config.scoring.timeoutPerCheckSeconds, 120);
  EXPECT_FALSE(config.scoring.autoMerge);
  EXPECT_EQ(config.scoring.thresholds.autoMergeMinimum, 85);
  EXPECT_EQ(config.scoring.thresholds.failMaximum, 30);
  EXPECT_EQ(config.collaboration.maxIterations, 3);
}

// A test command whose output names no tests is a warning on its key, the
// same decision `hydra init` warns from (core/scoring/test_naming.h); the
// file still loads.
TEST(ConfigTest, ATestCommandComparedByCountsOnlyIsAWarningOnItsKey) {
  const Config jest = parseConfig("[scoring]\nbuild_command = \"make\"\n  test_command = \"npx jest --ci\"\n", kFile);
  ASSERT_EQ(jest.warnings.size(), 1u);
  EXPECT_EQ(jest.warnings[0].line, 3);
  EXPECT_EQ(jest.warnings[0].column, 3);
  EXPECT_THAT(jest.warnings[0].message, HasSubstr("tests will be compared by counts only"));
  EXPECT_EQ(jest.scoring.testCommand, "npx jest --ci");

  // test_format names the runner; a JUnit report names the tests.
  EXPECT_THAT(parseConfig("[scoring]\ntest_command = \"npm test\"\ntest_format = \"mocha\"\n", kFile).warnings,
              ElementsAre(::testing::Field(&ConfigWarning::line, 2)));
  EXPECT_THAT(parseConfig("[scoring]\ntest_command = \"npx jest --ci\"\njunit_report = \"junit.xml\"\n", kFile)
                  .warnings,
              IsEmpty());
  EXPECT_THAT(parseConfig("[scoring]\ntest_command = \"python3 -m pytest -q\"\n", kFile).warnings, IsEmpty());
  EXPECT_THAT(parseConfig("", kFile).warnings, IsEmpty());
}

TEST(ConfigTest, EmptyFileAndEmptyTablesGiveDefaults) {
  Config empty = parseConfig("", kFile);
  Config tables =
      parseConfig("[general]\n[agents]\n[scoring]\n[scoring.thresholds]\n[collaboration]\n", kFile);
  Config defaults;
  defaults.source = kFile;
  EXPECT_EQ(empty, defaults);
  EXPECT_EQ(tables, defaults);
}

TEST(ConfigTest, SeedExampleParsesWithItsValues) {
  fs::path file = fs::path(HYDRA_TEST_DATA_DIR) / "data" / "seed_example.toml";
  test::TempDir repo;
  fs::copy_file(file, repo.path() / "hydra.toml");
  Config config = loadConfig(repo.path());

  EXPECT_EQ(config.source, repo.path() / "hydra.toml");
  EXPECT_EQ(config.general, GeneralConfig{});
  ASSERT_EQ(config.agents.size(), 3u);

  const AgentConfig& claude = config.agents.at("claude");
  EXPECT_EQ(claude.name, "claude");
  EXPECT_EQ(claude.adapter, "claude");
  EXPECT_EQ(claude.binary, "claude");
  EXPECT_THAT(claude.extraArgs, ElementsAre("--allowedTools", "Edit,Write,Bash"));
  EXPECT_TRUE(claude.args.empty());
  EXPECT_FALSE(claude.timeoutSeconds);

  const AgentConfig& codex = config.agents.at("codex");
  EXPECT_EQ(codex.adapter, "codex");
  EXPECT_THAT(codex.extraArgs, ElementsAre("--full-auto"));

  const AgentConfig& cursor = config.agents.at("cursor");
  EXPECT_EQ(cursor.adapter, "cursor");
  EXPECT_EQ(cursor.binary, "cursor");  // given explicitly, so not cursor-agent
  EXPECT_THAT(cursor.extraArgs, ElementsAre("--force"));
  EXPECT_EQ(cursor.timeoutSeconds, 300);

  EXPECT_EQ(config.scoring.weights, ScoringWeights{});
  EXPECT_EQ(config.scoring.buildCommand, "npm run build");
  EXPECT_EQ(config.scoring.testCommand, "npm test");
  EXPECT_EQ(config.scoring.lintCommand, "npm run lint");
  EXPECT_EQ(config.collaboration.maxIterations, 3);
  EXPECT_EQ(config.collaboration.reviewPromptTemplate,
            "Review this diff for bugs, security issues, and code quality:\n\n{diff}");
}

TEST(ConfigTest, EveryKeyIsReadIntoItsField) {
  Config config = parseConfig(R"(
[general]
workspace_dir = "build/../worktrees"
max_concurrent_agents = 8
timeout_seconds = 90

[agents.fast-claude]
adapter = "claude"
binary = "/opt/claude/bin/claude"
args = ["-p", "{task}"]
extra_args = ["--verbose"]
env = { ANTHROPIC_LOG = "debug", EMPTY = "" }
timeout_seconds = 45

[scoring]
weights = { build = 1, tests = 2.5, lint = 0, diff_size = 0.25, speed = 0 }
build_command = "make"
test_command = "make check"
lint_command = ""
test_format = "gtest"
lint_format = "clang_tidy"
junit_report = "out/report.xml"
timeout_per_check_seconds = 30
auto_merge = true

[scoring.thresholds]
auto_merge_minimum = 90.5
fail_maximum = 10

[collaboration]
builder = "fast-claude"
reviewer = "codex"
max_iterations = 5
until_score = 92.5
review_every_round = true
approve_marker = "SHIP IT"
review_prompt_template = "Check {diff}"
refine_prompt_template = "Fix {review}"
)",
                              kFile);
  EXPECT_EQ(config.general.workspaceDir, "build/../worktrees");
  EXPECT_EQ(config.general.maxConcurrentAgents, 8);
  EXPECT_EQ(config.general.timeoutSeconds, 90);

  const AgentConfig& agent = config.agents.at("fast-claude");
  EXPECT_EQ(agent.name, "fast-claude");
  EXPECT_EQ(agent.adapter, "claude");
  EXPECT_EQ(agent.binary, "/opt/claude/bin/claude");
  EXPECT_THAT(agent.args, ElementsAre("-p", "{task}"));
  EXPECT_THAT(agent.extraArgs, ElementsAre("--verbose"));
  EXPECT_THAT(agent.env, ElementsAre(Pair("ANTHROPIC_LOG", "debug"), Pair("EMPTY", "")));
  EXPECT_EQ(agent.timeoutSeconds, 45);

  const ScoringConfig& scoring = config.scoring;
  EXPECT_EQ(scoring.weights.build, 1);
  EXPECT_EQ(scoring.weights.tests, 2.5);
  EXPECT_EQ(scoring.weights.lint, 0);
  EXPECT_EQ(scoring.weights.diffSize, 0.25);
  EXPECT_EQ(scoring.weights.speed, 0);
  EXPECT_EQ(scoring.buildCommand, "make");
  EXPECT_EQ(scoring.testCommand, "make check");
  EXPECT_EQ(scoring.lintCommand, std::nullopt);  // empty string: not configured
  EXPECT_EQ(scoring.testFormat, "gtest");
  EXPECT_EQ(scoring.lintFormat, "clang_tidy");
  EXPECT_EQ(scoring.junitReport, "out/report.xml");
  EXPECT_EQ(scoring.timeoutPerCheckSeconds, 30);
  EXPECT_TRUE(scoring.autoMerge);
  EXPECT_EQ(scoring.thresholds.autoMergeMinimum, 90.5);
  EXPECT_EQ(scoring.thresholds.failMaximum, 10);

  EXPECT_EQ(config.collaboration.builder, "fast-claude");
  EXPECT_EQ(config.collaboration.reviewer, "codex");
  EXPECT_EQ(config.collaboration.maxIterations, 5);
  EXPECT_EQ(config.collaboration.untilScore, 92.5);
  EXPECT_TRUE(config.collaboration.reviewEveryRound);
  EXPECT_EQ(config.collaboration.approveMarker, "SHIP IT");
  EXPECT_EQ(config.collaboration.reviewPromptTemplate, "Check {diff}");
  EXPECT_EQ(config.collaboration.refinePromptTemplate, "Fix {review}");
}

TEST(ConfigTest, CollaborationProblemsNameTheirPlace) {
  expectError("[collaboration]\nuntil_score = 120\n", 2, 15, "'until_score' must be between 0 and 100, found 120");
  expectError("[collaboration]\napprove_marker = \"  \"\n", 2, 18,
              "'approve_marker' must not be blank: every review would approve");
  expectError("[collaboration]\nbuilder = \"my agent\"\n", 2, 11,
              "'builder' must name an agent (letters, digits, '_' and '-'), not 'my agent'");
  expectError("[collaboration]\nmax_iterations = 0\n", 2, 18, "'max_iterations' must be at least 1, found 0");
}

TEST(ConfigTest, AgentDefaultsFollowTheTableNameAndAdapter) {
  Config config = parseConfig(R"(
[agents.cursor]
[agents.gemini]
[agents.review-bot]
adapter = "codex"
[agents.mytool]
binary = "./scripts/agent.sh"
)",
                              kFile);
  EXPECT_EQ(config.agents.at("cursor").adapter, "cursor");
  EXPECT_EQ(config.agents.at("cursor").binary, "cursor-agent");
  EXPECT_EQ(config.agents.at("gemini").binary, "gemini");
  EXPECT_EQ(config.agents.at("review-bot").adapter, "codex");
  EXPECT_EQ(config.agents.at("review-bot").binary, "codex");
  EXPECT_EQ(config.agents.at("mytool").adapter, "command");
  EXPECT_EQ(config.agents.at("mytool").binary, "./scripts/agent.sh");
}

TEST(ConfigTest, PartialWeightsKeepTheOtherDefaults) {
  Config config = parseConfig("[scoring.weights]\nspeed = 0\n", kFile);
  ScoringWeights expected;
  expected.speed = 0;
  EXPECT_EQ(config.scoring.weights, expected);
}

TEST(ConfigTest, FindAgentFallsBackToTheAdapterOfTheSameName) {
  Config config = parseConfig(
      "[agents.claude]\nextra_args = [\"--x\"]\n[agents.mine]\nbinary = \"mine\"\n", kFile);
  EXPECT_THAT(findAgent(config, "claude")->extraArgs, ElementsAre("--x"));
  EXPECT_EQ(findAgent(config, "mine")->adapter, "command");

  auto cursor = findAgent(config, "cursor");
  ASSERT_TRUE(cursor);
  EXPECT_EQ(cursor->name, "cursor");
  EXPECT_EQ(cursor->adapter, "cursor");
  EXPECT_EQ(cursor->binary, "cursor-agent");

  EXPECT_FALSE(findAgent(config, "command"));  // no usual binary to run
  EXPECT_FALSE(findAgent(config, "unknown"));
}

TEST(ConfigTest, AgentNamesAreLettersDigitsUnderscoreAndDash) {
  EXPECT_TRUE(isValidAgentName("claude"));
  EXPECT_TRUE(isValidAgentName("Claude_2-fast"));
  EXPECT_FALSE(isValidAgentName(""));
  EXPECT_FALSE(isValidAgentName("my agent"));
  EXPECT_FALSE(isValidAgentName("a/b"));
  EXPECT_FALSE(isValidAgentName("a.b"));
  EXPECT_FALSE(isValidAgentName("caf\xc3\xa9"));
}

TEST(ConfigTest, DefaultBinariesAreTheAdaptersUsualOnes) {
  EXPECT_EQ(defaultAgentBinary("claude"), "claude");
  EXPECT_EQ(defaultAgentBinary("codex"), "codex");
  EXPECT_EQ(defaultAgentBinary("cursor"), "cursor-agent");
  EXPECT_EQ(defaultAgentBinary("gemini"), "gemini");
  EXPECT_EQ(defaultAgentBinary("opencode"), "opencode");
  EXPECT_EQ(defaultAgentBinary("aider"), "aider");
  EXPECT_EQ(defaultAgentBinary("command"), std::nullopt);
  EXPECT_EQ(defaultAgentBinary("vim"), std::nullopt);
}

TEST(ConfigTest, LoadNamesTheFileInErrors) {
  test::TempDir repo;
  fs::path file = repo.write("hydra.toml", "[general]\nmax_concurrent_agents = 0\n");
  try {
    loadConfig(repo.path());
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.file(), file);
    EXPECT_EQ(error.line(), 2);
    EXPECT_EQ(error.column(), 25);
    EXPECT_EQ(std::string(error.what()),
              file.string() + ":2:25: 'max_concurrent_agents' must be at least 1, found 0");
  }
}

TEST(ConfigTest, DirectoryInPlaceOfTheFileIsAnError) {
  test::TempDir repo;
  fs::create_directory(repo.path() / "hydra.toml");
  try {
    loadConfig(repo.path());
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.file(), repo.path() / "hydra.toml");
    EXPECT_EQ(error.line(), 0);
    EXPECT_THAT(error.message(), HasSubstr("directory"));
  }
}

// hydra.toml is read whole, so what stands in its place must be a small file:
// a FIFO (an unconfined agent could plant one) is refused without waiting for
// a writer, and a huge file without reading it.
TEST(ConfigTest, AFifoOrAHugeFileInPlaceOfTheFileIsAnErrorAtOnce) {
  test::TempDir repo;
  const fs::path file = repo.path() / "hydra.toml";
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  try {
    loadConfig(repo.path());
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.file(), file);
    EXPECT_EQ(error.message(), "is not a regular file");
  }
  fs::remove(file);
  {
    std::ofstream out(file, std::ios::binary);
    out << "# " << std::string(kMaxConfigBytes, 'x') << "\n";
  }
  try {
    loadConfig(repo.path());
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.message(), "is larger than 1048576 bytes");
  }
  // Through a link to a small file it reads as usual.
  fs::remove(file);
  { std::ofstream(repo.path() / "real.toml") << "[general]\nmax_concurrent_agents = 5\n"; }
  fs::create_symlink("real.toml", file);
  EXPECT_EQ(loadConfig(repo.path()).general.maxConcurrentAgents, 5);
}

// ---------------------------------------------------------------------------
// Errors: each names file, line and column, and says what is wrong.

TEST(ConfigTest, SandboxAndWritablePathsAreRead) {
  EXPECT_EQ(parseConfig("", kFile).general.sandbox, "auto");
  EXPECT_EQ(parseConfig("[general]\nsandbox = \"off\"\n", kFile).general.sandbox, "off");
  EXPECT_EQ(parseConfig("[general]\nsandbox = \"bubblewrap\"\n", kFile).general.sandbox, "bubblewrap");
  Config c = parseConfig("[agents.x]\nbinary = \"x\"\nwritable_paths = [\"/var/cache/x\", \"~/.x\", \"~\"]\n", kFile);
  EXPECT_THAT(c.agents.at("x").writablePaths, ElementsAre("/var/cache/x", "~/.x", "~"));
}

TEST(ConfigTest, CopyIgnoredNamesFoldersInsideTheRepository) {
  Config config = parseConfig("[general]\ncopy_ignored = [\"node_modules\", \"web/.venv\"]\n", "hydra.toml");
  EXPECT_THAT(config.general.copyIgnored, ElementsAre("node_modules", "web/.venv"));
  EXPECT_TRUE(parseConfig("", "hydra.toml").general.copyIgnored.empty());
  expectError("[general]\ncopy_ignored = \"node_modules\"\n", 2, 16,
              "'copy_ignored' must be an array of folder names, e.g. [\"node_modules\"]");
  expectError("[general]\ncopy_ignored = [\"node_modules\", \"../secrets\"]\n", 2, 33,
              "'copy_ignored' must be a relative path inside the repository, found '../secrets'");
  expectError("[general]\ncopy_ignored = [\"/home/me/.venv\"]\n", 2, 17,
              "'copy_ignored' must be a relative path inside the repository, found '/home/me/.venv'");
  expectError("[general]\ncopy_ignored = [\".git/hooks\"]\n", 2, 17, "'copy_ignored' cannot copy git's own directory");
}

TEST(ConfigTest, ResultLimitsHaveDefaultsAndAcceptBytesBeyondAnInt) {
  const Config defaults = parseConfig("", "hydra.toml");
  EXPECT_EQ(defaults.general.maxResultFiles, 100000);
  EXPECT_EQ(defaults.general.maxResultBytes, std::int64_t{2147483648});
  const Config config =
      parseConfig("[general]\nmax_result_files = 500\nmax_result_bytes = 8589934592\n", "hydra.toml");
  EXPECT_EQ(config.general.maxResultFiles, 500);
  EXPECT_EQ(config.general.maxResultBytes, std::int64_t{8589934592});
  expectError("[general]\nmax_result_files = 0\n", 2, 20, "'max_result_files' must be at least 1, found 0");
  expectError("[general]\nmax_result_bytes = 1099511627777\n", 2, 20,
              "'max_result_bytes' must be at most 1099511627776, found 1099511627777");
  expectError("[general]\nmax_result_bytes = \"2G\"\n", 2, 20, "'max_result_bytes' must be an integer, found string");
}

TEST(ConfigTest, PerAgentLimitsComeFromTheAgentElseGeneralElseTheDefaults) {
  const Config config = parseConfig(
      "[general]\nmemory_limit_mib = 4096\nmax_processes = 200\n\n"
      "[agents.a]\nadapter = \"command\"\nbinary = \"a\"\nmax_processes = 50\ncpu_limit_seconds = 60\n\n"
      "[agents.b]\nadapter = \"command\"\nbinary = \"b\"\nmemory_limit_mib = 0\n",
      "hydra.toml");
  EXPECT_EQ(config.general.limits.memoryMiB, 4096);
  EXPECT_EQ(config.general.limits.processes, 200);
  EXPECT_FALSE(config.general.limits.cpuSeconds);

  const ResourceLimits a = resourceLimitsFor(config.general.limits, config.agents.at("a").limits);
  EXPECT_EQ(a.memoryMiB, 4096u);
  EXPECT_EQ(a.processes, 50);
  EXPECT_EQ(a.cpuSeconds, 60);
  EXPECT_EQ(overLimitWords(LimitKind::Memory, a), "over its 4 GiB memory limit");
  EXPECT_EQ(overLimitWords(LimitKind::Processes, a), "over its 50-process limit");
  EXPECT_EQ(overLimitWords(LimitKind::Cpu, a), "over its 60 s CPU limit");
  EXPECT_EQ(describeLimits(a), "memory 4 GiB, 50 processes, CPU 60 s");

  // 0 turns a limit off for that agent alone.
  const ResourceLimits b = resourceLimitsFor(config.general.limits, config.agents.at("b").limits);
  EXPECT_FALSE(b.memoryMiB);
  EXPECT_EQ(b.processes, 200);
  EXPECT_EQ(describeLimits(b), "memory unlimited, 200 processes, CPU unlimited");

  // Nothing set: half the machine's memory, 4096 processes, no CPU limit.
  const ResourceLimits defaults = resourceLimitsFor({}, {});
  EXPECT_EQ(defaults.memoryMiB, defaultMemoryLimitMiB());
  EXPECT_GE(*defaults.memoryMiB, 64u);
  EXPECT_EQ(defaults.processes, kDefaultProcessLimit);
  EXPECT_FALSE(defaults.cpuSeconds);
  EXPECT_EQ(overLimitWords(LimitKind::Memory, ResourceLimits{1536, {}, {}}), "over its 1536 MiB memory limit");
}

TEST(ConfigErrorTest, PerAgentLimitsAreNoneOrEnoughToStartACli) {
  expectError("[general]\nmemory_limit_mib = 16\n", 2, 20,
              "'memory_limit_mib' must be 0 (no limit) or at least 64, found 16");
  expectError("[general]\nmax_processes = -1\n", 2, 17, "'max_processes' must be at least 0, found -1");
  expectError("[general]\nmax_processes = 2\n", 2, 17, "'max_processes' must be 0 (no limit) or at least 8, found 2");
  expectError("[general]\ncpu_limit_seconds = 1.5\n", 2, 21, "'cpu_limit_seconds' must be an integer, found float");
  expectError("[agents.a]\nbinary = \"a\"\ncpu_limit_seconds = 40000000\n", 3, 21,
              "'cpu_limit_seconds' must be at most 31536000, found 40000000");
  expectError("[agents.a]\nbinary = \"a\"\nmemory_limit_mib = \"4G\"\n", 3, 20,
              "'memory_limit_mib' must be an integer, found string");
}

TEST(ConfigTest, PoolKeepsIgnoredFoldersAndSetupRunsACommand) {
  Config config = parseConfig(
      "[general]\npool_size = 8\nkeep_ignored = [\"node_modules\", \"web/./.venv\"]\nsetup_command = \"npm ci\"\n",
      "hydra.toml");
  EXPECT_EQ(config.general.poolSize, 8);
  EXPECT_THAT(config.general.keepIgnored, ElementsAre("node_modules", "web/.venv"));
  EXPECT_EQ(config.general.setupCommand, "npm ci");
  EXPECT_EQ(parseConfig("", "hydra.toml").general.poolSize, 0);
  expectError("[general]\npool_size = -1\n", 2, 13, "'pool_size' must be at least 0, found -1");
  expectError("[general]\nkeep_ignored = \"target\"\n", 2, 16,
              "'keep_ignored' must be an array of folder names, e.g. [\"node_modules\"]");
  expectError("[general]\nkeep_ignored = [\"../x\"]\n", 2, 17,
              "'keep_ignored' must be a relative path inside the repository, found '../x'");
  expectError("[general]\nkeep_ignored = [\".git\"]\n", 2, 17, "'keep_ignored' cannot keep git's own directory");
  expectError("[general]\nsetup_command = \"\"\n", 2, 17, "'setup_command' must not be empty");
  EXPECT_THAT(parseConfig("[general]\nsparse_paths = [\"services/api/\", \"libs\"]\n", "hydra.toml").general.sparsePaths,
              ElementsAre("services/api", "libs"));
  expectError("[general]\nsparse_paths = [\"../x\"]\n", 2, 17,
              "'sparse_paths' must be a relative path inside the repository, found '../x'");
}

TEST(ConfigErrorTest, SandboxMustBeOneOfItsModes) {
  expectError("[general]\nsandbox = \"bwrap\"\n", 2, 11, "'sandbox' must be one of auto, bubblewrap, off, found 'bwrap'");
  expectError("[general]\nsandbox = \"of\"\n", 2, 11,
              "'sandbox' must be one of auto, bubblewrap, off, found 'of'; did you mean 'off'?");
  expectError("[general]\nsandbox = true\n", 2, 11, "'sandbox' must be a string, found boolean");
}

TEST(ConfigErrorTest, WritablePathsMustBeAbsoluteOrInHome) {
  expectError("[agents.x]\nbinary = \"x\"\nwritable_paths = [\"/ok\", \"cache\"]\n", 3, 26,
              "'writable_paths' entries must be absolute paths or start with '~/', found 'cache'");
}

TEST(ConfigErrorTest, ProtectedPathsMustStayInsideTheRepository) {
  expectError("[scoring]\nprotected_paths = [\"tests/\", \"../secrets\"]\n", 2, 30,
              "'protected_paths': a protected path must stay inside the repository (no '.' or '..' segments), "
              "found '../secrets'");
  expectError("[scoring]\nprotected_paths = [\"\"]\n", 2, 20,
              "'protected_paths': a protected path must name something, found ''");
  expectError("[scoring]\nprotected_paths = \"tests/\"\n", 2, 19,
              "'protected_paths' must be an array of strings, found string");
  expectError("[scoring]\nprotected_mode = \"revert\"\n", 2, 18,
              "'protected_mode' must be one of flag, restore, found 'revert'");
}

TEST(ConfigTest, ProtectedPathsAndTheirMode) {
  const Config config = parseConfig(
      "[scoring]\nprotected_paths = [\"tests/\", \"**/conftest.py\"]\nprotected_mode = \"restore\"\n", kFile);
  EXPECT_THAT(config.scoring.protectedPaths, Optional(ElementsAre("tests/", "**/conftest.py")));
  EXPECT_EQ(config.scoring.protectedMode, "restore");
  EXPECT_EQ(parseConfig("", kFile).scoring.protectedMode, "flag");
  // Unset: the defaults (checks::defaultProtectedPaths()); an empty list is kept as the user's.
  EXPECT_EQ(parseConfig("", kFile).scoring.protectedPaths, std::nullopt);
  EXPECT_THAT(parseConfig("[scoring]\nprotected_paths = []\n", kFile).scoring.protectedPaths, Optional(IsEmpty()));
}

TEST(ConfigErrorTest, SyntaxErrorKeepsTheTomlDescription) {
  expectError("[general]\nmax_concurrent_agents = = 2\n", 2, 25,
              "Error while parsing value: could not determine value type");
}

TEST(ConfigErrorTest, DuplicateKeyIsASyntaxError) {
  ConfigError error = errorFor("[general]\ntimeout_seconds = 1\ntimeout_seconds = 2\n");
  EXPECT_EQ(error.line(), 3);
  EXPECT_THAT(error.message(), HasSubstr("timeout_seconds"));
}

TEST(ConfigErrorTest, UnknownKeySuggestsTheNearestKey) {
  expectError("[general]\ntimout_seconds = 5\n", 2, 1,
              "unknown key 'timout_seconds' in [general]; did you mean 'timeout_seconds'?");
}

TEST(ConfigErrorTest, UnknownKeyIgnoresCaseAndSeparatorsWhenSuggesting) {
  expectError(
      "[general]\nmaxConcurrentAgents = 5\n", 2, 1,
      "unknown key 'maxConcurrentAgents' in [general]; did you mean 'max_concurrent_agents'?");
  expectError("[scoring.weights]\ndiffsize = 5\n", 2, 1,
              "unknown key 'diffsize' in [scoring.weights]; did you mean 'diff_size'?");
}

TEST(ConfigErrorTest, UnknownKeySuggestsTheKeyItAbbreviates) {
  expectError("[scoring]\nbuild = \"make\"\n", 2, 1,
              "unknown key 'build' in [scoring]; did you mean 'build_command'?");
}

TEST(ConfigErrorTest, UnknownKeyFarFromEveryKeyHasNoSuggestion) {
  expectError("[general]\ncolour = \"blue\"\n", 2, 1, "unknown key 'colour' in [general]");
}

TEST(ConfigErrorTest, UnknownKeyInAnAgentNamesTheAgent) {
  expectError("[agents.claude]\nextra_arg = []\n", 2, 1,
              "unknown key 'extra_arg' in [agents.claude]; did you mean 'extra_args'?");
}

TEST(ConfigErrorTest, UnknownTableSuggestsTheNearestTable) {
  expectError("[generl]\ntimeout_seconds = 5\n", 1, 2,
              "unknown table [generl]; did you mean [general]?");
  expectError("[scoring]\n[scoring.threshold]\n", 2, 10,
              "unknown key 'threshold' in [scoring]; did you mean 'thresholds'?");
}

TEST(ConfigErrorTest, KeyAboveEveryTableSaysWhereItBelongs) {
  expectError("timeout_seconds = 5\n", 1, 1,
              "unknown key 'timeout_seconds' at the top level; it belongs in [general]");
  expectError("test_command = \"make test\"\n", 1, 1,
              "unknown key 'test_command' at the top level; it belongs in [scoring]");
  expectError("colour = 1\n", 1, 1,
              "unknown key 'colour' at the top level; settings belong in the tables [general], "
              "[agents.NAME], "
              "[scoring], [collaboration] and [executor]");
}

TEST(ConfigErrorTest, WrongTypeNamesExpectedAndFoundTypes) {
  expectError("[general]\nmax_concurrent_agents = \"4\"\n", 2, 25,
              "'max_concurrent_agents' must be an integer, found string");
  expectError("[general]\ntimeout_seconds = 1.5\n", 2, 19,
              "'timeout_seconds' must be an integer, found float");
  expectError("[scoring]\nauto_merge = \"yes\"\n", 2, 14,
              "'auto_merge' must be a boolean, found string");
  expectError("[scoring]\ntest_command = [\"npm\", \"test\"]\n", 2, 16,
              "'test_command' must be a string, found array");
  expectError("general = 5\n", 1, 11, "'general' must be a table, found integer");
  expectError("[scoring]\nweights = 5\n", 2, 11, "'weights' must be a table, found integer");
}

TEST(ConfigErrorTest, ValuesBelowTheMinimumAreRejected) {
  expectError("[general]\nmax_concurrent_agents = 0\n", 2, 25,
              "'max_concurrent_agents' must be at least 1, found 0");
  expectError("[scoring]\ntimeout_per_check_seconds = -5\n", 2, 29,
              "'timeout_per_check_seconds' must be at least 1, found -5");
  expectError("[collaboration]\nmax_iterations = 0\n", 2, 18,
              "'max_iterations' must be at least 1, found 0");
  expectError("[agents.claude]\ntimeout_seconds = 0\n", 2, 19,
              "'timeout_seconds' must be at least 1, found 0");
}

TEST(ConfigErrorTest, IntegersBeyondIntRangeAreRejected) {
  expectError("[general]\ntimeout_seconds = 3000000000\n", 2, 19,
              "'timeout_seconds' must be at most 2147483647, found 3000000000");
  expectError("[general]\nmax_concurrent_agents = -9000000000\n", 2, 25,
              "'max_concurrent_agents' must be at least 1, found -9000000000");
  EXPECT_EQ(parseConfig("[general]\ntimeout_seconds = 2147483647\n", kFile).general.timeoutSeconds,
            2147483647);
}

TEST(ConfigErrorTest, IntegersBeyondTomlRangeAreSyntaxErrors) {
  ConfigError error = errorFor("[general]\ntimeout_seconds = 99999999999999999999\n");
  EXPECT_EQ(error.line(), 2);
  EXPECT_THAT(error.message(), HasSubstr("not representable"));
}

TEST(ConfigErrorTest, FirstErrorInTheFileIsReported) {
  // Alphabetically max_concurrent_agents comes first; in the file timeout_seconds does.
  expectError("[general]\ntimeout_seconds = 0\nmax_concurrent_agents = 0\n", 2, 19,
              "'timeout_seconds' must be at least 1, found 0");
  expectError("[scoring]\nbuild_command = 1\n[general]\nbad = 1\n", 2, 17,
              "'build_command' must be a string, found integer");
}

TEST(ConfigErrorTest, WorkspaceDirMustStayInsideTheRepository) {
  for (const char* bad : {"/tmp/work", "../elsewhere", "a/../../elsewhere", ".", "a/..", ""}) {
    std::string text = std::string("[general]\nworkspace_dir = \"") + bad + "\"\n";
    expectError(
        text, 2, 17,
        std::string("'workspace_dir' must be a relative path inside the repository, found '") +
            bad + "'");
  }
  EXPECT_EQ(parseConfig("[general]\nworkspace_dir = \"a/../b\"\n", kFile).general.workspaceDir,
            "a/../b");
}

TEST(ConfigErrorTest, JunitReportMustStayInsideTheWorktree) {
  expectError("[scoring]\njunit_report = \"../report.xml\"\n", 2, 16,
              "'junit_report' must be a relative path inside the worktree, found '../report.xml'");
}

TEST(ConfigErrorTest, UnknownChoicesListTheChoicesAndSuggestOne) {
  expectError("[agents.claude]\nadapter = \"cladue\"\n", 2, 11,
              "'adapter' must be one of claude, codex, cursor, gemini, opencode, aider, claude-acp, "
              "codex-acp, gemini-acp, opencode-acp, acp, command, found 'cladue'; "
              "did you mean 'claude'?");
  expectError("[scoring]\ntest_format = \"pytset\"\n", 2, 15,
              "'test_format' must be one of cargo, ctest, go, gtest, jest, mocha, node, pytest, "
              "unittest, vitest, junit, exit_code, found 'pytset'; did you mean 'pytest'?");
  expectError("[scoring]\nlint_format = \"pylint\"\n", 2, 15,
              "'lint_format' must be one of clang_tidy, clippy, eslint, eslint_json, flake8, gcc, "
              "go_vet, pyflakes, ruff, exit_code, found 'pylint'");
}

TEST(ConfigErrorTest, AgentNameMustBeUsableInBranchNames) {
  expectError("[agents.\"my agent\"]\nbinary = \"x\"\n", 1, 9,
              "agent name 'my agent' may only contain letters, digits, '_' and '-' (it becomes "
              "part of branch names)");
}

TEST(ConfigErrorTest, AgentMustBeATable) {
  expectError("[agents]\nclaude = \"yes\"\n", 2, 10,
              "agent 'claude' must be a table, found string");
}

TEST(ConfigErrorTest, CommandAdapterNeedsABinary) {
  expectError(
      "[general]\n\n[agents.mytool]\nextra_args = []\n", 3, 1,
      "[agents.mytool] uses the 'command' adapter, so it needs 'binary' (the program to run)");
  expectError(
      "[agents.claude]\nadapter = \"command\"\n", 1, 1,
      "[agents.claude] uses the 'command' adapter, so it needs 'binary' (the program to run)");
  expectError("[agents.anyacp]\nadapter = \"acp\"\n", 1, 1,
              "[agents.anyacp] uses the 'acp' adapter, so it needs 'binary' (the program to run)");
  expectError("[agents.g]\nadapter = \"gemini-acp\"\nacp_permissions = \"ask\"\n", 3, 19,
              "'acp_permissions' must be one of worktree, allow, reject, found 'ask'");
}

TEST(ConfigErrorTest, BinaryMustNotBeEmpty) {
  expectError("[agents.claude]\nbinary = \"\"\n", 2, 10, "'binary' must not be empty");
}

TEST(ConfigErrorTest, ArgumentArraysHoldOnlyStrings) {
  expectError("[agents.claude]\nargs = [\"-p\", 2]\n", 2, 15,
              "'args' must be an array of strings, found integer at index 1");
  expectError("[agents.claude]\nextra_args = \"--force\"\n", 2, 14,
              "'extra_args' must be an array of strings, found string");
}

TEST(ConfigErrorTest, EnvironmentValuesAreStrings) {
  expectError("[agents.claude]\nenv = { DEBUG = 1 }\n", 2, 17,
              "'env.DEBUG' must be a string, found integer");
  expectError("[agents.claude]\nenv = { \"A=B\" = \"x\" }\n", 2, 9,
              "environment variable name 'A=B' in 'env' must be non-empty and contain no '='");
  expectError("[agents.claude]\nenv = [\"A=B\"]\n", 2, 7,
              "'env' must be a table of strings, found array");
}

TEST(ConfigErrorTest, WeightsAreNonNegativeNumbersNotAllZero) {
  expectError("[scoring]\nweights = { build = -1 }\n", 2, 21,
              "'build' must be at least 0, found -1");
  expectError("[scoring]\nweights = { tests = \"high\" }\n", 2, 21,
              "'tests' must be a number, found string");
  expectError("[scoring]\nweights = { speed = nan }\n", 2, 21,
              "'speed' must be a finite number, found nan");
  expectError("[scoring]\nweights = { build = 0, tests = 0, lint = 0, diff_size = 0, speed = 0 }\n",
              2, 11, "'weights' must not all be zero: the total score would be meaningless");
}

TEST(ConfigErrorTest, ThresholdsArePercentagesInOrder) {
  expectError("[scoring.thresholds]\nauto_merge_minimum = 120\n", 2, 22,
              "'auto_merge_minimum' must be between 0 and 100, found 120");
  expectError("[scoring.thresholds]\nfail_maximum = -0.5\n", 2, 16,
              "'fail_maximum' must be between 0 and 100, found -0.5");
  expectError("[scoring.thresholds]\nfail_maximum = 90\n", 2, 16,
              "'fail_maximum' (90) must not exceed 'auto_merge_minimum' (85)");
  expectError("[scoring.thresholds]\nauto_merge_minimum = 20\n", 2, 22,
              "'fail_maximum' (30) must not exceed 'auto_merge_minimum' (20)");
}

TEST(ConfigErrorTest, WhatCombinesFileLineColumnAndMessage) {
  ConfigError error = errorFor("[general]\ntimout_seconds = 5\n");
  EXPECT_EQ(std::string(error.what()),
            "/repo/hydra.toml:2:1: unknown key 'timout_seconds' in [general]; did you mean "
            "'timeout_seconds'?");
}

// ---------------------------------------------------------------------------

TEST(ConfigTest, ExecutorDefaultsToLocalAndReadsEverySlurmSetting) {
  EXPECT_EQ(parseConfig("", kFile).executor, ExecutorConfig{});
  EXPECT_EQ(parseConfig("", kFile).executor.kind, ExecutorKind::Local);
  Config config = parseConfig(
      "[executor]\nkind = \"slurm\"\npartition = \"gpu\"\naccount = \"team-a\"\ntime_limit = \"1-02:30:00\"\n"
      "extra_args = [\"--cpus-per-task=4\", \"--mem=8G\"]\nslurm_conf = \"/etc/slurm/other.conf\"\n"
      "hydra_binary = \"/shared/bin/hydra\"\n",
      kFile);
  EXPECT_EQ(config.executor.kind, ExecutorKind::Slurm);
  EXPECT_EQ(config.executor.partition, "gpu");
  EXPECT_EQ(config.executor.account, "team-a");
  EXPECT_EQ(config.executor.timeLimit, "1-02:30:00");
  EXPECT_THAT(config.executor.extraArgs, ElementsAre("--cpus-per-task=4", "--mem=8G"));
  EXPECT_EQ(config.executor.slurmConf, std::filesystem::path("/etc/slurm/other.conf"));
  EXPECT_EQ(config.executor.hydraBinary, std::filesystem::path("/shared/bin/hydra"));
  // Minutes as a number; Slurm's other forms as text.
  EXPECT_EQ(parseConfig("[executor]\ntime_limit = 90\n", kFile).executor.timeLimit, "90");
  for (const char* form : {"30", "10:00", "2:00:00", "3-0", "3-12", "3-12:30", "UNLIMITED"}) {
    EXPECT_NO_THROW(parseConfig(std::string("[executor]\ntime_limit = \"") + form + "\"\n", kFile)) << form;
  }
}

// One word per kind, the same in hydra.toml, on the wire and on disk.
TEST(ConfigTest, ExecutorKindsAreWordsAndAnyOtherWordIsRefused) {
  for (ExecutorKind kind : {ExecutorKind::Local, ExecutorKind::Slurm}) {
    EXPECT_EQ(parseExecutorKind(toString(kind)), kind) << toString(kind);
  }
  EXPECT_EQ(toString(ExecutorKind::Local), "local");
  EXPECT_EQ(toString(ExecutorKind::Slurm), "slurm");
  EXPECT_THAT(executorKindWords(), ElementsAre("local", "slurm"));
  for (std::string_view word : {"", "Local", "SLURM", "kubernetes", "slurm "}) {
    EXPECT_EQ(parseExecutorKind(word), std::nullopt) << word;
  }
  EXPECT_EQ(requestedExecutorKind(std::nullopt), std::nullopt);
  EXPECT_EQ(requestedExecutorKind(std::string("slurm")), ExecutorKind::Slurm);
  try {
    requestedExecutorKind(std::string("kubernetes"));
    ADD_FAILURE() << "an unknown executor was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown executor 'kubernetes' (there are: local, slurm)");
  }
}

TEST(ConfigTest, ExecutorsOfferedAreTheDefaultFirstAndSlurmOnlyWhereHydraTomlPreparesIt) {
  EXPECT_THAT(offeredExecutors(parseConfig("", kFile).executor), ElementsAre(ExecutorKind::Local));
  EXPECT_THAT(offeredExecutors(parseConfig("[executor]\nkind = \"local\"\n", kFile).executor), ElementsAre(ExecutorKind::Local));
  EXPECT_THAT(offeredExecutors(parseConfig("[executor]\nkind = \"slurm\"\n", kFile).executor), ElementsAre(ExecutorKind::Slurm, ExecutorKind::Local));
  // Local by default, with Slurm prepared for the runs that ask for it.
  for (const char* key : {"partition = \"gpu\"", "account = \"team\"", "time_limit = 30", "extra_args = [\"--mem=1G\"]",
                          "slurm_conf = \"/etc/slurm/slurm.conf\"", "hydra_binary = \"/shared/hydra\""}) {
    EXPECT_THAT(offeredExecutors(parseConfig(std::string("[executor]\n") + key + "\n", kFile).executor),
                ElementsAre(ExecutorKind::Local, ExecutorKind::Slurm))
        << key;
  }
  EXPECT_THAT(offeredExecutors(parseConfig("[executor]\nextra_args = []\n", kFile).executor), ElementsAre(ExecutorKind::Local));
}

TEST(ConfigErrorTest, ExecutorProblemsNameTheirPlace) {
  expectError("[executor]\nkind = \"kubernetes\"\n", 2, 8,
              "'kind' must be one of local, slurm, found 'kubernetes'");
  expectError("[executor]\ntime_limit = \"an hour\"\n", 2, 14,
              "'time_limit' must be minutes, or Slurm's \"[days-]hours:minutes:seconds\", found \"an hour\"");
  expectError("[executor]\ntime_limit = 0\n", 2, 14, "'time_limit' must be at least 1 minute");
  expectError("[executor]\ntime_limit = \"1:2:3:4\"\n", 2, 14,
              "'time_limit' must be minutes, or Slurm's \"[days-]hours:minutes:seconds\", found \"1:2:3:4\"");
  // What hydra sets for every job cannot be set twice.
  expectError("[executor]\nextra_args = [\"--mem=1G\", \"--output=/tmp/x\"]\n", 2, 14,
              "'extra_args' cannot pass --output: hydra sets it for every job (docs/scaling.md)");
  expectError("[executor]\nextra_args = [\"-D/elsewhere\"]\n", 2, 14,
              "'extra_args' cannot pass -D/elsewhere: hydra sets it for every job (docs/scaling.md)");
  expectError("[executor]\nslurm_conf = \"slurm.conf\"\n", 2, 14,
              "'slurm_conf' must be an absolute path (or start with ~/), found \"slurm.conf\"");
  expectError("[executor]\nqueue = \"x\"\n", 2, 1, "unknown key 'queue' in [executor]");
  expectError("[executor]\nslurm_cnf = \"/x\"\n", 2, 1,
              "unknown key 'slurm_cnf' in [executor]; did you mean 'slurm_conf'?");
}

TEST(ConfigKeysTest, AcceptedKeysAreExactlyThoseTheParserReads) {
  auto keys = acceptedConfigKeys();
  EXPECT_THAT(keys.at(""), ElementsAre("general", "agents", "scoring", "collaboration", "executor"));
  EXPECT_THAT(keys.at("general"),
              ElementsAre("workspace_dir", "max_concurrent_agents", "timeout_seconds", "sandbox", "copy_ignored",
                          "pool_size", "max_result_files", "max_result_bytes", "keep_ignored", "sparse_paths",
                          "setup_command", "memory_limit_mib", "max_processes", "cpu_limit_seconds"));
  EXPECT_THAT(keys.at("agents.*"),
              ElementsAre("adapter", "binary", "args", "extra_args", "env", "timeout_seconds", "acp_permissions",
                          "network", "allowed_hosts", "writable_paths", "memory_limit_mib", "max_processes",
                          "cpu_limit_seconds"));
  EXPECT_THAT(keys.at("scoring.weights"),
              ElementsAre("build", "tests", "lint", "diff_size", "speed"));
  EXPECT_THAT(keys.at("scoring.thresholds"), ElementsAre("auto_merge_minimum", "fail_maximum"));
  EXPECT_THAT(keys.at("collaboration"),
              ElementsAre("builder", "reviewer", "max_iterations", "until_score", "review_every_round",
                          "approve_marker", "review_prompt_template", "refine_prompt_template"));
  EXPECT_THAT(keys.at("executor"), ElementsAre("kind", "partition", "account", "time_limit", "extra_args",
                                               "slurm_conf", "hydra_binary"));
  EXPECT_EQ(keys.size(), 8u);

  // Every accepted key is accepted by the parser, in its table (values chosen per key type).
  for (const std::string& key : keys.at("scoring")) {
    if (key == "weights" || key == "thresholds") continue;
    std::string value = key.ends_with("_seconds") ? "5"
                        : key == "auto_merge"     ? "true"
                        : key == "test_format"    ? "\"junit\""
                        : key == "lint_format"    ? "\"gcc\""
                        : key == "protected_paths" ? "[\"tests/\"]"
                        : key == "protected_mode"  ? "\"restore\""
                                                  : "\"x.xml\"";
    EXPECT_NO_THROW(parseConfig("[scoring]\n" + key + " = " + value + "\n", kFile)) << key;
  }
}

}  // namespace
}  // namespace hydra::core

namespace hydra::core {
namespace {

// [agents.NAME] network and allowed_hosts (core/sandbox/network.h).
TEST(ConfigNetworkTest, OpenByDefaultAndAnAllowlistTakesTheAdaptersPreset) {
  Config config = parseConfig(
      "[agents.claude]\n\n[agents.codex]\nnetwork = \"allowlist\"\n\n[agents.local]\nadapter = \"claude\"\n"
      "network = \"allowlist\"\nallowed_hosts = [\"LocalHost:8080\"]\n\n[agents.off]\nnetwork = \"none\"\n"
      "adapter = \"command\"\nbinary = \"x\"\n",
      kFile);
  EXPECT_EQ(config.agents.at("claude").network, "open");
  EXPECT_TRUE(config.agents.at("claude").allowedHosts.empty());
  EXPECT_EQ(config.agents.at("codex").allowedHosts,
            (std::vector<std::string>{"api.openai.com", "chatgpt.com", "auth.openai.com"}));
  EXPECT_EQ(config.agents.at("local").allowedHosts, std::vector<std::string>{"LocalHost:8080"});
  EXPECT_EQ(config.agents.at("off").network, "none");
}

TEST(ConfigNetworkTest, BadSettingsAreRefusedWhereTheyAre) {
  const ConfigError mode = errorFor("[agents.x]\nnetwork = \"closed\"\n");
  EXPECT_EQ(mode.line(), 2);
  EXPECT_EQ(mode.column(), 11);
  EXPECT_THAT(mode.message(), ::testing::StartsWith("'network' must be one of open, none, allowlist, found 'closed'"));
  expectError("[agents.x]\nadapter = \"command\"\nbinary = \"b\"\nnetwork = \"allowlist\"\n", 4, 11,
              "[agents.x] network = \"allowlist\" needs 'allowed_hosts': the 'command' adapter has no preset hosts "
              "(list the model's API, e.g. [\"api.example.com\"])");
  expectError("[agents.claude]\nallowed_hosts = [\"api.anthropic.com\"]\n", 2, 17,
              "[agents.claude] 'allowed_hosts' only applies with network = \"allowlist\" (it is \"open\")");
  expectError("[agents.claude]\nnetwork = \"allowlist\"\nallowed_hosts = [\"a.example\", \"a.example:0\"]\n", 3, 31,
              "'allowed_hosts' entry 'a.example:0' is not a host name or host:port: the port must be a number from 1 "
              "to 65535");
}

}  // namespace
}  // namespace hydra::core
