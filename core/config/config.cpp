#include "core/config/config.h"

#include <toml++/toml.h>

#include "core/config/toml_reader.h"

#include "core/process/resource_limits.h"
#include "core/util/read_file.h"

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

using toml_reader::Entry;
using toml_reader::entriesInFileOrder;
using toml_reader::Field;
using toml_reader::formatNumber;
using toml_reader::Reader;
using toml_reader::suggest;
using toml_reader::typeName;

// ---------------------------------------------------------------------------
// Reading values, each reader failing with a located, specific message.

// `timeout_seconds = 5` written above every table: name the table it belongs in.
std::optional<std::string> tableHoldingKey(std::string_view key) {
  auto keys = acceptedConfigKeys();
  for (std::string_view table : {"general"sv, "scoring"sv, "scoring.thresholds"sv,
                                 "scoring.weights"sv, "collaboration"sv, "executor"sv, "agents.*"sv}) {
    const auto& names = keys.at(std::string(table));
    if (std::find(names.begin(), names.end(), key) == names.end()) continue;
    return table == "agents.*" ? std::string("[agents.NAME]") : "[" + std::string(table) + "]";
  }
  return std::nullopt;
}


// An array of folders inside the repository, none of them git's own
// (copy_ignored, keep_ignored); `verb` says what hydra would do to them.
std::vector<std::string> folderList(const Reader& r, std::string_view key, const toml::node& node,
                                    std::string_view verb) {
  const auto* array = node.as_array();
  if (!array) {
    r.fail(node.source(), "'" + std::string(key) + "' must be an array of folder names, e.g. [\"node_modules\"]");
  }
  std::vector<std::string> folders;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    const std::string folder = r.relativePath(key, element, "repository");
    if (*std::filesystem::path(folder).lexically_normal().begin() == ".git") {
      r.fail(element.source(), "'" + std::string(key) + "' cannot " + std::string(verb) + " git's own directory");
    }
    folders.push_back(folder);
  }
  return folders;
}

// ---------------------------------------------------------------------------
// The tables of hydra.toml. Each list is the single record of the keys a table
// accepts: the parser dispatches on it and acceptedConfigKeys() reports it.

// memory_limit_mib, max_processes, cpu_limit_seconds: the same keys in
// [general] and [agents.NAME]. 0 means no limit; anything else must be
// enough for a CLI to start at all.
std::vector<Field> limitFields(ResourceLimitSettings& out) {
  auto noneOrAtLeast = [](const Reader& r, std::string_view key, const toml::node& node, std::int64_t least,
                          std::int64_t most) {
    const std::int64_t value = r.integer64(key, node, 0, most);
    if (value != 0 && value < least) {
      r.fail(node.source(), "'" + std::string(key) + "' must be 0 (no limit) or at least " + std::to_string(least) +
                                ", found " + std::to_string(value));
    }
    return value;
  };
  return {
      {"memory_limit_mib",
       [&out, noneOrAtLeast](const Reader& r, std::string_view key, const toml::node& node) {
         out.memoryMiB = noneOrAtLeast(r, key, node, kMinMemoryLimitMiB, kMaxMemoryLimitMiB);
       }},
      {"max_processes",
       [&out, noneOrAtLeast](const Reader& r, std::string_view key, const toml::node& node) {
         out.processes = static_cast<int>(noneOrAtLeast(r, key, node, kMinProcessLimit, kMaxProcessLimit));
       }},
      {"cpu_limit_seconds",
       [&out, noneOrAtLeast](const Reader& r, std::string_view key, const toml::node& node) {
         out.cpuSeconds = static_cast<int>(noneOrAtLeast(r, key, node, 1, kMaxCpuLimitSeconds));
       }},
  };
}

