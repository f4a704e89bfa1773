#pragma once

// Reading a TOML file into settings, each value checked where it stands:
// every problem is a ConfigError naming the file, line and column, with a
// "did you mean" for a misspelt key or value. hydra.toml (config.cpp) and eval
// sets (core/eval/eval_set.cpp) are read with it.

#include <toml++/toml.h>

#include <climits>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"

namespace hydra::core::toml_reader {

// The closest candidate, when it is close enough to be a typo of `word`
// (case, '_' and '-' ignored; a neighbour swap is one edit), or the candidate
// `word` is the start of ("build" for "build_command").
std::optional<std::string> suggest(std::string_view word, std::span<const std::string_view> candidates);

// "a, b, c"
std::string joinWords(std::span<const std::string_view> words);

// "table", "string", "integer", ...: what was found, in messages.
std::string typeName(toml::node_type type);
std::string formatNumber(double value);

// Tables are keyed maps in toml++, iterated alphabetically; checking entries in
// document order makes the first error reported the first one in the file.
struct Entry {
  const toml::key* key;
  const toml::node* value;
};
std::vector<Entry> entriesInFileOrder(const toml::table& table);

class Reader;

// One key a table accepts and what to do with its value.
struct Field {
  std::string_view name;
  std::function<void(const Reader&, std::string_view key, const toml::node&)> read;
};

class Reader {
 public:
  // `topLevelHelp(key)`: what to say of an unknown key at the top level of the
  // file (which table it belongs in); empty: nothing more.
  explicit Reader(std::filesystem::path file, std::function<std::string(std::string_view key)> topLevelHelp = {})
      : file_(std::move(file)), topLevelHelp_(std::move(topLevelHelp)) {}

  [[noreturn]] void fail(const toml::source_region& at, std::string message) const {
    throw ConfigError(file_, static_cast<int>(at.begin.line), static_cast<int>(at.begin.column),
                      std::move(message));
  }

  // Hands each entry of `table` to its field, in file order; `where` names the
  // table in messages ("[general]", or "" for the top level).
  void readTable(const toml::table& table, std::string_view where,
                 const std::vector<Field>& fields) const {
    for (const Entry& entry : entriesInFileOrder(table)) {
      std::string_view key = entry.key->str();
      auto field =
          std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == key; });
      if (field == fields.end()) failUnknownKey(*entry.key, *entry.value, where, fields);
      field->read(*this, key, *entry.value);
    }
  }

  const toml::table& table(std::string_view key, const toml::node& node) const {
    if (const auto* table = node.as_table()) return *table;
    fail(node.source(),
         "'" + std::string(key) + "' must be a table, found " + typeName(node.type()));
  }

  int integer(std::string_view key, const toml::node& node, int minimum) const {
    const auto* value = node.as_integer();
    if (!value)
      fail(node.source(),
           "'" + std::string(key) + "' must be an integer, found " + typeName(node.type()));
    int64_t number = value->get();
    if (number < minimum)
      fail(node.source(), "'" + std::string(key) + "' must be at least " + std::to_string(minimum) +
                              ", found " + std::to_string(number));
    if (number > INT_MAX)
      fail(node.source(), "'" + std::string(key) + "' must be at most " + std::to_string(INT_MAX) +
                              ", found " + std::to_string(number));
    return static_cast<int>(number);
  }

  // Integers and floats alike: `build = 30` and `build = 30.0` mean the same.
  double number(std::string_view key, const toml::node& node, double minimum,
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
      std::string range =
          maximum ? "between " + formatNumber(minimum) + " and " + formatNumber(*maximum)
                  : "at least " + formatNumber(minimum);
      fail(node.source(),
           "'" + std::string(key) + "' must be " + range + ", found " + formatNumber(value));
    }
    return value;
  }

  bool boolean(std::string_view key, const toml::node& node) const {
    if (const auto* value = node.as_boolean()) return value->get();
    fail(node.source(),
         "'" + std::string(key) + "' must be a boolean, found " + typeName(node.type()));
  }

  std::string string(std::string_view key, const toml::node& node) const {
    if (const auto* value = node.as_string()) return value->get();
    fail(node.source(),
         "'" + std::string(key) + "' must be a string, found " + typeName(node.type()));
  }

  std::string nonEmptyString(std::string_view key, const toml::node& node) const {
    std::string value = string(key, node);
    if (value.empty()) fail(node.source(), "'" + std::string(key) + "' must not be empty");
    return value;
  }

  // An empty string means "not configured", so a key can be switched off
  // without deleting it.
  std::optional<std::string> optionalString(std::string_view key, const toml::node& node) const {
    std::string value = string(key, node);
    if (value.empty()) return std::nullopt;
    return value;
  }

  std::string choice(std::string_view key, const toml::node& node,
                     std::span<const std::string_view> allowed) const {
    std::string value = string(key, node);
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
    std::string message = "'" + std::string(key) + "' must be one of " + joinWords(allowed) +
                          ", found '" + value + "'";
    if (auto guess = suggest(value, allowed)) message += "; did you mean '" + *guess + "'?";
    fail(node.source(), std::move(message));
  }

  // A path that stays inside `within` (the repository or a worktree) by its
  // text alone; symlinks are the business of whoever creates the directory.
  std::string relativePath(std::string_view key, const toml::node& node,
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

  std::vector<std::string> stringArray(std::string_view key, const toml::node& node) const {
    const auto* array = node.as_array();
    if (!array)
      fail(node.source(), "'" + std::string(key) + "' must be an array of strings, found " +
                              typeName(node.type()));
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

  std::map<std::string, std::string> environment(std::string_view key,
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
                                        "' must be a string, found " +
                                        typeName(entry.value->type()));
      out.emplace(name, value->get());
    }
    return out;
  }

 private:
  [[noreturn]] void failUnknownKey(const toml::key& key, const toml::node& value,
                                   std::string_view where, const std::vector<Field>& fields) const {
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

  std::filesystem::path file_;
  std::function<std::string(std::string_view key)> topLevelHelp_;
};

}  // namespace hydra::core::toml_reader
