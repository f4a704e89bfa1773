// terminalSafe: every control sequence an agent could send a terminal shows
// as visible text, valid UTF-8 stays as it is.

#include "core/util/terminal_text.h"

#include <gtest/gtest.h>

#include <string>

namespace hydra::core {
namespace {

// Whether `text` holds anything a terminal would act on: ESC, another C0
// control but \n and \t, DEL, or a C1 control (U+0080..U+009F in UTF-8).
bool holdsControls(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) return true;
    if (byte == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) return true;
  }
  return false;
}

TEST(TerminalSafe, Csi) {
  EXPECT_EQ(terminalSafe("\x1b[31mred\x1b[0m \x1b[2J\x1b[H"), "^[[31mred^[[0m ^[[2J^[[H");
}

TEST(TerminalSafe, OscClipboardTitleAndLinks) {
  EXPECT_EQ(terminalSafe("\x1b]52;c;c2VjcmV0\x07"), "^[]52;c;c2VjcmV0^G");
  EXPECT_EQ(terminalSafe("\x1b]0;TITLE\x07"), "^[]0;TITLE^G");
  EXPECT_EQ(terminalSafe("\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"),
            "^[]8;;https://evil.example/^[\\click^[]8;;^[\\");
}

TEST(TerminalSafe, DcsApcPmSos) {
  EXPECT_EQ(terminalSafe("\x1bPq#0;2;0;0;0\x1b\\"), "^[Pq#0;2;0;0;0^[\\");
  EXPECT_EQ(terminalSafe("\x1b_Gf=100;AAAA\x1b\\"), "^[_Gf=100;AAAA^[\\");
  EXPECT_EQ(terminalSafe("\x1b^privacy\x1b\\"), "^[^privacy^[\\");
  EXPECT_EQ(terminalSafe("\x1bXstring\x1b\\"), "^[Xstring^[\\");
}

TEST(TerminalSafe, C1ControlsAsUtf8) {
  // U+009B is CSI, U+009D OSC, U+0090 DCS, U+009C ST.
  EXPECT_EQ(terminalSafe("\xc2\x9b" "31m"), "\\u009b31m");
  EXPECT_EQ(terminalSafe("\xc2\x9d" "52;c;eA==\xc2\x9c"), "\\u009d52;c;eA==\\u009c");
  EXPECT_EQ(terminalSafe("\xc2\x80\xc2\x90"), "\\u0080\\u0090");
}

TEST(TerminalSafe, BytesThatAreNotUtf8) {
  EXPECT_EQ(terminalSafe("\x9b" "31m"), "\\x9b31m");
  EXPECT_EQ(terminalSafe("a\xff" "b"), "a\\xffb");
  // Overlong forms and surrogates are not UTF-8 either.
  EXPECT_EQ(terminalSafe("\xc0\x9b"), "\\xc0\\x9b");
  EXPECT_EQ(terminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(terminalSafe("cut \xe2\x9c"), "cut \\xe2\\x9c");
}

TEST(TerminalSafe, LoneEscAndOtherControls) {
  EXPECT_EQ(terminalSafe("end\x1b"), "end^[");
  EXPECT_EQ(terminalSafe("a\rb\bc\x07" "d"), "a^Mb^Hc^Gd");
  EXPECT_EQ(terminalSafe(std::string("nul\0here", 8)), "nul^@here");
  EXPECT_EQ(terminalSafe("del\x7f"), "del^?");
}

TEST(TerminalSafe, KeepsNewlinesTabsAndUtf8) {
  const std::string text = "line one\n\tindented — ✓ héllo 日本語 🐍 \xc2\xa0nbsp\n";
  EXPECT_EQ(terminalSafe(text), text);
  EXPECT_EQ(terminalSafe(""), "");
}

TEST(TerminalSafe, NoInputLeavesAControlInTheOutput) {
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string in{static_cast<char>(a), static_cast<char>(b), '[', '1', 'm'};
      const std::string out = terminalSafe(in);
      ASSERT_FALSE(holdsControls(out)) << a << " " << b << ": " << out;
    }
  }
}

TEST(TerminalSafe, PiecesJoinACharacterCutBetweenThem) {
  std::string pending;
  std::string out = terminalSafe("done \xe2\x9c", pending);
  EXPECT_EQ(out, "done ");
  EXPECT_EQ(pending, "\xe2\x9c");
  out += terminalSafe("\x93 \x1b[0m", pending);
  EXPECT_EQ(out, "done ✓ ^[[0m");
  EXPECT_TRUE(pending.empty());
  // Cut at the very end: shown as bytes once the text is over.
  EXPECT_EQ(terminalSafe("x\xf0\x9f", pending), "x");
  EXPECT_EQ(terminalSafe("", pending), "\\xf0\\x9f");
}

}  // namespace
}  // namespace hydra::core
