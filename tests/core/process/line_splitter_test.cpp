#include "core/process/line_splitter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hydra::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using Lines = std::vector<std::string>;

// Feeds `input` one byte at a time: the harshest way a pipe can split it.
Lines feedBytewise(LineSplitter& splitter, std::string_view input) {
  Lines all;
  for (char c : input) {
    for (auto& line : splitter.feed(std::string_view(&c, 1))) all.push_back(std::move(line));
  }
  for (auto& line : splitter.finish()) all.push_back(std::move(line));
  return all;
}

TEST(LineSplitterTest, SplitsOnNewlines) {
  LineSplitter s;
  EXPECT_THAT(s.feed("one\ntwo\nthree\n"), ElementsAre("one", "two", "three"));
  EXPECT_THAT(s.finish(), IsEmpty());
}

TEST(LineSplitterTest, KeepsAPartialLineUntilItCompletes) {
  LineSplitter s;
  EXPECT_THAT(s.feed("hel"), IsEmpty());
  EXPECT_THAT(s.feed("lo\nwor"), ElementsAre("hello"));
  EXPECT_THAT(s.feed("ld\n"), ElementsAre("world"));
}

TEST(LineSplitterTest, FinishDeliversTheUnterminatedLastLine) {
  LineSplitter s;
  EXPECT_THAT(s.feed("done\ntail"), ElementsAre("done"));
  EXPECT_THAT(s.finish(), ElementsAre("tail"));
  EXPECT_THAT(s.finish(), IsEmpty());  // finish resets
}

TEST(LineSplitterTest, EmptyLinesAreLines) {
  LineSplitter s;
  EXPECT_THAT(s.feed("\n\na\n\n"), ElementsAre("", "", "a", ""));
}

TEST(LineSplitterTest, StripsCrlfEvenWhenSplitBetweenFeeds) {
  LineSplitter s;
  EXPECT_THAT(s.feed("dos\r\nmore\r"), ElementsAre("dos"));
  EXPECT_THAT(s.feed("\nend"), ElementsAre("more"));
  EXPECT_THAT(s.finish(), ElementsAre("end"));
}

TEST(LineSplitterTest, KeepsCarriageReturnsThatEndNoLine) {
  LineSplitter s;
  EXPECT_THAT(s.feed("progress 10%\rprogress 20%\n"), ElementsAre("progress 10%\rprogress 20%"));
  EXPECT_THAT(s.feed("trailing\r"), IsEmpty());
  EXPECT_THAT(s.finish(), ElementsAre("trailing\r"));
}

TEST(LineSplitterTest, BytewiseFeedingGivesTheSameLines) {
  LineSplitter s;
  EXPECT_THAT(feedBytewise(s, "a\r\nbb\n\nccc"), ElementsAre("a", "bb", "", "ccc"));
}

TEST(LineSplitterTest, LongLineIsSplitIntoPiecesOfTheMaximum) {
  LineSplitter s(4);
  EXPECT_THAT(s.feed("abcdefghij\nxy\n"), ElementsAre("abcd", "efgh", "ij", "xy"));
}

TEST(LineSplitterTest, LineOfExactlyTheMaximumIsOnePiece) {
  LineSplitter s(4);
  EXPECT_THAT(s.feed("abcd\n"), ElementsAre("abcd"));
  EXPECT_THAT(s.feed("efgh\r\n"), ElementsAre("efgh"));
  EXPECT_THAT(feedBytewise(s, "ijkl\r\n"), ElementsAre("ijkl"));
  EXPECT_THAT(s.feed("abcdefgh\n"), ElementsAre("abcd", "efgh"));  // no empty third piece
}

TEST(LineSplitterTest, CarriageReturnJustPastTheMaximumIsContentWhenNoNewlineFollows) {
  LineSplitter s(4);
  EXPECT_THAT(s.feed("abcd\r"), IsEmpty());
  EXPECT_THAT(s.feed("e\n"), ElementsAre("abcd", "\re"));
  EXPECT_THAT(s.feed("abcd\r"), IsEmpty());
  EXPECT_THAT(s.finish(), ElementsAre("abcd", "\r"));
}

TEST(LineSplitterTest, PiecesAreCutAtTheMaximumWhileTheLineGrows) {
  // Memory stays bounded: pieces leave as soon as they are full, long before
  // the line ends.
  LineSplitter s(8);
  EXPECT_THAT(s.feed("0123456789"), ElementsAre("01234567"));
  EXPECT_THAT(s.feed("abcdefgh"), ElementsAre("89abcdef"));
  EXPECT_THAT(s.finish(), ElementsAre("gh"));
}

TEST(LineSplitterTest, PieceBoundaryDoesNotCutAUtf8Sequence) {
  LineSplitter s(4);
  // "ab" + U+20AC (3 bytes): the cut backs up before the euro sign.
  EXPECT_THAT(s.feed("ab\xE2\x82\xAC"
                     "cd\n"),
              ElementsAre("ab",
                          "\xE2\x82\xAC"
                          "c",
                          "d"));
}

TEST(LineSplitterTest, PieceBoundaryInBytesThatAreNotUtf8StaysAtTheMaximum) {
  LineSplitter s(4);
  EXPECT_THAT(s.feed("\x80\x80\x80\x80\x80\x80\n"), ElementsAre("\x80\x80\x80\x80", "\x80\x80"));
}

TEST(LineSplitterTest, DefaultMaximumIsOneMebibyte) {
  LineSplitter s;
  EXPECT_EQ(s.maxLine(), 1024u * 1024u);
  const std::string line(3 * 1024 * 1024 + 5, 'z');
  const Lines pieces = s.feed(line + "\n");
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[0].size(), 1024u * 1024u);
  EXPECT_EQ(pieces[1].size(), 1024u * 1024u);
  EXPECT_EQ(pieces[2].size(), 1024u * 1024u);
  EXPECT_EQ(pieces[3], "zzzzz");
}

TEST(LineSplitterTest, RejectsAMaximumTooSmallForAUtf8Sequence) {
  EXPECT_THROW(LineSplitter(3), std::invalid_argument);
}

}  // namespace
}  // namespace hydra::core
