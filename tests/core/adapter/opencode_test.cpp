// The opencode parser on a real captured stream (fixtures/opencode.stream.jsonl),
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

const Adapter& opencode() { return testing::adapterNamed("opencode"); }

TEST(OpencodeParserTest, RealStreamGivesStepUsageAndSummaryBuiltFromSteps) {
  auto events = parseFixture("opencode", "opencode.stream.jsonl");
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(Text, ToolCall, ToolResult, FileChange, Usage,  //
                                           ToolCall, ToolResult, FileChange, Usage,        //
                                           ToolCall, ToolResult, Usage,                    //
                                           Text, Usage, Summary));

  EXPECT_EQ(events[0].text, "Creating the file.");

  EXPECT_EQ(events[1].tool, "write");
  EXPECT_EQ(events[1].detail, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[2].detail, "Wrote file successfully.");
  EXPECT_FALSE(events[2].isError);
  EXPECT_EQ(events[3].path, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[3].change, "add");  // metadata.exists was false

  ASSERT_TRUE(events[4].usage.has_value());
  EXPECT_EQ(events[4].usage->inputTokens, 100);
  EXPECT_EQ(events[4].usage->outputTokens, 20);
  EXPECT_EQ(events[4].usage->cachedInputTokens, 0);
  EXPECT_EQ(events[4].usage->costUsd, 0.0);

  EXPECT_EQ(events[5].tool, "edit");
  EXPECT_EQ(events[6].detail, "Edit applied successfully.");
  EXPECT_EQ(events[7].path, "/WORK/repo/hello.txt");
  EXPECT_EQ(events[7].change, "update");

  EXPECT_EQ(events[9].tool, "bash");
  EXPECT_EQ(events[9].detail, "cat hello.txt && git status --short");
  EXPECT_EQ(events[10].detail, "hello fake model ?? hello.txt");

  EXPECT_EQ(events[12].text, "Done: created and edited hello.txt.");

  const AgentEvent& summary = events[14];
  EXPECT_EQ(summary.text, "Done: created and edited hello.txt.");
  EXPECT_EQ(summary.turns, 4);
  EXPECT_FALSE(summary.isError);
  EXPECT_THAT(summary.warnings, IsEmpty());
  ASSERT_TRUE(summary.usage.has_value());
  EXPECT_EQ(summary.usage->inputTokens, 400);
  EXPECT_EQ(summary.usage->outputTokens, 80);
  EXPECT_EQ(summary.usage->cachedInputTokens, 0);
  EXPECT_EQ(summary.usage->costUsd, 0.0);
}

TEST(OpencodeParserTest, CostsAndReasoningTokensAreSummed) {
  auto lines = readLines("opencode.stream.jsonl");
  auto step = [&](double cost, int reasoning) {
    return edited(lines[3], [&](boost::json::object& line) {
      auto& part = line["part"].as_object();
      part["cost"] = cost;
      part["tokens"].as_object()["reasoning"] = reasoning;
    });
  };
  auto events = parseAll(opencode(), {lines[0], step(0.25, 5), lines[4], step(0.5, 0)});
  const AgentEvent& summary = events.back();
  ASSERT_EQ(summary.kind, EventKind::Summary);
  EXPECT_EQ(summary.turns, 2);
  ASSERT_TRUE(summary.usage.has_value());
  EXPECT_EQ(summary.usage->outputTokens, 45);  // 20 + 5 reasoning, then 20
  EXPECT_DOUBLE_EQ(summary.usage->costUsd.value_or(-1), 0.75);
}

TEST(OpencodeParserTest, ToolInErrorStateIsAFailedResultWithoutFileChange) {
  auto lines = readLines("opencode.stream.jsonl");
  std::string failed = edited(lines[2], [](boost::json::object& line) {
    auto& state = line["part"].as_object()["state"].as_object();
    state["status"] = "error";
    state["error"] = "File /WORK/repo/hello.txt is not in the current working directory";
    state.erase("output");
  });
  auto events = parseAll(opencode(), {failed});
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(ToolCall, ToolResult, Summary));
  EXPECT_TRUE(events[1].isError);
  EXPECT_EQ(events[1].detail, "File /WORK/repo/hello.txt is not in the current working directory");
}

TEST(OpencodeParserTest, WriteOverAnExistingFileIsAnUpdate) {
  auto lines = readLines("opencode.stream.jsonl");
  std::string overwrite = edited(lines[2], [](boost::json::object& line) {
    line["part"].as_object()["state"].as_object()["metadata"].as_object()["exists"] = true;
  });
  auto events = testing::ofKind(parseAll(opencode(), {overwrite}), EventKind::FileChange);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].change, "update");
}

TEST(OpencodeParserTest, StreamCutInsideAStepIsReported) {
  auto lines = readLines("opencode.stream.jsonl");
  lines.pop_back();  // the last step_finish
  auto events = parseAll(opencode(), lines);
  const AgentEvent& summary = events.back();
  ASSERT_EQ(summary.kind, EventKind::Summary);
  EXPECT_EQ(summary.turns, 3);
  EXPECT_THAT(summary.warnings, ElementsAre("the stream ended inside a step"));
}

TEST(OpencodeParserTest, TheSummaryNamesTheSessionALaterRunCanContinue) {
  std::vector<AgentEvent> events = testing::parseFixture("opencode", "opencode.stream.jsonl");
  ASSERT_FALSE(events.empty());
  ASSERT_EQ(events.back().kind, EventKind::Summary);
  EXPECT_EQ(events.back().sessionId, "ses_e0237229cffeR51etvU9oEdfeK");
}

}  // namespace
}  // namespace hydra::core
