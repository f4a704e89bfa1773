// The helpers every JSON-lines parser shares.

#include "core/adapter/json_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>

namespace hydra::core::adapters {
namespace {

TEST(DescribeInputTest, PrefersPathThenCommandThenCompactJson) {
  auto parse = [](const char* text) { return boost::json::parse(text); };
  EXPECT_EQ(describeInput(parse(R"({"content":"x","file_path":"/r/a.txt"})")), "/r/a.txt");
  EXPECT_EQ(describeInput(parse(R"({"command":"make\n  test","description":"run"})")), "make test");
  EXPECT_EQ(describeInput(parse(R"({"todos":[1,2]})")), R"({"todos":[1,2]})");
  EXPECT_EQ(describeInput(parse("{}")), "");
  EXPECT_EQ(describeInput(parse("null")), "");
}

TEST(ContentTextTest, JoinsTextBlocksAndKeepsStrings) {
  EXPECT_EQ(contentText(boost::json::parse(R"("plain")")), "plain");
  EXPECT_EQ(contentText(boost::json::parse(
                R"([{"type":"text","text":"one"},{"type":"image"},{"type":"text","text":"two"}])")),
            "one\ntwo");
  EXPECT_EQ(contentText(boost::json::parse(R"({"k":1})")), R"({"k":1})");
}

TEST(ReadAtTest, WrongTypesAndMissingLevelsGiveFallbacks) {
  auto object = parseObject(R"({"a":{"b":"s","n":7,"d":7.0,"f":7.5,"t":true},"x":3})");
  ASSERT_TRUE(object.has_value());
  EXPECT_EQ(stringAt(*object, {"a", "b"}), "s");
  EXPECT_EQ(stringAt(*object, {"a", "n"}), "");
  EXPECT_EQ(stringAt(*object, {"x", "b"}), "");  // x is not an object
  EXPECT_EQ(intAt(*object, {"a", "n"}), 7);
  EXPECT_EQ(intAt(*object, {"a", "d"}), 7);
  EXPECT_EQ(intAt(*object, {"a", "f"}), std::nullopt);
  EXPECT_EQ(numberAt(*object, {"a", "f"}), 7.5);
  EXPECT_TRUE(boolAt(*object, {"a", "t"}));
  EXPECT_FALSE(boolAt(*object, {"a", "missing"}));
  EXPECT_FALSE(parseObject("[1]").has_value());
  EXPECT_FALSE(parseObject("{").has_value());
}

}  // namespace
}  // namespace hydra::core::adapters
