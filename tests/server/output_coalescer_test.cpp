#include "server/output_coalescer.h"

#include <gtest/gtest.h>

namespace hydra::server {
namespace {

using namespace std::chrono_literals;
using core::OutputStream;
using Clock = OutputCoalescer::Clock;

const Clock::time_point t0 = Clock::time_point{} + 1h;

core::AgentEvent event(core::EventKind kind, std::string text) {
  core::AgentEvent e;
  e.kind = kind;
  e.text = std::move(text);
  return e;
}

std::vector<std::string> lines(const OutputBatch& b) { return b.lines; }

TEST(OutputCoalescerTest, LinesWaitForTheIntervalThenLeaveAsOneBatchInOrder) {
  OutputCoalescer c({.interval = 50ms, .maxBytes = 64 * 1024});
  EXPECT_FALSE(c.add("r", "a", OutputStream::Stdout, "one", {}, t0));
  EXPECT_FALSE(c.add("r", "a", OutputStream::Stdout, "two", {}, t0 + 10ms));
  EXPECT_FALSE(c.add("r", "a", OutputStream::Stdout, "three", {}, t0 + 45ms));

  EXPECT_TRUE(c.takeDue(t0 + 49ms).empty());
  auto due = c.takeDue(t0 + 50ms);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].raceId, "r");
  EXPECT_EQ(due[0].agentId, "a");
  EXPECT_EQ(due[0].stream, OutputStream::Stdout);
  EXPECT_EQ(lines(due[0]), (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_TRUE(c.empty());
  EXPECT_FALSE(c.nextDue());
}

TEST(OutputCoalescerTest, ABatchThatReachesMaxBytesLeavesAtOnce) {
  // A line counts as its length and 4 bytes of JSON around it: 34 here.
  OutputCoalescer c({.interval = 50ms, .maxBytes = 130});
  const std::string line(30, 'x');
  EXPECT_FALSE(c.add("r", "a", OutputStream::Stdout, line, {}, t0));
  EXPECT_FALSE(c.add("r", "a", OutputStream::Stdout, line, {}, t0));
  auto full = c.add("r", "a", OutputStream::Stdout, line, {}, t0);
  EXPECT_FALSE(full) << "102 bytes are not yet 130";
  full = c.add("r", "a", OutputStream::Stdout, line, {}, t0);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->lines.size(), 4u);
  EXPECT_TRUE(c.empty()) << "the next line starts a new batch";
}

TEST(OutputCoalescerTest, EachAgentAndStreamHasItsOwnBatchTakenOldestFirst) {
  OutputCoalescer c({.interval = 50ms, .maxBytes = 64 * 1024});
  c.add("r", "b", OutputStream::Stdout, "b out", {}, t0);
  c.add("r", "a", OutputStream::Stderr, "a err", {}, t0 + 5ms);
  c.add("r", "a", OutputStream::Stdout, "a out", {}, t0 + 10ms);
  c.add("other", "a", OutputStream::Stdout, "other race", {}, t0 + 15ms);

  EXPECT_EQ(c.nextDue(), t0 + 50ms);
  auto due = c.takeDue(t0 + 58ms);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].agentId, "b");
  EXPECT_EQ(due[1].agentId, "a");
  EXPECT_EQ(due[1].stream, OutputStream::Stderr);
  EXPECT_EQ(c.nextDue(), t0 + 60ms);
}

TEST(OutputCoalescerTest, TakeAgentFlushesThatAgentOnlyBeforeItsLifecycleNotification) {
  OutputCoalescer c;
  c.add("r", "a", OutputStream::Stderr, "a err", {}, t0 + 1ms);
  c.add("r", "a", OutputStream::Stdout, "a out", {}, t0);
  c.add("r", "b", OutputStream::Stdout, "b out", {}, t0);

  auto a = c.takeAgent("r", "a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(lines(a[0]), std::vector<std::string>{"a out"}) << "oldest first";
  EXPECT_EQ(lines(a[1]), std::vector<std::string>{"a err"});
  EXPECT_FALSE(c.empty());
  EXPECT_TRUE(c.takeAgent("r", "a").empty());

  c.add("s", "a", OutputStream::Stdout, "race s", {}, t0);
  auto race = c.takeRace("r");
  ASSERT_EQ(race.size(), 1u);
  EXPECT_EQ(race[0].agentId, "b");
  auto rest = c.takeAll();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].raceId, "s");
  EXPECT_TRUE(c.empty());
}

TEST(OutputCoalescerTest, EventsOnlyOutputAddsNoLineButAnEmptyLineIsALine) {
  OutputCoalescer c;
  c.add("r", "a", OutputStream::Stdout, "", {}, t0);
  c.add("r", "a", OutputStream::Stdout, "", {event(core::EventKind::Summary, "done")}, t0);
  auto all = c.takeAll();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(lines(all[0]), std::vector<std::string>{""});
  ASSERT_EQ(all[0].events.size(), 1u);
  EXPECT_EQ(all[0].events[0].kind, core::EventKind::Summary);
}

TEST(OutputCoalescerTest, ARawEventThatOnlyRepeatsItsLineIsNotSentTwice) {
  OutputCoalescer c;
  c.add("r", "a", OutputStream::Stdout, "plain text", {event(core::EventKind::Raw, "plain text")},
        t0);
  c.add("r", "a", OutputStream::Stdout, "said", {event(core::EventKind::Text, "said")}, t0);
  auto all = c.takeAll();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(lines(all[0]), (std::vector<std::string>{"plain text", "said"}));
  ASSERT_EQ(all[0].events.size(), 1u);
  EXPECT_EQ(all[0].events[0].kind, core::EventKind::Text);
}

TEST(OutputCoalescerTest, ABlankLineAnAdapterPassedOnAsRawStaysALine) {
  OutputCoalescer c;
  c.add("r", "a", OutputStream::Stdout, "", {event(core::EventKind::Raw, "")}, t0);
  auto all = c.takeAll();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(lines(all[0]), std::vector<std::string>{""});
  EXPECT_TRUE(all[0].events.empty());
}

TEST(OutputCoalescerTest, LinesLostUpstreamAreCountedInTheAgentsNextBatch) {
  OutputCoalescer c({.interval = 50ms, .maxBytes = 64 * 1024});
  c.addDropped("r", "a", 0, t0);
  EXPECT_TRUE(c.empty()) << "nothing lost, nothing to say";
  c.addDropped("r", "a", 120, t0);
  c.add("r", "a", OutputStream::Stdout, "after the gap", {}, t0 + 1ms);
  c.addDropped("r", "a", 5, t0 + 2ms);
  auto due = c.takeDue(t0 + 50ms);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].droppedLines, 125u);
  EXPECT_EQ(lines(due[0]), std::vector<std::string>{"after the gap"});
}

TEST(OutputCoalescerTest, DropContentKeepsOnlyTheCount) {
  OutputBatch b;
  b.lines = {"x", "y", "z"};
  b.events = {event(core::EventKind::Text, "x")};
  b.droppedLines = 2;
  b.bytes = 40;
  b.dropContent();
  EXPECT_TRUE(b.lines.empty());
  EXPECT_TRUE(b.events.empty());
  EXPECT_EQ(b.droppedLines, 5u);
  EXPECT_FALSE(b.empty());
  EXPECT_TRUE(OutputBatch{}.empty());
}

}  // namespace
}  // namespace hydra::server
