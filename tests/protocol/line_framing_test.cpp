// Newline-delimited JSON-RPC framing (ACP): lines split or joined anywhere,
// CRLF, blank lines, lines over the cap, and input cut short.

#include "protocol/line_framing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "protocol/message.h"

namespace hydra::protocol {
namespace {

using ::testing::ElementsAre;

// Every line (as "L:<body>") and error (as "E:<kind>") for `input` fed in
// pieces of `piece` bytes, then finish().
std::vector<std::string> decode(std::string_view input, std::size_t piece, std::size_t cap = 64) {
  LineDecoder d(cap);
  std::vector<std::string> out;
  auto drain = [&] {
    while (auto r = d.next()) {
      if (const auto* f = std::get_if<Frame>(&*r)) {
        out.push_back("L:" + f->body);
      } else {
        out.push_back("E:" + std::to_string(static_cast<int>(std::get<FrameError>(*r).kind)));
      }
    }
  };
  for (std::size_t i = 0; i < input.size(); i += piece) {
    d.feed(input.substr(i, piece));
    drain();
  }
  if (auto e = d.finish()) out.push_back("E:" + std::to_string(static_cast<int>(e->kind)));
  return out;
}

const std::string kTooLarge = "E:" + std::to_string(static_cast<int>(FrameError::Kind::TooLarge));
const std::string kTruncated = "E:" + std::to_string(static_cast<int>(FrameError::Kind::Truncated));

TEST(LineDecoderTest, GivesTheSameLinesHoweverTheInputIsSplit) {
  const std::string input = "{\"a\":1}\n{\"b\":2}\r\n\n  \n{\"c\":3}\n";
  for (std::size_t piece : {1u, 2u, 3u, 7u, 100u}) {
    SCOPED_TRACE(piece);
    EXPECT_THAT(decode(input, piece), ElementsAre("L:{\"a\":1}", "L:{\"b\":2}", "L:{\"c\":3}"));
  }
}

TEST(LineDecoderTest, ALineOverTheCapIsOneErrorAndTheNextLineStillComes) {
  const std::string longLine(200, 'x');
  for (std::size_t piece : {1u, 5u, 64u, 1000u}) {
    SCOPED_TRACE(piece);
    EXPECT_THAT(decode("{\"a\":1}\n" + longLine + "\n{\"b\":2}\n", piece, 64),
                ElementsAre("L:{\"a\":1}", kTooLarge, "L:{\"b\":2}"));
  }
}

TEST(LineDecoderTest, ALongLineIsNeverBufferedWhole) {
  LineDecoder d(64);
  d.feed(std::string(100, 'x'));
  ASSERT_TRUE(d.next());  // the error, at once
  for (int i = 0; i < 1000; ++i) {
    d.feed(std::string(1000, 'x'));
    EXPECT_FALSE(d.next());
  }
  d.feed("\n{\"ok\":true}\n");
  auto r = d.next();
  ASSERT_TRUE(r && std::holds_alternative<Frame>(*r));
  EXPECT_EQ(std::get<Frame>(*r).body, "{\"ok\":true}");
}

TEST(LineDecoderTest, InputThatEndsInsideALineIsTruncated) {
  EXPECT_THAT(decode("{\"a\":1}\n{\"b\":", 3), ElementsAre("L:{\"a\":1}", kTruncated));
  EXPECT_THAT(decode("{\"a\":1}\n  \r", 3), ElementsAre("L:{\"a\":1}"));
}

TEST(LineDecoderTest, EncodedMessagesDecodeBackAsTheSameMessages) {
  const Message sent = Request{std::int64_t{0}, "fs/read_text_file",
                               boost::json::object{{"path", "/w/a\nb.py"}, {"sessionId", "s"}}};
  const std::string line = encodeLine(serialize(sent));
  ASSERT_EQ(line.find('\n'), line.size() - 1) << "one line, whatever the strings hold";
  const auto lines = decode(line, 4, 1024);
  ASSERT_EQ(lines.size(), 1u);
  const ParseResult back = parseMessage(lines[0].substr(2));
  ASSERT_TRUE(std::holds_alternative<Message>(back));
  const auto& request = std::get<Request>(std::get<Message>(back));
  EXPECT_EQ(request.method, "fs/read_text_file");
  EXPECT_EQ(request.params.at("path"), boost::json::value("/w/a\nb.py"));
}

}  // namespace
}  // namespace hydra::protocol
