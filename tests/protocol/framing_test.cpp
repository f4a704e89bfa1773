#include "protocol/framing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hydra::protocol {
namespace {

// Everything a decoder yields for `input` fed in one go, plus finish().
struct Decoded {
  std::vector<std::string> bodies;
  std::vector<FrameError> errors;
  std::vector<std::string> order;  // "frame" / "error" in arrival order
};

void drain(FrameDecoder& d, Decoded& out) {
  while (auto r = d.next()) {
    if (auto* f = std::get_if<Frame>(&*r)) {
      out.bodies.push_back(f->body);
      out.order.push_back("frame");
    } else {
      out.errors.push_back(std::get<FrameError>(*r));
      out.order.push_back("error");
    }
  }
}

Decoded decodeChunks(const std::vector<std::string>& chunks, FrameLimits limits = {}) {
  FrameDecoder d(limits);
  Decoded out;
  for (const auto& c : chunks) {
    d.feed(c);
    drain(d, out);
  }
  if (auto e = d.finish()) {
    out.errors.push_back(*e);
    out.order.push_back("error");
  }
  return out;
}

Decoded decode(const std::string& input, FrameLimits limits = {}) { return decodeChunks({input}, limits); }

const std::string kBody1 = R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})";
const std::string kBody2 = R"({"jsonrpc":"2.0","method":"initialized","params":{"x":"é"}})";

TEST(FramingTest, EncodeWritesContentLengthInBytes) {
  EXPECT_EQ(encodeFrame("{}"), "Content-Length: 2\r\n\r\n{}");
  EXPECT_EQ(encodeFrame("\"é\""), "Content-Length: 4\r\n\r\n\"é\"");
}

TEST(FramingTest, SingleMessage) {
  auto d = decode(encodeFrame(kBody1));
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_EQ(d.bodies[0], kBody1);
  EXPECT_TRUE(d.errors.empty());
}

TEST(FramingTest, MessagesSplitAtEveryByteBoundary) {
  const std::string stream = encodeFrame(kBody1) + encodeFrame(kBody2);
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    auto d = decodeChunks({stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(d.bodies.size(), 2u) << "cut at " << cut;
    EXPECT_EQ(d.bodies[0], kBody1);
    EXPECT_EQ(d.bodies[1], kBody2);
    EXPECT_TRUE(d.errors.empty()) << "cut at " << cut;
  }
}

TEST(FramingTest, OneByteAtATime) {
  const std::string stream = encodeFrame(kBody1) + encodeFrame(kBody2);
  std::vector<std::string> chunks;
  for (char c : stream) chunks.emplace_back(1, c);
  auto d = decodeChunks(chunks);
  ASSERT_EQ(d.bodies.size(), 2u);
  EXPECT_EQ(d.bodies[1], kBody2);
}

TEST(FramingTest, SeveralMessagesInOneRead) {
  std::string stream;
  for (int i = 0; i < 50; ++i) stream += encodeFrame(R"({"n":)" + std::to_string(i) + "}");
  auto d = decode(stream);
  ASSERT_EQ(d.bodies.size(), 50u);
  EXPECT_EQ(d.bodies[49], R"({"n":49})");
}

TEST(FramingTest, HeaderNamesAreCaseInsensitive) {
  auto d = decode("content-length: 2\r\n\r\n{}CONTENT-LENGTH: 2\r\n\r\n[]");
  ASSERT_EQ(d.bodies.size(), 2u);
  EXPECT_EQ(d.bodies[1], "[]");
}

TEST(FramingTest, ContentTypeAndUnknownHeadersAreIgnored) {
  auto d = decode(
      "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\nX-Other: 1\r\n\r\n{}");
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_TRUE(d.errors.empty());
}

TEST(FramingTest, BareLineFeedsAreAccepted) {
  auto d = decode("Content-Length: 2\n\n{}");
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_EQ(d.bodies[0], "{}");
}

TEST(FramingTest, CarriageReturnsInsideTheBodyAreKept) {
  auto d = decode("Content-Length: 6\r\n\r\n\"a\r\nb\"");
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_EQ(d.bodies[0], "\"a\r\nb\"");
}

TEST(FramingTest, BlankLinesBetweenMessagesAreSkipped) {
  auto d = decode("Content-Length: 2\r\n\r\n{}\r\n\r\nContent-Length: 2\r\n\r\n[]");
  ASSERT_EQ(d.bodies.size(), 2u);
  EXPECT_TRUE(d.errors.empty());
}

TEST(FramingTest, WhitespaceAroundTheLengthIsAllowed) {
  auto d = decode("Content-Length:    2 \t\r\n\r\n{}");
  ASSERT_EQ(d.bodies.size(), 1u);
}

TEST(FramingTest, ZeroLengthBody) {
  auto d = decode("Content-Length: 0\r\n\r\n");
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_EQ(d.bodies[0], "");
}

struct BadHeaderCase {
  const char* name;
  std::string header;
  const char* expectedMessage;
};

class BadHeaderTest : public ::testing::TestWithParam<BadHeaderCase> {};

TEST_P(BadHeaderTest, IsReportedOnceAndTheNextMessageStillArrives) {
  const auto& c = GetParam();
  auto d = decode(c.header + "{\"bad\":true}" + encodeFrame(kBody1));
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0].kind, FrameError::Kind::BadHeader);
  EXPECT_NE(d.errors[0].message.find(c.expectedMessage), std::string::npos) << d.errors[0].message;
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_EQ(d.bodies[0], kBody1);
  EXPECT_EQ(d.order, (std::vector<std::string>{"error", "frame"}));
}

