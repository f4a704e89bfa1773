// Process runs the real hydra_test_child (tests/support/test_child.cpp) and
// checks what a supervisor must guarantee: output, exit status, and that
// nothing the child starts survives a timeout, a cancel or its own exit.

#include "core/process/process.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer keeps up to 256 MiB of freed memory in quarantine, which
// HugeOutputStreamsThroughWithBoundedMemory would count as peak RSS. A small
// quarantine keeps that test meaningful in sanitizer builds.
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=16"; }
#endif

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kChild = HYDRA_TEST_CHILD;
constexpr std::size_t kMiB = 1024 * 1024;

// Everything a run produced, as the handlers saw it.
struct ChildRun {
  std::vector<std::string> out;
  std::vector<std::string> err;
  std::optional<ProcessResult> result;
  int exitCalls = 0;
  std::size_t linesAtExit = 0;
  bool runningAtExit = true;
};

using LineHook = std::function<void(Process&, OutputStream, const std::string&)>;

ProcessSpec childSpec(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.program = kChild;
  spec.args = std::move(args);
  return spec;
}

// Runs one child to the end on a fresh io_context. `hook` sees every line and
// may act on the process (cancel it, check its group).
ChildRun runChild(ProcessSpec spec, LineHook hook = {}) {
  boost::asio::io_context io;
  ChildRun run;
  std::shared_ptr<Process> process;
  process = Process::start(
      io, std::move(spec),
      [&](OutputStream stream, std::string line) {
        if (hook) hook(*process, stream, line);
        (stream == OutputStream::Stdout ? run.out : run.err).push_back(std::move(line));
      },
      [&](const ProcessResult& result) {
        run.result = result;
        ++run.exitCalls;
        run.linesAtExit = run.out.size() + run.err.size();
        run.runningAtExit = process->running();
      });
  // A generous bound: a hang fails this test instead of stalling the suite.
  io.run_for(60s);
  return run;
}

