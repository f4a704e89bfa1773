// An agent's setup_command run as its own step: real /bin/sh processes, their
// real pipes, and the real reaper for what they leave running.

#include "core/run/setup_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <thread>

#include "core/process/process_table.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using Kind = SetupStep::Outcome::Kind;

class SetupStepTest : public ::testing::Test {
 protected:
  void TearDown() override { killAllDescendants(200ms); }

  std::shared_ptr<SetupStep> start(const std::string& command, std::chrono::milliseconds timeout = 30s,
                                   std::shared_ptr<RunReaper> reaper = nullptr) {
    ProcessSpec process = SetupStep::process(command, dir.path(), {{"PATH", "/usr/bin:/bin"}, {"HYDRA_PORT", "4123"}});
    process.timeout = timeout;
    process.killGrace = 300ms;
    if (reaper) reaper->prepare(process);
    return SetupStep::start(
        SetupStep::Context{io, pool, *localExecutor(), JobLabel{"race1", "a1", "setup"}, reaper, 300ms},
        std::move(process),
        [](OutputStream, std::string_view line) {
          // Stands in for the run's redactor: what it returns is what is kept.
          std::string masked(line);
          if (auto at = masked.find("s3cret"); at != std::string::npos) masked.replace(at, 6, "[REDACTED]");
          return masked;
        },
        [this](OutputStream stream, std::string line) { lines.emplace_back(stream, std::move(line)); },
        [this](const SetupStep::Outcome& o) {
          ++doneCalls;
          outcome = o;
        });
  }

  bool runUntilDone(std::chrono::seconds limit = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!outcome) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io.run_one_for(20ms);
    }
    return true;
  }

  testing::TempDir dir;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  asio::thread_pool pool{2};
  std::vector<std::pair<OutputStream, std::string>> lines;
  std::optional<SetupStep::Outcome> outcome;
  int doneCalls = 0;
};

TEST_F(SetupStepTest, ACommandThatSucceedsRunsInItsDirectoryWithItsEnvironmentAndItsLinesAreMarked) {
  start("pwd; echo \"port $HYDRA_PORT\"; echo 'key s3cret' >&2");
  ASSERT_TRUE(runUntilDone());
  EXPECT_EQ(outcome->kind, Kind::Succeeded);
  EXPECT_EQ(outcome->error, "");
  EXPECT_EQ(doneCalls, 1);
  std::vector<std::string> stdoutLines;
  for (const auto& [stream, line] : lines) {
    if (stream == OutputStream::Stdout) stdoutLines.push_back(line);
  }
  EXPECT_THAT(stdoutLines, ElementsAre("[setup] " + fs::canonical(dir.path()).string(), "[setup] port 4123"));
  EXPECT_THAT(lines, ::testing::Contains(std::make_pair(OutputStream::Stderr, std::string("[setup] key [REDACTED]"))));
  EXPECT_THAT(outcome->tail, ::testing::HasSubstr("key [REDACTED]")) << "the tail is kept redacted";
}

TEST_F(SetupStepTest, AFailureSaysItsExitCodeAndItsLastStderrLineWhateverCameLaterOnStdout) {
  start("echo 'installing'; echo 'npm ERR! missing script: setup' >&2; sleep 0.1; echo 'more progress'; exit 2");
  ASSERT_TRUE(runUntilDone());
  EXPECT_EQ(outcome->kind, Kind::Failed);
  EXPECT_EQ(outcome->error, "setup_command exited with code 2: npm ERR! missing script: setup");
  EXPECT_THAT(outcome->tail, ::testing::HasSubstr("more progress"));
}

TEST_F(SetupStepTest, AFailureThatSaidNothingOnStderrQuotesItsLastLine) {
  start("echo 'first'; echo 'could not build'; echo '  '; exit 1");
  ASSERT_TRUE(runUntilDone());
  EXPECT_EQ(outcome->error, "setup_command exited with code 1: could not build");
  start("exit 7");
  outcome.reset();
  ASSERT_TRUE(runUntilDone());
  EXPECT_EQ(outcome->error, "setup_command exited with code 7") << "nothing said, nothing quoted";
}

TEST_F(SetupStepTest, ACommandOverItsTimeoutIsEndedAndSaysSo) {
  const auto began = std::chrono::steady_clock::now();
  start("echo 'starting the server' >&2; sleep 60", 1s);
  ASSERT_TRUE(runUntilDone());
  EXPECT_LT(std::chrono::steady_clock::now() - began, 20s);
  EXPECT_EQ(outcome->kind, Kind::Failed);
  EXPECT_EQ(outcome->error, "setup_command timed out after 1 s") << "its words are not why it failed";
}

TEST_F(SetupStepTest, ACancelEndsItAsCancelled) {
  auto step = start("echo started; sleep 60");
  while (lines.empty()) io.run_one_for(20ms);
  EXPECT_GT(step->pid(), 0);
  step->cancel();
  ASSERT_TRUE(runUntilDone(20s));
  EXPECT_EQ(outcome->kind, Kind::Cancelled);
  EXPECT_EQ(outcome->error, "");
  EXPECT_EQ(step->pid(), 0) << "nothing of it runs";
}

TEST_F(SetupStepTest, WhatItLeftRunningIsEndedBeforeItIsDone) {
  auto reaper = RunReaper::create();
  const fs::path pidFile = dir.path() / "daemon.pid";
  // A server that leaves its process group, as a dev server started with setsid would.
  start("setsid sleep 300 >/dev/null 2>&1 & echo $! > " + testing::shellQuote(pidFile.string()) + "; sleep 0.2", 30s,
        reaper);
  ASSERT_TRUE(runUntilDone());
  EXPECT_EQ(outcome->kind, Kind::Succeeded);
  const pid_t daemon = std::stoi(testing::readFile(pidFile));
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    const auto info = readProcessInfo(daemon);
    ended = !info || info->state == 'Z' || info->state == 'X';
    if (!ended) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(ended) << "process " << daemon << " outlived its setup";
}

TEST(SetupOutcomeTest, SpawnErrorsAndSignalsAreSaidAsSuch) {
  ProcessResult spawnFailed;
  spawnFailed.spawnError = "cannot run /bin/sh: no such file";
  EXPECT_EQ(SetupStep::outcomeOf(spawnFailed, 30s, {}, "").error, "setup_command cannot run /bin/sh: no such file");
  ProcessResult killed;
  killed.signal = 9;
  const auto outcome = SetupStep::outcomeOf(killed, 30s, {"a", "b"}, "oom");
  EXPECT_EQ(outcome.kind, Kind::Failed);
  EXPECT_EQ(outcome.error, "setup_command killed by signal 9: oom");
  EXPECT_EQ(outcome.tail, "a\nb");
}

}  // namespace
}  // namespace hydra::core