INSTANTIATE_TEST_SUITE_P(
    Framing, BadHeaderTest,
    ::testing::Values(
        BadHeaderCase{"Missing", "Content-Type: application/json\r\n\r\n", "missing Content-Length"},
        BadHeaderCase{"NonNumeric", "Content-Length: abc\r\n\r\n", "not a non-negative integer"},
        BadHeaderCase{"Negative", "Content-Length: -5\r\n\r\n", "not a non-negative integer"},
        BadHeaderCase{"PlusSign", "Content-Length: +5\r\n\r\n", "not a non-negative integer"},
        BadHeaderCase{"TrailingJunk", "Content-Length: 12abc\r\n\r\n", "not a non-negative integer"},
        BadHeaderCase{"Fractional", "Content-Length: 1.5\r\n\r\n", "not a non-negative integer"},
        BadHeaderCase{"Empty", "Content-Length: \r\n\r\n", "not a non-negative integer"},
        BadHeaderCase{"Overflow", "Content-Length: 99999999999999999999999999\r\n\r\n", "out of range"},
        BadHeaderCase{"Duplicate", "Content-Length: 12\r\nContent-Length: 12\r\n\r\n", "duplicate"},
        BadHeaderCase{"NoColon", "this is not a header\r\n\r\n", "malformed header line"}),
    [](const auto& info) { return std::string(info.param.name); });

// The error's text goes back to the client inside a JSON string: bytes that are
// not printable ASCII (here 0xFF 0xFE, not UTF-8 at all) must not reach it raw.
TEST(FramingTest, HeaderBytesQuotedInAnErrorAreShownAsPrintableAscii) {
  auto d = decode("X-\xFF\xFE\x01\\ junk\r\n\r\n" + encodeFrame(kBody1));
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0].message, "malformed header line 'X-\\xFF\\xFE\\x01\\x5C junk'");
  for (char c : d.errors[0].message) {
    EXPECT_TRUE(c >= 0x20 && c < 0x7f) << d.errors[0].message;
  }
  ASSERT_EQ(d.bodies.size(), 1u);

  auto length = decode("Content-Length: 1\xC3\xA9\r\n\r\n" + encodeFrame(kBody1));
  ASSERT_EQ(length.errors.size(), 1u);
  EXPECT_EQ(length.errors[0].message, "Content-Length '1\\xC3\\xA9' is not a non-negative integer");
}

