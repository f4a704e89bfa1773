#include "core/util/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace hydra::core {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string fffd(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += kFffd;
  return out;
}

TEST(Utf8Test, EmptyInputIsValid) {
  EXPECT_TRUE(isValidUtf8(""));
  EXPECT_EQ(makeValidUtf8(""), "");
}

TEST(Utf8Test, WellFormedTextIsUnchanged) {
  // One sequence of each length, the extremes of each range, and a NUL.
  const std::string text =
      std::string("ascii \x7F") + std::string(1, '\0') +
      "\xC2\x80 \xDF\xBF \xE0\xA0\x80 \xED\x9F\xBF \xEE\x80\x80 \xEF\xBF\xBF"
      " \xF0\x90\x80\x80 \xF4\x8F\xBF\xBF caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";
  EXPECT_TRUE(isValidUtf8(text));
  EXPECT_EQ(makeValidUtf8(text), text);
}

TEST(Utf8Test, LoneContinuationAndImpossibleBytesAreReplacedOneByOne) {
  EXPECT_FALSE(isValidUtf8("\x80"));
  EXPECT_EQ(makeValidUtf8("a\x80"
                          "b"),
            "a" + kFffd + "b");
  EXPECT_EQ(makeValidUtf8("\xFF\xFE"), fffd(2));
  EXPECT_EQ(makeValidUtf8("\xF5\x80\x80\x80"), fffd(4));  // F5 would pass U+10FFFF
}

TEST(Utf8Test, OverlongEncodingsAreReplaced) {
  EXPECT_FALSE(isValidUtf8("\xC0\xAF"));
  EXPECT_EQ(makeValidUtf8("\xC0\xAF"), fffd(2));  // '/' in two bytes
  EXPECT_EQ(makeValidUtf8("\xC1\xBF"), fffd(2));
  EXPECT_EQ(makeValidUtf8("\xE0\x80\xAF"), fffd(3));      // '/' in three bytes
  EXPECT_EQ(makeValidUtf8("\xE0\x9F\xBF"), fffd(3));      // U+07FF in three bytes
  EXPECT_EQ(makeValidUtf8("\xF0\x80\x80\xAF"), fffd(4));  // '/' in four bytes
  EXPECT_EQ(makeValidUtf8("\xF0\x8F\xBF\xBF"), fffd(4));  // U+FFFF in four bytes
}

TEST(Utf8Test, SurrogatesAreReplaced) {
  EXPECT_FALSE(isValidUtf8("\xED\xA0\x80"));
  EXPECT_EQ(makeValidUtf8("\xED\xA0\x80"), fffd(3));  // U+D800
  EXPECT_EQ(makeValidUtf8("\xED\xBF\xBF"), fffd(3));  // U+DFFF
  // A CESU-8 style pair is two surrogates, so six replacements.
  EXPECT_EQ(makeValidUtf8("\xED\xA0\xBD\xED\xB8\x80"), fffd(6));
}

TEST(Utf8Test, CodePointsAboveU10FFFFAreReplaced) {
  EXPECT_FALSE(isValidUtf8("\xF4\x90\x80\x80"));
  EXPECT_EQ(makeValidUtf8("\xF4\x90\x80\x80"), fffd(4));  // U+110000
}

TEST(Utf8Test, TruncatedSequenceIsOneReplacement) {
  EXPECT_FALSE(isValidUtf8("\xE2\x82"));
  EXPECT_EQ(makeValidUtf8("\xE2\x82"), kFffd);  // at the end
  EXPECT_EQ(makeValidUtf8("\xE2\x82"
                          "A"),
            kFffd + "A");  // cut short by ASCII
  EXPECT_EQ(makeValidUtf8("\xF0\x9F\x98"
                          "x"),
            kFffd + "x");  // three of four bytes
  EXPECT_EQ(makeValidUtf8("\xC3"), kFffd);
  // A new lead byte ends the broken sequence and starts its own.
  EXPECT_EQ(makeValidUtf8("\xE2\x82\xC3\xA9"), kFffd + "\xC3\xA9");
}

TEST(Utf8Test, ValidTextAroundDamageSurvives) {
  EXPECT_EQ(makeValidUtf8("caf\xC3\xA9 \xFF na\xC3\xAFve"),
            "caf\xC3\xA9 " + kFffd + " na\xC3\xAFve");
}

TEST(Utf8Test, OutputIsAlwaysValid) {
  // Every two-byte combination, each followed by a continuation byte.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string input{static_cast<char>(a), static_cast<char>(b), '\x80'};
      ASSERT_TRUE(isValidUtf8(makeValidUtf8(input))) << a << " " << b;
    }
  }
}

}  // namespace
}  // namespace hydra::core
