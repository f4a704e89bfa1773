#include "core/eval/eval_set.h"

#include <git2.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/config/config.h"
#include "core/config/toml_reader.h"

namespace hydra::core::eval {

namespace fs = std::filesystem;
using toml_reader::Field;
using toml_reader::Reader;

namespace {

// A path relative to the eval set's folder that stays inside it, by its text.
std::string insidePath(const Reader& r, std::string_view key, const toml::node& node, const std::string& value) {
  fs::path path(value);
  fs::path normal = path.lexically_normal();
  bool escapes = !normal.empty() && *normal.begin() == "..";
  if (value.empty() || path.is_absolute() || path.has_root_name() || escapes || normal == "." ||
      value.find('\0') != std::string::npos) {
    r.fail(node.source(), "'" + std::string(key) + "' must name files inside the eval set's folder, found '" +
                              value + "'");
  }
  return normal.generic_string();
}

std::vector<Field> evalFields(EvalSet& out) {
  return {
      {"name", [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.name = r.nonEmptyString(key, node);
       }},
      {"agents",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.agents = r.stringArray(key, node);
         for (const auto& name : out.agents) {
           if (!isValidAgentName(name)) {
             r.fail(node.source(), "'agents' must name agents (letters, digits, '_' and '-'), found '" + name + "'");
           }
         }
       }},
      {"samples", [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.samples = r.integer(key, node, 1);
       }},
      {"pass_k",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         const auto* array = node.as_array();
         if (!array || array->empty()) {
           r.fail(node.source(), "'pass_k' must be a non-empty array of integers (e.g. [1, 5])");
         }
         out.passK.clear();
         for (std::size_t i = 0; i < array->size(); ++i) {
           int k = r.integer(key, *array->get(i), 1);
           if (std::find(out.passK.begin(), out.passK.end(), k) == out.passK.end()) out.passK.push_back(k);
         }
         std::sort(out.passK.begin(), out.passK.end());
       }},
      {"timeout_seconds", [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.timeoutSeconds = r.integer(key, node, 1);
       }},
      {"max_concurrent_agents", [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.maxConcurrentAgents = r.integer(key, node, 1);
       }},
  };
}

std::vector<Field> caseFields(EvalCase& out) {
  auto command = [](std::optional<std::string>& target) {
    return [&target](const Reader& r, std::string_view key, const toml::node& node) {
      target = r.optionalString(key, node);
    };
  };
  auto names = [](std::vector<std::string>& target) {
    return [&target](const Reader& r, std::string_view key, const toml::node& node) {
      target = r.stringArray(key, node);
    };
  };
  return {
      {"id",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.id = r.string(key, node);
         if (!isValidCaseId(out.id)) {
           r.fail(node.source(), "'id' must be letters, digits, '_', '-' and '.' (at most 64), found '" + out.id + "'");
         }
       }},
      {"task", [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.task = r.nonEmptyString(key, node);
       }},
      {"repo", [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.repo = r.nonEmptyString(key, node);
       }},
      {"base", [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.base = r.nonEmptyString(key, node);
       }},
      {"verify_command", [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.verifyCommand = r.nonEmptyString(key, node);
       }},
      {"hidden_files",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         for (const auto& path : r.stringArray(key, node)) out.hiddenFiles.push_back(insidePath(r, key, node, path));
       }},
      {"fail_to_pass", names(out.failToPass)},
      {"pass_to_pass", names(out.passToPass)},
      {"build_command", command(out.buildCommand)},
      {"test_command", command(out.testCommand)},
      {"lint_command", command(out.lintCommand)},
  };
}

}  // namespace

std::map<std::string, std::vector<std::string>> acceptedEvalSetKeys() {
  EvalSet set;
  EvalCase c;
  std::map<std::string, std::vector<std::string>> keys;
  for (const auto& field : evalFields(set)) keys["eval"].emplace_back(field.name);
  for (const auto& field : caseFields(c)) keys["cases"].emplace_back(field.name);
  return keys;
}

