#include "protocol/framing.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace hydra::protocol {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Position of the first case-insensitive occurrence of `needle` in `hay`.
std::size_t ifind(std::string_view hay, std::string_view needle, std::size_t from) {
  if (needle.size() > hay.size()) return std::string_view::npos;
  for (std::size_t i = from; i + needle.size() <= hay.size(); ++i) {
    if (iequals(hay.substr(i, needle.size()), needle)) return i;
  }
  return std::string_view::npos;
}

// Header bytes quoted in an error message, which goes back to the client as a
// JSON string: ASCII only. Headers are ASCII, so anything else (control bytes,
// and bytes >= 0x80, which need not be UTF-8) is shown as \xNN.
std::string printable(std::string_view s) {
  constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s.substr(0, 64)) {
    auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f && c != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
  }
  if (s.size() > 64) out += "...";
  return out;
}

constexpr std::string_view kContentLength = "Content-Length";

}  // namespace

FrameDecoder::FrameDecoder(FrameLimits limits) : limits_(limits) {}

void FrameDecoder::feed(std::string_view bytes) {
  if (state_ == State::Skip) {
    // Oversized bodies are dropped as they arrive, never buffered.
    std::size_t n = std::min(skipLeft_, bytes.size());
    skipLeft_ -= n;
    bytes.remove_prefix(n);
    if (skipLeft_ == 0) state_ = State::Header;
  }
  compact();
  buffer_.append(bytes);
}

void FrameDecoder::compact() {
  if (pos_ == 0) return;
  if (pos_ >= buffer_.size()) {
    buffer_.clear();
  } else if (pos_ > 4096 && pos_ * 2 > buffer_.size()) {
    buffer_.erase(0, pos_);
  } else {
    return;
  }
  pos_ = 0;
}

std::optional<FrameDecoder::Result> FrameDecoder::next() {
  for (;;) {
    switch (state_) {
      case State::Header:
        return readHeader();
      case State::Body:
        return readBody();
      case State::Skip:
        skipBody();
        if (state_ == State::Skip) return std::nullopt;
        continue;
      case State::Resync:
        if (!resync()) return std::nullopt;
        continue;
    }
  }
}

FrameError FrameDecoder::badHeader(std::string message) {
  state_ = State::Resync;
  return FrameError{FrameError::Kind::BadHeader, std::move(message)};
}

std::optional<FrameDecoder::Result> FrameDecoder::readHeader() {
  std::string_view buf(buffer_);
  // Blank lines between messages are tolerated.
  while (pos_ < buf.size() && (buf[pos_] == '\r' || buf[pos_] == '\n')) ++pos_;

  std::optional<std::size_t> length;
  const std::size_t blockStart = pos_;
  std::size_t lineStart = pos_;
  for (;;) {
    std::size_t nl = buf.find('\n', lineStart);
    std::size_t blockSize = (nl == std::string_view::npos ? buf.size() : nl) - blockStart;
    if (blockSize > limits_.maxHeaderBytes) {
      // Resynchronise from just past where this block began, so a real header
      // buried in the junk is still found.
      pos_ = blockStart + 1;
      return badHeader("header block exceeds " + std::to_string(limits_.maxHeaderBytes) + " bytes");
    }
    if (nl == std::string_view::npos) return std::nullopt;
    std::string_view line = buf.substr(lineStart, nl - lineStart);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lineStart = nl + 1;
    if (line.empty()) break;  // end of the header block

    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      pos_ = lineStart;
      return badHeader("malformed header line '" + printable(line) + "'");
    }
    std::string_view name = trim(line.substr(0, colon));
    std::string_view value = trim(line.substr(colon + 1));
    if (!iequals(name, kContentLength)) continue;  // Content-Type and others are ignored

    // Only errors consume input here: a block read in part is read again whole.
    if (length) {
      pos_ = lineStart;
      return badHeader("duplicate Content-Length header");
    }
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec == std::errc::invalid_argument || end != value.data() + value.size()) {
      pos_ = lineStart;
      return badHeader("Content-Length '" + printable(value) + "' is not a non-negative integer");
    }
    if (ec == std::errc::result_out_of_range) {
      pos_ = lineStart;
      return badHeader("Content-Length '" + printable(value) + "' is out of range");
    }
    length = n;
  }

  pos_ = lineStart;
  if (!length) return badHeader("missing Content-Length header");
  if (*length > limits_.maxContentLength) {
    skipLeft_ = *length;
    state_ = State::Skip;
    return FrameError{FrameError::Kind::TooLarge,
                      "message of " + std::to_string(*length) + " bytes exceeds the limit of " +
                          std::to_string(limits_.maxContentLength) + " bytes"};
  }
  bodyLength_ = *length;
  state_ = State::Body;
  return readBody();
}

std::optional<FrameDecoder::Result> FrameDecoder::readBody() {
  if (buffer_.size() - pos_ < bodyLength_) return std::nullopt;
  Frame frame{buffer_.substr(pos_, bodyLength_)};
  pos_ += bodyLength_;
  state_ = State::Header;
  compact();
  return frame;
}

void FrameDecoder::skipBody() {
  std::size_t n = std::min(skipLeft_, buffer_.size() - pos_);
  pos_ += n;
  skipLeft_ -= n;
  if (skipLeft_ == 0) state_ = State::Header;
  compact();
}

bool FrameDecoder::resync() {
  // After a bad header the body length is unknown: drop bytes up to the next
  // "Content-Length" and read a header from there.
  std::size_t at = ifind(buffer_, kContentLength, pos_);
  if (at == std::string::npos) {
    // Keep a tail that might be the start of a split "Content-Length".
    std::size_t keep = std::min(buffer_.size() - pos_, kContentLength.size() - 1);
    pos_ = buffer_.size() - keep;
    compact();
    return false;
  }
  pos_ = at;
  state_ = State::Header;
  compact();
  return true;
}

std::optional<FrameError> FrameDecoder::finish() {
  std::string_view rest = std::string_view(buffer_).substr(pos_);
  switch (state_) {
    case State::Body:
      return FrameError{FrameError::Kind::Truncated,
                        "input ended after " + std::to_string(rest.size()) + " of " +
                            std::to_string(bodyLength_) + " body bytes"};
    case State::Skip:
      return FrameError{FrameError::Kind::Truncated, "input ended inside an oversized message"};
    case State::Header:
      if (rest.find_first_not_of("\r\n \t") != std::string_view::npos) {
        return FrameError{FrameError::Kind::Truncated, "input ended inside a header block"};
      }
      return std::nullopt;
    case State::Resync:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string encodeFrame(std::string_view body) {
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

}  // namespace hydra::protocol
