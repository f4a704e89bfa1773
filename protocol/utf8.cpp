#include "protocol/utf8.h"

#include <cstddef>
#include <cstdint>

namespace hydra::protocol {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The shape of a well-formed sequence that starts with `lead` (Unicode table 3-7):
// its total length and the range allowed for its second byte. The later bytes
// are always 80..BF. Length 0 means `lead` can never start a sequence.
struct SequenceShape {
  std::size_t length;
  std::uint8_t secondMin;
  std::uint8_t secondMax;
};

SequenceShape shapeOf(std::uint8_t lead) {
  if (lead < 0x80) return {1, 0, 0};
  if (lead < 0xC2) return {0, 0, 0};  // continuation bytes and the overlong C0, C1
  if (lead < 0xE0) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};  // below A0 would be overlong
  if (lead == 0xED) return {3, 0x80, 0x9F};  // above 9F would be a surrogate
  if (lead < 0xF0) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};  // below 90 would be overlong
  if (lead < 0xF4) return {4, 0x80, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};  // above 8F would pass U+10FFFF
  return {0, 0, 0};
}

// How many bytes at the start of `bytes` form a well-formed sequence (> 0), or,
// when they do not, minus the length of the maximal ill-formed subpart (< 0).
std::ptrdiff_t scanSequence(std::string_view bytes) {
  auto byteAt = [&](std::size_t i) { return static_cast<std::uint8_t>(bytes[i]); };
  const SequenceShape shape = shapeOf(byteAt(0));
  if (shape.length == 0) return -1;
  if (shape.length == 1) return 1;

  std::size_t taken = 1;
  for (; taken < shape.length && taken < bytes.size(); ++taken) {
    const std::uint8_t b = byteAt(taken);
    const std::uint8_t lo = taken == 1 ? shape.secondMin : 0x80;
    const std::uint8_t hi = taken == 1 ? shape.secondMax : 0xBF;
    if (b < lo || b > hi) break;
  }
  if (taken == shape.length) return static_cast<std::ptrdiff_t>(taken);
  return -static_cast<std::ptrdiff_t>(taken);
}

}  // namespace

bool isValidUtf8(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (static_cast<std::uint8_t>(bytes[i]) < 0x80) {  // the common case: ASCII
      ++i;
      continue;
    }
    const std::ptrdiff_t n = scanSequence(bytes.substr(i));
    if (n < 0) return false;
    i += static_cast<std::size_t>(n);
  }
  return true;
}

std::string makeValidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t i = 0;
  while (i < bytes.size()) {
    const std::ptrdiff_t n = scanSequence(bytes.substr(i));
    if (n > 0) {
      out.append(bytes.substr(i, static_cast<std::size_t>(n)));
      i += static_cast<std::size_t>(n);
    } else {
      out.append(kReplacement);
      i += static_cast<std::size_t>(-n);
    }
  }
  return out;
}

}  // namespace hydra::protocol
