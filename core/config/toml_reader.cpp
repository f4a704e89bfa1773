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

std::optional<std::string> suggest(std::string_view word,
                                   std::span<const std::string_view> candidates) {
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

// --- Reader ------------------------------------------------------------------------

void Reader::readTable(const toml::table& table, std::string_view where,
                       const std::vector<Field>& fields) const {
  for (const Entry& entry : entriesInFileOrder(table)) {
    std::string_view key = entry.key->str();
    auto field =
        std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == key; });
    if (field == fields.end()) failUnknownKey(*entry.key, *entry.value, where, fields);
    field->read(*this, key, *entry.value);
  }
}

const toml::table& Reader::table(std::string_view key, const toml::node& node) const {
  if (const auto* table = node.as_table()) return *table;
  fail(node.source(), "'" + std::string(key) + "' must be a table, found " + typeName(node.type()));
}

int Reader::integer(std::string_view key, const toml::node& node, int minimum) const {
  return static_cast<int>(integer64(key, node, minimum, INT_MAX));
}

std::int64_t Reader::integer64(std::string_view key, const toml::node& node, std::int64_t minimum,
                               std::int64_t maximum) const {
  const auto* value = node.as_integer();
  if (!value)
    fail(node.source(),
         "'" + std::string(key) + "' must be an integer, found " + typeName(node.type()));
  const std::int64_t number = value->get();
  if (number < minimum)
    fail(node.source(), "'" + std::string(key) + "' must be at least " + std::to_string(minimum) +
                            ", found " + std::to_string(number));
  if (number > maximum)
    fail(node.source(), "'" + std::string(key) + "' must be at most " + std::to_string(maximum) +
                            ", found " + std::to_string(number));
  return number;
}

double Reader::number(std::string_view key, const toml::node& node, double minimum,
                      std::optional<double> maximum) const {
  double value = 0;
  if (const auto* integer = node.as_integer()) {
    value = static_cast<double>(integer->get());
  } else if (const auto* floating = node.as_floating_point()) {
    value = floating->get();
  } else {
    fail(node.source(),
         "'" + std::string(key) + "' must be a number, found " + typeName(node.type()));
  }
  if (!std::isfinite(value))
    fail(node.source(),
         "'" + std::string(key) + "' must be a finite number, found " + formatNumber(value));
  bool tooLarge = maximum && value > *maximum;
  if (value < minimum || tooLarge) {
    std::string range = maximum
                            ? "between " + formatNumber(minimum) + " and " + formatNumber(*maximum)
                            : "at least " + formatNumber(minimum);
    fail(node.source(),
         "'" + std::string(key) + "' must be " + range + ", found " + formatNumber(value));
  }
  return value;
}

bool Reader::boolean(std::string_view key, const toml::node& node) const {
  if (const auto* value = node.as_boolean()) return value->get();
  fail(node.source(),
       "'" + std::string(key) + "' must be a boolean, found " + typeName(node.type()));
}

std::string Reader::string(std::string_view key, const toml::node& node) const {
  if (const auto* value = node.as_string()) return value->get();
  fail(node.source(),
       "'" + std::string(key) + "' must be a string, found " + typeName(node.type()));
}

std::string Reader::nonEmptyString(std::string_view key, const toml::node& node) const {
  std::string value = string(key, node);
  if (value.empty()) fail(node.source(), "'" + std::string(key) + "' must not be empty");
  return value;
}

std::optional<std::string> Reader::optionalString(std::string_view key,
                                                  const toml::node& node) const {
  std::string value = string(key, node);
  if (value.empty()) return std::nullopt;
  return value;
}

std::string Reader::choice(std::string_view key, const toml::node& node,
                           std::span<const std::string_view> allowed) const {
  std::string value = string(key, node);
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
  std::string message =
      "'" + std::string(key) + "' must be one of " + joinWords(allowed) + ", found '" + value + "'";
  if (auto guess = suggest(value, allowed)) message += "; did you mean '" + *guess + "'?";
  fail(node.source(), std::move(message));
}

std::string Reader::relativePath(std::string_view key, const toml::node& node,
                                 std::string_view within) const {
  std::string value = string(key, node);
  std::filesystem::path path(value);
  std::filesystem::path normal = path.lexically_normal();
  bool escapes = !normal.empty() && *normal.begin() == "..";
  bool isRoot = normal.empty() || normal == ".";
  if (value.empty() || path.is_absolute() || path.has_root_name() || path.has_root_directory() ||
      escapes || isRoot || value.find('\0') != std::string::npos)
    fail(node.source(), "'" + std::string(key) + "' must be a relative path inside the " +
                            std::string(within) + ", found '" + value + "'");
  return value;
}

std::vector<std::string> Reader::stringArray(std::string_view key, const toml::node& node) const {
  const auto* array = node.as_array();
  if (!array)
    fail(node.source(),
         "'" + std::string(key) + "' must be an array of strings, found " + typeName(node.type()));
  std::vector<std::string> out;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    const auto* text = element.as_string();
    if (!text)
      fail(element.source(), "'" + std::string(key) + "' must be an array of strings, found " +
                                 typeName(element.type()) + " at index " + std::to_string(i));
    out.push_back(text->get());
  }
  return out;
}

std::map<std::string, std::string> Reader::environment(std::string_view key,
                                                       const toml::node& node) const {
  const auto* entries = node.as_table();
  if (!entries)
    fail(node.source(),
         "'" + std::string(key) + "' must be a table of strings, found " + typeName(node.type()));
  std::map<std::string, std::string> out;
  for (const Entry& entry : entriesInFileOrder(*entries)) {
    std::string_view name = entry.key->str();
    if (name.empty() || name.find_first_of(std::string_view("=\0", 2)) != std::string_view::npos)
      fail(entry.key->source(), "environment variable name '" + std::string(name) + "' in '" +
                                    std::string(key) + "' must be non-empty and contain no '='");
    const auto* value = entry.value->as_string();
    if (!value)
      fail(entry.value->source(), "'" + std::string(key) + "." + std::string(name) +
                                      "' must be a string, found " + typeName(entry.value->type()));
    out.emplace(name, value->get());
  }
  return out;
}

void Reader::failUnknownKey(const toml::key& key, const toml::node& value, std::string_view where,
                            const std::vector<Field>& fields) const {
  std::vector<std::string_view> names;
  for (const Field& field : fields) names.push_back(field.name);
  auto guess = suggest(key.str(), names);
  std::string message;
  if (!where.empty()) {
    message = "unknown key '" + std::string(key.str()) + "' in " + std::string(where);
    if (guess) message += "; did you mean '" + *guess + "'?";
  } else if (value.is_table()) {
    message = "unknown table [" + std::string(key.str()) + "]";
    if (guess) message += "; did you mean [" + *guess + "]?";
  } else {
    message = "unknown key '" + std::string(key.str()) + "' at the top level";
    if (guess) {
      message += "; did you mean [" + *guess + "]?";
    } else if (topLevelHelp_) {
      message += topLevelHelp_(key.str());
    }
  }
  fail(key.source(), std::move(message));
}

}  // namespace hydra::core::toml_reader