bool pidExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// Running means present and not a zombie: what a killed orphan is until init
// gets round to reaping it.
bool pidRunning(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Waits for an orphaned grandchild to be reaped by init, which may take a
// while on a busy machine (the bound only catches a pid that never goes).
bool waitUntilGone(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (pidExists(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

bool contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

bool isTestChild(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::ostringstream text;
  text << in.rdbuf();  // not an istreambuf_iterator: it throws if the process ends mid-read
  const std::string cmdline = text.str();
  return cmdline.find("hydra_test_child") != std::string::npos;
}

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "hydra-process-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
  }

  // Whatever a failing test left behind is killed here, so that a failure does
  // not leave sleeping grandchildren on the machine.
  void TearDown() override {
    for (const fs::path& file : pidFiles_) {
      // Only if that pid is still our test child: a pid that has been reused
      // may belong to another test's process by now.
      if (auto pid = readPid(file); pid && pidRunning(*pid) && isTestChild(*pid)) ::kill(*pid, SIGKILL);
    }
    fs::remove_all(dir_);
  }

  std::string pidFile(const std::string& name = "grandchild.pid") {
    pidFiles_.push_back(dir_ / name);
    return (dir_ / name).string();
  }

  static std::optional<pid_t> readPid(const fs::path& file) {
    std::ifstream in(file);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    return std::nullopt;
  }

  fs::path dir_;
  std::vector<fs::path> pidFiles_;
};

void expectCleanExit(const ChildRun& run, int code) {
  ASSERT_TRUE(run.result.has_value());
  EXPECT_EQ(run.exitCalls, 1);
  EXPECT_EQ(run.result->spawnError, "");
  EXPECT_EQ(run.result->exitCode, code);
  EXPECT_EQ(run.result->signal, std::nullopt);
  EXPECT_FALSE(run.result->timedOut);
  EXPECT_FALSE(run.result->cancelled);
}

TEST_F(ProcessTest, ExitCodeIsRecorded) {
  const ChildRun run = runChild(childSpec({"--exit", "7"}));
  expectCleanExit(run, 7);
  EXPECT_GE(run.result->endedAt, run.result->startedAt);
  EXPECT_FALSE(run.runningAtExit);
}

// Between fork and exec the child calls nothing that could wait on a lock:
// another thread may have held it at the fork, and the child would hang
// there for ever, never exec'd (a child that allocated did, now and then,
// under AddressSanitizer). Spawning while other threads allocate hard must
// never leave a child hanging.
TEST_F(ProcessTest, SpawningWhileOtherThreadsAllocateNeverHangsAChild) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> churn;
  for (int t = 0; t < 3; ++t) {
    churn.emplace_back([&stop] {
      while (!stop) {
        std::vector<std::unique_ptr<std::string>> garbage;
        for (int i = 0; i < 64; ++i) garbage.push_back(std::make_unique<std::string>(32 + i * 8, 'x'));
      }
    });
  }
  for (int i = 0; i < 100; ++i) {
    const ChildRun run = runChild(childSpec({"--exit", "0"}));
    ASSERT_TRUE(run.result.has_value()) << "spawn " << i << " never ended";
    ASSERT_EQ(run.result->spawnError, "");
    ASSERT_EQ(run.result->exitCode, 0) << "spawn " << i;
  }
  stop = true;
  for (auto& t : churn) t.join();
}

TEST_F(ProcessTest, DeathBySignalIsRecorded) {
  const ChildRun run = runChild(childSpec({"--raise", std::to_string(SIGUSR1)}));
  ASSERT_TRUE(run.result.has_value());
  EXPECT_EQ(run.result->signal, SIGUSR1);
  EXPECT_EQ(run.result->exitCode, std::nullopt);
  EXPECT_FALSE(run.result->timedOut);
}

TEST_F(ProcessTest, ChildLeadsItsOwnProcessGroupWhileItRuns) {
  pid_t groupSeen = 0;
  bool runningSeen = false;
  pid_t pid = 0;
  const ChildRun run = runChild(childSpec({"--ready", "--sleep", "0.2"}),
                                [&](Process& p, OutputStream, const std::string&) {
                                  pid = p.pid();
                                  groupSeen = ::getpgid(p.pid());
                                  runningSeen = p.running();
                                });
  expectCleanExit(run, 0);
  EXPECT_GT(pid, 0);
  EXPECT_NE(pid, ::getpgrp());
  EXPECT_EQ(groupSeen, pid);
  EXPECT_TRUE(runningSeen);
  // Reaped: no zombie left behind.
  EXPECT_FALSE(pidExists(pid));
  EXPECT_FALSE(processGroupAlive(pid));
}

TEST_F(ProcessTest, StdoutLinesArriveInOrderBeforeTheExitHandler) {
  const ChildRun run = runChild(childSpec({"--print", "1000"}));
  expectCleanExit(run, 0);
  ASSERT_EQ(run.out.size(), 1000u);
  for (std::size_t i = 0; i < run.out.size(); ++i) {
    ASSERT_EQ(run.out[i], "line " + std::to_string(i + 1));
  }
  EXPECT_EQ(run.linesAtExit, 1000u);
}

TEST_F(ProcessTest, StderrLinesArriveOnTheirOwnStream) {
  const ChildRun run =
      runChild(childSpec({"--print", "2", "--stderr", "warn one", "--stderr", "warn two"}));
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre("line 1", "line 2"));
  EXPECT_THAT(run.err, ElementsAre("warn one", "warn two"));
  EXPECT_EQ(run.linesAtExit, 4u);
}

TEST_F(ProcessTest, PartialLastLineIsDeliveredAtEof) {
  const ChildRun run = runChild(childSpec({"--print", "2", "--partial", "no newline"}));
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre("line 1", "line 2", "no newline"));
}

TEST_F(ProcessTest, LineOfThreeMebibytesArrivesAsThreePiecesOfOne) {
  const ChildRun run = runChild(childSpec({"--long-line", std::to_string(3 * kMiB)}));
  expectCleanExit(run, 0);
  ASSERT_EQ(run.out.size(), 3u);
  std::string joined;
  for (const std::string& piece : run.out) {
    EXPECT_EQ(piece.size(), kMiB);
    joined += piece;
  }
  for (std::size_t i = 0; i < joined.size(); ++i) {
    ASSERT_EQ(joined[i], static_cast<char>('0' + i % 10)) << "at byte " << i;
  }
}

