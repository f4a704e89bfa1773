// When a test command's output will not name its tests, the one decision
// `hydra init` and hydra.toml's diagnostics warn from.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/scoring/test_naming.h"

namespace hydra::core::scoring {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(TestNamingTest, JestAndMochaNameNoPassingTestWhateverTheirOptions) {
  EXPECT_THAT(testsByCountsOnlyReason("npx jest --ci --verbose", std::nullopt, false),
              Optional(HasSubstr("jest names no passing tests in its output, so tests will be compared by counts only")));
  EXPECT_THAT(testsByCountsOnlyReason("node_modules/.bin/mocha", std::nullopt, false),
              Optional(HasSubstr("mocha names no passing tests")));
  // test_format names the runner where the command hides it.
  EXPECT_THAT(testsByCountsOnlyReason("npm test", "jest", false), Optional(HasSubstr("junit_report")));
}

TEST(TestNamingTest, AJUnitReportNamesThemAll) {
  EXPECT_EQ(testsByCountsOnlyReason("npx jest --ci", "jest", true), std::nullopt);
  EXPECT_EQ(testsByCountsOnlyReason("python3 -m unittest", std::nullopt, true), std::nullopt);
}

TEST(TestNamingTest, VitestAndUnittestNameTheirTestsOnlyWhenVerbose) {
  EXPECT_THAT(testsByCountsOnlyReason("npx vitest run", std::nullopt, false),
              Optional(HasSubstr("--reporter=verbose")));
  EXPECT_EQ(testsByCountsOnlyReason("npx vitest run --reporter=verbose", std::nullopt, false), std::nullopt);
  EXPECT_EQ(testsByCountsOnlyReason("npx vitest run --reporter verbose", "vitest", false), std::nullopt);
  EXPECT_THAT(testsByCountsOnlyReason("python3 -m unittest discover -s tests", std::nullopt, false),
              Optional(HasSubstr("add -v")));
  EXPECT_EQ(testsByCountsOnlyReason("python3 -m unittest -v", std::nullopt, false), std::nullopt);
  EXPECT_EQ(testsByCountsOnlyReason("python -m unittest --verbose", "unittest", false), std::nullopt);
  // "npm test" hides its script: whether it asks for the verbose reporter is unknown.
  EXPECT_EQ(testsByCountsOnlyReason("npm test", "vitest", false), std::nullopt);
}

TEST(TestNamingTest, GoTestNamesItsTestsUnlessTheCommandReplacesHydrasGoflags) {
  // hydra's checks set GOFLAGS=-v, so plain `go test` names every test.
  EXPECT_EQ(testsByCountsOnlyReason("go test ./...", std::nullopt, false), std::nullopt);
  EXPECT_EQ(testsByCountsOnlyReason("cd src && go test -count=1 ./...", "go", false), std::nullopt);
  // A GOFLAGS of the command's own replaces hydra's -v.
  EXPECT_THAT(testsByCountsOnlyReason("GOFLAGS=-mod=vendor go test ./...", std::nullopt, false),
              Optional(HasSubstr("sets GOFLAGS itself")));
  EXPECT_THAT(testsByCountsOnlyReason("env GOFLAGS=-mod=mod go test ./...", "go", false),
              Optional(HasSubstr("add -v to the command")));
  // ...unless it asks for the names itself.
  EXPECT_EQ(testsByCountsOnlyReason("GOFLAGS=-mod=vendor go test -v ./...", std::nullopt, false), std::nullopt);
  EXPECT_EQ(testsByCountsOnlyReason("GOFLAGS=-mod=vendor go test -json ./...", std::nullopt, false), std::nullopt);
  EXPECT_EQ(testsByCountsOnlyReason("GOFLAGS=\"-mod=vendor -v\" go test ./...", std::nullopt, false), std::nullopt);
  EXPECT_EQ(testsByCountsOnlyReason("GOFLAGS=-mod=vendor go test ./...", std::nullopt, true), std::nullopt);
  // `make test` hides what it runs.
  EXPECT_EQ(testsByCountsOnlyReason("GOFLAGS=-mod=vendor make test", "go", false), std::nullopt);
}

TEST(TestNamingTest, RunnersThatNameTheirTestsOrAreUnknownGetNoWarning) {
  for (const char* command : {"python3 -m pytest -q", "pytest", "cargo test", "go test ./...",
                              "ctest --test-dir build", "make test", "npm test", "./run-jest-like-things.sh"}) {
    EXPECT_EQ(testsByCountsOnlyReason(command, std::nullopt, false), std::nullopt) << command;
  }
  EXPECT_EQ(testsByCountsOnlyReason("make test", "pytest", false), std::nullopt);
}

}  // namespace
}  // namespace hydra::core::scoring
