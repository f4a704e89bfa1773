#include "core/util/text.h"

#include "core/util/utf8.h"

namespace hydra::core {

std::string clipped(std::string_view text, std::size_t max) {
  std::string valid = makeValidUtf8(text);
  if (valid.size() <= max) return valid;
  constexpr std::string_view kMore = "...";
  std::size_t cut = max > kMore.size() ? max - kMore.size() : 0;
  // Back to the start of a character: never inside a multi-byte sequence.
  while (cut > 0 && (static_cast<unsigned char>(valid[cut]) & 0xC0) == 0x80) --cut;
  valid.resize(cut);
  return valid + std::string(kMore.substr(0, std::min(kMore.size(), max)));
}

std::string firstLine(std::string_view text, std::size_t max) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return clipped(line, max);
}

}  // namespace hydra::core
