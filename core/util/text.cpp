#include "core/util/text.h"

#include <algorithm>

#include "core/util/utf8.h"

namespace hydra::core {

std::string clipped(std::string_view text, std::size_t max) {
  std::string valid = makeValidUtf8(text);
  if (valid.size() <= max) return valid;
  constexpr std::string_view kMore = "...";
  valid.resize(utf8Prefix(valid, max > kMore.size() ? max - kMore.size() : 0).size());
  return valid + std::string(kMore.substr(0, std::min(kMore.size(), max)));
}

std::string firstLine(std::string_view text, std::size_t max) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return clipped(line, max);
}

std::string oneLine(std::string_view text, std::size_t max) {
  std::string flat;
  flat.reserve(std::min(text.size(), max == std::string::npos ? text.size() : max + 4));
  bool pendingSpace = false;
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b == 0x7F) {
      pendingSpace = !flat.empty();
      continue;
    }
    if (pendingSpace) flat.push_back(' ');
    pendingSpace = false;
    flat.push_back(c);
    // Enough to know it is cut (a character is at most 4 bytes): huge outputs are not scanned to their end.
    if (max != std::string::npos && flat.size() > max + 4) break;
  }
  return clipped(flat, max);
}

std::string_view utf8Prefix(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t cut = max;
  // Back to the start of a character: never inside a multi-byte sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

}  // namespace hydra::core