bool isValidCaseId(std::string_view id) {
  if (id.empty() || id.size() > 64 || id == "." || id == "..") return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

const EvalCase* EvalSet::findCase(std::string_view id) const {
  for (const auto& c : cases) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

fs::path EvalSet::folder() const { return source.parent_path(); }

EvalSet parseEvalSet(std::string_view text, const fs::path& file) {
  toml::table document;
  try {
    document = toml::parse(text, std::string_view(file.string()));
  } catch (const toml::parse_error& error) {
    const auto& at = error.source().begin;
    throw ConfigError(file, static_cast<int>(at.line), static_cast<int>(at.column), std::string(error.description()));
  }
  EvalSet set;
  set.source = file;
  Reader reader(file, [](std::string_view) {
    return std::string("; an eval set has the tables [eval] and [[cases]]");
  });
  bool sawEval = false;
  reader.readTable(
      document, "",
      {
          {"eval",
           [&](const Reader& r, std::string_view key, const toml::node& node) {
             sawEval = true;
             r.readTable(r.table(key, node), "[eval]", evalFields(set));
           }},
          {"cases",
           [&](const Reader& r, std::string_view, const toml::node& node) {
             const auto* array = node.as_array();
             if (!array || !array->is_array_of_tables()) {
               r.fail(node.source(), "'cases' must be tables: write each case as [[cases]]");
             }
             std::set<std::string> ids;
             for (std::size_t i = 0; i < array->size(); ++i) {
               const toml::node& element = *array->get(i);
               EvalCase c;
               c.line = static_cast<int>(element.source().begin.line);
               r.readTable(*element.as_table(), "[[cases]]", caseFields(c));
               auto missing = [&](const char* what) {
                 r.fail(element.source(), "case " + std::to_string(i + 1) + (c.id.empty() ? "" : " ('" + c.id + "')") +
                                              " has no '" + what + "'");
               };
               if (c.id.empty()) missing("id");
               if (c.task.empty()) missing("task");
               if (c.verifyCommand.empty()) missing("verify_command");
               if (!ids.insert(c.id).second) r.fail(element.source(), "two cases have the id '" + c.id + "'");
               set.cases.push_back(std::move(c));
             }
           }},
      });
  if (!sawEval) throw ConfigError(file, 1, 1, "an eval set needs an [eval] table (its name, agents, samples)");
  if (set.name.empty()) throw ConfigError(file, 1, 1, "[eval] has no 'name'");
  if (set.cases.empty()) throw ConfigError(file, 1, 1, "an eval set needs at least one [[cases]] table");
  // Hidden files must exist now, not after every agent has run.
  for (const auto& c : set.cases) {
    for (const auto& hidden : c.hiddenFiles) {
      std::error_code ec;
      if (!fs::is_regular_file(set.folder() / hidden, ec)) {
        throw ConfigError(file, c.line, 1,
                          "case '" + c.id + "': hidden file '" + hidden + "' is not a file in " +
                              (set.folder().empty() ? std::string(".") : set.folder().string()));
      }
    }
  }
  return set;
}

EvalSet loadEvalSet(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::error_code ec;
  if (!fs::exists(file, ec)) throw ConfigError(file, 0, 0, "no such file");
  if (fs::is_directory(file, ec)) throw ConfigError(file, 0, 0, "is a directory, not an eval set");
  if (!in) throw ConfigError(file, 0, 0, "cannot read it");
  std::ostringstream text;
  text << in.rdbuf();
  return parseEvalSet(text.str(), fs::absolute(file).lexically_normal());
}

std::string evalSetHash(const EvalSet& set) {
  std::string bytes;
  auto add = [&](const std::string& name, const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream data;
    data << in.rdbuf();
    std::string content = data.str();
    bytes += name + '\0' + std::to_string(content.size()) + '\0' + content;
  };
  add(set.source.filename().string(), set.source);
  for (const auto& c : set.cases) {
    for (const auto& hidden : c.hiddenFiles) add(c.id + "/" + hidden, set.folder() / hidden);
  }
  git_oid id;
  if (git_odb_hash(&id, bytes.data(), bytes.size(), GIT_OBJECT_BLOB) < 0) throw std::runtime_error("cannot hash");
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &id);
  return hex;
}

}  // namespace hydra::core::eval
