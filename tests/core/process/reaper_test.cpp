// The reaper against real runs of the hostile agents of
// tests/fixtures/hostile, unconfined: what they leave running in sessions of
// their own, with their environment emptied, ignoring SIGTERM, is found and
// ended when the run ends, is cancelled or times out; another run's
// processes and processes hydra did not start are left alone.

#include "core/process/reaper.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/process/process_table.h"
#include "tests/support/race_repo.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using testing::Confinement;
using ::testing::Contains;
using testing::FixtureOptions;
using testing::FixtureRun;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::RaceRepo;
using namespace std::chrono_literals;

// Gone: no such process, or the pid now names a later one.
bool gone(pid_t pid, std::uint64_t startTime) {
  const auto info = readProcessInfo(pid);
  return !info || info->startTime != startTime;
}

class ReaperTest : public ::testing::Test {
 protected:
  void TearDown() override { killAllDescendants(200ms); }

  FixtureRun run(const std::string& script, const RaceRepo& repo, std::shared_ptr<RunReaper> reaper,
                 FixtureOptions options = {}) {
    options.confinement = Confinement::None;
    options.reaper = std::move(reaper);
    FixtureRun result = testing::runFixture(script, repo, options);
    EXPECT_EQ(result.result->spawnError, "");
    return result;
  }

  // The pid a fixture wrote, and that process as it is now.
  static ProcessInfo daemon(const RaceRepo& repo, const std::string& file) {
    const auto pid = testing::readPidFile(repo.agent().path / file);
    if (!pid) throw std::runtime_error("no pid in " + file);
    const auto info = readProcessInfo(*pid);
    if (!info) throw std::runtime_error(file + ": process " + std::to_string(*pid) + " is gone");
    return *info;
  }
};

TEST_F(ReaperTest, CreatingARunMakesHydraAChildSubreaper) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
  EXPECT_FALSE(isChildSubreaper());
  const auto reaper = RunReaper::create();
  EXPECT_TRUE(isChildSubreaper());
  EXPECT_EQ(reaper->token().size(), 32u);
  EXPECT_NE(RunReaper::create()->token(), reaper->token());
  ProcessSpec spec;
  reaper->prepare(spec);
  EXPECT_EQ(spec.env.at(std::string(kRunTokenVariable)), reaper->token());
}

TEST_F(ReaperTest, WithoutTheReaperSetsidDaemonsOutliveTheirRun) {
  // What the reaper is for: Process ends its group, the daemons left it.
  becomeChildSubreaper();
  RaceRepo repo;
  const FixtureRun result = run("setsid_daemon.sh", repo, nullptr);
  EXPECT_EQ(result.result->exitCode, 0) << result.transcript();
  const ProcessInfo plain = daemon(repo, "daemon-plain.pid");
  const ProcessInfo bare = daemon(repo, "daemon-bare.pid");
  EXPECT_FALSE(plain.gone());
  EXPECT_FALSE(bare.gone());
  // Orphaned, they came to this process rather than init.
  EXPECT_EQ(plain.ppid, ::getpid());
  EXPECT_EQ(bare.ppid, ::getpid());
  EXPECT_NE(plain.sid, ::getsid(0));
  EXPECT_EQ(readEnvironmentVariable(bare.pid, "HYDRA_WORKTREE"), std::nullopt);
}

TEST_F(ReaperTest, SetsidDaemonsAreKilledWhenTheirRunEnds) {
  RaceRepo repo;
  const auto reaper = RunReaper::create();
  const FixtureRun result = run("setsid_daemon.sh", repo, reaper);
  EXPECT_EQ(result.result->exitCode, 0) << result.transcript();
  const ProcessInfo plain = daemon(repo, "daemon-plain.pid");
  const ProcessInfo bare = daemon(repo, "daemon-bare.pid");
  EXPECT_THAT(reaper->members(), Contains(plain.pid));
  EXPECT_THAT(reaper->members(), Contains(bare.pid));

  const ReapReport report = reaper->kill(500ms);
  EXPECT_THAT(report.killed, Contains(plain.pid));
  EXPECT_THAT(report.killed, Contains(bare.pid));
  EXPECT_THAT(report.survivors, IsEmpty());
  // Killed and reaped: not even a zombie is left.
  EXPECT_TRUE(gone(plain.pid, plain.startTime));
  EXPECT_TRUE(gone(bare.pid, bare.startTime));
  EXPECT_THAT(testing::livingDescendants(), IsEmpty());
  EXPECT_THAT(reaper->members(), IsEmpty());
}

