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
std::optional<std::string> suggest(std::string_view word,
                                   std::span<const std::string_view> candidates);

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
  explicit Reader(std::filesystem::path file,
                  std::function<std::string(std::string_view key)> topLevelHelp = {})
      : file_(std::move(file)), topLevelHelp_(std::move(topLevelHelp)) {}

  [[noreturn]] void fail(const toml::source_region& at, std::string message) const {
    throw ConfigError(file_, static_cast<int>(at.begin.line), static_cast<int>(at.begin.column),
                      std::move(message));
  }

  // Hands each entry of `table` to its field, in file order; `where` names the
  // table in messages ("[general]", or "" for the top level).
  void readTable(const toml::table& table, std::string_view where,
                 const std::vector<Field>& fields) const;

  const toml::table& table(std::string_view key, const toml::node& node) const;

  int integer(std::string_view key, const toml::node& node, int minimum) const;
  std::int64_t integer64(std::string_view key, const toml::node& node, std::int64_t minimum,
                         std::int64_t maximum) const;

  // Integers and floats alike: `build = 30` and `build = 30.0` mean the same.
  double number(std::string_view key, const toml::node& node, double minimum,
                std::optional<double> maximum) const;

  bool boolean(std::string_view key, const toml::node& node) const;

  std::string string(std::string_view key, const toml::node& node) const;

  std::string nonEmptyString(std::string_view key, const toml::node& node) const;

  // An empty string means "not configured", so a key can be switched off
  // without deleting it.
  std::optional<std::string> optionalString(std::string_view key, const toml::node& node) const;

  std::string choice(std::string_view key, const toml::node& node,
                     std::span<const std::string_view> allowed) const;

  // A path that stays inside `within` (the repository or a worktree) by its
  // text alone; symlinks are the business of whoever creates the directory.
  std::string relativePath(std::string_view key, const toml::node& node,
                           std::string_view within) const;

  std::vector<std::string> stringArray(std::string_view key, const toml::node& node) const;

  std::map<std::string, std::string> environment(std::string_view key,
                                                 const toml::node& node) const;

 private:
  [[noreturn]] void failUnknownKey(const toml::key& key, const toml::node& value,
                                   std::string_view where, const std::vector<Field>& fields) const;

  std::filesystem::path file_;
  std::function<std::string(std::string_view key)> topLevelHelp_;
};

}  // namespace hydra::core::toml_reader
