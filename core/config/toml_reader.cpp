#include "core/config/toml_reader.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <sstream>

namespace hydra::core::toml_reader {

namespace {

// ---------------------------------------------------------------------------
// "Did you mean": the closest candidate, when it is close enough to be a typo.

// Case, '_' and '-' are ignored, so `timeoutSeconds` and `Timeout-Seconds`
// both lead to `timeout_seconds`.
std::string normalizedForSuggestion(std::string_view word) {
  std::string out;
  for (char c : word) {
    if (c == '_' || c == '-') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Edit distance where swapping two neighbours counts as one edit (optimal
// string alignment): `bulid` is one typo away from `build`, not two.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> suggest(std::string_view word, std::span<const std::string_view> candidates) {
  std::string typed = normalizedForSuggestion(word);
  if (typed.empty()) return std::nullopt;
  std::optional<std::string> best;
  size_t bestDistance = SIZE_MAX;
  for (std::string_view candidate : candidates) {
    std::string wanted = normalizedForSuggestion(candidate);
    size_t distance = editDistance(typed, wanted);
    // About one typo per four letters; beyond that the guess would be noise
    // (`pylint` is not a misspelt `eslint`).
    size_t allowed = std::max<size_t>(1, wanted.size() / 4);
    if (distance <= allowed && distance < bestDistance) {
      best = std::string(candidate);
      bestDistance = distance;
    }
  }
  if (best) return best;
  // `build` in [scoring] most likely meant `build_command`.
  for (std::string_view candidate : candidates) {
    if (candidate.size() > word.size() && candidate.substr(0, word.size()) == word &&
        candidate[word.size()] == '_')
      return std::string(candidate);
  }
  return std::nullopt;
}

std::string joinWords(std::span<const std::string_view> words) {
  std::string out;
  for (std::string_view word : words) {
    if (!out.empty()) out += ", ";
    out += word;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Describing what was found.

std::string typeName(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string formatNumber(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::vector<Entry> entriesInFileOrder(const toml::table& table) {
  std::vector<Entry> entries;
  for (auto&& [key, value] : table) entries.push_back({&key, &value});
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    const auto& pa = a.key->source().begin;
    const auto& pb = b.key->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  return entries;
}


}  // namespace hydra::core::toml_reader
