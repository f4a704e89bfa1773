// The command lines the adapters build, and the registry that finds them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/workspace/hydra_config.h"
#include "tests/core/adapter/adapter_test_support.h"

namespace hydra::core {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

const std::string kTask = "Create hello.txt then edit it";

Invocation defaultInvocation(std::string_view adapter) {
  // The settings an agent has without a table of its own in hydra.toml.
  return testing::adapterNamed(adapter).invocation(*findAgent(Config{}, adapter), kTask);
}

TEST(InvocationTest, ClaudeRunsPrintModeWithStreamJsonAndAcceptEdits) {
  Invocation invocation = defaultInvocation("claude");
  EXPECT_EQ(invocation.program, "claude");
  EXPECT_THAT(invocation.args, ElementsAre("-p", kTask, "--output-format", "stream-json",
                                           "--verbose", "--permission-mode", "acceptEdits",
                                           "--allowedTools", "Bash,Write,Edit,Read"));
  EXPECT_THAT(invocation.env, ElementsAre(Pair("DISABLE_AUTOUPDATER", "1")));
}

TEST(InvocationTest, CodexRunsExecJsonWithApprovalAndSandboxSetNotFullAuto) {
  Invocation invocation = defaultInvocation("codex");
  EXPECT_EQ(invocation.program, "codex");
  EXPECT_THAT(invocation.args, ElementsAre("exec", "--json", "-c", "approval_policy=\"never\"",
                                           "-c", "sandbox_mode=\"danger-full-access\"", kTask));
  EXPECT_THAT(invocation.env, IsEmpty());
}

TEST(InvocationTest, CursorRunsCursorAgentWithForce) {
  Invocation invocation = defaultInvocation("cursor");
  EXPECT_EQ(invocation.program, "cursor-agent");
  EXPECT_THAT(invocation.args,
              ElementsAre("-p", "--force", "--output-format", "stream-json", kTask));
  EXPECT_THAT(invocation.env, IsEmpty());
}

TEST(InvocationTest, GeminiRunsYoloWithStreamJsonAndTrustsTheWorkspace) {
  Invocation invocation = defaultInvocation("gemini");
  EXPECT_EQ(invocation.program, "gemini");
  EXPECT_THAT(invocation.args,
              ElementsAre("-p", kTask, "--output-format", "stream-json", "--yolo"));
  EXPECT_THAT(invocation.env, UnorderedElementsAre(Pair("GEMINI_CLI_TRUST_WORKSPACE", "true"),
                                                   Pair("GEMINI_CLI_NO_RELAUNCH", "true")));
}

TEST(InvocationTest, OpencodeRunsRunWithJsonFormat) {
  Invocation invocation = defaultInvocation("opencode");
  EXPECT_EQ(invocation.program, "opencode");
  EXPECT_THAT(invocation.args, ElementsAre("run", "--format", "json", kTask));
  EXPECT_THAT(invocation.env, ElementsAre(Pair("OPENCODE_DISABLE_AUTOUPDATE", "1")));
}

TEST(InvocationTest, AiderRunsOneMessageWithoutCommitting) {
  Invocation invocation = defaultInvocation("aider");
  EXPECT_EQ(invocation.program, "aider");
  EXPECT_THAT(invocation.args,
              ElementsAre("--message", kTask, "--yes-always", "--no-auto-commits", "--no-stream"));
  EXPECT_THAT(invocation.env, IsEmpty());
}

TEST(InvocationTest, TaskWithShellCharactersStaysOneArgument) {
  const std::string task = "say \"hi\" && rm -rf / ; $(id) `id` 'x'\nsecond line";
  Invocation invocation = testing::adapterNamed("claude").invocation(AgentConfig{}, task);
  ASSERT_GE(invocation.args.size(), 2u);
  EXPECT_EQ(invocation.args[1], task);
}

TEST(InvocationTest, BinaryOverridesTheDefaultProgram) {
  AgentConfig config;
  config.binary = "/opt/claude/bin/claude";
  EXPECT_EQ(testing::adapterNamed("claude").invocation(config, kTask).program,
            "/opt/claude/bin/claude");
}

TEST(InvocationTest, ExtraArgsAreAppendedAfterTheDefaults) {
  AgentConfig config;
  config.extraArgs = {"--ephemeral", "-m", "gpt-5.5"};
  Invocation invocation = testing::adapterNamed("codex").invocation(config, kTask);
  EXPECT_THAT(invocation.args, ElementsAre("exec", "--json", "-c", "approval_policy=\"never\"",
                                           "-c", "sandbox_mode=\"danger-full-access\"", kTask,
                                           "--ephemeral", "-m", "gpt-5.5"));
}

TEST(InvocationTest, ArgsReplaceTheDefaultsAndReceiveTheTaskWhereTheySay) {
  AgentConfig config;
  config.args = {"-p", "{task}", "--output-format", "stream-json"};
  config.extraArgs = {"--model", "sonnet"};
  Invocation invocation = testing::adapterNamed("claude").invocation(config, kTask);
  EXPECT_THAT(invocation.args,
              ElementsAre("-p", kTask, "--output-format", "stream-json", "--model", "sonnet"));
}

TEST(InvocationTest, ArgsWithoutPlaceholderGetTheTaskAppended) {
  AgentConfig config;
  config.args = {"run", "--format", "json", "--model", "anthropic/claude-sonnet-4"};
  Invocation invocation = testing::adapterNamed("opencode").invocation(config, kTask);
  EXPECT_THAT(invocation.args, ElementsAre("run", "--format", "json", "--model",
                                           "anthropic/claude-sonnet-4", kTask));
}

TEST(InvocationTest, ConfiguredEnvIsLaidOverTheAdapterDefaults) {
  AgentConfig config;
  config.env = {{"GEMINI_CLI_NO_RELAUNCH", "false"}, {"GEMINI_API_KEY", "k"}};
  Invocation invocation = testing::adapterNamed("gemini").invocation(config, kTask);
  EXPECT_THAT(invocation.env, UnorderedElementsAre(Pair("GEMINI_CLI_TRUST_WORKSPACE", "true"),
                                                   Pair("GEMINI_CLI_NO_RELAUNCH", "false"),
                                                   Pair("GEMINI_API_KEY", "k")));
}

TEST(CommandInvocationTest, PlaceholderIsReplacedAnywhereInsideAnArgument) {
  AgentConfig config;
  config.binary = "./agent.sh";
  config.args = {"--prompt={task}", "{task}", "literal", "[{task}|{task}]"};
  config.extraArgs = {"--log=/tmp/{task}.log"};
  Invocation invocation = testing::adapterNamed("command").invocation(config, "T");
  EXPECT_EQ(invocation.program, "./agent.sh");
  EXPECT_THAT(invocation.args,
              ElementsAre("--prompt=T", "T", "literal", "[T|T]", "--log=/tmp/T.log"));
}

TEST(CommandInvocationTest, WithoutArgsOnlyTheBinaryRuns) {
  AgentConfig config;
  config.binary = "my-agent";
  Invocation invocation = testing::adapterNamed("command").invocation(config, kTask);
  EXPECT_EQ(invocation.program, "my-agent");
  EXPECT_THAT(invocation.args, IsEmpty());  // the task arrives through HYDRA_TASK
  EXPECT_THAT(invocation.env, IsEmpty());
}

TEST(CommandInvocationTest, ArgsWithoutPlaceholderDoNotGetTheTask) {
  AgentConfig config;
  config.binary = "make";
  config.args = {"agent"};
  config.env = {{"MODE", "fast"}};
  Invocation invocation = testing::adapterNamed("command").invocation(config, kTask);
  EXPECT_THAT(invocation.args, ElementsAre("agent"));
  EXPECT_THAT(invocation.env, ElementsAre(Pair("MODE", "fast")));
}

TEST(CommandInvocationTest, TaskContainingThePlaceholderIsNotExpandedAgain) {
  AgentConfig config;
  config.binary = "agent";
  config.args = {"{task}"};
  Invocation invocation = testing::adapterNamed("command").invocation(config, "write {task}");
  EXPECT_THAT(invocation.args, ElementsAre("write {task}"));
}

TEST(AdapterRegistryTest, FindsEveryBuiltInAdapterByName) {
  const std::vector<std::string_view> expected = {"claude",     "codex",     "cursor",       "gemini",
                                                  "opencode",   "aider",     "claude-acp",   "codex-acp",
                                                  "gemini-acp", "opencode-acp", "acp",       "command"};
  EXPECT_THAT(adapterNames(), ElementsAreArray(expected));
  for (std::string_view name : expected) {
    const Adapter* adapter = findAdapter(name);
    ASSERT_NE(adapter, nullptr) << name;
    EXPECT_EQ(adapter->name(), name);
    EXPECT_NE(adapter->parser(), nullptr);
    // A plain command has no option it is known to answer with a version.
    if (name == "command" || name == "acp" || name == "codex-acp" || name == "claude-acp") {
      EXPECT_THAT(adapter->versionArgs(), IsEmpty());
    } else {
      EXPECT_THAT(adapter->versionArgs(), ElementsAre("--version")) << name;
    }
  }
}

TEST(AdapterRegistryTest, UnknownNameFindsNothing) {
  EXPECT_EQ(findAdapter("cursor-agent"), nullptr);
  EXPECT_EQ(findAdapter("Claude"), nullptr);
  EXPECT_EQ(findAdapter(""), nullptr);
}

TEST(AdapterRegistryTest, DefaultBinariesAreTheClisOwnNames) {
  std::map<std::string_view, std::string_view> binaries;
  for (std::string_view name : adapterNames()) binaries[name] = findAdapter(name)->defaultBinary();
  EXPECT_THAT(binaries, UnorderedElementsAre(Pair("claude", "claude"), Pair("codex", "codex"),
                                             Pair("cursor", "cursor-agent"),
                                             Pair("gemini", "gemini"), Pair("opencode", "opencode"),
                                             Pair("aider", "aider"), Pair("claude-acp", "claude-agent-acp"),
                                             Pair("codex-acp", "codex-acp"),
                                             Pair("gemini-acp", "gemini"),
                                             Pair("opencode-acp", "opencode"), Pair("acp", ""),
                                             Pair("command", "")));
}

TEST(EventKindTest, EveryKindHasItsOwnName) {
  using enum EventKind;
  std::set<std::string> names;
  for (EventKind kind : {Text, ToolCall, ToolResult, FileChange, Usage, Error, Summary, Raw}) {
    names.insert(std::string(toString(kind)));
  }
  EXPECT_THAT(names, UnorderedElementsAre("text", "toolCall", "toolResult", "fileChange",
                                          "usage", "error", "summary", "raw"));
}

// --- continuing a session (a collaboration's refinements) ----------------------------

std::optional<Invocation> resumed(std::string_view adapter, const AgentConfig* config = nullptr) {
  AgentConfig defaults = *findAgent(Config{}, adapter);
  return testing::adapterNamed(adapter).resumeInvocation(config ? *config : defaults, "ses-42", kTask);
}

TEST(ResumeInvocationTest, ClaudeCodexAndOpencodeContinueTheSessionTheyReported) {
  auto claude = resumed("claude");
  ASSERT_TRUE(claude);
  EXPECT_THAT(claude->args, ElementsAre("-p", kTask, "--resume", "ses-42", "--output-format", "stream-json",
                                        "--verbose", "--permission-mode", "acceptEdits", "--allowedTools",
                                        "Bash,Write,Edit,Read"));
  EXPECT_THAT(claude->env, ElementsAre(Pair("DISABLE_AUTOUPDATER", "1")));
  auto codex = resumed("codex");
  ASSERT_TRUE(codex);
  EXPECT_THAT(codex->args, ElementsAre("exec", "resume", "--json", "-c", "approval_policy=\"never\"", "-c",
                                       "sandbox_mode=\"danger-full-access\"", "ses-42", kTask));
  auto opencode = resumed("opencode");
  ASSERT_TRUE(opencode);
  EXPECT_THAT(opencode->args, ElementsAre("run", "--format", "json", "--session", "ses-42", kTask));
}

TEST(ResumeInvocationTest, OtherCLIsAndReplacedArgsStartAfresh) {
  for (std::string_view adapter : {"cursor", "gemini", "aider", "command", "acp", "claude-acp"}) {
    AgentConfig config = *findAgent(Config{}, adapter);
    if (config.binary.empty()) config.binary = "agent";
    EXPECT_FALSE(testing::adapterNamed(adapter).resumeInvocation(config, "ses-42", kTask).has_value()) << adapter;
  }
  AgentConfig replaced = *findAgent(Config{}, "claude");
  replaced.args = {"-p", "{task}"};
  EXPECT_FALSE(resumed("claude", &replaced).has_value()) << "hydra cannot tell where the session would go";
}

}  // namespace
}  // namespace hydra::core
