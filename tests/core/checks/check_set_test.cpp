// A check set in a real directory with real commands: the order, the
// short-circuit on a failed build, the parsers, the output events, and the
// kill of a hung check with everything it started. And the baseline cache.

#include "core/checks/check_set.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "core/checks/baseline_cache.h"
#include "core/git/git.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using testing::readFile;
using testing::TempDir;
using testing::writeFile;

class CheckSetTest : public ::testing::Test {
 protected:
  CheckSetTest() {
    // `check.sh NAME` passes unless FAIL_NAME exists; every run is logged.
    writeFile(dir.path() / "check.sh",
              "#!/bin/sh\n"
              "echo \"$1\" >> runs.log\n"
              "if [ -e FAIL_$1 ]; then echo \"$1 failed\" >&2; exit 1; fi\n"
              "if [ \"$1\" = tests ]; then echo \"3 passed, 1 skipped in 0.01s\"; fi\n"
              "if [ \"$1\" = lint ]; then echo 'a.py:1:1: F401 unused import'; exit 1; fi\n"
              "exit 0\n");
    config.buildCommand = "sh check.sh build";
    config.testCommand = "sh check.sh tests";
    config.lintCommand = "sh check.sh lint";
    config.lintFormat = "flake8";
    config.timeoutPerCheckSeconds = 20;
  }

  scoring::CheckSet run(std::shared_ptr<CheckSetRun>* handle = nullptr) {
    boost::asio::io_context io;
    std::optional<scoring::CheckSet> result;
    CheckSetSpec spec;
    spec.raceId = "r1";
    spec.subject = "agent";
    spec.checkout = dir.path();
    spec.config = config;
    auto started = CheckSetRun::start(
        io, [this](RaceEventBody e) { events.push_back(std::move(e)); }, redactor, spec,
        [&](scoring::CheckSet checks) { result = std::move(checks); });
    if (handle) *handle = started;
    io.run_for(std::chrono::seconds(60));
    EXPECT_TRUE(result) << "the checks did not finish";
    return result.value_or(scoring::CheckSet{});
  }

  TempDir dir;
  ScoringConfig config;
  std::shared_ptr<const Redactor> redactor = std::make_shared<Redactor>();
  std::vector<RaceEventBody> events;
};

TEST_F(CheckSetTest, RunsBuildTestsAndLintInOrderAndReadsTheirCounts) {
  scoring::CheckSet checks = run();
  EXPECT_EQ(readFile(dir.path() / "runs.log"), "build\ntests\nlint\n");
  ASSERT_TRUE(checks.build && checks.tests && checks.lint);
  EXPECT_TRUE(checks.build->passed());
  ASSERT_TRUE(checks.tests->tests);
  EXPECT_EQ(*checks.tests->tests, (scoring::TestCounts{3, 0, 1}));
  EXPECT_EQ(checks.tests->format, "pytest");
  EXPECT_FALSE(checks.lint->passed());
  ASSERT_TRUE(checks.lint->lint);
  EXPECT_EQ(checks.lint->lint->warnings + checks.lint->lint->errors, 1);

  // Every line went out as an event of its check, in order.
  std::vector<std::string> seen;
  for (const auto& e : events) {
    const auto& out = std::get<CheckOutput>(e);
    EXPECT_EQ(out.raceId, "r1");
    EXPECT_EQ(out.subject, "agent");
    seen.push_back(out.check + ": " + out.line);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"tests: 3 passed, 1 skipped in 0.01s", "lint: a.py:1:1: F401 unused import"}));
}

TEST_F(CheckSetTest, AFailedBuildSkipsTheTestsAndTheLint) {
  writeFile(dir.path() / "FAIL_build", "");
  scoring::CheckSet checks = run();
  EXPECT_EQ(readFile(dir.path() / "runs.log"), "build\n");
  EXPECT_FALSE(checks.build->passed());
  EXPECT_NE(checks.build->output.find("build failed"), std::string::npos);
  EXPECT_TRUE(checks.tests->skipped);
  EXPECT_TRUE(checks.lint->skipped);
}

