#include "core/eval/compare.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

namespace hydra::core::eval {
namespace {

namespace json = boost::json;

CaseAgentStats stats(const std::string& agent, PassAtK passAtK, double meanScore) {
  CaseAgentStats s;
  s.agent = agent;
  s.n = 3;
  s.passAtK = std::move(passAtK);
  s.meanScore = meanScore;
  return s;
}

Report withCases(std::vector<CaseStats> cases) {
  Report r;
  r.cases = std::move(cases);
  return r;
}

const Change* find(const Comparison& c, const std::string& caseId, const std::string& agent,
                   const std::string& metric) {
  for (const Change& x : c.changes) {
    if (x.caseId == caseId && x.agent == agent && x.metric == metric) return &x;
  }
  return nullptr;
}

TEST(CompareTest, ADropOfExactlyTheThresholdIsNotARegression) {
  const Report before = withCases({{"a", {stats("x", {{1, 0.5}}, 70)}}});
  const Report exactly = withCases({{"a", {stats("x", {{1, 0.45}}, 65)}}});
  const Comparison c = compare(before, exactly);
  EXPECT_EQ(c.threshold, 0.05);
  ASSERT_EQ(c.changes.size(), 2u);
  EXPECT_EQ(c.changes[0].metric, "pass@1");
  EXPECT_EQ(c.changes[0].verdict, "unchanged");
  EXPECT_NEAR(c.changes[0].delta, -0.05, 1e-12);
  EXPECT_EQ(c.changes[1].metric, "meanScore");
  EXPECT_EQ(c.changes[1].verdict, "unchanged");
  EXPECT_DOUBLE_EQ(c.changes[1].baseline, 0.70) << "meanScore on a 0..1 scale";
  EXPECT_DOUBLE_EQ(c.changes[1].current, 0.65);
  EXPECT_EQ(c.regressions, 0);
  EXPECT_EQ(c.improvements, 0);
}

TEST(CompareTest, ADropBySlightlyMoreIsARegression) {
  const Report before = withCases({{"a", {stats("x", {{1, 0.5}}, 70)}}});
  const Report worse = withCases({{"a", {stats("x", {{1, 0.449}}, 64.9)}}});
  const Comparison c = compare(before, worse);
  ASSERT_EQ(c.changes.size(), 2u);
  EXPECT_EQ(c.changes[0].verdict, "regression");
  EXPECT_EQ(c.changes[1].verdict, "regression");
  EXPECT_NEAR(c.changes[1].delta, -0.051, 1e-12);
  EXPECT_EQ(c.regressions, 2);
  EXPECT_EQ(c.improvements, 0);
}

TEST(CompareTest, RisesBeyondTheThresholdAreImprovements) {
  const Report before = withCases({{"a", {stats("x", {{1, 0.5}, {2, 0.6}}, 50)}}});
  const Report better = withCases({{"a", {stats("x", {{1, 0.55}, {2, 0.7}}, 55.1)}}});
  const Comparison c = compare(before, better);
  EXPECT_EQ(find(c, "a", "x", "pass@1")->verdict, "unchanged") << "a rise of exactly the threshold";
  EXPECT_EQ(find(c, "a", "x", "pass@2")->verdict, "improvement");
  EXPECT_NEAR(find(c, "a", "x", "pass@2")->delta, 0.1, 1e-12);
  EXPECT_EQ(find(c, "a", "x", "meanScore")->verdict, "improvement");
  EXPECT_EQ(c.improvements, 2);
  EXPECT_EQ(c.regressions, 0);
}

TEST(CompareTest, TheThresholdIsTheCallers) {
  const Report before = withCases({{"a", {stats("x", {{1, 0.5}}, 50)}}});
  const Report after = withCases({{"a", {stats("x", {{1, 0.42}}, 62)}}});
  const Comparison loose = compare(before, after, 0.1);
  EXPECT_EQ(loose.threshold, 0.1);
  EXPECT_EQ(loose.regressions, 0);
  EXPECT_EQ(loose.improvements, 1);
  const Comparison strict = compare(before, after, 0.0);
  EXPECT_EQ(strict.regressions, 1);
  EXPECT_EQ(strict.improvements, 1);
  const Comparison same = compare(before, before, 0.0);
  EXPECT_EQ(same.regressions + same.improvements, 0) << "no change is never a change, even at 0";
}

TEST(CompareTest, PassAtKUndefinedOnEitherSideIsNotCompared) {
  const Report before = withCases({{"a", {stats("x", {{1, 0.5}, {5, std::nullopt}, {10, 0.9}}, 50)}}});
  const Report after = withCases({{"a", {stats("x", {{1, 0.5}, {5, 0.8}, {10, std::nullopt}, {20, 1.0}}, 50)}}});
  const Comparison c = compare(before, after);
  ASSERT_EQ(c.changes.size(), 2u);
  EXPECT_EQ(c.changes[0].metric, "pass@1");
  EXPECT_EQ(c.changes[1].metric, "meanScore");
  EXPECT_EQ(find(c, "a", "x", "pass@5"), nullptr);
  EXPECT_EQ(find(c, "a", "x", "pass@10"), nullptr);
  EXPECT_EQ(find(c, "a", "x", "pass@20"), nullptr) << "k only one report computed";
}

TEST(CompareTest, PairsInOnlyOneReportAreListedNotCompared) {
  const Report before = withCases({{"a", {stats("x", {{1, 0.5}}, 50), stats("y", {{1, 0.5}}, 50)}},
                                   {"gone", {stats("x", {{1, 1.0}}, 90)}}});
  const Report after = withCases({{"new", {stats("x", {{1, 0.0}}, 0)}},
                                  {"a", {stats("x", {{1, 0.5}}, 50), stats("z", {{1, 0.0}}, 0)}}});
  const Comparison c = compare(before, after);
  EXPECT_EQ(c.onlyInBaseline, (std::vector<std::string>{"a/y", "gone/x"}));
  EXPECT_EQ(c.onlyInCurrent, (std::vector<std::string>{"new/x", "a/z"}));
  ASSERT_EQ(c.changes.size(), 2u);
  for (const Change& x : c.changes) {
    EXPECT_EQ(x.caseId, "a");
    EXPECT_EQ(x.agent, "x");
  }
  EXPECT_EQ(c.regressions, 0);
}

TEST(CompareTest, ReportsAggregatedFromSamples) {
  auto sampleOf = [](const std::string& caseId, int index, bool solved, double score) {
    Sample s;
    s.caseId = caseId;
    s.agent = "claude";
    s.index = index;
    s.solved = solved;
    s.score = score;
    s.builds = true;
    s.status = "completed";
    return s;
  };
  Report before;
  before.passK = {1};
  before.samples = {sampleOf("a", 0, true, 90), sampleOf("a", 1, true, 90)};
  aggregate(before);
  Report after = before;
  after.samples[1].solved = false;
  after.samples[1].score = 30;
  aggregate(after);
  const Comparison c = compare(before, after);
  EXPECT_EQ(c.regressions, 2);
  EXPECT_DOUBLE_EQ(find(c, "a", "claude", "pass@1")->delta, -0.5);
  EXPECT_DOUBLE_EQ(find(c, "a", "claude", "meanScore")->delta, -0.3);
}

// fix-bug/claude gets worse at pass@1 and pass@2, its score within the
// threshold; fix-bug/codex gets better at pass@1 and has no baseline pass@2.
Comparison example() {
  const Report before = withCases({
      {"fix-bug", {stats("claude", {{1, 2.0 / 3.0}, {2, 1.0}}, 70), stats("codex", {{1, 0.2}, {2, std::nullopt}}, 50)}},
      {"old-case", {stats("claude", {{1, 0.5}, {2, 1.0}}, 40)}},
  });
  const Report after = withCases({
      {"fix-bug", {stats("claude", {{1, 1.0 / 3.0}, {2, 2.0 / 3.0}}, 72), stats("codex", {{1, 0.5}, {2, 0.9}}, 50)}},
      {"new-case", {stats("claude", {{1, 1.0}, {2, 1.0}}, 100)}},
  });
  return compare(before, after);
}

TEST(RenderCompareTest, Text) {
  EXPECT_EQ(renderCompareText(example()),
            "Eval comparison: 2 regressions, 1 improvement, 2 unchanged (threshold 0.05)\n"
            "  case     agent   metric  baseline  current   delta  verdict\n"
            "  fix-bug  claude  pass@1     0.667    0.333  -0.333  regression\n"
            "  fix-bug  claude  pass@2     1.000    0.667  -0.333  regression\n"
            "  fix-bug  codex   pass@1     0.200    0.500  +0.300  improvement\n"
            "Only in baseline (not compared): old-case/claude\n"
            "Only in current (not compared): new-case/claude\n");
}

TEST(RenderCompareTest, TextWithNothingChanged) {
  const Report r = withCases({{"a", {stats("x", {{1, 0.5}}, 50)}}});
  EXPECT_EQ(renderCompareText(compare(r, r, 0.1)),
            "Eval comparison: 0 regressions, 0 improvements, 2 unchanged (threshold 0.1)\n");
}

TEST(RenderCompareTest, Markdown) {
  EXPECT_EQ(renderCompareMarkdown(example()),
            "### Eval comparison\n"
            "\n"
            "**2 regressions, 1 improvement**, 2 unchanged (threshold 0.05)\n"
            "\n"
            "| case | agent | metric | baseline | current | delta | verdict |\n"
            "|:---|:---|:---|---:|---:|---:|:---|\n"
            "| fix-bug | claude | pass@1 | 0.667 | 0.333 | -0.333 | regression |\n"
            "| fix-bug | claude | pass@2 | 1.000 | 0.667 | -0.333 | regression |\n"
            "| fix-bug | codex | pass@1 | 0.200 | 0.500 | +0.300 | improvement |\n"
            "\n"
            "Only in baseline (not compared):\n"
            "\n"
            "- `old-case/claude`\n"
            "\n"
            "Only in current (not compared):\n"
            "\n"
            "- `new-case/claude`\n");
}

TEST(RenderCompareTest, MarkdownWithNothingChanged) {
  const Report r = withCases({{"a", {stats("x", {{1, 0.5}}, 50)}}});
  EXPECT_EQ(renderCompareMarkdown(compare(r, r)),
            "### Eval comparison\n"
            "\n"
            "**0 regressions, 0 improvements**, 2 unchanged (threshold 0.05)\n");
}

TEST(RenderCompareTest, Json) {
  const json::value v = json::value_from(example());
  const json::object& o = v.as_object();
  EXPECT_EQ(o.at("threshold"), 0.05);
  EXPECT_EQ(o.at("regressions"), 2);
  EXPECT_EQ(o.at("improvements"), 1);
  EXPECT_EQ(o.at("onlyInBaseline"), json::parse(R"(["old-case/claude"])"));
  EXPECT_EQ(o.at("onlyInCurrent"), json::parse(R"(["new-case/claude"])"));
  const json::array& changes = o.at("changes").as_array();
  ASSERT_EQ(changes.size(), 5u) << "every compared metric, unchanged ones too";
  EXPECT_EQ(changes[4], json::parse(R"({"caseId": "fix-bug", "agent": "codex", "metric": "meanScore",
                                        "baseline": 0.5, "current": 0.5, "delta": 0.0, "verdict": "unchanged"})"));
  const json::object& first = changes[0].as_object();
  EXPECT_EQ(first.at("caseId"), "fix-bug");
  EXPECT_EQ(first.at("agent"), "claude");
  EXPECT_EQ(first.at("metric"), "pass@1");
  EXPECT_EQ(first.at("verdict"), "regression");
  EXPECT_NEAR(first.at("delta").as_double(), -1.0 / 3.0, 1e-12);

  const json::value empty = json::value_from(Comparison{});
  EXPECT_EQ(empty, json::parse(R"({"threshold": 0.05, "regressions": 0, "improvements": 0, "changes": [],
                                   "onlyInBaseline": [], "onlyInCurrent": []})"));
}

}  // namespace
}  // namespace hydra::core::eval
