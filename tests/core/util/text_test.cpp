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

TEST(OneLineTest, CollapsesWhitespaceAndControlRunsAndTrimsTheEnds) {
  EXPECT_EQ(oneLine("  hello fake model\n?? hello.txt\n"), "hello fake model ?? hello.txt");
  EXPECT_EQ(oneLine("a\t\t b\r\n\r\nc"), "a b c");
  EXPECT_EQ(oneLine(" \n "), "");
  // A manifest's words in a TOML comment: no control character stays, none ends the line.
  EXPECT_EQ(oneLine("name\x1b[31m\x7f\x01x"), "name [31m x");
}

TEST(OneLineTest, CutsLongTextToTheLimitWithAnEllipsis) {
  std::string cut = oneLine(std::string(500, 'x'), 120);
  EXPECT_EQ(cut.size(), 120u);
  EXPECT_EQ(cut.substr(117), "...");
  EXPECT_EQ(oneLine(std::string(120, 'y'), 120), std::string(120, 'y'));
  EXPECT_EQ(oneLine(std::string(100000, 'z') + "\nend", 10), "zzzzzzz...") << "a huge text is not read to its end";
  EXPECT_EQ(oneLine("a\n" + std::string(200, 'b')), "a " + std::string(200, 'b')) << "no limit: flattened only";
}

TEST(OneLineTest, NeverCutsInsideAUtf8CharacterAndIsAlwaysValid) {
  // "é" is two bytes; with a limit of 10 the cut falls inside one of them.
  std::string cut = oneLine("éééééééééé", 10);
  EXPECT_EQ(cut, "ééé...");
  EXPECT_LE(cut.size(), 10u);
  EXPECT_EQ(oneLine("a\xFF  b", 20), "a\xEF\xBF\xBD b");
}

TEST(Utf8PrefixTest, CutsAtACharacterBoundaryWithNoMark) {
  EXPECT_EQ(utf8Prefix("abcdef", 4), "abcd");
  EXPECT_EQ(utf8Prefix("abc", 10), "abc");
  EXPECT_EQ(utf8Prefix("ab\xF0\x9F\x98\x80" "cd", 5), "ab") << "not inside the emoji";
  EXPECT_EQ(utf8Prefix("ab\xF0\x9F\x98\x80" "cd", 6), "ab\xF0\x9F\x98\x80");
  EXPECT_EQ(utf8Prefix("\xC3\xA9", 1), "");
}

}  // namespace
}  // namespace hydra::core