TEST(FramingTest, OversizedLengthIsRejectedBeforeAllocatingAndItsBodySkipped) {
  FrameLimits limits;
  limits.maxContentLength = 16;
  std::string big(100, 'x');
  auto d = decode("Content-Length: 100\r\n\r\n" + big + encodeFrame("{}"), limits);
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0].kind, FrameError::Kind::TooLarge);
  EXPECT_NE(d.errors[0].message.find("exceeds the limit of 16 bytes"), std::string::npos);
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_EQ(d.bodies[0], "{}");
}

TEST(FramingTest, OversizedBodyArrivingInPiecesIsSkippedWithoutBuffering) {
  FrameLimits limits;
  limits.maxContentLength = 1024;
  FrameDecoder d(limits);
  Decoded out;
  d.feed("Content-Length: 10000000\r\n\r\n");
  drain(d, out);
  std::string chunk(64 * 1024, 'y');
  for (int i = 0; i < 152; ++i) {  // 152 * 64 KiB = 9,961,472 bytes
    d.feed(chunk);
    drain(d, out);
  }
  d.feed(std::string(10000000 - 152 * chunk.size(), 'z') + encodeFrame("[1]"));
  drain(d, out);
  ASSERT_EQ(out.errors.size(), 1u);
  ASSERT_EQ(out.bodies.size(), 1u);
  EXPECT_EQ(out.bodies[0], "[1]");
}

TEST(FramingTest, HugeLengthOverTheCapIsTooLarge) {
  auto d = decode("Content-Length: 18446744073709551615\r\n\r\n");
  ASSERT_FALSE(d.errors.empty());
  EXPECT_EQ(d.errors[0].kind, FrameError::Kind::TooLarge);
}

TEST(FramingTest, EndlessHeaderIsCutOff) {
  FrameLimits limits;
  limits.maxHeaderBytes = 128;
  auto d = decode(std::string(1000, 'h') + encodeFrame("{}"), limits);
  ASSERT_GE(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0].kind, FrameError::Kind::BadHeader);
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_EQ(d.bodies[0], "{}");
}

TEST(FramingTest, TruncatedBodyAtEndOfInputIsReported) {
  auto d = decode("Content-Length: 10\r\n\r\n{\"a\"");
  EXPECT_TRUE(d.bodies.empty());
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0].kind, FrameError::Kind::Truncated);
  EXPECT_NE(d.errors[0].message.find("4 of 10"), std::string::npos);
}

TEST(FramingTest, TruncatedHeaderAtEndOfInputIsReported) {
  auto d = decode("Content-Len");
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0].kind, FrameError::Kind::Truncated);
}

TEST(FramingTest, CleanEndOfInputReportsNothing) {
  auto d = decode(encodeFrame("{}") + "\r\n");
  EXPECT_TRUE(d.errors.empty());
}

TEST(FramingTest, ResynchronisesOnAHeaderSplitAcrossReads) {
  // The bad frame's body runs straight into the next header, which arrives in two reads.
  auto d = decodeChunks({"Content-Length: x\r\n\r\n{}Content-Le", "ngth: 2\r\n\r\n[]"});
  ASSERT_EQ(d.errors.size(), 1u);
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_EQ(d.bodies[0], "[]");
}

TEST(FramingTest, LargeMessageUnderTheCap) {
  std::string body = "\"" + std::string(3 * 1024 * 1024, 'a') + "\"";
  auto d = decode(encodeFrame(body));
  ASSERT_EQ(d.bodies.size(), 1u);
  EXPECT_EQ(d.bodies[0].size(), body.size());
}

}  // namespace
}  // namespace hydra::protocol