TEST_F(ProcessTest, InvalidUtf8IsReplacedBeforeTheHandlerSeesIt) {
  const ChildRun run = runChild(childSpec({"--invalid-utf8"}));
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre("bad:\xEF\xBF\xBD\xEF\xBF\xBD ok"));
}

// Replaces this process's stdin with a pipe holding data for the duration of
// a test, so that a child inheriting stdin would read something.
class StdinWithData {
 public:
  explicit StdinWithData(const std::string& data) : saved_(::dup(STDIN_FILENO)) {
    int fds[2];
    if (saved_ < 0 || ::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    if (::write(fds[1], data.data(), data.size()) != static_cast<ssize_t>(data.size())) {
      throw std::runtime_error("write failed");
    }
    ::close(fds[1]);
    ::dup2(fds[0], STDIN_FILENO);
    ::close(fds[0]);
  }
  ~StdinWithData() {
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
  }

 private:
  int saved_;
};

TEST_F(ProcessTest, StdinIsDevNullEvenWhenHydrasStdinHasData) {
  StdinWithData stdinData("hello");
  const ChildRun run = runChild(childSpec({"--read-stdin"}));
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre("stdin bytes: 0 devnull: yes"));
}

// A shell child with stdin as a pipe hydra writes; `feed` runs once it started.
ChildRun runWithStdin(const std::string& script, const std::function<void(Process&)>& feed) {
  boost::asio::io_context io;
  ChildRun run;
  ProcessSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", script};
  spec.stdinPipe = true;
  auto process = Process::start(
      io, std::move(spec),
      [&](OutputStream stream, std::string line) {
        (stream == OutputStream::Stdout ? run.out : run.err).push_back(std::move(line));
      },
      [&](const ProcessResult& result) {
        run.result = result;
        ++run.exitCalls;
      });
  feed(*process);
  io.run_for(60s);
  return run;
}

TEST_F(ProcessTest, WhatIsWrittenToAStdinPipeArrivesInOrderAndClosingItEndsTheInput) {
  const ChildRun run = runWithStdin("while IFS= read -r l; do echo \"got $l\"; done; echo end", [](Process& p) {
    p.write("first line\n");
    p.write("second ");
    p.write("line\n");
    p.closeStdin();
    p.write("after the close\n");  // dropped
  });
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre("got first line", "got second line", "end"));
}

TEST_F(ProcessTest, ALargeWriteNeitherBlocksNorLosesBytes) {
  // Far more than a pipe holds: the writes wait for the child, not the thread.
  const std::string chunk(256 * 1024, 'x');
  const ChildRun run = runWithStdin("wc -c", [&](Process& p) {
    for (int i = 0; i < 20; ++i) p.write(chunk);
    p.closeStdin();
  });
  expectCleanExit(run, 0);
  ASSERT_EQ(run.out.size(), 1u);
  EXPECT_EQ(std::stoll(run.out[0]), 20LL * 256 * 1024);
}

TEST_F(ProcessTest, WritingToAChildThatStoppedReadingIsNoHarm) {
  // It exits at once: its stdin closes with hydra's writes still queued.
  const std::string chunk(1024 * 1024, 'y');
  const ChildRun run = runWithStdin("exec 0<&-; echo bye", [&](Process& p) {
    for (int i = 0; i < 4; ++i) p.write(chunk);
  });
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre("bye"));
}

TEST_F(ProcessTest, HydrasOwnDescriptorsAreNotInherited) {
  // A descriptor without close-on-exec, as libraries and log sinks leave them.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const ChildRun run = runChild(childSpec({"--list-fds"}));
  ::close(fds[0]);
  ::close(fds[1]);
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre("fds: 0 1 2"));
}

