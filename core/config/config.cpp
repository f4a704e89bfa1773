#include "core/config/config.h"

#include <toml++/toml.h>

#include "core/adapter/adapter.h"
#include "core/checks/protected_paths.h"
#include "core/scoring/parsers.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <system_error>

namespace hydra::core {

namespace fs = std::filesystem;
using namespace std::string_view_literals;

namespace {

// The names come from their registries: each adapter registers its own name
// and binary (core/adapter/registry.cpp), each parser its format name.
std::span<const std::string_view> adapterNameList() {
  static const std::vector<std::string_view> names = adapterNames();
  return names;
}

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

template <typename Range>
std::optional<std::string> suggest(std::string_view word, const Range& candidates) {
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

template <typename Range>
std::string joinWords(const Range& words) {
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

// Tables are keyed maps in toml++, iterated alphabetically; checking entries in
// document order makes the first error reported the first one in the file.
struct Entry {
  const toml::key* key;
  const toml::node* value;
};

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

// ---------------------------------------------------------------------------
// Reading values, each reader failing with a located, specific message.

class Reader;

// `timeout_seconds = 5` written above every table: name the table it belongs in.
std::optional<std::string> tableHoldingKey(std::string_view key) {
  auto keys = acceptedConfigKeys();
  for (std::string_view table : {"general"sv, "scoring"sv, "scoring.thresholds"sv,
                                 "scoring.weights"sv, "collaboration"sv, "agents.*"sv}) {
    const auto& names = keys.at(std::string(table));
    if (std::find(names.begin(), names.end(), key) == names.end()) continue;
    return table == "agents.*" ? std::string("[agents.NAME]") : "[" + std::string(table) + "]";
  }
  return std::nullopt;
}

// One key a table accepts and what to do with its value.
struct Field {
  std::string_view name;
  std::function<void(const Reader&, std::string_view key, const toml::node&)> read;
};

class Reader {
 public:
  explicit Reader(fs::path file) : file_(std::move(file)) {}

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
    fs::path path(value);
    fs::path normal = path.lexically_normal();
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
      if (name.empty() || name.find_first_of("=\0"sv) != std::string_view::npos)
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
      } else if (auto home = tableHoldingKey(key.str())) {
        message += "; it belongs in " + *home;
      } else {
        message +=
            "; settings belong in the tables [general], [agents.NAME], [scoring] and "
            "[collaboration]";
      }
    }
    fail(key.source(), std::move(message));
  }

  fs::path file_;
};

// ---------------------------------------------------------------------------
// The tables of hydra.toml. Each list is the single record of the keys a table
// accepts: the parser dispatches on it and acceptedConfigKeys() reports it.

std::vector<Field> generalFields(GeneralConfig& out) {
  return {
      {"workspace_dir",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.workspaceDir = r.relativePath(key, node, "repository");
       }},
      {"max_concurrent_agents",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.maxConcurrentAgents = r.integer(key, node, 1);
       }},
      {"timeout_seconds",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.timeoutSeconds = r.integer(key, node, 1);
       }},
      {"sandbox",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         static constexpr std::string_view kModes[] = {"auto", "bubblewrap", "off"};
         out.sandbox = r.choice(key, node, kModes);
       }},
  };
}

std::vector<Field> agentFields(AgentConfig& out) {
  return {
      {"adapter", [&out](const Reader& r, std::string_view key,
                         const toml::node& node) { out.adapter = r.choice(key, node, adapterNameList()); }},
      {"binary", [&out](const Reader& r, std::string_view key,
                        const toml::node& node) { out.binary = r.nonEmptyString(key, node); }},
      {"args", [&out](const Reader& r, std::string_view key,
                      const toml::node& node) { out.args = r.stringArray(key, node); }},
      {"extra_args", [&out](const Reader& r, std::string_view key,
                            const toml::node& node) { out.extraArgs = r.stringArray(key, node); }},
      {"env", [&out](const Reader& r, std::string_view key,
                     const toml::node& node) { out.env = r.environment(key, node); }},
      {"timeout_seconds",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.timeoutSeconds = r.integer(key, node, 1);
       }},
      {"acp_permissions",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         static constexpr std::string_view kPolicies[] = {"worktree", "allow", "reject"};
         out.acpPermissions = r.choice(key, node, kPolicies);
       }},
      {"writable_paths",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.writablePaths = r.stringArray(key, node);
         const auto& array = *node.as_array();
         for (std::size_t i = 0; i < out.writablePaths.size(); ++i) {
           const std::string& p = out.writablePaths[i];
           bool home = p == "~" || p.rfind("~/", 0) == 0;
           if (!home && !fs::path(p).is_absolute())
             r.fail(array.get(i)->source(), "'" + std::string(key) +
                                                "' entries must be absolute paths or start with '~/', found '" +
                                                p + "'");
         }
       }},
  };
}

