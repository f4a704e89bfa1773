#pragma once

// Turns a byte stream that arrives in arbitrary chunks into lines, holding at
// most one (bounded) partial line however much the producer prints.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hydra::core {

class LineSplitter {
 public:
  static constexpr std::size_t kDefaultMaxLine = std::size_t{1} << 20;  // 1 MiB

  // Lines longer than `maxLine` bytes are delivered as consecutive pieces of at
  // most `maxLine` bytes. A piece never ends inside a UTF-8 sequence when
  // backing up three bytes or fewer avoids it. `maxLine` must be at least 4.
  explicit LineSplitter(std::size_t maxLine = kDefaultMaxLine);

  // Appends `bytes` and returns the lines (or pieces) they complete, without
  // their "\n" or "\r\n" terminators.
  std::vector<std::string> feed(std::string_view bytes);

  // The stream ended: returns what is left of an unterminated last line (empty
  // when the stream ended with a terminator) and resets the splitter.
  std::vector<std::string> finish();

  std::size_t maxLine() const { return maxLine_; }

 private:
  void appendContent(std::string_view content, std::vector<std::string>& out);
  void emitPiece(std::vector<std::string>& out);
  void emitLine(std::vector<std::string>& out);

  std::size_t maxLine_;
  // The current line so far. It never holds more than maxLine_ + 1 bytes: one
  // byte past a full piece is kept back when it is a '\r' that the next chunk
  // may reveal to be half of a "\r\n".
  std::string pending_;
};

}  // namespace hydra::core