TEST_F(ProcessTest, EnvironmentIsInheritedWithTheSpecsOverrides) {
  ::setenv("HYDRA_PROCESS_TEST_INHERITED", "from hydra", 1);
  ::setenv("HYDRA_PROCESS_TEST_OVERRIDDEN", "outer", 1);
  ProcessSpec spec = childSpec(
      {"--echo-env", "HYDRA_PROCESS_TEST_INHERITED", "--echo-env", "HYDRA_PROCESS_TEST_OVERRIDDEN",
       "--echo-env", "HYDRA_PROCESS_TEST_ADDED", "--echo-env", "HYDRA_PROCESS_TEST_UNSET"});
  spec.env = {{"HYDRA_PROCESS_TEST_OVERRIDDEN", "inner"}, {"HYDRA_PROCESS_TEST_ADDED", "a b=c"}};
  const ChildRun run = runChild(std::move(spec));
  ::unsetenv("HYDRA_PROCESS_TEST_INHERITED");
  ::unsetenv("HYDRA_PROCESS_TEST_OVERRIDDEN");
  expectCleanExit(run, 0);
  EXPECT_THAT(
      run.out,
      ElementsAre("HYDRA_PROCESS_TEST_INHERITED=from hydra", "HYDRA_PROCESS_TEST_OVERRIDDEN=inner",
                  "HYDRA_PROCESS_TEST_ADDED=a b=c", "HYDRA_PROCESS_TEST_UNSET is unset"));
}

TEST_F(ProcessTest, ChildRunsInTheSpecsWorkingDirectory) {
  ProcessSpec spec = childSpec({"--print-cwd"});
  spec.cwd = dir_;
  const ChildRun run = runChild(std::move(spec));
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre(fs::canonical(dir_).string()));
}

TEST_F(ProcessTest, RelativeProgramIsResolvedAgainstTheWorkingDirectory) {
  ProcessSpec spec = childSpec({"--print-cwd"});
  spec.cwd = fs::path(kChild).parent_path();
  spec.program = "./" + fs::path(kChild).filename().string();
  const ChildRun run = runChild(std::move(spec));
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre(fs::canonical(fs::path(kChild).parent_path()).string()));
}

TEST_F(ProcessTest, ProgramIsLookedUpOnTheSpecsPath) {
  ProcessSpec spec = childSpec({"--exit", "4"});
  spec.program = fs::path(kChild).filename().string();
  spec.env["PATH"] = "/nonexistent-hydra-dir:" + fs::path(kChild).parent_path().string();
  const ChildRun run = runChild(std::move(spec));
  expectCleanExit(run, 4);
}

TEST_F(ProcessTest, MissingProgramIsASpawnErrorNamingThePathSearched) {
  ProcessSpec spec = childSpec({});
  spec.program = "hydra-no-such-program";
  spec.env["PATH"] = "/nonexistent-a:/nonexistent-b";
  boost::asio::io_context io;  // declared first: a Process must not outlive its io_context
  std::shared_ptr<Process> process;
  std::optional<ProcessResult> result;
  int calls = 0;
  process = Process::start(
      io, spec, [](OutputStream, std::string) {},
      [&](const ProcessResult& r) {
        result = r;
        ++calls;
      });
  EXPECT_EQ(calls, 0) << "the exit handler must not run inside start()";
  EXPECT_EQ(process->pid(), -1);
  EXPECT_FALSE(process->running());
  io.run_for(60s);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(calls, 1);
  EXPECT_THAT(result->spawnError, HasSubstr("hydra-no-such-program"));
  EXPECT_THAT(result->spawnError, HasSubstr("PATH"));
  EXPECT_THAT(result->spawnError, HasSubstr("/nonexistent-a:/nonexistent-b"));
  EXPECT_EQ(result->exitCode, std::nullopt);
  EXPECT_EQ(result->signal, std::nullopt);
}

TEST_F(ProcessTest, ProgramThatIsNotExecutableIsASpawnError) {
  const fs::path script = dir_ / "script.sh";
  std::ofstream(script) << "#!/bin/sh\n";
  fs::permissions(script, fs::perms::owner_read | fs::perms::owner_write);
  ProcessSpec spec = childSpec({});
  spec.program = script.string();
  const ChildRun run = runChild(std::move(spec));
  ASSERT_TRUE(run.result.has_value());
  EXPECT_THAT(run.result->spawnError, HasSubstr("not an executable file"));
  EXPECT_EQ(run.result->exitCode, std::nullopt);
}

