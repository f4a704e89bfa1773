// Numbers an agent prints end up in notifications and in the race record. A
// number JSON cannot hold (Boost.JSON reads 1e999 as infinity and would write
// it back as `Infinity`), a negative count or a sum that overflows must never
// come out of a parser: such values are refused, and sums stop at a bound.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/adapter/builtin.h"
#include "core/adapter/json_stream.h"
#include "tests/core/adapter/adapter_test_support.h"

namespace hydra::core {
namespace {

using adapters::kMaxCostUsd;
using adapters::kMaxCount;
using testing::ofKind;
using testing::parseAll;
using testing::readLines;

// The fixture's lines with the first line containing `marker` edited as text
// (not through Boost.JSON, which cannot write 1e999).
std::vector<std::string> withReplaced(const std::string& fixture, const std::string& from,
                                      const std::string& to) {
  std::vector<std::string> lines = readLines(fixture);
  for (std::string& line : lines) {
    std::size_t at = line.find(from);
    if (at == std::string::npos) continue;
    line.replace(at, from.size(), to);
    return lines;
  }
  throw std::runtime_error(fixture + " has no '" + from + "'");
}

std::string lineWith(const std::string& fixture, const std::string& marker) {
  for (const std::string& line : readLines(fixture)) {
    if (line.find(marker) != std::string::npos) return line;
  }
  throw std::runtime_error(fixture + " has no '" + marker + "'");
}

std::string replaced(std::string line, const std::string& from, const std::string& to) {
  std::size_t at = line.find(from);
  if (at == std::string::npos) throw std::runtime_error("no '" + from + "' in " + line);
  return line.replace(at, from.size(), to);
}

AgentEvent summaryOf(const std::vector<AgentEvent>& events) {
  auto summaries = ofKind(events, EventKind::Summary);
  if (summaries.size() != 1) throw std::runtime_error("expected one summary");
  return summaries[0];
}

// What a consumer adding up every Usage event of the run gets (the race
// engine does this), computed without overflow so that the test can see one.
struct Sums {
  long double inputTokens = 0, outputTokens = 0, cachedInputTokens = 0, costUsd = 0;
};

Sums sumOfUsageEvents(const std::vector<AgentEvent>& events) {
  Sums s;
  for (const AgentEvent& e : ofKind(events, EventKind::Usage)) {
    if (!e.usage) continue;
    s.inputTokens += e.usage->inputTokens.value_or(0);
    s.outputTokens += e.usage->outputTokens.value_or(0);
    s.cachedInputTokens += e.usage->cachedInputTokens.value_or(0);
    s.costUsd += e.usage->costUsd.value_or(0);
  }
  return s;
}

TEST(AdapterNumbersTest, ClaudeCostOfInfinityIsLeftOutAndTheRestKept) {
  auto events = parseAll(
      testing::adapterNamed("claude"),
      withReplaced("claude.stream.jsonl", "\"total_cost_usd\":0.004", "\"total_cost_usd\":1e999"));
  AgentEvent summary = summaryOf(events);
  ASSERT_TRUE(summary.usage);
  EXPECT_FALSE(summary.usage->costUsd);
  EXPECT_EQ(summary.usage->inputTokens, 400);
  EXPECT_EQ(summary.usage->outputTokens, 80);
  EXPECT_EQ(summary.turns, 4);
}

TEST(AdapterNumbersTest, ClaudeNegativeHugeAndFractionalCountsAreLeftOut) {
  std::string result = lineWith("claude.stream.jsonl", "\"type\":\"result\"");
  result = replaced(result, "\"input_tokens\":400", "\"input_tokens\":-400");
  result = replaced(result, "\"output_tokens\":80", "\"output_tokens\":1e300");
  result = replaced(result, "\"cache_read_input_tokens\":0", "\"cache_read_input_tokens\":2.5");
  result = replaced(result, "\"total_cost_usd\":0.004", "\"total_cost_usd\":-0.5");
  result = replaced(result, "\"num_turns\":4", "\"num_turns\":-1e999");
  AgentEvent summary = summaryOf(parseAll(testing::adapterNamed("claude"), {result}));
  EXPECT_FALSE(summary.usage) << "nothing usable was left";
  EXPECT_FALSE(summary.turns);
}

TEST(AdapterNumbersTest, ClaudeTurnCountBeyondAnIntStopsAtTheLargestInt) {
  std::string result = replaced(lineWith("claude.stream.jsonl", "\"type\":\"result\""),
                                "\"num_turns\":4", "\"num_turns\":9007199254740991");
  AgentEvent summary = summaryOf(parseAll(testing::adapterNamed("claude"), {result}));
  EXPECT_EQ(summary.turns, std::numeric_limits<int>::max());
}

TEST(AdapterNumbersTest, GeminiStatsOfInfinityAreLeftOut) {
  auto events =
      parseAll(testing::adapterNamed("gemini"),
               withReplaced("gemini.stream.jsonl", "\"input_tokens\":400,\"output_tokens\"",
                            "\"input_tokens\":1e999,\"output_tokens\""));
  AgentEvent summary = summaryOf(events);
  ASSERT_TRUE(summary.usage);
  EXPECT_FALSE(summary.usage->inputTokens);
  EXPECT_EQ(summary.usage->outputTokens, 80);
}

// Every turn reports the largest count allowed: the run's Usage events, added
// up by whoever reads them, never pass kMaxCount, and the summary agrees.
TEST(AdapterNumbersTest, CodexUsageSumsStopAtTheBound) {
  std::string turn = lineWith("codex.stream.jsonl", "turn.completed");
  turn = replaced(turn, "\"input_tokens\":400", "\"input_tokens\":9007199254740991");
  std::vector<std::string> lines(1000, turn);
  lines.push_back(replaced(turn, "\"input_tokens\":9007199254740991", "\"input_tokens\":1e999"));
  auto events = parseAll(testing::adapterNamed("codex"), lines);

  Sums sums = sumOfUsageEvents(events);
  EXPECT_EQ(sums.inputTokens, static_cast<long double>(kMaxCount));
  EXPECT_EQ(sums.outputTokens, 80.0L * 1001);
  AgentEvent summary = summaryOf(events);
  ASSERT_TRUE(summary.usage);
  EXPECT_EQ(summary.usage->inputTokens, kMaxCount);
  EXPECT_EQ(summary.usage->outputTokens, 80 * 1001);
  EXPECT_EQ(summary.turns, 1001);
}

TEST(AdapterNumbersTest, OpencodeCostsStayFiniteAndReasoningCannotOverflowOutput) {
  std::string step = lineWith("opencode.stream.jsonl", "step_finish");
  std::string huge = replaced(step, "\"cost\":0", "\"cost\":1e12");
  huge = replaced(huge, "\"output\":20", "\"output\":9007199254740991");
  huge = replaced(huge, "\"reasoning\":0", "\"reasoning\":9007199254740991");
  std::vector<std::string> lines(500, huge);
  lines.push_back(replaced(step, "\"cost\":0", "\"cost\":1e999"));
  lines.push_back(replaced(step, "\"cost\":0", "\"cost\":1e308"));
  auto events = parseAll(testing::adapterNamed("opencode"), lines);

  Sums sums = sumOfUsageEvents(events);
  EXPECT_TRUE(std::isfinite(static_cast<double>(sums.costUsd)));
  EXPECT_LE(sums.costUsd, kMaxCostUsd * (1 + 1e-12L));
  EXPECT_LE(sums.outputTokens, static_cast<long double>(kMaxCount));
  for (const AgentEvent& e : ofKind(events, EventKind::Usage)) {
    ASSERT_TRUE(e.usage);
    if (e.usage->costUsd) {
      EXPECT_TRUE(std::isfinite(*e.usage->costUsd));
    }
  }
  AgentEvent summary = summaryOf(events);
  ASSERT_TRUE(summary.usage && summary.usage->costUsd);
  EXPECT_TRUE(std::isfinite(*summary.usage->costUsd));
  EXPECT_EQ(summary.usage->outputTokens, kMaxCount);
}

TEST(AdapterNumbersTest, CodexFileChangesWithoutAPathAreLeftOutAndOddKindsAreUpdates) {
  std::string item =
      lineWith("codex.stream.jsonl", "\"item.completed\",\"item\":{\"id\":\"item_1\"");
  item = replaced(item, R"([{"path":"/WORK/repo/hello.txt","kind":"add"}])",
                  R"([{"path":"","kind":"add"},{"kind":"delete"},{"path":"a.txt","kind":"rename"},)"
                  R"({"path":"b.txt","kind":"delete"},{"path":"c.txt","kind":7}])");
  auto changes = ofKind(parseAll(testing::adapterNamed("codex"), {item}), EventKind::FileChange);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].path, "a.txt");
  EXPECT_EQ(changes[0].change, "update");
  EXPECT_EQ(changes[1].path, "b.txt");
  EXPECT_EQ(changes[1].change, "delete");
  EXPECT_EQ(changes[2].path, "c.txt");
  EXPECT_EQ(changes[2].change, "update");
}

