#pragma once

// The LSP base protocol: each message is a header block ("Content-Length: N",
// optionally "Content-Type: ..."), an empty line, then N bytes of JSON.
//
// FrameDecoder is incremental and never trusts its input: reads may split or
// join messages anywhere, header names are case-insensitive, Content-Length is
// parsed strictly, and the size cap is checked before anything is allocated.
// A bad frame becomes one FrameError and the decoder carries on with the next.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace hydra::protocol {

inline constexpr std::size_t kDefaultMaxMessageBytes = 64 * 1024 * 1024;

struct FrameLimits {
  std::size_t maxContentLength = kDefaultMaxMessageBytes;
  std::size_t maxHeaderBytes = 8 * 1024;
};

struct Frame {
  std::string body;
};

struct FrameError {
  enum class Kind {
    BadHeader,  // malformed, missing or duplicate header; the stream is resynchronised
    TooLarge,   // Content-Length over the cap; its body is skipped unread
    Truncated,  // the input ended inside a message
  };
  Kind kind;
  std::string message;
};

class FrameDecoder {
 public:
  using Result = std::variant<Frame, FrameError>;

  explicit FrameDecoder(FrameLimits limits = {});

  void feed(std::string_view bytes);
  // The next frame or error, or nullopt when more input is needed.
  std::optional<Result> next();
  // The input has ended: reports a message cut short, if any.
  std::optional<FrameError> finish();

  const FrameLimits& limits() const { return limits_; }

 private:
  enum class State { Header, Body, Skip, Resync };

  std::optional<Result> readHeader();
  std::optional<Result> readBody();
  void skipBody();
  bool resync();
  void compact();
  FrameError badHeader(std::string message);

  FrameLimits limits_;
  State state_ = State::Header;
  std::string buffer_;
  std::size_t pos_ = 0;        // bytes of buffer_ already consumed
  std::size_t bodyLength_ = 0;  // in State::Body
  std::size_t skipLeft_ = 0;    // in State::Skip
};

// Wraps a JSON body in its header block.
std::string encodeFrame(std::string_view body);

}  // namespace hydra::protocol
