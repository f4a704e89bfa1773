#include "protocol/line_framing.h"

namespace hydra::protocol {

LineDecoder::LineDecoder(std::size_t maxLineBytes) : maxLineBytes_(maxLineBytes) {}

void LineDecoder::feed(std::string_view bytes) {
  if (pos_ > 0 && pos_ >= buffer_.size() / 2) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<LineDecoder::Result> LineDecoder::next() {
  for (;;) {
    const std::size_t end = buffer_.find('\n', pos_);
    if (skipping_) {
      if (end == std::string::npos) {
        // Still inside the long line: what arrived of it goes.
        buffer_.clear();
        pos_ = 0;
        if (!reportedLong_) {
          reportedLong_ = true;
          return FrameError{FrameError::Kind::TooLarge,
                            "a line over " + std::to_string(maxLineBytes_) + " bytes was dropped"};
        }
        return std::nullopt;
      }
      pos_ = end + 1;  // its end: the next line starts here
      skipping_ = false;
      continue;
    }
    if (end == std::string::npos) {
      if (buffer_.size() - pos_ > maxLineBytes_) {
        skipping_ = true;  // reported at once, below, then dropped as it comes
        reportedLong_ = false;
        continue;
      }
      return std::nullopt;
    }
    std::string_view line(buffer_.data() + pos_, end - pos_);
    pos_ = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > maxLineBytes_) {
      return FrameError{FrameError::Kind::TooLarge,
                        "a line over " + std::to_string(maxLineBytes_) + " bytes was dropped"};
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank
    return Frame{std::string(line)};
  }
}

std::optional<FrameError> LineDecoder::finish() {
  const bool cut = !skipping_ && buffer_.find_first_not_of(" \t\r", pos_) != std::string::npos;
  buffer_.clear();
  pos_ = 0;
  skipping_ = false;
  if (!cut) return std::nullopt;
  return FrameError{FrameError::Kind::Truncated, "the input ended inside a line"};
}

std::string encodeLine(std::string_view body) {
  std::string out;
  out.reserve(body.size() + 1);
  out.append(body);
  out.push_back('\n');
  return out;
}

}  // namespace hydra::protocol