TEST_F(ReaperTest, StubbornGrandchildrenAreKilledWhenTheRunIsCancelled) {
  RaceRepo repo;
  const auto reaper = RunReaper::create();
  FixtureOptions options;
  options.cancelOnReady = true;
  const FixtureRun result = run("stubborn_grandchild.sh", repo, reaper, options);
  EXPECT_TRUE(result.result->cancelled) << result.transcript();
  // The one in the run's group went with it (SIGKILL after the grace period).
  const auto inGroup = testing::readPidFile(repo.agent().path / "grandchild-group.pid");
  ASSERT_TRUE(inGroup.has_value());
  EXPECT_FALSE(testing::pidRunning(*inGroup));
  // The one in its own session ignored SIGTERM and is still there.
  const ProcessInfo session = daemon(repo, "grandchild-session.pid");
  ASSERT_FALSE(session.gone());

  const ReapReport report = reaper->kill(300ms);
  EXPECT_THAT(report.killed, Contains(session.pid));
  EXPECT_THAT(report.survivors, IsEmpty());
  EXPECT_TRUE(gone(session.pid, session.startTime));
  EXPECT_THAT(testing::livingDescendants(), IsEmpty());
}

TEST_F(ReaperTest, StubbornGrandchildrenAreKilledWhenTheRunTimesOut) {
  RaceRepo repo;
  const auto reaper = RunReaper::create();
  FixtureOptions options;
  options.timeout = 3s;
  const FixtureRun result = run("stubborn_grandchild.sh", repo, reaper, options);
  EXPECT_TRUE(result.result->timedOut) << result.transcript();
  const ProcessInfo session = daemon(repo, "grandchild-session.pid");
  const ReapReport report = reaper->kill(300ms);
  EXPECT_THAT(report.killed, Contains(session.pid));
  EXPECT_TRUE(gone(session.pid, session.startTime));
  EXPECT_THAT(testing::livingDescendants(), IsEmpty());
}

TEST_F(ReaperTest, EndingOneRunLeavesAnotherRunsProcessesAlone) {
  RaceRepo repoA;
  RaceRepo repoB;
  const auto a = RunReaper::create();
  const auto b = RunReaper::create();
  run("setsid_daemon.sh", repoA, a);
  // A sees its orphans once; from then on they are known to be A's.
  a->scan();
  run("setsid_daemon.sh", repoB, b);
  const ProcessInfo plainA = daemon(repoA, "daemon-plain.pid");
  const ProcessInfo bareA = daemon(repoA, "daemon-bare.pid");
  const ProcessInfo plainB = daemon(repoB, "daemon-plain.pid");
  const ProcessInfo bareB = daemon(repoB, "daemon-bare.pid");

  const ReapReport reportB = b->kill(300ms);
  EXPECT_THAT(reportB.killed, Contains(plainB.pid));
  EXPECT_THAT(reportB.killed, Contains(bareB.pid));
  EXPECT_THAT(reportB.killed, Not(Contains(plainA.pid)));
  EXPECT_THAT(reportB.killed, Not(Contains(bareA.pid)));
  EXPECT_TRUE(testing::pidRunning(plainA.pid));
  EXPECT_TRUE(testing::pidRunning(bareA.pid));

  const ReapReport reportA = a->kill(300ms);
  EXPECT_THAT(reportA.killed, Contains(plainA.pid));
  EXPECT_THAT(reportA.killed, Contains(bareA.pid));
  EXPECT_THAT(testing::livingDescendants(), IsEmpty());
}

TEST_F(ReaperTest, AProcessHydraDidNotStartIsNeverSignalledEvenWithTheToken) {
  const auto reaper = RunReaper::create();
  // A process outside this one's tree that carries the run's token: started
  // through a double fork while this process is not a subreaper, so that
  // init adopts it.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  const std::string token = std::string(kRunTokenVariable) + "=" + reaper->token();
  const pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    const pid_t outsider = ::fork();
    if (outsider == 0) {
      ::setsid();
      char* argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("1002"), nullptr};
      char* envp[] = {const_cast<char*>(token.c_str()), nullptr};
      ::execve("/bin/sleep", argv, envp);
      ::_exit(127);
    }
    (void)!::write(pipeFds[1], &outsider, sizeof outsider);
    ::_exit(0);
  }
  ASSERT_EQ(::waitpid(middle, nullptr, 0), middle);
  pid_t outsider = 0;
  ASSERT_EQ(::read(pipeFds[0], &outsider, sizeof outsider), static_cast<ssize_t>(sizeof outsider));
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
  becomeChildSubreaper();
  // Until it has exec'd, it has no token to show.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (readEnvironmentVariable(outsider, kRunTokenVariable) != reaper->token() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(readEnvironmentVariable(outsider, kRunTokenVariable), reaper->token());
  ASSERT_NE(readProcessInfo(outsider)->ppid, ::getpid());

  EXPECT_THAT(reaper->members(), Not(Contains(outsider)));
  const ReapReport report = reaper->kill(100ms);
  EXPECT_THAT(report.killed, Not(Contains(outsider)));
  EXPECT_TRUE(testing::pidRunning(outsider));
  ::kill(outsider, SIGKILL);
}

