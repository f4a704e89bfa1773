#include "core/eval/report.h"

#include <gtest/gtest.h>

#include <functional>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include "core/util/json_fields.h"

namespace hydra::core::eval {
namespace {

namespace json = boost::json;

struct Run {
  bool solved;
  double score;
  bool builds;
  int passed;
  int failed;
  int lint;
  std::optional<double> cost;
  std::optional<std::int64_t> tokensIn;
  std::optional<std::int64_t> tokensOut;
  std::int64_t latencyMs;
};

Sample sample(const std::string& caseId, const std::string& agent, int index, const Run& run) {
  Sample s;
  s.caseId = caseId;
  s.agent = agent;
  s.index = index;
  s.solved = run.solved;
  s.score = run.score;
  s.builds = run.builds;
  s.testsPassed = run.passed;
  s.testsFailed = run.failed;
  s.lintWarnings = run.lint;
  s.forgetestScore = forgetestScore(run.builds, run.passed, run.failed, run.lint);
  s.costUsd = run.cost;
  s.inputTokens = run.tokensIn;
  s.outputTokens = run.tokensOut;
  s.latencyMs = run.latencyMs;
  s.status = run.builds ? "completed" : "failed";
  if (!run.builds) s.error = "build failed";
  s.commit = std::string(40, static_cast<char>('a' + index));
  return s;
}

// 2 cases x 2 agents x 3 samples, interleaved: codex appears first overall,
// but claude first within add-feature.
Report twoByTwo() {
  Report r;
  r.name = "smoke";
  r.hydraVersion = "0.9.0";
  r.evalSetHash = "3fa4c2";
  r.startedAt = "2025-06-01T10:00:00.000Z";
  r.finishedAt = "2025-06-01T10:05:00.000Z";
  r.passK = {1, 2, 5};
  r.agentVersions = {{"claude", "1.0.3"}, {"codex", "0.30.0"}, {"unused", "9"}};
  r.baseCommits = {{"fix-bug", std::string(40, '1')}, {"add-feature", std::string(40, '2')}};
  // clang-format off
  r.samples = {
    sample("fix-bug", "codex", 0,      {true,  90, true,  4, 0, 0,  0.10, 1000, 100, 10000}),
    sample("fix-bug", "claude", 0,     {true,  80, true,  3, 1, 0,  0.30, 3000, 300, 5000}),
    sample("fix-bug", "codex", 1,      {false, 50, true,  2, 2, 5,  0.20, 2000, 200, 20000}),
    sample("fix-bug", "claude", 1,     {true, 100, true,  4, 0, 0,  0.30, 3000, 300, 7000}),
    sample("fix-bug", "codex", 2,      {false,  0, false, 0, 0, 0,  std::nullopt, std::nullopt, std::nullopt, 30000}),
    sample("fix-bug", "claude", 2,     {false, 30, true,  0, 0, 0,  0.30, 3000, 300, 6000}),
    sample("add-feature", "claude", 0, {false, 20, true,  1, 3, 10, 0.40, std::nullopt, std::nullopt, 8000}),
    sample("add-feature", "codex", 0,  {true, 100, true,  4, 0, 0,  0.10, 1000, 100, 10000}),
    sample("add-feature", "claude", 1, {false, 10, false, 0, 0, 0,  0.40, std::nullopt, std::nullopt, 9000}),
    sample("add-feature", "codex", 1,  {true,  95, true,  4, 0, 1,  0.10, 1000, 100, 20000}),
    sample("add-feature", "claude", 2, {false, 30, true,  0, 4, 0,  0.40, std::nullopt, std::nullopt, 10000}),
    sample("add-feature", "codex", 2,  {true,  85, true,  3, 1, 0,  0.10, 1000, 100, 30000}),
  };
  // clang-format on
  return r;
}

TEST(AggregateTest, CasesByHand) {
  Report r = twoByTwo();
  aggregate(r);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].caseId, "fix-bug");
  EXPECT_EQ(r.cases[1].caseId, "add-feature");
  ASSERT_EQ(r.cases[0].agents.size(), 2u);
  ASSERT_EQ(r.cases[1].agents.size(), 2u);

