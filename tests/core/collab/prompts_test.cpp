#include "core/collab/prompts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hydra::core::collab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ExpandTemplateTest, ReplacesEachPlaceholderOnceAndNeverRescansAValue) {
  EXPECT_EQ(expandTemplate("Task: {task}\nDiff: {diff}\n{task}", {{"task", "fix it"}, {"diff", "+x"}}),
            "Task: fix it\nDiff: +x\nfix it");
  // A task that itself holds a placeholder is passed as written.
  EXPECT_EQ(expandTemplate("{task} / {review}", {{"task", "say {review}"}, {"review", "LGTM"}}), "say {review} / LGTM");
  // Unknown placeholders, stray braces and JSON stay as they are.
  EXPECT_EQ(expandTemplate("{unknown} {\"a\": 1} {", {{"task", "t"}}), "{unknown} {\"a\": 1} {");
  EXPECT_EQ(expandTemplate("", {{"task", "t"}}), "");
}

TEST(BoundedTest, KeepsShortTextAndCutsLongTextAtALineWithANote) {
  EXPECT_EQ(bounded("short", 100, "git diff a b"), "short");
  std::string text;
  for (int i = 0; i < 100; ++i) text += "line " + std::to_string(i) + "\n";
  std::string cut = bounded(text, 200, "git diff a b");
  EXPECT_LT(cut.size(), 300u);
  EXPECT_THAT(cut, HasSubstr("line 0\n"));
  EXPECT_THAT(cut, Not(HasSubstr("line 99")));
  EXPECT_THAT(cut, HasSubstr("more bytes left out; all of it: git diff a b]"));
  // The kept part is whole lines of the text.
  const std::string kept = cut.substr(0, cut.find("\n[...")) + "\n";
  EXPECT_EQ(text.compare(0, kept.size(), kept), 0) << kept;
}

TEST(BoundedTest, NeverLeavesBrokenUtf8) {
  std::string text(10, 'a');
  text += "é";  // two bytes: a cut at 11 falls inside it
  text += std::string(10, 'b');
  std::string cut = bounded(text, 11, "");
  EXPECT_THAT(cut, Not(HasSubstr("\xC3\n")));
  EXPECT_THAT(cut, HasSubstr("more bytes left out]"));
}

scoring::AgentScore failingScore() {
  scoring::AgentScore s;
  s.agentId = "builder@1";
  s.total = 62.5;
  s.breakdown.build = 100;
  s.breakdown.tests = 50;
  s.breakdown.diffSize = 100;
  s.breakdown.speed = 100;
  s.diff = scoring::DiffStats{3, 1, 1};
  scoring::CheckResult build;
  build.command = "make";
  build.exitCode = 0;
  s.checks.build = build;
  scoring::CheckResult tests;
  tests.command = "pytest -q";
  tests.exitCode = 1;
  tests.tests = scoring::TestCounts{1, 1, 0};
  tests.output = "FAILED test_calc.py::test_add - assert -1 == 5\n1 failed, 1 passed\n";
  s.checks.tests = tests;
  s.testChanges = scoring::TestChanges{{}, {"test_calc.py::test_add"}, {}, {}};
  return s;
}

TEST(ScoresTextTest, GivesEveryPartAndTheOutputOfWhatFailed) {
  std::string text = scoresText(failingScore());
  EXPECT_THAT(text, HasSubstr("Total: 62.5 / 100"));
  EXPECT_THAT(text, HasSubstr("  tests: 50.0\n"));
  EXPECT_THAT(text, HasSubstr("  lint: not measured\n"));
  EXPECT_THAT(text, HasSubstr("Diff: +3 -1 in 1 file(s)"));
  EXPECT_THAT(text, HasSubstr("Tests broken against the base: test_calc.py::test_add"));
  EXPECT_THAT(text, HasSubstr("- build (`make`): passed\n"));
  EXPECT_THAT(text, HasSubstr("- tests (`pytest -q`): failed (exit 1), 1 passed, 1 failed"));
  EXPECT_THAT(text, HasSubstr("    FAILED test_calc.py::test_add - assert -1 == 5\n"));
}

TEST(ScoresTextTest, CarriesOnlyTheEndOfAHugeOutput) {
  scoring::AgentScore s = failingScore();
  s.checks.tests->output = std::string(100 * 1024, 'x') + "\nthe last line\n";
  std::string text = scoresText(s);
  EXPECT_LT(text.size(), kMaxCheckOutputBytes + 1024);
  EXPECT_THAT(text, HasSubstr("the last line"));
}

TEST(ApprovesTest, LooksForTheMarkerAnywhereAsWritten) {
  EXPECT_TRUE(approves("Looks right.\nLGTM", "LGTM"));
  EXPECT_TRUE(approves("LGTM!", "LGTM"));
  EXPECT_FALSE(approves("lgtm", "LGTM"));
  EXPECT_FALSE(approves("Not yet: add tests.", "LGTM"));
  EXPECT_FALSE(approves("anything", ""));
}

TEST(FirstLineTest, SkipsBlankLinesAndMarkdownMarks) {
  EXPECT_EQ(firstLine("\n\n## Review\nmore"), "Review");
  EXPECT_EQ(firstLine("- add() subtracts  \n- and more"), "add() subtracts");
  EXPECT_EQ(firstLine(""), "");
  EXPECT_EQ(firstLine(std::string(300, 'a'), 20), std::string(17, 'a') + "...");
}

}  // namespace
}  // namespace hydra::core::collab
