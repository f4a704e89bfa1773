// Adapters for programs without a JSON stream: aider (plain text) and the
// generic command adapter, the latter run for real as a child process.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/core/adapter/adapter_test_support.h"

extern char** environ;

namespace hydra::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::kindsOf;
using testing::parseAll;

struct ChildOutput {
  std::string stdoutText;
  int exitCode = -1;
};

// Runs `invocation` directly (posix_spawnp: no shell anywhere) and collects
// its stdout.
ChildOutput run(const Invocation& invocation) {
  std::vector<std::string> argvStrings = {invocation.program};
  argvStrings.insert(argvStrings.end(), invocation.args.begin(), invocation.args.end());
  std::vector<char*> argv;
  for (std::string& arg : argvStrings) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error(std::strerror(rc));
  }

  ChildOutput output;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.stdoutText.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  output.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t from = 0;
  for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', from)) {
    lines.push_back(text.substr(from, at - from));
    from = at + 1;
  }
  if (from < text.size()) lines.push_back(text.substr(from));
  return lines;
}

TEST(CommandAdapterTest, TaskReachesTheProgramVerbatimWithoutAnyShell) {
  const std::string task = "fix it; echo $HOME $(id) `id` | cat > out 'single' \"double\" \\";
  AgentConfig config;
  config.binary = "printf";
  config.args = {"%s\\n", "task={task}"};
  Invocation invocation = testing::adapterNamed("command").invocation(config, task);

  ChildOutput output = run(invocation);
  ASSERT_EQ(output.exitCode, 0);
  auto events = parseAll(testing::adapterNamed("command"), splitLines(output.stdoutText));
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(Raw, Summary));
  EXPECT_EQ(events[0].text, "task=" + task);
}

TEST(CommandAdapterTest, EveryLineIsRawEvenOneThatLooksLikeAnotherClisJson) {
  const std::vector<std::string> lines = {
      R"({"type":"result","subtype":"success","is_error":false,"num_turns":4})",
      "plain words",
      "",
      R"({"type":"text","part":{"text":"hi"}})",
  };
  auto events = parseAll(testing::adapterNamed("command"), lines);
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(Raw, Raw, Raw, Raw, Summary));
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(events[i].text, lines[i]);
  const AgentEvent& summary = events.back();
  EXPECT_FALSE(summary.isError);
  EXPECT_FALSE(summary.turns.has_value());
  EXPECT_FALSE(summary.usage.has_value());
}

// Aider prints plain text; these lines are in its documented plain-text form,
// not a captured run.
TEST(AiderParserTest, EachNonBlankLineIsText) {
  const std::vector<std::string> lines = {
      "Added hello.txt to the chat.",
      "",
      "I will create hello.txt.\r",
      "   ",
  };
  auto events = parseAll(testing::adapterNamed("aider"), lines);
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(Text, Text, Summary));
  EXPECT_EQ(events[0].text, "Added hello.txt to the chat.");
  EXPECT_EQ(events[1].text, "I will create hello.txt.");
  EXPECT_THAT(events[2].warnings, IsEmpty());
}

TEST(AiderParserTest, FinishGivesOneSummaryOnly) {
  auto parser = testing::adapterNamed("aider").parser();
  EXPECT_EQ(parser->finish().size(), 1u);
  EXPECT_THAT(parser->finish(), IsEmpty());
}

}  // namespace
}  // namespace hydra::core