TEST_F(CheckSetTest, ChecksThatAreNotConfiguredAreAbsent) {
  config.buildCommand.reset();
  config.lintCommand.reset();
  scoring::CheckSet checks = run();
  EXPECT_FALSE(checks.build);
  EXPECT_TRUE(checks.tests);
  EXPECT_FALSE(checks.lint);
}

TEST_F(CheckSetTest, SecretsInACheckOutputAreMaskedBeforeAnyoneSeesThem) {
  config.buildCommand = "echo OPENAI_API_KEY=sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  config.testCommand.reset();
  config.lintCommand.reset();
  scoring::CheckSet checks = run();
  EXPECT_EQ(checks.build->output.find("sk-proj-"), std::string::npos) << checks.build->output;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(std::get<CheckOutput>(events[0]).line.find("sk-proj-"), std::string::npos);
}

TEST_F(CheckSetTest, AHungCheckIsKilledAtItsTimeoutWithEverythingItStarted) {
  fs::path pidFile = dir.path() / "child.pid";
  config.buildCommand.reset();
  config.lintCommand.reset();
  config.testCommand = "sh -c 'trap \"\" TERM; sleep 60 & echo $! > " + pidFile.string() + "; wait'";
  config.timeoutPerCheckSeconds = 1;
  scoring::CheckSet checks = run();
  EXPECT_TRUE(checks.tests->timedOut);
  EXPECT_NE(checks.tests->error.find("timed out after 1 s"), std::string::npos);
  pid_t child = std::stoi(readFile(pidFile));
  ASSERT_GT(child, 0);
  for (int i = 0; i < 100 && ::kill(child, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(::kill(child, 0), 0) << "the check's child outlived its timeout";
}

TEST_F(CheckSetTest, CancelKillsTheRunningCheckAndRunsNoMore) {
  config.buildCommand = "sleep 60";
  boost::asio::io_context io;
  std::optional<scoring::CheckSet> result;
  CheckSetSpec spec;
  spec.raceId = "r1";
  spec.subject = "agent";
  spec.checkout = dir.path();
  spec.config = config;
  auto run = CheckSetRun::start(io, [](RaceEventBody) {}, redactor, spec,
                                [&](scoring::CheckSet checks) { result = std::move(checks); });
  io.run_for(std::chrono::milliseconds(300));
  run->cancel();
  io.run_for(std::chrono::seconds(20));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->build->error, "cancelled");
  // A cancelled build counts as failed: nothing after it ran.
  EXPECT_FALSE(fs::exists(dir.path() / "runs.log"));
}

TEST(BaselineCacheTest, KeyDependsOnTheCommitAndEveryCommand) {
  ScoringConfig c;
  c.buildCommand = "make";
  c.testCommand = "make test";
  c.lintCommand = "make lint";
  std::string k = baselineKey("abc", c);
  EXPECT_EQ(k, baselineKey("abc", c));
  EXPECT_NE(k, baselineKey("abd", c));
  ScoringConfig other = c;
  other.testCommand = "make check";
  EXPECT_NE(k, baselineKey("abc", other));
  other = c;
  other.lintFormat = "gcc";
  EXPECT_NE(k, baselineKey("abc", other));
}

// A cache in a folder of its own, for `make test`.
class BaselineCacheEntryTest : public ::testing::Test {
 protected:
  BaselineCacheEntryTest() { c.testCommand = "make test"; }

  // `make test` on `commit`, as it ended.
  static scoring::Baseline baselineOf(const std::string& commit, int exitCode, scoring::TestCounts counts) {
    scoring::Baseline b;
    b.commit = commit;
    b.checks.tests = scoring::CheckResult{};
    b.checks.tests->command = "make test";
    b.checks.tests->exitCode = exitCode;
    b.checks.tests->tests = counts;
    return b;
  }

  git::LibGit2 libgit2;
  TempDir dir;
  BaselineCache cache{dir.path() / "cache"};
  ScoringConfig c;
};

TEST_F(BaselineCacheEntryTest, KeepsWhatRanToTheEndAndNothingCutShort) {
  scoring::Baseline b = baselineOf("abc", 0, scoring::TestCounts{5, 1, 0});
  cache.save(b, c);
  auto loaded = cache.load("abc", c);
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->fromCache);
  EXPECT_EQ(loaded->checks.tests->tests, b.checks.tests->tests);
  EXPECT_FALSE(cache.load("abd", c));

  b.commit = "def";
  b.checks.tests->timedOut = true;
  cache.save(b, c);
  EXPECT_FALSE(cache.load("def", c)) << "a baseline cut short was kept";

  // A damaged entry is ignored.
  for (const auto& entry : fs::directory_iterator(dir.path() / "cache")) writeFile(entry.path(), "{ not json");
  EXPECT_FALSE(cache.load("abc", c));
}