// Appends `more` to `fields`.
std::vector<Field> withFields(std::vector<Field> fields, std::vector<Field> more) {
  fields.insert(fields.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return fields;
}

std::vector<Field> generalFields(GeneralConfig& out) {
  return withFields({
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
      {"copy_ignored",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.copyIgnored = folderList(r, key, node, "copy");
       }},
      {"pool_size",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.poolSize = r.integer(key, node, 0);
       }},
      {"max_result_files",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.maxResultFiles = r.integer(key, node, 1);
       }},
      {"max_result_bytes",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.maxResultBytes = r.integer64(key, node, 1, kMaxResultBytesLimit);
       }},
      {"keep_ignored",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.keepIgnored.clear();
         for (const auto& folder : folderList(r, key, node, "keep")) {
           out.keepIgnored.push_back(std::filesystem::path(folder).lexically_normal().generic_string());
         }
       }},
      {"sparse_paths",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.sparsePaths.clear();
         for (const auto& folder : folderList(r, key, node, "check out")) {
           std::string path = std::filesystem::path(folder).lexically_normal().generic_string();
           while (path.size() > 1 && path.back() == '/') path.pop_back();
           out.sparsePaths.push_back(path);
         }
       }},
      {"setup_command",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.setupCommand = r.nonEmptyString(key, node);
       }},
  }, limitFields(out.limits));
}

// A path outside the repository, as the machine names it: absolute, or
// starting with ~/ for the user's home.
std::filesystem::path absolutePath(const Reader& r, std::string_view key, const toml::node& node) {
  std::string text = r.nonEmptyString(key, node);
  if (text.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (!home || !*home) r.fail(node.source(), "'" + std::string(key) + "' starts with ~/, but HOME is not set");
    return (std::filesystem::path(home) / text.substr(2)).lexically_normal();
  }
  if (!std::filesystem::path(text).is_absolute()) {
    r.fail(node.source(), "'" + std::string(key) + "' must be an absolute path (or start with ~/), found \"" + text + "\"");
  }
  return std::filesystem::path(text).lexically_normal();
}

bool isSlurmTime(std::string_view text) {
  // Slurm's forms: minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or UNLIMITED.
  if (text == "UNLIMITED" || text == "INFINITE") return true;
  std::size_t dash = text.find('-');
  std::string_view days = dash == std::string_view::npos ? std::string_view{} : text.substr(0, dash);
  std::string_view clock = dash == std::string_view::npos ? text : text.substr(dash + 1);
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 9 &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  if (dash != std::string_view::npos && !digits(days)) return false;
  int parts = 0;
  for (std::size_t start = 0;; ++parts) {
    std::size_t colon = clock.find(':', start);
    if (!digits(clock.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start))) {
      return false;
    }
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return parts <= 2;
}

std::vector<Field> executorFields(ExecutorConfig& out, const ConfigNames& names) {
  return {
      {"kind",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.kind = *parseExecutorKind(r.choice(key, node, executorKindWords()));
       }},
      {"partition",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.partition = r.nonEmptyString(key, node);
       }},
      {"account",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.account = r.nonEmptyString(key, node);
       }},
      {"time_limit",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         if (const auto* minutes = node.as_integer()) {
           if (minutes->get() < 1) r.fail(node.source(), "'time_limit' must be at least 1 minute");
           out.timeLimit = std::to_string(minutes->get());
           return;
         }
         std::string text = r.nonEmptyString(key, node);
         if (!isSlurmTime(text)) {
           r.fail(node.source(), "'time_limit' must be minutes, or Slurm's \"[days-]hours:minutes:seconds\", found \"" +
                                     text + "\"");
         }
         out.timeLimit = text;
       }},
      {"extra_args",
       [&out, &names](const Reader& r, std::string_view key, const toml::node& node) {
         out.extraArgs = r.stringArray(key, node);
         for (const auto& arg : out.extraArgs) {
           if (names.reservedJobOption && names.reservedJobOption(arg)) {
             r.fail(node.source(), "'extra_args' cannot pass " + arg.substr(0, arg.find('=')) +
                                       ": hydra sets it for every job (docs/scaling.md)");
           }
         }
       }},
      {"slurm_conf",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.slurmConf = absolutePath(r, key, node);
       }},
      {"hydra_binary",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.hydraBinary = absolutePath(r, key, node);
       }},
  };
}

