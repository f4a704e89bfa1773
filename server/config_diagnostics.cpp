#include "server/config_diagnostics.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/config/config.h"
#include "core/util/read_file.h"

namespace hydra::server {

namespace json = boost::json;

namespace {

// The code points of UTF-8 `text`; a byte that starts no valid sequence counts as one.
std::vector<char32_t> codePoints(std::string_view text) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 1;
    if (i + length > text.size()) {
      out.push_back(lead);
      ++i;
      continue;
    }
    char32_t c = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    out.push_back(c);
    i += length;
  }
  return out;
}

std::size_t itemLength(const std::vector<char32_t>& line, std::size_t column) {
  if (column >= line.size()) return 0;
  const char32_t first = line[column];
  std::size_t end = column + 1;
  if (first == '"' || first == '\'') {
    // To the closing quote; a basic string's backslash escapes the next character.
    while (end < line.size() && line[end] != first) end += (first == '"' && line[end] == '\\') ? 2 : 1;
    end = std::min(end + 1, line.size());
  } else if (first == '[') {
    while (end < line.size() && line[end] != ']') ++end;
    while (end < line.size() && line[end] == ']') ++end;
  } else {
    const std::u32string_view stops = U" \t=,]}#";
    while (end < line.size() && stops.find(line[end]) == std::u32string_view::npos) ++end;
  }
  return end - column;
}

std::size_t utf16Units(const std::vector<char32_t>& line, std::size_t from, std::size_t count) {
  std::size_t units = 0;
  for (std::size_t i = from; i < from + count && i < line.size(); ++i) units += line[i] > 0xFFFF ? 2 : 1;
  return units;
}

// Line `oneBasedLine` of `file`, or nothing when it cannot be read (read as
// hydra.toml is: a regular file of at most kMaxConfigBytes).
std::string lineOf(const std::filesystem::path& file, int oneBasedLine) {
  std::string text;
  try {
    text = core::readRegularFile(file, core::kMaxConfigBytes);
  } catch (const std::runtime_error&) {
    return {};  // hydra.toml's own error says why
  }
  std::size_t start = 0;
  for (int n = 1; n < oneBasedLine; ++n) {
    start = text.find('\n', start);
    if (start == std::string::npos) return {};
    ++start;
  }
  std::string line = text.substr(start, text.find('\n', start) - start);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

}  // namespace

std::size_t tomlItemLength(std::string_view line, std::size_t column) { return itemLength(codePoints(line), column); }

json::object configDiagnostic(const std::filesystem::path& file, int line, int column, int severity,
                              std::string message) {
  // LSP positions are 0-based, in UTF-16 code units.
  const int zeroLine = std::max(0, line - 1);
  const std::vector<char32_t> text = line > 0 && column > 0 ? codePoints(lineOf(file, line)) : std::vector<char32_t>{};
  const auto zeroColumn = static_cast<std::size_t>(std::max(0, column - 1));
  const std::size_t start = utf16Units(text, 0, zeroColumn) + (zeroColumn > text.size() ? zeroColumn - text.size() : 0);
  std::size_t length = column > 0 ? utf16Units(text, zeroColumn, itemLength(text, zeroColumn)) : 0;
  if (column > 0 && length == 0) length = 1;  // the line could not be read: its one character, as before
  const json::object from{{"line", zeroLine}, {"character", start}};
  const json::object to{{"line", zeroLine}, {"character", start + length}};
  return json::object{{"range", json::object{{"start", from}, {"end", to}}},
                      {"severity", severity},
                      {"source", "hydra"},
                      {"message", std::move(message)}};
}

}  // namespace hydra::server
