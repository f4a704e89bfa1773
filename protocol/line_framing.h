#pragma once

// Newline-delimited JSON-RPC: each message is one line of JSON ending in
// "\n", the framing of the Agent Client Protocol (ACP) spoken over an agent's
// stdin and stdout, next to the LSP framing of framing.h that editors speak.
//
// LineDecoder is incremental and never trusts its input: reads may split or
// join lines anywhere, a "\r\n" ending is accepted, blank lines are skipped,
// and a line longer than the cap is one FrameError (its bytes are dropped as
// they arrive, never buffered) after which decoding carries on with the next
// line. What a line holds is for parseMessage() (message.h) to judge.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "protocol/framing.h"

namespace hydra::protocol {

class LineDecoder {
 public:
  using Result = std::variant<Frame, FrameError>;

  explicit LineDecoder(std::size_t maxLineBytes = kDefaultMaxMessageBytes);

  void feed(std::string_view bytes);
  // The next line or error, or nullopt when more input is needed.
  std::optional<Result> next();
  // The input has ended: a last line without its "\n" is a Truncated error
  // (a message cut short), reported once.
  std::optional<FrameError> finish();

 private:
  std::size_t maxLineBytes_;
  std::string buffer_;
  std::size_t pos_ = 0;       // bytes of buffer_ already consumed
  bool skipping_ = false;     // inside a line over the cap: dropped up to its "\n"
  bool reportedLong_ = false;  // that line's error was given
};

// `body` (JSON text from serializeJson(), which never holds a raw line break)
// as one line.
std::string encodeLine(std::string_view body);

}  // namespace hydra::protocol