TEST(AdapterNumbersTest, AddUsageStopsAtTheBoundsAndReturnsWhatItAdded) {
  Usage total;
  total.inputTokens = kMaxCount - 5;
  total.costUsd = kMaxCostUsd - 1;
  Usage part;
  part.inputTokens = 10;
  part.outputTokens = 3;
  part.costUsd = 5;
  Usage added = adapters::addUsage(total, part);
  EXPECT_EQ(total.inputTokens, kMaxCount);
  EXPECT_EQ(added.inputTokens, 5);
  EXPECT_EQ(total.outputTokens, 3);
  EXPECT_EQ(added.outputTokens, 3);
  EXPECT_FALSE(added.cachedInputTokens);
  EXPECT_FALSE(total.cachedInputTokens);
  EXPECT_EQ(total.costUsd, kMaxCostUsd);
  EXPECT_EQ(added.costUsd, 1);
  EXPECT_EQ(adapters::addCounts(kMaxCount, kMaxCount), kMaxCount);
  EXPECT_EQ(adapters::nextTurn(std::numeric_limits<int>::max()), std::numeric_limits<int>::max());
}

TEST(AdapterNumbersTest, CountAndCostReadersRefuseWhatJsonCannotCarry) {
  namespace json = boost::json;
  json::object o =
      json::parse(R"({"neg":-1,"big":9007199254740992,"max":9007199254740991,"frac":1.5,)"
                  R"("whole":3.0,"inf":1e999,"cost":0.25,"dear":1e13,"s":"1"})")
          .as_object();
  EXPECT_FALSE(adapters::countAt(o, {"neg"}));
  EXPECT_FALSE(adapters::countAt(o, {"big"}));
  EXPECT_EQ(adapters::countAt(o, {"max"}), kMaxCount);
  EXPECT_FALSE(adapters::countAt(o, {"frac"}));
  EXPECT_EQ(adapters::countAt(o, {"whole"}), 3);
  EXPECT_FALSE(adapters::countAt(o, {"inf"}));
  EXPECT_FALSE(adapters::countAt(o, {"s"}));
  EXPECT_FALSE(adapters::numberAt(o, {"inf"}));
  EXPECT_FALSE(adapters::costAt(o, {"inf"}));
  EXPECT_FALSE(adapters::costAt(o, {"neg"}));
  EXPECT_FALSE(adapters::costAt(o, {"dear"}));
  EXPECT_EQ(adapters::costAt(o, {"cost"}), 0.25);
}

}  // namespace
}  // namespace hydra::core