// An entry whose baseline was rewritten, or that is another entry's (copied
// over, or made by another hydra), is ignored; the next save replaces it.
TEST_F(BaselineCacheEntryTest, AForgedOrForeignEntryIsIgnoredAndRebuilt) {
  scoring::Baseline b = baselineOf("abc", 1, scoring::TestCounts{3, 2, 0});
  cache.save(b, c);
  const fs::path entry = cache.file("abc", c);
  const std::string good = readFile(entry);
  ASSERT_TRUE(cache.load("abc", c));

  // 1000 passed, as an agent would like its rivals to be measured against.
  std::string forged = good;
  const auto at = forged.find("\"passed\":3");
  ASSERT_NE(at, std::string::npos) << good;
  forged.replace(at, 10, "\"passed\":1000");
  writeFile(entry, forged);
  EXPECT_FALSE(cache.load("abc", c)) << "a rewritten baseline was believed";

  // Another commit's entry, copied under this one's name.
  b.commit = "xyz";
  cache.save(b, c);
  writeFile(entry, readFile(cache.file("xyz", c)));
  EXPECT_FALSE(cache.load("abc", c)) << "another entry was taken for this one";

  // Another hydra's entry: the version is part of the header.
  std::string other = good;
  const auto version = other.find("\"hydraVersion\":\"");
  ASSERT_NE(version, std::string::npos);
  other.insert(version + 16, "0.0.0-other+");
  writeFile(entry, other);
  EXPECT_FALSE(cache.load("abc", c)) << "another hydra's entry was used";

  b.commit = "abc";
  cache.save(b, c);
  auto rebuilt = cache.load("abc", c);
  ASSERT_TRUE(rebuilt);
  EXPECT_EQ(rebuilt->checks.tests->tests, (scoring::TestCounts{3, 2, 0}));
}

TEST(BaselineCacheTest, LivesOutsideTheRepositoryInTheUsersCache) {
  TempDir dir;
  const fs::path repo = dir.path() / "project";
  fs::create_directories(repo);
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string before = saved ? saved : "";
  ::setenv("XDG_CACHE_HOME", (dir.path() / "xdg-cache").c_str(), 1);
  const fs::path where = defaultBaselineCacheDir(repo);
  const fs::path elsewhere = defaultBaselineCacheDir(dir.path() / "other");
  if (saved) {
    ::setenv("XDG_CACHE_HOME", before.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
  EXPECT_EQ(where.parent_path(), fs::weakly_canonical(dir.path()) / "xdg-cache" / "hydra" / "baselines");
  EXPECT_EQ(where.filename().string().rfind("project-", 0), 0u) << where;
  EXPECT_NE(where, elsewhere) << "two repositories share one cache folder";
}

}  // namespace
}  // namespace hydra::core
