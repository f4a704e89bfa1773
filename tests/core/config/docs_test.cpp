// The documentation must agree with the parser: docs/hydra.schema.json has the
// same keys per table, choices, agent-name rule and defaults, and the example in
// docs/configuration.md is a valid hydra.toml.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/value_from.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "core/checks/protected_paths.h"
#include "core/config/config.h"
#include "core/process/resource_limits.h"
#include "core/workspace/hydra_config.h"

namespace hydra::core {
namespace {

namespace json = boost::json;
using ::testing::UnorderedElementsAreArray;

std::string readDoc(const char* name) {
  std::ifstream in(std::filesystem::path(HYDRA_SOURCE_DIR) / "docs" / name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) ADD_FAILURE() << "cannot read docs/" << name;
  return text.str();
}

const json::object& loadSchema() {
  static const json::value schema = json::parse(readDoc("hydra.schema.json"));
  return schema.as_object();
}

// The schema object describing a table path as acceptedConfigKeys() names it.
const json::object& schemaFor(const std::string& table) {
  const json::object& root = loadSchema();
  if (table.empty()) return root;
  if (table == "agents.*") return root.at("definitions").at("agent").as_object();
  const json::object* node = &root;
  std::istringstream parts(table);
  for (std::string part; std::getline(parts, part, '.');)
    node = &node->at("properties").at(part).as_object();
  return *node;
}

std::vector<std::string> propertyNames(const json::object& schema) {
  std::vector<std::string> names;
  for (const auto& property : schema.at("properties").as_object())
    names.emplace_back(property.key());
  return names;
}

template <typename Range>
std::vector<std::string> strings(const Range& range) {
  return std::vector<std::string>(range.begin(), range.end());
}

std::vector<std::string> enumOf(const json::object& property) {
  std::vector<std::string> values;
  for (const json::value& value : property.at("enum").as_array())
    values.emplace_back(value.as_string());
  return values;
}

TEST(SchemaTest, IsDraft07) {
  EXPECT_EQ(loadSchema().at("$schema").as_string(), "http://json-schema.org/draft-07/schema#");
}

TEST(SchemaTest, PropertiesMatchTheKeysTheParserAccepts) {
  for (const auto& [table, keys] : acceptedConfigKeys()) {
    const json::object& schema = schemaFor(table);
    EXPECT_THAT(propertyNames(schema), UnorderedElementsAreArray(keys))
        << "table '" << table << "'";
    // hydra rejects unknown keys in every one of these tables.
    EXPECT_EQ(schema.at("additionalProperties"), json::value(false)) << "table '" << table << "'";
  }
}

TEST(SchemaTest, EveryPropertyHasADescription) {
  for (const auto& [table, keys] : acceptedConfigKeys()) {
    for (const auto& property : schemaFor(table).at("properties").as_object())
      EXPECT_TRUE(property.value().as_object().contains("description"))
          << table << "." << property.key();
  }
}

TEST(SchemaTest, ChoicesMatchTheParser) {
  EXPECT_EQ(enumOf(schemaFor("agents.*").at("properties").at("adapter").as_object()),
            strings(knownAdapters()));
  const json::object& scoring = schemaFor("scoring").at("properties").as_object();
  EXPECT_EQ(enumOf(scoring.at("test_format").as_object()), strings(knownTestFormats()));
  EXPECT_EQ(enumOf(scoring.at("lint_format").as_object()), strings(knownLintFormats()));
}

TEST(SchemaTest, AgentNamePatternAgreesWithTheParser) {
  std::string pattern(
      loadSchema().at("properties").at("agents").at("propertyNames").at("pattern").as_string());
  std::regex regex(pattern, std::regex::ECMAScript);
  for (const char* name :
       {"claude", "Claude_2-fast", "", "my agent", "a/b", "a.b", "x\ny", "caf\xc3\xa9", "-", "_"})
    EXPECT_EQ(std::regex_search(name, regex), isValidAgentName(name)) << "'" << name << "'";
}

// The defaults of Config{}, in the shape and names of hydra.toml.
json::object defaultsAsToml() {
  const Config defaults;
  const ScoringConfig& s = defaults.scoring;
  return {
      {"general",
       {{"workspace_dir", defaults.general.workspaceDir},
        {"max_concurrent_agents", defaults.general.maxConcurrentAgents},
        {"timeout_seconds", defaults.general.timeoutSeconds},
        {"sandbox", defaults.general.sandbox},
        {"copy_ignored", json::value_from(defaults.general.copyIgnored)},
        {"pool_size", defaults.general.poolSize},
        {"max_result_files", defaults.general.maxResultFiles},
        {"max_result_bytes", defaults.general.maxResultBytes},
        // Unset in Config; what resourceLimitsFor() makes of that.
        {"max_processes", kDefaultProcessLimit},
        {"cpu_limit_seconds", 0},
        {"keep_ignored", json::value_from(defaults.general.keepIgnored)},
        {"sparse_paths", json::value_from(defaults.general.sparsePaths)}}},
      {"scoring",
       {{"weights",
         {{"build", s.weights.build},
          {"tests", s.weights.tests},
          {"lint", s.weights.lint},
          {"diff_size", s.weights.diffSize},
          {"speed", s.weights.speed}}},
        {"build_command", s.buildCommand.value_or("")},
        {"test_command", s.testCommand.value_or("")},
        {"lint_command", s.lintCommand.value_or("")},
        {"timeout_per_check_seconds", s.timeoutPerCheckSeconds},
        {"protected_paths", json::value_from(s.protectedPaths.value_or(checks::defaultProtectedPaths()))},
        {"protected_mode", s.protectedMode},
        {"auto_merge", s.autoMerge},
        {"thresholds",
         {{"auto_merge_minimum", s.thresholds.autoMergeMinimum},
          {"fail_maximum", s.thresholds.failMaximum}}}}},
      {"collaboration",
       {{"max_iterations", defaults.collaboration.maxIterations},
        {"review_every_round", defaults.collaboration.reviewEveryRound},
        {"approve_marker", defaults.collaboration.approveMarker},
        {"review_prompt_template", defaults.collaboration.reviewPromptTemplate},
        {"refine_prompt_template", defaults.collaboration.refinePromptTemplate}}},
  };
}

bool sameValue(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number()) return a.to_number<double>() == b.to_number<double>();
  return a == b;
}

// Walks the schema's properties next to the defaults; every documented default must be the real
// one.
int checkDefaults(const json::object& schema, const json::object& defaults,
                  const std::string& where) {
  int checked = 0;
  for (const auto& property : schema.at("properties").as_object()) {
    std::string name = where + std::string(property.key());
    const json::object& described = property.value().as_object();
    const json::value* actual = defaults.if_contains(property.key());
    if (described.contains("properties") && actual) {
      checked += checkDefaults(described, actual->as_object(), name + ".");
      continue;
    }
    if (!described.contains("default")) continue;
    EXPECT_TRUE(actual) << name << " has a documented default but none in Config";
    if (!actual) continue;
    EXPECT_TRUE(sameValue(described.at("default"), *actual))
        << name << ": schema says " << described.at("default") << ", Config has " << *actual;
    ++checked;
  }
  return checked;
}

TEST(SchemaTest, DefaultsMatchTheConfigStructs) {
  int checked = checkDefaults(loadSchema(), defaultsAsToml(), "");
  EXPECT_EQ(checked, 31);  // general 12, weights 5, scoring 7, thresholds 2, collaboration 5

  // Agents: extra_args and env default to empty.
  const json::object& agent = schemaFor("agents.*").at("properties").as_object();
  EXPECT_EQ(agent.at("extra_args").at("default"), json::array());
  EXPECT_EQ(agent.at("env").at("default"), json::object());
  EXPECT_FALSE(agent.at("adapter").as_object().contains("default"));  // depends on the table name
}

TEST(DocsTest, ConfigurationExampleIsAValidConfig) {
  std::string doc = readDoc("configuration.md");
  const std::string open = "```toml\n";
  auto begin = doc.find(open);
  ASSERT_NE(begin, std::string::npos);
  begin += open.size();
  auto end = doc.find("```", begin);
  ASSERT_NE(end, std::string::npos);

  Config config = parseConfig(doc.substr(begin, end - begin), "configuration.md");
  EXPECT_EQ(config.agents.size(), 4u);
  EXPECT_EQ(config.agents.at("cursor").binary, "cursor-agent");
  EXPECT_EQ(config.agents.at("local-model").adapter, "command");
  EXPECT_EQ(config.scoring.testFormat, "jest");
}

}  // namespace
}  // namespace hydra::core
