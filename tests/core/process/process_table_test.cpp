// /proc as the reaper reads it: real processes, including one whose name
// holds the characters that make /proc/PID/stat awkward to parse.

#include "core/process/process_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
using namespace std::chrono_literals;

// A child that runs `program` with `env` until killed; killed and reaped at
// the end of the scope.
class Child {
 public:
  Child(const std::string& program, std::vector<std::string> env) {
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      std::vector<char*> envp;
      for (auto& entry : env) envp.push_back(entry.data());
      envp.push_back(nullptr);
      char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>("1000"), nullptr};
      ::execve(program.c_str(), argv, envp.data());
      ::_exit(127);
    }
    // Until exec has happened, /proc shows the forked copy of this test.
    const std::string name = fs::path(program).filename().string().substr(0, 15);
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (comm() != name && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
  }
  ~Child() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  std::string comm() const {
    FILE* f = std::fopen(("/proc/" + std::to_string(pid_) + "/comm").c_str(), "r");
    if (f == nullptr) return {};
    char buffer[64] = {};
    const bool read = std::fgets(buffer, sizeof buffer, f) != nullptr;
    std::fclose(f);
    std::string text = read ? buffer : "";
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  pid_t pid_;
};

TEST(ProcessTableTest, ReadsThisProcess) {
  const auto self = readProcessInfo(::getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->pid, ::getpid());
  EXPECT_EQ(self->ppid, ::getppid());
  EXPECT_EQ(self->pgid, ::getpgrp());
  EXPECT_EQ(self->sid, ::getsid(0));
  EXPECT_EQ(self->state, 'R');
  EXPECT_FALSE(self->gone());
  EXPECT_GT(self->startTime, 0u);
  EXPECT_LE(self->startTime, processClockNow());
}

TEST(ProcessTableTest, NoSuchProcess) {
  EXPECT_EQ(readProcessInfo(0), std::nullopt);
  EXPECT_EQ(readProcessInfo(-5), std::nullopt);
  // A pid that was just reaped.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
  EXPECT_EQ(readProcessInfo(pid), std::nullopt);
}

TEST(ProcessTableTest, NameWithSpacesAndParenthesesParses) {
  char pattern[] = "/tmp/hydra-table-test-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  const fs::path program = dir / "a) (b c";
  fs::copy_file(fs::canonical("/bin/sleep"), program);
  {
    Child child(program.string(), {});
    const auto info = readProcessInfo(child.pid());
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->pid, child.pid());
    EXPECT_EQ(info->ppid, ::getpid());
    EXPECT_EQ(info->pgid, ::getpgrp());
  }
  fs::remove_all(dir);
}

TEST(ProcessTableTest, ReadsOneVariableOfAnotherProcesssEnvironment) {
  Child child(fs::canonical("/bin/sleep").string(),
              {"HYDRA_RUN_TOKEN_X=decoy", "HYDRA_RUN_TOKEN=abc=def", "OTHER=1"});
  // Until the child has called execve, /proc shows the environment it was forked with.
  for (int i = 0; i < 200 && readEnvironmentVariable(child.pid(), "OTHER") != "1"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(readEnvironmentVariable(child.pid(), "HYDRA_RUN_TOKEN"), "abc=def");
  EXPECT_EQ(readEnvironmentVariable(child.pid(), "OTHER"), "1");
  EXPECT_EQ(readEnvironmentVariable(child.pid(), "HYDRA_RUN"), std::nullopt);
  EXPECT_EQ(readEnvironmentVariable(child.pid(), "MISSING"), std::nullopt);
}

TEST(ProcessTableTest, TableListsThisProcessAndItsChild) {
  Child child(fs::canonical("/bin/sleep").string(), {});
  const ProcessTree tree(readProcessTable());
  ASSERT_NE(tree.find(::getpid()), nullptr);
  ASSERT_NE(tree.find(child.pid()), nullptr);
  EXPECT_EQ(tree.find(child.pid())->ppid, ::getpid());
  EXPECT_THAT(tree.descendantsOf(::getpid()), ElementsAre(child.pid()));
}

ProcessInfo entry(pid_t pid, pid_t ppid) {
  ProcessInfo info;
  info.pid = pid;
  info.ppid = ppid;
  info.state = 'S';
  return info;
}

TEST(ProcessTreeTest, DescendantsComeParentsFirstAndOnlyOnce) {
  const ProcessTree tree({entry(1, 0), entry(10, 1), entry(11, 10), entry(12, 10), entry(13, 11),
                          entry(20, 1), entry(30, 99)});
  EXPECT_THAT(tree.descendantsOf(10), ElementsAre(11, 12, 13));
  EXPECT_THAT(tree.descendantsOf(1), UnorderedElementsAre(10, 11, 12, 13, 20));
  EXPECT_THAT(tree.descendantsOf(13), ElementsAre());
  EXPECT_THAT(tree.childrenOf(99), ElementsAre(30));
  EXPECT_EQ(tree.find(42), nullptr);
  // A table read over time may show a cycle through a reused pid.
  const ProcessTree cyclic({entry(5, 6), entry(6, 5)});
  EXPECT_THAT(cyclic.descendantsOf(5), ElementsAre(6));
}

}  // namespace
}  // namespace hydra::core
