// The eval documentation must agree with the code: docs/eval-set.schema.json
// describes exactly the keys the eval set reader accepts, with its required
// keys and defaults, and docs/eval-report.schema.json describes exactly what
// the report writer produces (every report it writes validates against it).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/eval/eval_set.h"
#include "core/eval/report.h"

namespace hydra::core::eval {
namespace {

namespace json = boost::json;
using ::testing::UnorderedElementsAreArray;

json::value readSchema(const char* name) {
  std::ifstream in(std::filesystem::path(HYDRA_SOURCE_DIR) / "docs" / name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) ADD_FAILURE() << "cannot read docs/" << name;
  return json::parse(text.str());
}

std::vector<std::string> keysOf(const json::object& o) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : o) keys.emplace_back(k);
  return keys;
}

std::vector<std::string> strings(const json::value& array) {
  std::vector<std::string> out;
  for (const auto& v : array.as_array()) out.emplace_back(v.as_string());
  return out;
}

TEST(EvalDocsTest, TheSetSchemaHasExactlyTheKeysTheReaderAccepts) {
  const json::value schema = readSchema("eval-set.schema.json");
  const auto accepted = acceptedEvalSetKeys();
  const json::object& eval = schema.at("properties").at("eval").as_object();
  const json::object& cases = schema.at("properties").at("cases").at("items").as_object();
  EXPECT_THAT(keysOf(eval.at("properties").as_object()), UnorderedElementsAreArray(accepted.at("eval")));
  EXPECT_THAT(keysOf(cases.at("properties").as_object()), UnorderedElementsAreArray(accepted.at("cases")));
  EXPECT_THAT(strings(eval.at("required")), UnorderedElementsAreArray({"name"}));
  EXPECT_THAT(strings(cases.at("required")), UnorderedElementsAreArray({"id", "task", "verify_command"}));
  const EvalSet defaults;
  EXPECT_EQ(eval.at("properties").at("samples").at("default").as_int64(), defaults.samples);
  EXPECT_EQ(eval.at("properties").at("timeout_seconds").at("default").as_int64(), defaults.timeoutSeconds);
  EXPECT_EQ(json::value_to<std::vector<int>>(eval.at("properties").at("pass_k").at("default")), defaults.passK);
  EXPECT_EQ(cases.at("properties").at("base").at("default").as_string(), EvalCase{}.base);
}

// The schema's rules this project uses: type (one or several), const,
// properties, required, additionalProperties (false or a schema), items,
// minimum, maximum and $ref into definitions.
class Validator {
 public:
  explicit Validator(json::value schema) : root_(std::move(schema)) {}
  void check(const json::value& v, const json::value& schema, const std::string& at) const {
    const json::object& s = schema.as_object();
    if (const auto* ref = s.if_contains("$ref")) {
      std::string name(ref->as_string());
      check(v, root_.at("definitions").at(name.substr(name.rfind('/') + 1)), at);
    }
    if (const auto* type = s.if_contains("type")) {
      bool ok = false;
      if (type->is_string()) {
        ok = is(v, type->as_string());
      } else {
        for (const auto& t : type->as_array()) ok = ok || is(v, t.as_string());
      }
      EXPECT_TRUE(ok) << at << ": " << json::serialize(v) << " is not " << json::serialize(*type);
    }
    if (const auto* c = s.if_contains("const")) {
      EXPECT_EQ(v, *c) << at;
    }
    if (v.is_number()) {
      const double x = v.to_number<double>();
      if (const auto* min = s.if_contains("minimum")) {
        EXPECT_GE(x, min->to_number<double>()) << at;
      }
      if (const auto* max = s.if_contains("maximum")) {
        EXPECT_LE(x, max->to_number<double>()) << at;
      }
    }
    if (v.is_object()) {
      const json::object& o = v.as_object();
      if (const auto* required = s.if_contains("required")) {
        for (const auto& key : required->as_array()) EXPECT_TRUE(o.contains(key.as_string())) << at << ": no " << key;
      }
      const json::object* properties = s.contains("properties") ? &s.at("properties").as_object() : nullptr;
      const json::value* extra = s.if_contains("additionalProperties");
      for (const auto& [key, member] : o) {
        const std::string path = at + "." + std::string(key);
        if (properties && properties->contains(key)) {
          check(member, properties->at(key), path);
        } else if (extra && extra->is_bool()) {
          EXPECT_TRUE(extra->as_bool()) << path << " is not in the schema";
        } else if (extra) {
          check(member, *extra, path);
        }
      }
    }
    if (v.is_array() && s.contains("items")) {
      for (std::size_t i = 0; i < v.as_array().size(); ++i) {
        check(v.as_array()[i], s.at("items"), at + "[" + std::to_string(i) + "]");
      }
    }
  }
  const json::value& root() const { return root_; }

