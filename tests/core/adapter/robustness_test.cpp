// Agents print whatever they print: a parser must pass on what it cannot read,
// and never throw, whatever arrives.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/array.hpp>
#include <string>
#include <vector>

#include "tests/core/adapter/adapter_test_support.h"

namespace hydra::core {
namespace {

using ::testing::IsEmpty;
using testing::readLines;

struct JsonCli {
  const char* adapter;
  const char* fixture;
};

void PrintTo(const JsonCli& cli, std::ostream* os) { *os << cli.adapter; }

class JsonParserTest : public ::testing::TestWithParam<JsonCli> {
 protected:
  const Adapter& adapter() const { return testing::adapterNamed(GetParam().adapter); }
  std::vector<std::string> fixtureLines() const { return readLines(GetParam().fixture); }
};

INSTANTIATE_TEST_SUITE_P(EveryJsonCli, JsonParserTest,
                         ::testing::Values(JsonCli{"claude", "claude.stream.jsonl"},
                                           JsonCli{"codex", "codex.stream.jsonl"},
                                           JsonCli{"gemini", "gemini.stream.jsonl"},
                                           JsonCli{"opencode", "opencode.stream.jsonl"},
                                           JsonCli{"cursor", "cursor.documented.jsonl"}),
                         [](const auto& info) { return std::string(info.param.adapter); });

TEST_P(JsonParserTest, GarbageLinesPassThroughAsRawUnchanged) {
  const std::vector<std::string> garbage = {
      "Warning: Basic terminal detected (TERM=dumb).",  // prose a CLI prints
      "{\"type\":\"assistant\"",                        // cut short
      "[1, 2, 3]",                                      // JSON, not an object
      "42",
      "\"a string\"",
      "{\"type\":\"no.such.event\",\"x\":1}",  // an object of an unknown shape
      "{}",
      "\x01\xff\xfe binary",
  };
  auto parser = adapter().parser();
  for (const std::string& line : garbage) {
    auto events = parser->parseLine(line);
    ASSERT_EQ(events.size(), 1u) << line;
    EXPECT_EQ(events[0].kind, EventKind::Raw) << line;
    EXPECT_EQ(events[0].text, line);
  }
}

TEST_P(JsonParserTest, BlankLinesAndCarriageReturnsAreIgnored) {
  auto parser = adapter().parser();
  EXPECT_THAT(parser->parseLine(""), IsEmpty());
  EXPECT_THAT(parser->parseLine("  \t"), IsEmpty());
  EXPECT_THAT(parser->parseLine("\r"), IsEmpty());
  auto raw = parser->parseLine("not json\r");
  ASSERT_EQ(raw.size(), 1u);
  EXPECT_EQ(raw[0].text, "not json");

  // A real stream with CRLF line ends reads like the original.
  auto lines = fixtureLines();
  std::vector<std::string> crlf;
  for (const std::string& line : lines) crlf.push_back(line + "\r");
  EXPECT_EQ(testing::kindsOf(testing::parseAll(adapter(), crlf)),
            testing::kindsOf(testing::parseAll(adapter(), lines)));
}

TEST_P(JsonParserTest, EveryTruncatedRealLineIsRaw) {
  for (const std::string& line : fixtureLines()) {
    auto parser = adapter().parser();
    for (std::size_t length = 1; length < line.size(); ++length) {
      std::vector<AgentEvent> events;
      ASSERT_NO_THROW(events = parser->parseLine(std::string_view(line).substr(0, length)));
      ASSERT_EQ(events.size(), 1u);
      ASSERT_EQ(events[0].kind, EventKind::Raw);
    }
  }
}

TEST_P(JsonParserTest, RealLinesWithFieldsOfTheWrongTypeNeverThrow) {
  const std::vector<boost::json::value> replacements = {nullptr,
                                                        42,
                                                        -1.5,
                                                        true,
                                                        "text",
                                                        boost::json::array{},
                                                        boost::json::object{},
                                                        boost::json::array{1, "x", nullptr}};
  auto lines = fixtureLines();
  for (const std::string& line : lines) {
    const boost::json::object original = boost::json::parse(line).as_object();
    // Each field, at the top and one level down, replaced by each wrong type.
    for (const auto& [key, value] : original) {
      std::vector<std::string> paths = {std::string(key)};
      if (value.is_object()) {
        for (const auto& [inner, ignored] : value.get_object()) {
          paths.push_back(std::string(key) + "/" + std::string(inner));
        }
      }
      for (const std::string& path : paths) {
        for (const boost::json::value& replacement : replacements) {
          std::string mutated = testing::edited(line, [&](boost::json::object& object) {
            std::size_t slash = path.find('/');
            if (slash == std::string::npos) {
              object[path] = replacement;
            } else {
              object[path.substr(0, slash)].as_object()[path.substr(slash + 1)] = replacement;
            }
          });
          // The whole stream around the mutated line, so state is exercised too.
          auto parser = adapter().parser();
          ASSERT_NO_THROW({
            for (const std::string& before : lines) parser->parseLine(before);
            parser->parseLine(mutated);
            parser->finish();
          }) << mutated;
        }
      }
    }
  }
}

TEST_P(JsonParserTest, FinishGivesExactlyOneSummaryAndIsIdempotent) {
  auto parser = adapter().parser();
  std::vector<AgentEvent> events;
  for (const std::string& line : fixtureLines()) {
    for (AgentEvent& event : parser->parseLine(line)) events.push_back(std::move(event));
  }
  for (AgentEvent& event : parser->finish()) events.push_back(std::move(event));
  EXPECT_EQ(testing::ofKind(events, EventKind::Summary).size(), 1u);
  EXPECT_EQ(events.back().kind, EventKind::Summary);
  EXPECT_THAT(parser->finish(), IsEmpty());
}

// A result line printed twice made two Summary events, two ends for one run
// (the fuzz targets check for exactly one). The second is shown as it is.
TEST(ResultLineTest, AResultLinePrintedTwiceEndsTheRunOnce) {
  for (const JsonCli& cli :
       {JsonCli{"claude", "claude.stream.jsonl"}, JsonCli{"gemini", "gemini.stream.jsonl"},
        JsonCli{"cursor", "cursor.documented.jsonl"}}) {
    SCOPED_TRACE(cli.adapter);
    std::vector<std::string> doubled;
    for (const std::string& line : readLines(cli.fixture)) {
      doubled.push_back(line);
      if (line.find("\"type\":\"result\"") != std::string::npos) doubled.push_back(line);
    }
    auto events = testing::parseAll(testing::adapterNamed(cli.adapter), doubled);
    EXPECT_EQ(testing::ofKind(events, EventKind::Summary).size(), 1u);
    auto raws = testing::ofKind(events, EventKind::Raw);
    ASSERT_FALSE(raws.empty());
    EXPECT_NE(raws.back().text.find("\"type\":\"result\""), std::string::npos);
  }
}

TEST_P(JsonParserTest, EmptyStreamStillEndsWithASummary) {
  auto parser = adapter().parser();
  auto events = parser->finish();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::Summary);
}

}  // namespace
}  // namespace hydra::core