std::vector<Field> weightFields(ScoringWeights& out) {
  auto weight = [](double& target) {
    return [&target](const Reader& r, std::string_view key, const toml::node& node) {
      target = r.number(key, node, 0, std::nullopt);
    };
  };
  return {
      {"build", weight(out.build)},        {"tests", weight(out.tests)}, {"lint", weight(out.lint)},
      {"diff_size", weight(out.diffSize)}, {"speed", weight(out.speed)},
  };
}

std::vector<Field> thresholdFields(ScoringThresholds& out) {
  auto percentage = [](double& target) {
    return [&target](const Reader& r, std::string_view key, const toml::node& node) {
      target = r.number(key, node, 0, 100);
    };
  };
  return {
      {"auto_merge_minimum", percentage(out.autoMergeMinimum)},
      {"fail_maximum", percentage(out.failMaximum)},
  };
}

void readWeights(const Reader& r, const toml::node& node, ScoringWeights& out) {
  r.readTable(r.table("weights", node), "[scoring.weights]", weightFields(out));
  if (out.build + out.tests + out.lint + out.diffSize + out.speed <= 0)
    r.fail(node.source(), "'weights' must not all be zero: the total score would be meaningless");
}

void readThresholds(const Reader& r, const toml::node& node, ScoringThresholds& out) {
  const toml::table& table = r.table("thresholds", node);
  r.readTable(table, "[scoring.thresholds]", thresholdFields(out));
  // Between the two lies "needs review"; crossed over, a score would both fail and auto-merge.
  if (out.failMaximum > out.autoMergeMinimum) {
    const toml::node* culprit = table.get("fail_maximum");
    if (!culprit) culprit = table.get("auto_merge_minimum");
    r.fail(culprit ? culprit->source() : node.source(),
           "'fail_maximum' (" + formatNumber(out.failMaximum) +
               ") must not exceed 'auto_merge_minimum' (" + formatNumber(out.autoMergeMinimum) +
               ")");
  }
}

std::vector<Field> scoringFields(ScoringConfig& out) {
  auto command = [](std::optional<std::string>& target) {
    return [&target](const Reader& r, std::string_view key, const toml::node& node) {
      target = r.optionalString(key, node);
    };
  };
  return {
      {"weights", [&out](const Reader& r, std::string_view,
                         const toml::node& node) { readWeights(r, node, out.weights); }},
      {"build_command", command(out.buildCommand)},
      {"test_command", command(out.testCommand)},
      {"lint_command", command(out.lintCommand)},
      {"test_format",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.testFormat = r.choice(key, node, scoring::testFormatNames());
       }},
      {"lint_format",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.lintFormat = r.choice(key, node, scoring::lintFormatNames());
       }},
      {"junit_report",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.junitReport = r.relativePath(key, node, "worktree");
       }},
      {"timeout_per_check_seconds",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.timeoutPerCheckSeconds = r.integer(key, node, 1);
       }},
      {"protected_paths",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.protectedPaths = r.stringArray(key, node);
         const auto& array = *node.as_array();
         for (std::size_t i = 0; i < out.protectedPaths.size(); ++i) {
           if (std::string problem = checks::protectedPatternProblem(out.protectedPaths[i]); !problem.empty())
             r.fail(array.get(i)->source(), "'" + std::string(key) + "': " + problem);
         }
       }},
      {"protected_mode",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         static constexpr std::string_view kModes[] = {"flag", "restore"};
         out.protectedMode = r.choice(key, node, kModes);
       }},
      {"auto_merge", [&out](const Reader& r, std::string_view key,
                            const toml::node& node) { out.autoMerge = r.boolean(key, node); }},
      {"thresholds", [&out](const Reader& r, std::string_view,
                            const toml::node& node) { readThresholds(r, node, out.thresholds); }},
  };
}

std::vector<Field> collaborationFields(CollaborationConfig& out) {
  auto agentName = [](std::optional<std::string>& target) {
    return [&target](const Reader& r, std::string_view key, const toml::node& node) {
      std::string name = r.string(key, node);
      if (!isValidAgentName(name))
        r.fail(node.source(), "'" + std::string(key) + "' must name an agent (letters, digits, '_' and '-'), not '" +
                                  name + "'");
      target = std::move(name);
    };
  };
  return {
      {"builder", agentName(out.builder)},
      {"reviewer", agentName(out.reviewer)},
      {"max_iterations",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.maxIterations = r.integer(key, node, 1);
       }},
      {"until_score",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.untilScore = r.number(key, node, 0, 100);
       }},
      {"approve_marker",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         std::string marker = r.string(key, node);
         if (marker.find_first_not_of(" \t\r\n") == std::string::npos)
           r.fail(node.source(), "'approve_marker' must not be blank: every review would approve");
         out.approveMarker = std::move(marker);
       }},
      {"review_prompt_template",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.reviewPromptTemplate = r.string(key, node);
       }},
      {"refine_prompt_template",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.refinePromptTemplate = r.string(key, node);
       }},
  };
}

