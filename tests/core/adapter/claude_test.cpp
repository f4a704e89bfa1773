// The claude parser on a real captured stream (fixtures/claude.stream.jsonl)
// and on an edited copy of it that stands for a permission denial.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/adapter/adapter_test_support.h"

namespace hydra::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::kindsOf;
using testing::parseAll;
using testing::parseFixture;
using testing::readLines;
using ::testing::StartsWith;

TEST(ClaudeParserTest, RealStreamGivesTextToolCallsResultsFileChangesAndSummary) {
  auto events = parseFixture("claude", "claude.stream.jsonl");
  using enum EventKind;
  ASSERT_THAT(kindsOf(events),
              ElementsAre(Text, ToolCall, ToolResult, FileChange, ToolCall, ToolResult, FileChange,
                          ToolCall, ToolResult, Text, Summary));

  EXPECT_EQ(events[0].text, "I'll create the file.");

  EXPECT_EQ(events[1].tool, "Write");
  EXPECT_EQ(events[1].detail, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[2].tool, "Write");
  EXPECT_FALSE(events[2].isError);
  EXPECT_THAT(events[2].detail, StartsWith("File created successfully at: /WORK/repo/hello.txt"));
  EXPECT_EQ(events[3].path, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[3].change, "add");  // the result's details say "create"

  EXPECT_EQ(events[4].tool, "Edit");
  EXPECT_EQ(events[4].detail, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[5].tool, "Edit");
  EXPECT_EQ(events[6].path, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[6].change, "update");

  EXPECT_EQ(events[7].tool, "Bash");
  EXPECT_EQ(events[7].detail, "cat hello.txt && git status --short");
  EXPECT_EQ(events[8].tool, "Bash");
  EXPECT_EQ(events[8].detail, "hello fake model ?? hello.txt");  // on one line
  EXPECT_FALSE(events[8].isError);

  EXPECT_EQ(events[9].text, "Done: created and edited hello.txt.");

  const AgentEvent& summary = events[10];
  EXPECT_EQ(summary.text, "Done: created and edited hello.txt.");
  EXPECT_EQ(summary.turns, 4);
  EXPECT_FALSE(summary.isError);
  EXPECT_THAT(summary.warnings, IsEmpty());
  ASSERT_TRUE(summary.usage.has_value());
  EXPECT_EQ(summary.usage->inputTokens, 400);
  EXPECT_EQ(summary.usage->outputTokens, 80);
  EXPECT_EQ(summary.usage->cachedInputTokens, 0);
  ASSERT_TRUE(summary.usage->costUsd.has_value());
  EXPECT_DOUBLE_EQ(*summary.usage->costUsd, 0.004);
}

// fixtures/claude.permission-denied.edited.jsonl is the real stream edited so
// that its Write was refused (see fixtures/README.md).
TEST(ClaudeParserTest, PermissionDenialsBecomeWarningsAndDeniedWritesChangeNoFile) {
  auto events = parseFixture("claude", "claude.permission-denied.edited.jsonl");
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(Text, ToolCall, ToolResult, Summary));
  EXPECT_EQ(events[2].tool, "Write");
  EXPECT_TRUE(events[2].isError);
  EXPECT_THAT(events[2].detail, StartsWith("Claude requested permissions to write"));

  const AgentEvent& summary = events[3];
  EXPECT_FALSE(summary.isError);  // claude exits "successfully": only the warning tells
  EXPECT_EQ(summary.turns, 2);
  EXPECT_EQ(summary.text, "I need permission to write hello.txt.");
  EXPECT_THAT(summary.warnings, ElementsAre("permission denied: Write /WORK/repo/hello.txt"));
}

TEST(ClaudeParserTest, StreamCutBeforeResultEndsWithAnErrorSummary) {
  auto lines = readLines("claude.stream.jsonl");
  lines.pop_back();  // the `result` line
  auto events = parseAll(testing::adapterNamed("claude"), lines);
  ASSERT_FALSE(events.empty());
  const AgentEvent& summary = events.back();
  EXPECT_EQ(summary.kind, EventKind::Summary);
  EXPECT_TRUE(summary.isError);
  EXPECT_EQ(summary.text, "Done: created and edited hello.txt.");
  EXPECT_THAT(summary.warnings, ElementsAre("the stream ended without a result event"));
  EXPECT_EQ(testing::ofKind(events, EventKind::Summary).size(), 1u);
}

TEST(ClaudeParserTest, UnknownSystemEventsPassThroughRaw) {
  // system/init is known and silent; other system events (retries, compaction)
  // are shown as they are rather than guessed at.
  auto parser = testing::adapterNamed("claude").parser();
  const std::string retry = R"({"type":"system","subtype":"api_retry"})";
  auto events = parser->parseLine(retry);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::Raw);
  EXPECT_EQ(events[0].text, retry);
  EXPECT_THAT(parser->parseLine(readLines("claude.stream.jsonl").front()), IsEmpty());
}

TEST(ClaudeParserTest, TheSummaryNamesTheSessionALaterRunCanContinue) {
  std::vector<AgentEvent> events = testing::parseFixture("claude", "claude.stream.jsonl");
  ASSERT_FALSE(events.empty());
  ASSERT_EQ(events.back().kind, EventKind::Summary);
  EXPECT_EQ(events.back().sessionId, "3098744b-cf4b-491d-b056-cc0c8dfb2b99");
}

}  // namespace
}  // namespace hydra::core