 private:
  static bool is(const json::value& v, std::string_view type) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "boolean") return v.is_bool();
    if (type == "null") return v.is_null();
    if (type == "integer") return v.is_int64() || v.is_uint64();
    if (type == "number") return v.is_number();
    return false;
  }
  json::value root_;
};

Sample fullSample(int index, bool solved) {
  Sample s;
  s.caseId = "rounding";
  s.agent = "claude";
  s.index = index;
  s.solved = solved;
  s.error = solved ? std::nullopt : std::optional<std::string>("verification failed");
  s.score = solved ? 96.5 : 41;
  s.forgetestScore = solved ? 1.0 : 0.65;
  s.builds = true;
  s.testsPassed = 5;
  s.testsFailed = solved ? 0 : 2;
  s.lintWarnings = 1;
  s.costUsd = 0.0412;
  s.inputTokens = 18211;
  s.outputTokens = 1630;
  s.latencyMs = 48210;
  s.commit = std::string(40, 'c');
  s.status = "completed";
  s.verifyOutput = solved ? "1 passed in 0.01s\n" : "FAILED test_add.py::test_add\n1 failed in 0.02s\n";
  return s;
}

TEST(EvalDocsTest, EveryReportTheWriterProducesValidatesAndEveryDocumentedFieldIsWritten) {
  Validator validator(readSchema("eval-report.schema.json"));
  Report full;
  full.name = "shop";
  full.hydraVersion = "0.1.0";
  full.evalSetHash = std::string(40, 'e');
  full.startedAt = "2026-11-26T10:15:00.000Z";
  full.finishedAt = "2026-11-26T10:45:00.000Z";
  full.passK = {1, 5};  // pass@5 of 2 samples: undefined, null
  full.agentVersions = {{"claude", "2.1.3"}};
  full.baseCommits = {{"rounding", std::string(40, 'b')}};
  full.samples = {fullSample(0, true), fullSample(1, false)};
  aggregate(full);
  const json::value written = json::value_from(full);
  validator.check(written, validator.root(), "report");

  // Nothing documented is missing from what is written, at any level.
  const json::object& schema = validator.root().as_object();
  const json::object& definitions = schema.at("definitions").as_object();
  auto documented = [](const json::object& s) { return keysOf(s.at("properties").as_object()); };
  EXPECT_THAT(keysOf(written.as_object()), UnorderedElementsAreArray(documented(schema)));
  EXPECT_THAT(keysOf(written.at("samples").at(1).as_object()),
              UnorderedElementsAreArray(documented(definitions.at("sample").as_object())));
  EXPECT_THAT(keysOf(written.at("agents").at(0).as_object()),
              UnorderedElementsAreArray(documented(definitions.at("agent").as_object())));
  EXPECT_THAT(keysOf(written.at("cases").at(0).as_object()),
              UnorderedElementsAreArray(documented(definitions.at("case").as_object())));
  EXPECT_TRUE(written.at("agents").at(0).at("passAtK").at("5").is_null());

  // The least a report holds: a run that has just started.
  Report empty;
  empty.name = "shop";
  empty.passK = {1};
  aggregate(empty);
  validator.check(json::value_from(empty), validator.root(), "empty report");
}

}  // namespace
}  // namespace hydra::core::eval
