// The cursor parser. No captured Cursor stream is available, so
// fixtures/cursor.documented.jsonl holds lines in the shapes Cursor documents
// (see fixtures/README.md).

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

TEST(CursorParserTest, DocumentedStreamGivesTextToolCallsFileChangeAndSummary) {
  auto events = parseFixture("cursor", "cursor.documented.jsonl");
  using enum EventKind;
  ASSERT_THAT(kindsOf(events), ElementsAre(Text, ToolCall, ToolResult, ToolCall, ToolResult,
                                           FileChange, Text, Summary));

  EXPECT_EQ(events[0].text, "I'll read the README first.");
  EXPECT_EQ(events[1].tool, "read");
  EXPECT_EQ(events[1].detail, "README.md");
  EXPECT_EQ(events[2].tool, "read");
  EXPECT_EQ(events[2].detail, "# repo");
  EXPECT_FALSE(events[2].isError);

  EXPECT_EQ(events[3].tool, "write");
  EXPECT_EQ(events[3].detail, "hello.txt");
  EXPECT_FALSE(events[4].isError);
  EXPECT_EQ(events[5].path, "/WORK/repo/hello.txt");  // the result's absolute path
  EXPECT_EQ(events[5].change, "add");

  EXPECT_EQ(events[6].text, "Created hello.txt.");

  const AgentEvent& summary = events[7];
  EXPECT_EQ(summary.text, "I'll read the README first.Created hello.txt.");
  EXPECT_FALSE(summary.isError);
  EXPECT_FALSE(summary.turns.has_value());
  EXPECT_FALSE(summary.usage.has_value());
  EXPECT_THAT(summary.warnings, IsEmpty());
}

TEST(CursorParserTest, EachCallIsAnnouncedOnceEvenWithoutItsStartedEvent) {
  auto lines = readLines("cursor.documented.jsonl");
  // Only the completed events of both calls.
  auto events = parseAll(testing::adapterNamed("cursor"), {lines[4], lines[6]});
  using enum EventKind;
  ASSERT_THAT(kindsOf(events),
              ElementsAre(ToolCall, ToolResult, ToolCall, ToolResult, FileChange, Summary));
}

TEST(CursorParserTest, StreamWithoutResultEndsWithAnErrorSummary) {
  // Cursor fails with a message on stderr and no JSON; it has also been seen
  // never to exit, and then the runner's watchdog cuts the stream.
  auto lines = readLines("cursor.documented.jsonl");
  lines.pop_back();
  auto events = parseAll(testing::adapterNamed("cursor"), lines);
  const AgentEvent& summary = events.back();
  ASSERT_EQ(summary.kind, EventKind::Summary);
  EXPECT_TRUE(summary.isError);
  EXPECT_EQ(summary.text, "Created hello.txt.");
  EXPECT_THAT(summary.warnings, ElementsAre("the stream ended without a result event"));
}

}  // namespace
}  // namespace hydra::core