TEST_F(ProcessTest, ProgramThatExecRejectsIsASpawnErrorAndLeavesNoZombie) {
  const fs::path bogus = dir_ / "not-a-program";
  std::ofstream(bogus) << "neither ELF nor a script\n";
  fs::permissions(bogus, fs::perms::owner_all);
  ProcessSpec spec = childSpec({});
  spec.program = bogus.string();
  const ChildRun run = runChild(std::move(spec));
  ASSERT_TRUE(run.result.has_value());
  EXPECT_THAT(run.result->spawnError, HasSubstr("cannot start"));
  EXPECT_THAT(run.result->spawnError, HasSubstr("not-a-program"));
  EXPECT_EQ(run.result->exitCode, std::nullopt);
  // The forked child whose exec failed was reaped: this test process has no
  // children left at all.
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST_F(ProcessTest, MissingWorkingDirectoryIsASpawnError) {
  ProcessSpec spec = childSpec({});
  spec.cwd = dir_ / "does-not-exist";
  const ChildRun run = runChild(std::move(spec));
  ASSERT_TRUE(run.result.has_value());
  EXPECT_THAT(run.result->spawnError, HasSubstr("does-not-exist"));
  EXPECT_EQ(run.exitCalls, 1);
}

TEST_F(ProcessTest, TimeoutKillsAChildIgnoringSigtermAndItsGrandchild) {
  ProcessSpec spec = childSpec({"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile(),
                                "--ready", "--sleep", "60"});
  spec.timeout = 2s;
  spec.killGrace = 300ms;
  const auto started = std::chrono::steady_clock::now();
  const ChildRun run = runChild(std::move(spec));
  ASSERT_TRUE(run.result.has_value());
  // "ready" comes after the child ignores SIGTERM, so only SIGKILL can end it.
  EXPECT_THAT(run.out, ElementsAre("ready"));
  EXPECT_TRUE(run.result->timedOut);
  EXPECT_FALSE(run.result->cancelled);
  EXPECT_EQ(run.result->signal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);

  const auto grandchild = readPid(pidFiles_.back());
  ASSERT_TRUE(grandchild.has_value());
  EXPECT_FALSE(pidRunning(*grandchild)) << "the grandchild ignores SIGTERM: it needs SIGKILL";
  EXPECT_TRUE(waitUntilGone(*grandchild));
}

TEST_F(ProcessTest, CancelTerminatesTheChildAndKillsItsStubbornGrandchild) {
  ProcessSpec spec =
      childSpec({"--spawn-grandchild", "--pid-file", pidFile(), "--ready", "--sleep", "60"});
  spec.killGrace = 300ms;
  const ChildRun run =
      runChild(std::move(spec), [](Process& p, OutputStream, const std::string& line) {
        if (line == "ready") p.cancel();
      });
  ASSERT_TRUE(run.result.has_value());
  EXPECT_TRUE(run.result->cancelled);
  EXPECT_FALSE(run.result->timedOut);
  EXPECT_EQ(run.result->signal, SIGTERM);

  const auto grandchild = readPid(pidFiles_.back());
  ASSERT_TRUE(grandchild.has_value());
  EXPECT_FALSE(pidRunning(*grandchild));
  EXPECT_TRUE(waitUntilGone(*grandchild));
}

TEST_F(ProcessTest, CancelEscalatesToSigkillAfterTheGracePeriod) {
  ProcessSpec spec = childSpec({"--ignore-sigterm", "--ready", "--sleep", "60"});
  spec.killGrace = 200ms;
  const ChildRun run =
      runChild(std::move(spec), [](Process& p, OutputStream, const std::string& line) {
        if (line == "ready") p.cancel();
      });
  ASSERT_TRUE(run.result.has_value());
  EXPECT_TRUE(run.result->cancelled);
  EXPECT_EQ(run.result->signal, SIGKILL);
}

TEST_F(ProcessTest, CancelAfterTheEndChangesNothing) {
  boost::asio::io_context io;
  std::optional<ProcessResult> result;
  auto process = Process::start(
      io, childSpec({"--exit", "3"}), [](OutputStream, std::string) {},
      [&](const ProcessResult& r) { result = r; });
  io.run_for(60s);
  ASSERT_TRUE(result.has_value());
  process->cancel();
  io.restart();
  io.run_for(60s);
  EXPECT_EQ(result->exitCode, 3);
  EXPECT_FALSE(result->cancelled);
}

TEST_F(ProcessTest, GrandchildHoldingThePipesIsKilledWhenTheChildExits) {
  ProcessSpec spec =
      childSpec({"--spawn-grandchild", "--pid-file", pidFile(), "--print", "1", "--exit", "3"});
  spec.killGrace = 300ms;
  const ChildRun run = runChild(std::move(spec));
  expectCleanExit(run, 3);
  EXPECT_THAT(run.out, ElementsAre("line 1"));

  const auto grandchild = readPid(pidFiles_.back());
  ASSERT_TRUE(grandchild.has_value());
  EXPECT_FALSE(pidRunning(*grandchild));
  EXPECT_TRUE(waitUntilGone(*grandchild));
}

TEST_F(ProcessTest, OutputHeldOpenOutsideTheGroupDoesNotHangTheExit) {
  // The grandchild calls setsid(): no group signal reaches it, and it keeps
  // stdout and stderr open. The exit handler must still come.
  ProcessSpec spec = childSpec(
      {"--spawn-grandchild", "--grandchild-setsid", "--pid-file", pidFile(), "--print", "2"});
  spec.killGrace = 200ms;
  const ChildRun run = runChild(std::move(spec));
  expectCleanExit(run, 0);
  EXPECT_THAT(run.out, ElementsAre("line 1", "line 2"));
}

TEST_F(ProcessTest, RegistryKillAllKillsEveryLiveGroup) {
  boost::asio::io_context io;
  std::vector<std::shared_ptr<Process>> processes;
  std::vector<std::optional<ProcessResult>> results(2);
  int ready = 0;
  bool listedWhileRunning = false;
  bool killedAll = false;
  for (int i = 0; i < 2; ++i) {
    ProcessSpec spec = childSpec({"--spawn-grandchild", "--pid-file",
                                  pidFile("g" + std::to_string(i)), "--ready", "--sleep", "60"});
    processes.push_back(Process::start(
        io, std::move(spec),
        [&](OutputStream, const std::string& line) {
          if (line != "ready" || ++ready < 2) return;
          const auto live = ProcessRegistry::instance().liveGroups();
          listedWhileRunning = contains(live, processes[0]->processGroup()) &&
                               contains(live, processes[1]->processGroup());
          // What the server does at exit; it blocks, as it would there.
          killedAll = ProcessRegistry::instance().killAll(300ms);
        },
        [&results, i](const ProcessResult& r) { results[i] = r; }));
  }
  io.run_for(60s);

  EXPECT_TRUE(listedWhileRunning);
  EXPECT_TRUE(killedAll);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(results[i].has_value());
    EXPECT_EQ(results[i]->signal, SIGTERM);
    EXPECT_FALSE(contains(ProcessRegistry::instance().liveGroups(), processes[i]->processGroup()));
    const auto grandchild = readPid(pidFiles_[i]);
    ASSERT_TRUE(grandchild.has_value());
    EXPECT_FALSE(pidRunning(*grandchild));
    EXPECT_TRUE(waitUntilGone(*grandchild));
  }
}

