#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/executor/job_files.h"
#include "core/executor/slurm_executor.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool gone(pid_t pid) {
  for (int i = 0; i < 300; ++i) {
    if (::kill(pid, 0) != 0) return true;
    std::string stat = read("/proc/" + std::to_string(pid) + "/stat");
    auto close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z') return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

class JobDirTest : public ::testing::Test {
 protected:
  JobDirTest() {
    char pattern[] = "/tmp/hydra-job-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = fs::path(pattern) / "it's a job";
    fs::create_directories(dir_);
  }
  ~JobDirTest() override {
    std::error_code ec;
    fs::remove_all(dir_.parent_path(), ec);
  }

  // `hydra run-job` on dir_, as a job's script starts it; returns its pid.
  pid_t startRunner() {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(HYDRA_BINARY, HYDRA_BINARY, "run-job", dir_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  }
  int waitRunner(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  job::JobResult result() { return job::readResult(dir_).value(); }
  void writeSpec(const std::string& script) {
    job::JobSpec spec;
    spec.program = "/bin/sh";
    spec.args = {"-c", script};
    spec.cwd = dir_;
    spec.env = {{"GREETING", "hello from the spec"}};
    spec.killGrace = 500ms;
    job::writeJob(dir_, spec, HYDRA_BINARY);
  }

  fs::path dir_;
};

TEST_F(JobDirTest, TheSpecRoundTripsStaysPrivateAndTheScriptRunsTheRunnerOnItsDirectory) {
  job::JobSpec spec;
  spec.program = "/usr/bin/env";
  spec.args = {"a b", "it's", "\"quoted\"", "ünïcode"};
  spec.cwd = "/some/worktree";
  spec.env = {{"API_KEY", "secret"}, {"EMPTY", ""}};
  spec.unsetEnv = {"HYDRA_RUN_TOKEN"};
  spec.killGrace = 1500ms;
  job::writeJob(dir_, spec, "/opt/hydra's/bin/hydra");

  job::JobSpec back = job::parseJobSpec(read(dir_ / job::kSpec));
  EXPECT_EQ(back.program, spec.program);
  EXPECT_EQ(back.args, spec.args);
  EXPECT_EQ(back.cwd, spec.cwd);
  EXPECT_EQ(back.env, spec.env);
  EXPECT_EQ(back.unsetEnv, spec.unsetEnv);
  EXPECT_EQ(back.killGrace, spec.killGrace);
  // The agent's variables are readable by its user alone.
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / job::kSpec).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The script survives quotes in both paths.
  std::string script = read(dir_ / job::kScript);
  EXPECT_THAT(script, HasSubstr("exec '/opt/hydra'\\''s/bin/hydra' run-job '"));
  EXPECT_THAT(script, HasSubstr("it'\\''s a job'"));
  EXPECT_FALSE(job::readResult(dir_)) << "no result before the runner writes one";
}

TEST_F(JobDirTest, BrokenFilesAreErrorsNamingWhatIsWrong) {
  EXPECT_THROW(job::parseJobSpec("{\"program\": 3}"), std::runtime_error);
  EXPECT_THROW(job::parseJobSpec("not json"), std::runtime_error);
  std::ofstream(dir_ / job::kResult) << "{\"exitCode\": \"zero\"}";
  try {
    job::readResult(dir_);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("exitCode"));
  }
}

TEST_F(JobDirTest, TheRunnerRunsTheCommandWithItsEnvironmentAndReportsItsOutputAndExit) {
  writeSpec("echo \"$GREETING\"; printf 'no newline at the end'; echo oops >&2; exit 3");
  EXPECT_EQ(waitRunner(startRunner()), 0);
  job::JobResult r = result();
  EXPECT_EQ(r.process.exitCode, 3);
  EXPECT_FALSE(r.process.signal);
  EXPECT_FALSE(r.process.cancelled);
  EXPECT_TRUE(r.process.spawnError.empty());
  EXPECT_FALSE(r.host.empty());
  EXPECT_LE(r.process.startedAt, r.process.endedAt);
  EXPECT_EQ(read(dir_ / job::kStdout), "hello from the spec\nno newline at the end\n");
  EXPECT_EQ(read(dir_ / job::kStderr), "oops\n");
  EXPECT_TRUE(fs::exists(dir_ / job::kStarted));
}

TEST_F(JobDirTest, WhatTheCommandLeftRunningEndsWithItAndIsCounted) {
  const fs::path pidFile = dir_.parent_path() / "escaped";
  // It has left the command's process group (the file is written after
  // setsid) before the command ends, so only the reaper can find it.
  writeSpec("setsid sh -c 'echo $$ > \"$0\"; exec sleep 300' '" + pidFile.string() + "' & "
            "while [ ! -s '" + pidFile.string() + "' ]; do sleep 0.01; done; echo left it");
  EXPECT_EQ(waitRunner(startRunner()), 0);
  job::JobResult r = result();
  EXPECT_EQ(r.process.exitCode, 0);
  EXPECT_GE(r.process.leftRunningEnded, 1);
  EXPECT_TRUE(gone(std::stoi(read(pidFile))));
}

TEST_F(JobDirTest, SigtermFromTheSchedulerEndsTheCommandAndTheResultSaysCancelled) {
  const fs::path pidFile = dir_.parent_path() / "sleeper";
  writeSpec("echo $$ > '" + pidFile.string() + "'; exec sleep 300");
  pid_t runner = startRunner();
  for (int i = 0; i < 500 && read(pidFile).empty(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_FALSE(read(pidFile).empty());
  ::kill(runner, SIGTERM);
  EXPECT_EQ(waitRunner(runner), 0);
  job::JobResult r = result();
  EXPECT_TRUE(r.process.cancelled);
  EXPECT_EQ(r.process.signal, SIGTERM);
  EXPECT_TRUE(gone(std::stoi(read(pidFile))));
}

TEST_F(JobDirTest, AProgramThatCannotStartAndASpecThatCannotBeReadAreReported) {
  job::JobSpec spec;
  spec.program = "/nonexistent/agent";
  spec.cwd = dir_;
  job::writeJob(dir_, spec, HYDRA_BINARY);
  EXPECT_EQ(waitRunner(startRunner()), 0);
  EXPECT_THAT(result().process.spawnError, HasSubstr("/nonexistent/agent"));

  fs::remove(dir_ / job::kResult);
  std::ofstream(dir_ / job::kSpec, std::ios::trunc) << "{";
  EXPECT_EQ(waitRunner(startRunner()), 1);
  EXPECT_THAT(result().process.spawnError, HasSubstr("the job runner could not read its spec"));
}

TEST(SlurmOptionsTest, ExtraArgumentsMayNotSetWhatHydraSetsForEveryJob) {
  for (const char* reserved : {"--output=/tmp/x", "-o", "-o/tmp/x", "--error", "--chdir=/", "-D/", "--comment=x",
                               "--job-name=x", "-J", "--export=NONE", "--parsable", "--wrap=true", "--array=1-3",
                               "--wait", "-W", "--input=/dev/zero", "--hold", "--test-only", "--requeue",
                               "--no-requeue"}) {
    EXPECT_TRUE(isReservedSbatchOption(reserved)) << reserved;
  }
  for (const char* allowed : {"--mem=8G", "--cpus-per-task=4", "-c4", "--gres=gpu:1", "-A", "--account=x",
                              "--qos=high", "--constraint=avx2", "--nice=10", "--exclusive"}) {
    EXPECT_FALSE(isReservedSbatchOption(allowed)) << allowed;
  }
}

TEST(SlurmOptionsTest, TheTimeLimitIsTheTimeoutAndKillGracePlusAMarginInWholeMinutes) {
  EXPECT_EQ(slurmTimeLimit(600s, 2s), "13");
  EXPECT_EQ(slurmTimeLimit(60s, 0s), "3");
  EXPECT_EQ(slurmTimeLimit(61s, 0s), "4");
  EXPECT_EQ(slurmTimeLimit(0s, 2s), "") << "no timeout: the cluster's limit";
}

TEST(SlurmOptionsTest, OnlyTheQueuesEndStatesAreFinal) {
  for (const char* state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                            "BOOT_FAIL", "DEADLINE"}) {
    EXPECT_TRUE(slurmStateIsFinal(state)) << state;
  }
  for (const char* state : {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED"}) {
    EXPECT_FALSE(slurmStateIsFinal(state)) << state;
  }
}

}  // namespace
}  // namespace hydra::core
