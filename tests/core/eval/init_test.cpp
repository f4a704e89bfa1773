#include "core/eval/init.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/eval/eval_set.h"

namespace hydra::core::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(EvalInitTest, TestFilesAreKnownByTheCommonRunnersConventions) {
  for (const char* path : {"tests/test_login.py", "test/helpers.js", "pkg/login_test.go", "src/cart.test.ts",
                           "src/cart.spec.tsx", "spec/models/user_spec.rb", "app/__tests__/App.jsx",
                           "src/test/java/CartTest.java", "CartTests.swift", "test_cart.py", "Tests/x.c"}) {
    EXPECT_TRUE(isTestPath(path)) << path;
  }
  for (const char* path : {"src/cart.py", "contest/main.c", "latest.md", "docs/testing.md", "attestation.go",
                           "src/testdata.txt", "protester.go", "Makefile"}) {
    EXPECT_FALSE(isTestPath(path)) << path;
  }
}

TEST(EvalInitTest, SlugsAreShortLowerCaseAndNeverEmpty) {
  EXPECT_EQ(slugOf("Fix the flaky login test!"), "fix-the-flaky-login-test");
  EXPECT_EQ(slugOf("  --Ünïcode & CAPS--  "), "n-code-caps");
  EXPECT_EQ(slugOf("???"), "case");
  EXPECT_EQ(slugOf("a very long task that goes on and on and on and on", 12), "a-very-long");
}

TEST(EvalInitTest, TomlStringsEscapeWhatTomlRequires) {
  EXPECT_EQ(tomlString("plain"), "\"plain\"");
  EXPECT_EQ(tomlString("say \"hi\"\\now\n\tdone\x01"), "\"say \\\"hi\\\"\\\\now\\n\\tdone\\u0001\"");
}

TEST(EvalInitTest, TheTemplateReadsBackAsAnEvalSet) {
  const std::string text = templateSet(SetHeader{"shop", {"claude", "codex"}}, "python3 -m pytest -q");
  EXPECT_THAT(text, HasSubstr("# An eval set for hydra"));
  EvalSet set = parseEvalSet(text, "/evals/shop/eval.toml");
  EXPECT_EQ(set.name, "shop");
  EXPECT_THAT(set.agents, ElementsAre("claude", "codex"));
  EXPECT_EQ(set.samples, 5);
  EXPECT_THAT(set.passK, ElementsAre(1, 5));
  ASSERT_EQ(set.cases.size(), 1u);
  EXPECT_EQ(set.cases[0].verifyCommand, "python3 -m pytest -q");
  EXPECT_TRUE(set.cases[0].hiddenFiles.empty());
}

TEST(EvalInitTest, ACaseFromARaceKeepsItsTaskVerbatimAndNamesWhereItCameFrom) {
  RaceCase c;
  c.id = "fix-the-quote";
  c.task = "Fix the \"quote\" bug\nin parser.py\\n";
  c.baseCommit = "0123456789abcdef0123456789abcdef01234567";
  c.verifyCommand = "make test";
  c.raceId = "20261126-101500-a3f9";
  c.agentId = "claude";
  const std::string text = setFromRace(SetHeader{"quotes", {"claude", "codex"}}, c);
  EXPECT_THAT(text, HasSubstr("From race 20261126-101500-a3f9"));
  EXPECT_THAT(text, HasSubstr("claude added or changed no test file"));
  EvalSet set = parseEvalSet(text, "/evals/quotes/eval.toml");
  ASSERT_EQ(set.cases.size(), 1u);
  EXPECT_EQ(set.cases[0].id, "fix-the-quote");
  EXPECT_EQ(set.cases[0].task, c.task);
  EXPECT_EQ(set.cases[0].base, c.baseCommit);
  EXPECT_EQ(set.cases[0].verifyCommand, "make test");
}

}  // namespace
}  // namespace hydra::core::eval
