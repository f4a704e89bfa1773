// The codex parser on a real captured stream (fixtures/codex.stream.jsonl),
// and on copies of its lines edited to show cases the capture does not.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/adapter/adapter_test_support.h"

namespace hydra::core {
namespace {

using testing::edited;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::kindsOf;
using testing::ofKind;
using testing::parseAll;
using testing::parseFixture;
using testing::readLines;

const Adapter& codex() { return testing::adapterNamed("codex"); }

TEST(CodexParserTest, RealStreamGivesFileChangesCommandUsageAndBuiltSummary) {
  auto events = parseFixture("codex", "codex.stream.jsonl");
  using enum EventKind;
  ASSERT_THAT(kindsOf(events),
              ElementsAre(Text, ToolCall, ToolResult, FileChange, ToolCall, ToolResult, FileChange,
                          ToolCall, ToolResult, Text, Usage, Summary));

  EXPECT_EQ(events[0].text, "Creating the file with apply_patch.");

  EXPECT_EQ(events[1].tool, "file_change");
  EXPECT_EQ(events[1].detail, "add /WORK/repo/hello.txt");
  EXPECT_FALSE(events[2].isError);
  EXPECT_EQ(events[3].path, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[3].change, "add");
  EXPECT_EQ(events[4].detail, "update /WORK/repo/hello.txt");
  EXPECT_EQ(events[6].path, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[6].change, "update");

  // The `/bin/bash -lc '...'` wrapper is taken off for reading.
  EXPECT_EQ(events[7].tool, "command_execution");
  EXPECT_EQ(events[7].detail, "cat hello.txt && git status --short");
  EXPECT_EQ(events[8].tool, "command_execution");
  EXPECT_EQ(events[8].detail, "hello fake model ?? hello.txt");
  EXPECT_FALSE(events[8].isError);

  EXPECT_EQ(events[9].text, "Done: created and edited hello.txt.");

  ASSERT_TRUE(events[10].usage.has_value());
  EXPECT_EQ(events[10].usage->inputTokens, 400);
  EXPECT_EQ(events[10].usage->outputTokens, 80);
  EXPECT_EQ(events[10].usage->cachedInputTokens, 0);
  EXPECT_FALSE(events[10].usage->costUsd.has_value());  // codex reports no cost

  const AgentEvent& summary = events[11];
  EXPECT_EQ(summary.text, "Done: created and edited hello.txt.");
  EXPECT_EQ(summary.turns, 1);
  EXPECT_FALSE(summary.isError);
  EXPECT_THAT(summary.warnings, IsEmpty());
  ASSERT_TRUE(summary.usage.has_value());
  EXPECT_EQ(summary.usage->inputTokens, 400);
  EXPECT_EQ(summary.usage->outputTokens, 80);
  EXPECT_FALSE(summary.usage->costUsd.has_value());
}

TEST(CodexParserTest, UsageOfSeveralTurnsIsSummed) {
  auto lines = readLines("codex.stream.jsonl");
  lines.push_back(lines[1]);   // turn.started
  lines.push_back(lines[9]);   // the final agent_message
  lines.push_back(lines[10]);  // turn.completed
  auto events = parseAll(codex(), lines);
  const AgentEvent& summary = events.back();
  ASSERT_EQ(summary.kind, EventKind::Summary);
  EXPECT_EQ(summary.turns, 2);
  ASSERT_TRUE(summary.usage.has_value());
  EXPECT_EQ(summary.usage->inputTokens, 800);
  EXPECT_EQ(summary.usage->outputTokens, 160);
}

TEST(CodexParserTest, ItemsCompletedWithoutStartAreAnnouncedOnce) {
  std::vector<std::string> lines;
  for (const std::string& line : readLines("codex.stream.jsonl")) {
    if (line.find(R"("type":"item.started")") == std::string::npos) lines.push_back(line);
  }
  auto events = parseAll(codex(), lines);
  auto calls = ofKind(events, EventKind::ToolCall);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].detail, "add /WORK/repo/hello.txt");
  EXPECT_EQ(calls[2].detail, "cat hello.txt && git status --short");
  EXPECT_EQ(ofKind(events, EventKind::ToolResult).size(), 3u);
  EXPECT_EQ(ofKind(events, EventKind::FileChange).size(), 2u);
}

TEST(CodexParserTest, NonZeroExitCodeMakesAFailedToolResult) {
  auto lines = readLines("codex.stream.jsonl");
  std::string failed = edited(lines[8], [](boost::json::object& line) {
    auto& item = line["item"].as_object();
    item["exit_code"] = 2;
    item["aggregated_output"] = "cat: hello.txt: No such file or directory\n";
    item["status"] = "failed";
  });
  auto parser = codex().parser();
  parser->parseLine(lines[7]);
  auto events = parser->parseLine(failed);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::ToolResult);
  EXPECT_TRUE(events[0].isError);
  EXPECT_EQ(events[0].detail, "cat: hello.txt: No such file or directory");
}

TEST(CodexParserTest, FailedPatchReportsNoFileChange) {
  auto lines = readLines("codex.stream.jsonl");
  std::string failed = edited(
      lines[4], [](boost::json::object& line) { line["item"].as_object()["status"] = "failed"; });
  auto events = parseAll(codex(), {lines[3], failed});
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(ToolCall, ToolResult, Summary));
  EXPECT_TRUE(events[1].isError);
}

TEST(CodexParserTest, StreamCutBeforeTurnCompletedIsAnError) {
  auto lines = readLines("codex.stream.jsonl");
  lines.pop_back();  // turn.completed
  auto events = parseAll(codex(), lines);
  const AgentEvent& summary = events.back();
  ASSERT_EQ(summary.kind, EventKind::Summary);
  EXPECT_TRUE(summary.isError);
  EXPECT_EQ(summary.turns, 0);
  EXPECT_FALSE(summary.usage.has_value());
  EXPECT_THAT(summary.warnings, ElementsAre("the stream ended before a turn completed"));
}

TEST(CodexParserTest, TheSummaryNamesTheSessionALaterRunCanContinue) {
  std::vector<AgentEvent> events = testing::parseFixture("codex", "codex.stream.jsonl");
  ASSERT_FALSE(events.empty());
  ASSERT_EQ(events.back().kind, EventKind::Summary);
  EXPECT_EQ(events.back().sessionId, "01a1fdc8-ceb4-7812-8b54-9db82d2a6db7");
}

}  // namespace
}  // namespace hydra::core