  const CaseAgentStats& fixCodex = r.cases[0].agents[0];
  EXPECT_EQ(fixCodex.agent, "codex");
  EXPECT_EQ(fixCodex.n, 3);
  EXPECT_EQ(fixCodex.c, 1);
  EXPECT_DOUBLE_EQ(*fixCodex.passAtK.at(1), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(*fixCodex.passAtK.at(2), 2.0 / 3.0);  // 1 - C(2,2)/C(3,2)
  EXPECT_EQ(fixCodex.passAtK.at(5), std::nullopt);        // k > n
  EXPECT_DOUBLE_EQ(fixCodex.meanScore, 140.0 / 3.0);
  EXPECT_DOUBLE_EQ(fixCodex.meanForgetestScore, (1.0 + 0.70 + 0.0) / 3.0);

  const CaseAgentStats& fixClaude = r.cases[0].agents[1];
  EXPECT_EQ(fixClaude.agent, "claude");
  EXPECT_EQ(fixClaude.c, 2);
  EXPECT_DOUBLE_EQ(*fixClaude.passAtK.at(1), 2.0 / 3.0);
  EXPECT_EQ(*fixClaude.passAtK.at(2), 1.0);  // n - c = 1 < 2
  EXPECT_DOUBLE_EQ(fixClaude.meanScore, 70.0);
  EXPECT_DOUBLE_EQ(fixClaude.meanForgetestScore, (0.875 + 1.0 + 0.5) / 3.0);

  const CaseAgentStats& addClaude = r.cases[1].agents[0];
  EXPECT_EQ(addClaude.agent, "claude") << "agents within a case in the order of their first sample there";
  EXPECT_EQ(addClaude.c, 0);
  EXPECT_EQ(*addClaude.passAtK.at(1), 0.0);
  EXPECT_EQ(*addClaude.passAtK.at(2), 0.0);
  EXPECT_DOUBLE_EQ(addClaude.meanScore, 20.0);
  EXPECT_DOUBLE_EQ(addClaude.meanForgetestScore, (0.525 + 0.0 + 0.5) / 3.0);

  const CaseAgentStats& addCodex = r.cases[1].agents[1];
  EXPECT_EQ(addCodex.c, 3);
  EXPECT_EQ(*addCodex.passAtK.at(1), 1.0);
  EXPECT_EQ(*addCodex.passAtK.at(2), 1.0);
  EXPECT_EQ(addCodex.passAtK.at(5), std::nullopt);
  EXPECT_DOUBLE_EQ(addCodex.meanScore, 280.0 / 3.0);
  EXPECT_DOUBLE_EQ(addCodex.meanForgetestScore, (1.0 + 0.99 + 0.875) / 3.0);
}

TEST(AggregateTest, AgentsByHand) {
  Report r = twoByTwo();
  aggregate(r);
  ASSERT_EQ(r.agents.size(), 2u);

  const AgentStats& codex = r.agents[0];
  EXPECT_EQ(codex.agent, "codex") << "agents in the order of their first sample";
  EXPECT_EQ(codex.version, "0.30.0");
  EXPECT_DOUBLE_EQ(*codex.passAtK.at(1), (1.0 / 3.0 + 1.0) / 2.0);
  EXPECT_DOUBLE_EQ(*codex.passAtK.at(2), (2.0 / 3.0 + 1.0) / 2.0);
  EXPECT_EQ(codex.passAtK.at(5), std::nullopt);
  EXPECT_DOUBLE_EQ(codex.compileRate, 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(codex.testPassRate, (1.0 + 0.5 + 1.0 + 1.0 + 0.75) / 5.0);
  EXPECT_DOUBLE_EQ(codex.meanScore, 70.0);
  EXPECT_DOUBLE_EQ(codex.meanForgetestScore, (1.0 + 0.70 + 0.0 + 1.0 + 0.99 + 0.875) / 6.0);
  EXPECT_DOUBLE_EQ(codex.totalCostUsd, 0.6);
  EXPECT_DOUBLE_EQ(codex.meanLatencyMs, 20000.0);
  EXPECT_EQ(codex.inputTokens, 6000);
  EXPECT_EQ(codex.outputTokens, 600);
  EXPECT_EQ(codex.samples, 6);
  EXPECT_EQ(codex.solved, 4);
  EXPECT_EQ(codex.passAt1Wilson, wilson95(4, 6));
  EXPECT_NEAR(codex.passAt1Wilson.low, 0.299993315138392, 1e-12);

  const AgentStats& claude = r.agents[1];
  EXPECT_EQ(claude.agent, "claude");
  EXPECT_EQ(claude.version, "1.0.3");
  EXPECT_DOUBLE_EQ(*claude.passAtK.at(1), (2.0 / 3.0 + 0.0) / 2.0);
  EXPECT_DOUBLE_EQ(*claude.passAtK.at(2), 0.5);
  EXPECT_EQ(claude.passAtK.at(5), std::nullopt);
  EXPECT_DOUBLE_EQ(claude.compileRate, 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(claude.testPassRate, (0.75 + 1.0 + 0.25 + 0.0) / 4.0) << "samples without tests left out";
  EXPECT_DOUBLE_EQ(claude.meanScore, 45.0);
  EXPECT_DOUBLE_EQ(claude.meanForgetestScore, (0.875 + 1.0 + 0.5 + 0.525 + 0.0 + 0.5) / 6.0);
  EXPECT_DOUBLE_EQ(claude.totalCostUsd, 2.1);
  EXPECT_DOUBLE_EQ(claude.meanLatencyMs, 7500.0);
  EXPECT_EQ(claude.inputTokens, 9000) << "only the samples that reported tokens";
  EXPECT_EQ(claude.outputTokens, 900);
  EXPECT_EQ(claude.samples, 6);
  EXPECT_EQ(claude.solved, 2);
  EXPECT_EQ(claude.passAt1Wilson, wilson95(2, 6));
}

TEST(AggregateTest, AnAgentMissingFromACaseAveragesOverItsOwnCases) {
  Report r;
  r.passK = {1};
  r.samples = {sample("a", "x", 0, {true, 100, true, 1, 0, 0, {}, {}, {}, 1}),
               sample("a", "y", 0, {false, 0, true, 1, 0, 0, {}, {}, {}, 1}),
               sample("b", "x", 0, {false, 0, true, 1, 0, 0, {}, {}, {}, 1})};
  aggregate(r);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[1].agents.size(), 1u);
  ASSERT_EQ(r.agents.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.agents[0].passAtK.at(1), 0.5);
  EXPECT_EQ(*r.agents[1].passAtK.at(1), 0.0);
  EXPECT_EQ(r.agents[1].version, "");
  EXPECT_EQ(r.agents[1].testPassRate, 1.0);
}

TEST(AggregateTest, ReplacesStaleStatisticsAndHandlesNoSamples) {
  Report r = twoByTwo();
  aggregate(r);
  r.samples.clear();
  aggregate(r);
  EXPECT_TRUE(r.cases.empty());
  EXPECT_TRUE(r.agents.empty());

  Report again = twoByTwo();
  aggregate(again);
  const Report once = again;
  aggregate(again);
  EXPECT_EQ(again, once);
}

TEST(AggregateTest, NoTestsMeansATestPassRateOfZero) {
  Report r;
  r.passK = {1};
  r.samples = {sample("a", "x", 0, {true, 50, true, 0, 0, 0, {}, {}, {}, 1})};
  aggregate(r);
  EXPECT_EQ(r.agents[0].testPassRate, 0.0);
  EXPECT_EQ(r.agents[0].totalCostUsd, 0.0);
}

// --- JSON ----------------------------------------------------------------------

TEST(ReportJsonTest, RoundTrips) {
  Report r = twoByTwo();
  aggregate(r);
  const json::value v = json::value_from(r);
  EXPECT_EQ(json::value_to<Report>(v), r);

  const Report reread = json::value_to<Report>(json::parse(json::serialize(v)));
  EXPECT_EQ(reread.samples, r.samples);
  ASSERT_EQ(reread.agents.size(), r.agents.size());
  for (std::size_t i = 0; i < r.agents.size(); ++i) {
    EXPECT_DOUBLE_EQ(reread.agents[i].meanForgetestScore, r.agents[i].meanForgetestScore);
    EXPECT_DOUBLE_EQ(*reread.agents[i].passAtK.at(1), *r.agents[i].passAtK.at(1));
  }
}

TEST(ReportJsonTest, TheShapeOfTheJson) {
  Report r = twoByTwo();
  aggregate(r);
  const json::object o = json::value_from(r).as_object();
  EXPECT_EQ(o.begin()->key(), "schema");
  EXPECT_EQ(o.at("schema"), "hydra.eval/1");
  EXPECT_EQ(o.at("passK"), json::parse("[1, 2, 5]"));
  EXPECT_EQ(o.at("baseCommits").at("fix-bug").as_string(), std::string(40, '1'));
  EXPECT_EQ(o.at("agentVersions").at("codex"), "0.30.0");

  const json::object& claude = o.at("cases").at(0).at("agents").at(1).as_object();
  EXPECT_EQ(json::serialize(claude.at("passAtK")), R"({"1":6.666666666666666E-1,"2":1E0,"5":null})");
  EXPECT_EQ(json::value_from(r.agents[0]).at("passAt1Wilson").as_object().size(), 2u);

  const json::object& solved = o.at("samples").at(0).as_object();
  EXPECT_FALSE(solved.contains("error")) << "absent optionals are left out";
  EXPECT_EQ(solved.at("costUsd"), 0.10);
  const json::object& failed = o.at("samples").at(4).as_object();
  EXPECT_EQ(failed.at("error"), "build failed");
  EXPECT_FALSE(failed.contains("costUsd"));
  EXPECT_FALSE(failed.contains("inputTokens"));
  for (const char* key : {"caseId", "agent", "index", "solved", "score", "forgetestScore", "builds", "testsPassed",
                          "testsFailed", "lintWarnings", "latencyMs", "commit", "status"}) {
    EXPECT_TRUE(failed.contains(key)) << key;
  }
}

TEST(ReportJsonTest, AnEmptyReportRoundTrips) {
  const Report r;
  const json::value v = json::value_from(r);
  EXPECT_FALSE(v.as_object().contains("startedAt"));
  EXPECT_EQ(json::value_to<Report>(v), r);
  const Report minimal = json::value_to<Report>(json::parse(R"({"schema": "hydra.eval/1"})"));
  EXPECT_EQ(minimal, r);
}

// What reading `text` throws; "" when it reads.
std::string readError(const std::string& text) {
  try {
    (void)json::value_to<Report>(json::parse(text));
  } catch (const JsonFieldError& e) {
    return e.what();
  }
  return "";
}

// The valid report's JSON with `edit` applied.
std::string edited(const std::function<void(json::object&)>& edit) {
  Report r = twoByTwo();
  aggregate(r);
  json::value v = json::value_from(r);
  edit(v.as_object());
  return json::serialize(v);
}

TEST(ReportJsonTest, RejectsAnotherSchema) {
  const std::string other = readError(R"({"schema": "hydra.eval/2", "samples": []})");
  EXPECT_EQ(other.rfind("schema: expected \"hydra.eval/1\", got \"hydra.eval/2\"", 0), 0u) << other;
  EXPECT_EQ(readError(R"({"samples": []})"), "schema: missing");
  EXPECT_EQ(readError(R"({"schema": 1})"), "schema: expected a string");
  EXPECT_EQ(readError("[]"), "expected an object");
}

TEST(ReportJsonTest, BadFieldsAreNamedByTheirPath) {
  EXPECT_EQ(readError(edited([](json::object& o) { o["samples"].as_array()[1].as_object()["score"] = "high"; })),
            "samples[1].score: expected a number that fits: not a number");
  EXPECT_EQ(readError(edited([](json::object& o) { o["samples"].as_array()[0].as_object().erase("solved"); })),
            "samples[0].solved: missing");
  EXPECT_EQ(readError(edited([](json::object& o) { o["samples"].as_array()[2].as_object()["builds"] = 1; })),
            "samples[2].builds: expected true or false");
  EXPECT_EQ(readError(edited([](json::object& o) { o["samples"].as_array()[3].as_object()["index"] = -1; })),
            "samples[3].index: expected a number >= 0");
  EXPECT_EQ(readError(edited([](json::object& o) { o["samples"] = json::object(); })),
            "samples: expected an array");
  EXPECT_EQ(readError(edited([](json::object& o) { o["passK"] = json::parse("[1, 0]"); })),
            "passK[1]: expected an integer k >= 1");
  EXPECT_EQ(readError(edited([](json::object& o) { o["passK"] = json::parse(R"([1, "2"])"); })),
            "passK[1]: expected an integer k >= 1");
  EXPECT_EQ(readError(edited([](json::object& o) { o["agentVersions"].as_object()["codex"] = 3; })),
            "agentVersions.codex: expected a string");
}

TEST(ReportJsonTest, BadStatisticsAreNamedByTheirPath) {
  auto caseAgent = [](json::object& o) -> json::object& {
    return o["cases"].as_array()[1].as_object()["agents"].as_array()[0].as_object();
  };
  EXPECT_EQ(readError(edited([&](json::object& o) { caseAgent(o)["passAtK"].as_object()["1"] = "x"; })),
            "cases[1].agents[0].passAtK.1: expected a number or null");
  EXPECT_EQ(readError(edited([&](json::object& o) { caseAgent(o)["passAtK"].as_object()["k1"] = 0.5; })),
            "cases[1].agents[0].passAtK.k1: expected a key that is an integer k >= 1");
  EXPECT_EQ(readError(edited([&](json::object& o) { caseAgent(o)["passAtK"] = json::array(); })),
            "cases[1].agents[0].passAtK: expected an object keyed by k");
  EXPECT_EQ(readError(edited([&](json::object& o) { caseAgent(o)["c"] = 4; })),
            "cases[1].agents[0].c: expected at most n (3)");
  EXPECT_EQ(readError(edited([](json::object& o) {
              o["agents"].as_array()[1].as_object()["passAt1Wilson"].as_object().erase("low");
            })),
            "agents[1].passAt1Wilson.low: missing");
  EXPECT_EQ(readError(edited([](json::object& o) {
              o["agents"].as_array()[0].as_object()["passAt1Wilson"].as_object()["high"] = 1.5;
            })),
            "agents[0].passAt1Wilson.high: expected 0 <= low <= high <= 1");
  EXPECT_EQ(readError(edited([](json::object& o) { o["agents"].as_array()[0].as_object().erase("passAt1Wilson"); })),
            "agents[0].passAt1Wilson: missing");
  EXPECT_EQ(readError(edited([](json::object& o) { o["agents"].as_array()[0].as_object()["solved"] = 7; })),
            "agents[0].solved: expected at most samples (6)");
}

TEST(ReportJsonTest, UnknownFieldsAreIgnored) {
  EXPECT_EQ(readError(edited([](json::object& o) {
              o["future"] = true;
              o["samples"].as_array()[0].as_object()["future"] = 1;
            })),
            "");
}

// --- rendering -----------------------------------------------------------------

Report small() {
  Report r;
  r.name = "smoke";
  r.hydraVersion = "0.9.0";
  r.evalSetHash = "3fa4c2";
  r.startedAt = "2025-06-01T10:00:00.000Z";
  r.finishedAt = "2025-06-01T10:05:00.000Z";
  r.passK = {1, 2};
  r.agentVersions = {{"claude", "1.0.3"}};
  r.baseCommits = {{"fix-bug", "0123456789abcdef0123456789abcdef01234567"}};
  r.samples = {sample("fix-bug", "claude", 0, {true, 80, true, 3, 1, 0, 0.25, {}, {}, 12000}),
               sample("fix-bug", "claude", 1, {false, 40, true, 1, 3, 0, 0.5, {}, {}, 18000}),
               sample("fix-bug", "codex", 0, {false, 0, false, 0, 0, 0, {}, {}, {}, 4000})};
  aggregate(r);
  return r;
}

TEST(RenderReportTest, Text) {
  EXPECT_EQ(renderText(small()),
            "Eval report: smoke\n"
            "hydra 0.9.0, eval set 3fa4c2, started 2025-06-01T10:00:00.000Z, finished 2025-06-01T10:05:00.000Z\n"
            "3 samples, 1 case, 2 agents\n"
            "\n"
            "Agents\n"
            "  agent   version  pass@1  pass@2  compile  tests  score     cost  latency  pass@1 95% CI\n"
            "  claude  1.0.3     50.0%  100.0%   100.0%  50.0%   60.0  $0.7500    15.0s  [9.5%, 90.5%]\n"
            "  codex   -          0.0%     n/a     0.0%    n/a    0.0      n/a     4.0s  [0.0%, 79.3%]\n"
            "\n"
            "Case fix-bug (base 0123456789ab)\n"
            "  agent   n  c  pass@1  pass@2  score\n"
            "  claude  2  1   50.0%  100.0%   60.0\n"
            "  codex   1  0    0.0%     n/a    0.0\n");
}

TEST(RenderReportTest, Markdown) {
  EXPECT_EQ(renderMarkdown(small()),
            "## Eval report: smoke\n"
            "\n"
            "hydra 0.9.0, eval set `3fa4c2`, started 2025-06-01T10:00:00.000Z, finished 2025-06-01T10:05:00.000Z\n"
            "\n"
            "3 samples, 1 case, 2 agents\n"
            "\n"
            "### Agents\n"
            "\n"
            "| agent | version | pass@1 | pass@2 | compile | tests | score | cost | latency | pass@1 95% CI |\n"
            "|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
            "| claude | 1.0.3 | 50.0% | 100.0% | 100.0% | 50.0% | 60.0 | $0.7500 | 15.0s | [9.5%, 90.5%] |\n"
            "| codex | - | 0.0% | n/a | 0.0% | n/a | 0.0 | n/a | 4.0s | [0.0%, 79.3%] |\n"
            "\n"
            "### Case fix-bug\n"
            "\n"
            "Base commit `0123456789ab`.\n"
            "\n"
            "| agent | n | c | pass@1 | pass@2 | score |\n"
            "|:---|---:|---:|---:|---:|---:|\n"
            "| claude | 2 | 1 | 50.0% | 100.0% | 60.0 |\n"
            "| codex | 1 | 0 | 0.0% | n/a | 0.0 |\n");
}

TEST(RenderReportTest, WithoutProvenanceOrBaseCommits) {
  Report r;
  r.passK = {1};
  r.samples = {sample("only", "x", 0, {true, 100, true, 1, 0, 0, {}, {}, {}, 500})};
  aggregate(r);
  EXPECT_EQ(renderText(r),
            "Eval report\n"
            "1 sample, 1 case, 1 agent\n"
            "\n"
            "Agents\n"
            "  agent  version  pass@1  compile   tests  score  cost  latency    pass@1 95% CI\n"
            "  x      -        100.0%   100.0%  100.0%  100.0   n/a     0.5s  [20.7%, 100.0%]\n"
            "\n"
            "Case only\n"
            "  agent  n  c  pass@1  score\n"
            "  x      1  1  100.0%  100.0\n");
}

TEST(TableTest, TextPadsAndAligns) {
  Table t;
  t.header = {"name", "n", "note"};
  t.align = "lrl";
  t.rows = {{"a", "100", "x"}, {"longer", "2", ""}};
  EXPECT_EQ(tableText(t, ""),
            "name      n  note\n"
            "a       100  x\n"
            "longer    2\n");
}

TEST(TableTest, MarkdownEscapesPipesAndLineBreaks) {
  Table t;
  t.header = {"case", "score"};
  t.rows = {{"a|b", "1"}, {"two\nlines", "2"}};
  EXPECT_EQ(tableMarkdown(t),
            "| case | score |\n"
            "|:---|---:|\n"
            "| a\\|b | 1 |\n"
            "| two lines | 2 |\n");
}

}  // namespace
}  // namespace hydra::core::eval