std::vector<Field> agentFields(AgentConfig& out, const ConfigNames& names) {
  return withFields({
      {"adapter", [&out, &names](const Reader& r, std::string_view key,
                                 const toml::node& node) { out.adapter = r.choice(key, node, names.adapters); }},
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
      {"network",
       [&out, &names](const Reader& r, std::string_view key, const toml::node& node) {
         out.network = r.choice(key, node, names.networkModes);
       }},
      {"allowed_hosts",
       [&out, &names](const Reader& r, std::string_view key, const toml::node& node) {
         out.allowedHosts = r.stringArray(key, node);
         const auto& array = *node.as_array();
         for (std::size_t i = 0; i < out.allowedHosts.size(); ++i) {
           const std::string why = names.hostRuleProblem ? names.hostRuleProblem(out.allowedHosts[i]) : "";
           if (!why.empty())
             r.fail(array.get(i)->source(), "'" + std::string(key) + "' entry '" + out.allowedHosts[i] +
                                                "' is not a host name or host:port: " + why);
         }
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
  }, limitFields(out.limits));
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

std::vector<Field> scoringFields(ScoringConfig& out, const ConfigNames& names) {
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
       [&out, &names](const Reader& r, std::string_view key, const toml::node& node) {
         out.testFormat = r.choice(key, node, names.testFormats);
       }},
      {"lint_format",
       [&out, &names](const Reader& r, std::string_view key, const toml::node& node) {
         out.lintFormat = r.choice(key, node, names.lintFormats);
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
       [&out, &names](const Reader& r, std::string_view key, const toml::node& node) {
         const std::vector<std::string>& paths = out.protectedPaths.emplace(r.stringArray(key, node));
         const auto& array = *node.as_array();
         for (std::size_t i = 0; i < paths.size(); ++i) {
           const std::string problem = names.protectedPatternProblem ? names.protectedPatternProblem(paths[i]) : "";
           if (!problem.empty())
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
      {"review_every_round",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         out.reviewEveryRound = r.boolean(key, node);
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
void readAgent(const Reader& r, const toml::key& name, const toml::node& node, AgentConfig& out,
               const ConfigNames& names) {
  auto defaultBinary = [&names](std::string_view adapter) {
    return names.defaultBinary ? names.defaultBinary(adapter) : std::nullopt;
  };
  if (!isValidAgentName(name.str()))
    r.fail(name.source(),
           "agent name '" + std::string(name.str()) +
               "' may only contain letters, digits, '_' and '-' (it becomes part of branch names)");
  const auto* table = node.as_table();
  if (!table)
    r.fail(node.source(), "agent '" + std::string(name.str()) + "' must be a table, found " +
                              typeName(node.type()));
  out.name = std::string(name.str());
  r.readTable(*table, "[agents." + out.name + "]", agentFields(out, names));
  if (out.adapter.empty()) out.adapter = defaultBinary(out.name) ? out.name : "command";
  if (out.binary.empty()) {
    auto binary = defaultBinary(out.adapter);
    if (!binary)
      r.fail(node.source(),
             "[agents." + out.name + "] uses the '" + out.adapter +
                 "' adapter, so it needs 'binary' (the program to run)");
    out.binary = *binary;
  }
  const toml::node* hosts = table->get("allowed_hosts");
  if (hosts && out.network != "allowlist") {
    r.fail(hosts->source(), "[agents." + out.name + "] 'allowed_hosts' only applies with network = \"allowlist\" (it is \"" +
                                out.network + "\")");
  }
  if (out.network == "allowlist" && out.allowedHosts.empty()) {
    if (names.defaultAllowedHosts) out.allowedHosts = names.defaultAllowedHosts(out.adapter);
    if (out.allowedHosts.empty()) {
      const toml::node* culprit = hosts ? hosts : table->get("network");
      r.fail(culprit ? culprit->source() : node.source(),
             "[agents." + out.name + "] network = \"allowlist\" needs 'allowed_hosts': the '" + out.adapter +
                 "' adapter has no preset hosts (list the model's API, e.g. [\"api.example.com\"])");
    }
  }
}

void readAgents(const Reader& r, const toml::node& node, std::map<std::string, AgentConfig>& out,
                const ConfigNames& names) {
  for (const Entry& entry : entriesInFileOrder(r.table("agents", node))) {
    AgentConfig agent;
    readAgent(r, *entry.key, *entry.value, agent, names);
    out.emplace(agent.name, std::move(agent));
  }
}

std::vector<Field> topLevelFields(Config& out, const ConfigNames& names) {
  return {
      {"general",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         r.readTable(r.table(key, node), "[general]", generalFields(out.general));
       }},
      {"agents", [&out, &names](const Reader& r, std::string_view,
                                const toml::node& node) { readAgents(r, node, out.agents, names); }},
      {"scoring",
       [&out, &names](const Reader& r, std::string_view key, const toml::node& node) {
         r.readTable(r.table(key, node), "[scoring]", scoringFields(out.scoring, names));
       }},
      {"collaboration",
       [&out](const Reader& r, std::string_view key, const toml::node& node) {
         r.readTable(r.table(key, node), "[collaboration]", collaborationFields(out.collaboration));
       }},
      {"executor",
       [&out, &names](const Reader& r, std::string_view key, const toml::node& node) {
         r.readTable(r.table(key, node), "[executor]", executorFields(out.executor, names));
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

namespace {

// A test command whose output will not name its tests: said on its key, so an
// editor shows it where the command is written (the same decision as
// `hydra init`'s warning).
void warnOfCountsOnlyTests(const toml::table& document, Config& config, const ConfigNames& names) {
  const ScoringConfig& scoring = config.scoring;
  if (!scoring.testCommand || !names.testsByCountsOnlyReason) return;
  auto reason = names.testsByCountsOnlyReason(*scoring.testCommand, scoring.testFormat,
                                              scoring.junitReport.has_value());
  if (!reason) return;
  toml::source_position at{};
  if (const toml::table* table = document["scoring"].as_table()) {
    if (const auto entry = table->find("test_command"); entry != table->end()) at = entry->first.source().begin;
  }
  config.warnings.push_back({static_cast<int>(at.line), static_cast<int>(at.column), std::move(*reason)});
}

}  // namespace

Config parseConfig(std::string_view text, const fs::path& file, const ConfigNames& names) {
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
  // A top-level key is most likely a setting written above its table.
  Reader reader(file, [](std::string_view key) {
    if (auto home = tableHoldingKey(key)) return "; it belongs in " + *home;
    return std::string(
        "; settings belong in the tables [general], [agents.NAME], [scoring], "
        "[collaboration] and [executor]");
  });
  reader.readTable(document, "", topLevelFields(config, names));
  warnOfCountsOnlyTests(document, config, names);
  return config;
}

Config loadConfig(const fs::path& repoRoot, const ConfigNames& names) {
  fs::path file = repoRoot / "hydra.toml";
  std::error_code ec;
  auto status = fs::status(file, ec);
  if (status.type() == fs::file_type::not_found) return Config{};
  if (ec) throw ConfigError(file, 0, 0, "cannot read: " + ec.message());
  if (fs::is_directory(status)) throw ConfigError(file, 0, 0, "is a directory, not a file");

  std::string text;
  try {
    text = readRegularFile(file, kMaxConfigBytes);
  } catch (const std::runtime_error& e) {
    throw ConfigError(file, 0, 0, e.what());
  }
  return parseConfig(text, file, names);
}

bool isValidAgentName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

std::map<std::string, std::vector<std::string>> acceptedConfigKeys() {
  // The field lists bind to a target; these scratch structs are never read.
  Config scratch;
  AgentConfig agent;
  const ConfigNames names;
  return {
      {"", fieldNames(topLevelFields(scratch, names))},
      {"general", fieldNames(generalFields(scratch.general))},
      {"agents.*", fieldNames(agentFields(agent, names))},
      {"scoring", fieldNames(scoringFields(scratch.scoring, names))},
      {"scoring.weights", fieldNames(weightFields(scratch.scoring.weights))},
      {"scoring.thresholds", fieldNames(thresholdFields(scratch.scoring.thresholds))},
      {"collaboration", fieldNames(collaborationFields(scratch.collaboration))},
      {"executor", fieldNames(executorFields(scratch.executor, names))},
  };
}

}  // namespace hydra::core
