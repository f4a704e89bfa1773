// The gemini parser on a real captured stream (fixtures/gemini.stream.jsonl),
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
using testing::parseAll;
using testing::parseFixture;
using testing::readLines;

const Adapter& gemini() { return testing::adapterNamed("gemini"); }

TEST(GeminiParserTest, RealStreamGivesToolCallsFileChangesAndResultSummary) {
  auto events = parseFixture("gemini", "gemini.stream.jsonl");
  using enum EventKind;
  ASSERT_THAT(kindsOf(events),
              ElementsAre(Text, ToolCall, ToolResult, FileChange, ToolCall, ToolResult, FileChange,
                          ToolCall, ToolResult, Text, Summary));

  EXPECT_EQ(events[0].text, "Creating the file.");

  EXPECT_EQ(events[1].tool, "write_file");
  EXPECT_EQ(events[1].detail, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[2].tool, "write_file");
  EXPECT_FALSE(events[2].isError);
  EXPECT_EQ(events[3].path, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[3].change, "add");

  EXPECT_EQ(events[4].tool, "replace");
  EXPECT_EQ(events[6].path, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[6].change, "update");

  EXPECT_EQ(events[7].tool, "run_shell_command");
  EXPECT_EQ(events[7].detail, "cat hello.txt && git status --short");
  EXPECT_EQ(events[8].tool, "run_shell_command");
  EXPECT_EQ(events[8].detail, "hello fake model ?? hello.txt");

  EXPECT_EQ(events[9].text, "Done: created and edited hello.txt.");

  const AgentEvent& summary = events[10];
  EXPECT_EQ(summary.text, "Done: created and edited hello.txt.");
  EXPECT_FALSE(summary.isError);
  EXPECT_FALSE(summary.turns.has_value());  // gemini's stats do not count turns
  EXPECT_THAT(summary.warnings, IsEmpty());
  ASSERT_TRUE(summary.usage.has_value());
  EXPECT_EQ(summary.usage->inputTokens, 400);
  EXPECT_EQ(summary.usage->outputTokens, 80);
  EXPECT_EQ(summary.usage->cachedInputTokens, 0);
  EXPECT_FALSE(summary.usage->costUsd.has_value());
}

TEST(GeminiParserTest, DeltaPiecesAreJoinedIntoOneTextBeforeTheNextEvent) {
  auto lines = readLines("gemini.stream.jsonl");
  auto piece = [&](const char* text) {
    return edited(lines[2], [&](boost::json::object& line) { line["content"] = text; });
  };
  auto parser = gemini().parser();
  EXPECT_THAT(parser->parseLine(piece("Creating ")), IsEmpty());
  EXPECT_THAT(parser->parseLine(piece("the file.")), IsEmpty());

  auto events = parser->parseLine(lines[3]);  // tool_use
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(Text, ToolCall));
  EXPECT_EQ(events[0].text, "Creating the file.");
}

TEST(GeminiParserTest, TextHeldAtTheEndIsFlushedBeforeTheSummary) {
  auto lines = readLines("gemini.stream.jsonl");
  lines.pop_back();  // result
  auto parser = gemini().parser();
  for (const std::string& line : lines) parser->parseLine(line);
  auto events = parser->finish();
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(Text, Summary));
  EXPECT_EQ(events[0].text, "Done: created and edited hello.txt.");
  EXPECT_TRUE(events[1].isError);
  EXPECT_EQ(events[1].text, "Done: created and edited hello.txt.");
  EXPECT_THAT(events[1].warnings, ElementsAre("the stream ended without a result event"));
}

TEST(GeminiParserTest, FailedToolResultIsAnErrorAndChangesNoFile) {
  auto lines = readLines("gemini.stream.jsonl");
  std::string failed = edited(lines[4], [](boost::json::object& line) {
    line["status"] = "error";
    line["error"] = {{"type", "permission_denied"}, {"message", "Path not in workspace"}};
  });
  auto events = parseAll(gemini(), {lines[3], failed});
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(ToolCall, ToolResult, Summary));
  EXPECT_EQ(events[1].tool, "write_file");
  EXPECT_TRUE(events[1].isError);
  EXPECT_EQ(events[1].detail, "Path not in workspace");
}

TEST(GeminiParserTest, ErrorStatusInResultMakesAnErrorSummary) {
  auto lines = readLines("gemini.stream.jsonl");
  std::string failed = edited(lines.back(), [](boost::json::object& line) {
    line["status"] = "error";
    line["error"] = {{"type", "FatalTurnLimitedError"}, {"message", "Reached max session turns"}};
  });
  auto events = parseAll(gemini(), {failed});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::Summary);
  EXPECT_TRUE(events[0].isError);
  EXPECT_THAT(events[0].warnings, ElementsAre("Reached max session turns"));
}

}  // namespace
}  // namespace hydra::core