TEST_F(ReaperTest, ProcessesThatKeepForkingAreStoppedThenKilled) {
  RaceRepo repo;
  const auto reaper = RunReaper::create();
  // A session of its own that ignores SIGTERM and forks a new sleeper every
  // few milliseconds (at most 300 of them).
  FixtureOptions options;
  options.adjust = [](ProcessSpec& spec) {
    spec.program = "/bin/sh";
    spec.args = {"-c",
                 "setsid sh -c 'trap \"\" TERM; i=0; while [ $i -lt 300 ]; do "
                 "sh -c \"trap \\\"\\\" TERM; exec sleep 1003\" & i=$((i+1)); sleep 0.005; done; "
                 "wait' </dev/null >/dev/null 2>&1 & sleep 0.3; echo started"};
  };
  const FixtureRun result = run("write_checkout_pwd.sh", repo, reaper, options);
  EXPECT_EQ(result.result->exitCode, 0) << result.transcript();
  EXPECT_THAT(reaper->members(), Not(IsEmpty()));
  const ReapReport report = reaper->kill(200ms);
  EXPECT_THAT(report.survivors, IsEmpty());
  EXPECT_THAT(testing::livingDescendants(), IsEmpty());
}

TEST_F(ReaperTest, KillAllDescendantsEndsEverythingAtExit) {
  RaceRepo repo;
  becomeChildSubreaper();
  // A daemon left over, and a run still going.
  run("setsid_daemon.sh", repo, nullptr);
  boost::asio::io_context io;
  ProcessSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", "trap '' TERM; echo ready; while :; do sleep 1; done"};
  std::optional<ProcessResult> result;
  bool ready = false;
  auto process = Process::start(
      io, spec,
      [&](OutputStream, const std::string& line) {
        if (line.starts_with("ready")) ready = true;
      },
      [&](const ProcessResult& r) { result = r; });
  while (!ready) io.run_one_for(1s);
  ASSERT_THAT(testing::livingDescendants(), Not(IsEmpty()));

  const ReapReport report = killAllDescendants(200ms);
  EXPECT_THAT(report.survivors, IsEmpty());
  EXPECT_THAT(report.killed, Contains(process->pid()));
  // The Process reaps its own child and reports how it ended.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!result && std::chrono::steady_clock::now() < deadline) io.run_one_for(1s);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->signal, SIGKILL);
  EXPECT_THAT(testing::livingDescendants(), IsEmpty());
}

TEST_F(ReaperTest, ExitedOrphansAreReaped) {
  becomeChildSubreaper();
  // An orphan that exits by itself becomes a zombie child of this process.
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    const pid_t orphan = ::fork();
    if (orphan == 0) {
      char* argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("0.2"), nullptr};
      ::execv("/bin/sleep", argv);
      ::_exit(127);
    }
    (void)!::write(pipeFds[1], &orphan, sizeof orphan);
    ::_exit(0);
  }
  ASSERT_EQ(::waitpid(parent, nullptr, 0), parent);
  pid_t orphan = 0;
  ASSERT_EQ(::read(pipeFds[0], &orphan, sizeof orphan), static_cast<ssize_t>(sizeof orphan));
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (readProcessInfo(orphan).value_or(ProcessInfo{}).state != 'Z' &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  const auto zombie = readProcessInfo(orphan);
  ASSERT_TRUE(zombie.has_value());
  EXPECT_EQ(zombie->state, 'Z');
  EXPECT_EQ(zombie->ppid, ::getpid());
  EXPECT_EQ(reapAdoptedZombies(), 1u);
  EXPECT_EQ(readProcessInfo(orphan), std::nullopt);
}

}  // namespace
}  // namespace hydra::core