TEST_F(ProcessTest, DestroyingTheIoContextKillsAndReapsTheChild) {
  pid_t child = 0;
  {
    boost::asio::io_context io;
    bool ready = false;
    auto process = Process::start(
        io,
        childSpec({"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile(), "--ready",
                   "--sleep", "60"}),
        [&](OutputStream, const std::string& line) { ready = ready || line == "ready"; },
        [](const ProcessResult&) {});
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!ready && std::chrono::steady_clock::now() < deadline) io.run_one_for(1s);
    ASSERT_TRUE(ready);
    child = process->pid();
    process.reset();
    // The io_context goes now, with the child still running.
  }
  // Killed and reaped by the Process destructor: not even a zombie is left.
  EXPECT_EQ(::waitpid(child, nullptr, WNOHANG), -1);
  EXPECT_FALSE(pidExists(child));
  const auto grandchild = readPid(pidFiles_.back());
  ASSERT_TRUE(grandchild.has_value());
  EXPECT_TRUE(waitUntilGone(*grandchild));
}

TEST_F(ProcessTest, HugeOutputStreamsThroughWithBoundedMemory) {
  constexpr long long kTotal = 200LL * 1000 * 1000;
  long long bytes = 0;
  long long lines = 0;
  boost::asio::io_context io;
  std::optional<ProcessResult> result;
  auto process = Process::start(
      io, childSpec({"--print-bytes", std::to_string(kTotal)}),
      [&](OutputStream, std::string line) {
        bytes += static_cast<long long>(line.size()) + 1;  // + the newline the splitter took
        ++lines;
      },
      [&](const ProcessResult& r) { result = r; });
  io.run_for(120s);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->exitCode, 0);
  // 1024-byte lines, and a last partial line that had no newline to take.
  const long long fullLines = kTotal / 1024;
  const long long tail = kTotal % 1024;
  EXPECT_EQ(lines, fullLines + (tail > 0 ? 1 : 0));
  EXPECT_EQ(bytes, kTotal + (tail > 0 ? 1 : 0));

  rusage usage{};
  ASSERT_EQ(::getrusage(RUSAGE_SELF, &usage), 0);
  const long peakMiB = usage.ru_maxrss / 1024;  // ru_maxrss is in KiB on Linux
  EXPECT_LT(peakMiB, 100) << "output must not be accumulated";
}

