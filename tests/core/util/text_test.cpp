// Text for one line: cut at a character, never inside one, always valid UTF-8.

#include "core/util/text.h"

#include <gtest/gtest.h>

#include "core/util/utf8.h"

namespace hydra::core {
namespace {

TEST(TextTest, ShortTextIsKeptAndLongTextIsCutWithAnEllipsis) {
  EXPECT_EQ(clipped("fix the login test", 80), "fix the login test");
  EXPECT_EQ(clipped("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(clipped("abcdefghijk", 10), "abcdefg...");
  EXPECT_EQ(clipped("abcdef", 2), "..");
}

TEST(TextTest, ACutNeverSplitsACharacter) {
  // "修" is three bytes: 80 bytes hold 25 of them and "..." once cut.
  std::string task;
  for (int i = 0; i < 40; ++i) task += "修";
  const std::string cut = clipped(task, 80);
  EXPECT_TRUE(isValidUtf8(cut));
  EXPECT_LE(cut.size(), 80u);
  EXPECT_EQ(cut, task.substr(0, 75) + "...");
  // An emoji (four bytes) across the cut goes whole.
  EXPECT_EQ(clipped("ab\xF0\x9F\x98\x80" "cdefgh", 8), "ab...");
}

TEST(TextTest, IllFormedBytesBecomeReplacementCharacters) {
  EXPECT_EQ(clipped("a\xFF" "b", 20), "a\xEF\xBF\xBD" "b");
}

TEST(TextTest, TheFirstLineStopsAtTheFirstNewline) {
  EXPECT_EQ(firstLine("Fix it\r\nthen test it", 80), "Fix it");
  EXPECT_EQ(firstLine("", 80), "");
  EXPECT_EQ(firstLine("\nsecond", 80), "");
  EXPECT_EQ(firstLine("a long first line\nx", 10), "a long ...");
}

}  // namespace
}  // namespace hydra::core
