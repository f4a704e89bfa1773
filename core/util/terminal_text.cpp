#include "core/util/terminal_text.h"

#include <cstdint>
#include <cstdio>

namespace hydra::core {

namespace {

// The length of the UTF-8 sequence that starts with `lead`; 0 when no valid one does.
std::size_t sequenceLength(unsigned char lead) {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

// Whether `byte` may follow `lead` as the second byte of its sequence (this
// rules out overlong forms, surrogates and code points above U+10FFFF).
bool validSecond(unsigned char lead, unsigned char byte) {
  if (lead == 0xe0) return byte >= 0xa0 && byte <= 0xbf;
  if (lead == 0xed) return byte >= 0x80 && byte <= 0x9f;
  if (lead == 0xf0) return byte >= 0x90 && byte <= 0xbf;
  if (lead == 0xf4) return byte >= 0x80 && byte <= 0x8f;
  return byte >= 0x80 && byte <= 0xbf;
}

bool continuation(unsigned char byte) { return byte >= 0x80 && byte <= 0xbf; }

void appendHex(std::string& out, const char* prefix, unsigned value, int digits) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%s%0*x", prefix, digits, value);
  out += buffer;
}

// How many bytes from `at` make a valid UTF-8 character (0: none does);
// `cut` is set when the text ends inside what could still become one.
std::size_t validCharacter(std::string_view text, std::size_t at, bool& cut) {
  const auto lead = static_cast<unsigned char>(text[at]);
  const std::size_t length = sequenceLength(lead);
  cut = false;
  if (length == 0) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if (at + k >= text.size()) {
      cut = true;
      return 0;
    }
    const auto byte = static_cast<unsigned char>(text[at + k]);
    if (k == 1 ? !validSecond(lead, byte) : !continuation(byte)) return 0;
  }
  return length;
}

std::string escape(std::string_view text, std::string* pending) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n' || byte == '\t' || (byte >= 0x20 && byte < 0x7f)) {
      out += static_cast<char>(byte);
      ++i;
      continue;
    }
    if (byte < 0x20) {
      out += '^';
      out += static_cast<char>(byte + 0x40);
      ++i;
      continue;
    }
    if (byte == 0x7f) {
      out += "^?";
      ++i;
      continue;
    }
    bool cut = false;
    const std::size_t length = validCharacter(text, i, cut);
    if (cut && pending) {
      *pending = std::string(text.substr(i));
      break;
    }
    if (length == 0) {
      appendHex(out, "\\x", byte, 2);
      ++i;
      continue;
    }
    // U+0080..U+009F: the C1 controls, two bytes C2 80..C2 9F.
    const auto second = static_cast<unsigned char>(text[i + 1]);
    if (byte == 0xc2 && second <= 0x9f) {
      appendHex(out, "\\u", second, 4);
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace

std::string terminalSafe(std::string_view text) { return escape(text, nullptr); }

std::string terminalSafe(std::string_view text, std::string& pending) {
  if (pending.empty()) return escape(text, &pending);
  std::string joined = std::move(pending);
  pending.clear();
  if (text.empty()) return escape(joined, nullptr);  // the end: what waited shows as it is
  joined.append(text);
  return escape(joined, &pending);
}

}  // namespace hydra::core
