#include "server/race_queries.h"

#include <gtest/gtest.h>

namespace hydra::server::queries {
namespace {

TEST(LogTextTest, ACharacterCutByTheEndOfTheRangeIsLeftForTheNextRead) {
  // "é" is C3 A9; "€" is E2 82 AC.
  auto [text, used] = logText("ab\xC3", false);
  EXPECT_EQ(text, "ab");
  EXPECT_EQ(used, 2u);
  std::tie(text, used) = logText("x\xE2\x82", false);
  EXPECT_EQ(text, "x");
  EXPECT_EQ(used, 1u);
  std::tie(text, used) = logText("x\xE2\x82\xAC", false);
  EXPECT_EQ(text, "x\xE2\x82\xAC");
  EXPECT_EQ(used, 4u);
}

TEST(LogTextTest, AtTheEndOfTheLogBadBytesBecomeReplacementCharacters) {
  auto [text, used] = logText("ab\xC3", true);
  EXPECT_EQ(text, "ab\xEF\xBF\xBD");
  EXPECT_EQ(used, 3u);
  std::tie(text, used) = logText("\xFFok", false);
  EXPECT_EQ(text, "\xEF\xBF\xBDok");
  EXPECT_EQ(used, 3u);
}

TEST(LogTextTest, ARangeTooShortForOneCharacterStillAdvances) {
  auto [text, used] = logText("\xE2", false);
  EXPECT_EQ(used, 1u);
  EXPECT_EQ(text, "\xEF\xBF\xBD");
}

TEST(Base64Test, EncodesAsRfc4648Says) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foob"), "Zm9vYg==");
  EXPECT_EQ(base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64(std::string("\0\xFF\x10", 3)), "AP8Q");
}

}  // namespace
}  // namespace hydra::server::queries