TEST_F(ProcessTest, ProcessesStartedFromAnotherThreadShareAMultiThreadedIoContext) {
  constexpr int kProcesses = 4;
  constexpr int kLines = 2000;
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) threads.emplace_back([&io] { io.run(); });

  std::vector<std::vector<std::string>> lines(kProcesses);
  std::vector<std::optional<ProcessResult>> results(kProcesses);
  std::mutex mutex;
  std::condition_variable allDone;
  int done = 0;
  std::vector<std::shared_ptr<Process>> processes;
  for (int i = 0; i < kProcesses; ++i) {
    processes.push_back(Process::start(
        io, childSpec({"--print", std::to_string(kLines)}),
        [&lines, i](OutputStream, std::string line) { lines[i].push_back(std::move(line)); },
        [&, i](const ProcessResult& r) {
          std::lock_guard lock(mutex);
          results[i] = r;
          ++done;
          allDone.notify_one();
        }));
  }
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(allDone.wait_for(lock, 60s, [&] { return done == kProcesses; }));
  }
  work.reset();
  for (auto& thread : threads) thread.join();

  for (int i = 0; i < kProcesses; ++i) {
    ASSERT_TRUE(results[i].has_value());
    EXPECT_EQ(results[i]->exitCode, 0);
    ASSERT_EQ(lines[i].size(), static_cast<std::size_t>(kLines));
    for (int n = 0; n < kLines; ++n) ASSERT_EQ(lines[i][n], "line " + std::to_string(n + 1));
  }
}

TEST_F(ProcessTest, KillProcessGroupEscalatesToSigkill) {
  bool killed = false;
  bool aliveBefore = false;
  ProcessSpec spec = childSpec({"--ignore-sigterm", "--ready", "--sleep", "60"});
  const ChildRun run =
      runChild(std::move(spec), [&](Process& p, OutputStream, const std::string& line) {
        if (line != "ready") return;
        aliveBefore = processGroupAlive(p.processGroup());
        killed = killProcessGroup(p.processGroup(), 200ms);
      });
  EXPECT_TRUE(aliveBefore);
  EXPECT_TRUE(killed);
  ASSERT_TRUE(run.result.has_value());
  EXPECT_EQ(run.result->signal, SIGKILL);
}

TEST(ProcessGroupTest, KillProcessGroupOfAGroupThatDoesNotExistSucceeds) {
  // A pid that has just been reaped names no group.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
  EXPECT_FALSE(processGroupAlive(pid));
  EXPECT_TRUE(killProcessGroup(pid, 100ms));
}

TEST(ProcessGroupTest, OutputStreamNames) {
  EXPECT_EQ(toString(OutputStream::Stdout), "stdout");
  EXPECT_EQ(toString(OutputStream::Stderr), "stderr");
}

}  // namespace
}  // namespace hydra::core