// Defaults that depend on the table's name and on other keys are settled once
// the whole table has been read.
void readAgent(const Reader& r, const toml::key& name, const toml::node& node, AgentConfig& out) {
  if (!isValidAgentName(name.str()))
    r.fail(name.source(),
           "agent name '" + std::string(name.str()) +
               "' may only contain letters, digits, '_' and '-' (it becomes part of branch names)");
  const auto* table = node.as_table();
  if (!table)
    r.fail(node.source(), "agent '" + std::string(name.str()) + "' must be a table, found " +
                              typeName(node.type()));
  out.name = std::string(name.str());
  r.readTable(*table, "[agents." + out.name + "]", agentFields(out));
  if (out.adapter.empty()) out.adapter = defaultAgentBinary(out.name) ? out.name : "command";
  if (out.binary.empty()) {
    auto binary = defaultAgentBinary(out.adapter);
    if (!binary)
      r.fail(node.source(),
             "[agents." + out.name + "] uses the '" + out.adapter +
                 "' adapter, so it needs 'binary' (the program to run)");
    out.binary = *binary;
  }
}

void readAgents(const Reader& r, const toml::node& node, std::map<std::string, AgentConfig>& out) {
  for (const Entry& entry : entriesInFileOrder(r.table("agents", node))) {
    AgentConfig agent;
    readAgent(r, *entry.key, *entry.value, agent);
    out.emplace(agent.name, std::move(agent));
  }
}

std::vector<Field> topLevelFields(Config& out) {
  return {
      {"general",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         r.readTable(r.table(key, node), "[general]", generalFields(out.general));
       }},
      {"agents", [&out](const Reader& r, std::string_view,
                        const toml::node& node) { readAgents(r, node, out.agents); }},
      {"scoring",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         r.readTable(r.table(key, node), "[scoring]", scoringFields(out.scoring));
       }},
      {"collaboration",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         r.readTable(r.table(key, node), "[collaboration]", collaborationFields(out.collaboration));
       }},
  };
}

std::vector<std::string> fieldNames(const std::vector<Field>& fields) {
  std::vector<std::string> names;
  for (const Field& field : fields) names.emplace_back(field.name);
  return names;
}

}  // namespace

// ---------------------------------------------------------------------------

Config parseConfig(std::string_view text, const fs::path& file) {
  toml::table document;
  try {
    document = toml::parse(text, std::string_view(file.string()));
  } catch (const toml::parse_error& error) {
    const auto& at = error.source().begin;
    throw ConfigError(file, static_cast<int>(at.line), static_cast<int>(at.column),
                      std::string(error.description()));
  }
  Config config;
  config.source = file;
  Reader reader(file);
  reader.readTable(document, "", topLevelFields(config));
  return config;
}

Config loadConfig(const fs::path& repoRoot) {
  fs::path file = repoRoot / "hydra.toml";
  std::error_code ec;
  auto status = fs::status(file, ec);
  if (status.type() == fs::file_type::not_found) return Config{};
  if (ec) throw ConfigError(file, 0, 0, "cannot read: " + ec.message());
  if (fs::is_directory(status)) throw ConfigError(file, 0, 0, "is a directory, not a file");

  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(file, 0, 0, std::string("cannot read: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(file, 0, 0, "cannot read: input error");
  return parseConfig(text.str(), file);
}

bool isValidAgentName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

std::span<const std::string_view> knownAdapters() { return adapterNameList(); }
std::span<const std::string_view> knownTestFormats() { return scoring::testFormatNames(); }
std::span<const std::string_view> knownLintFormats() { return scoring::lintFormatNames(); }

std::optional<std::string> defaultAgentBinary(std::string_view adapter) {
  const Adapter* found = findAdapter(adapter);
  if (!found || found->defaultBinary().empty()) return std::nullopt;
  return std::string(found->defaultBinary());
}

std::optional<AgentConfig> findAgent(const Config& config, std::string_view name) {
  if (auto it = config.agents.find(std::string(name)); it != config.agents.end()) return it->second;
  auto binary = defaultAgentBinary(name);
  if (!binary) return std::nullopt;
  AgentConfig agent;
  agent.name = std::string(name);
  agent.adapter = std::string(name);
  agent.binary = *binary;
  return agent;
}

std::map<std::string, std::vector<std::string>> acceptedConfigKeys() {
  // The field lists bind to a target; these scratch structs are never read.
  Config scratch;
  AgentConfig agent;
  return {
      {"", fieldNames(topLevelFields(scratch))},
      {"general", fieldNames(generalFields(scratch.general))},
      {"agents.*", fieldNames(agentFields(agent))},
      {"scoring", fieldNames(scoringFields(scratch.scoring))},
      {"scoring.weights", fieldNames(weightFields(scratch.scoring.weights))},
      {"scoring.thresholds", fieldNames(thresholdFields(scratch.scoring.thresholds))},
      {"collaboration", fieldNames(collaborationFields(scratch.collaboration))},
  };
}

}  // namespace hydra::core
