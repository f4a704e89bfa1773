// A run's cgroup (core/process/run_cgroup.h) on this machine: made with its
// limits written, joined by a real child before exec, removed with what
// still runs in it; a dead hydra's left behind removed. Where hydra can make
// no cgroup, making one fails with the reason limitSupport() gives.

#include "core/process/run_cgroup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CgroupCounterTest, ReadsOneKeyOfAFlatKeyedFile) {
  EXPECT_EQ(cgroupCounter("oom 2\noom_kill 1\n", "oom_kill"), 1u);
  EXPECT_EQ(cgroupCounter("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill"), 3u);
  EXPECT_EQ(cgroupCounter("max 11\n", "max"), 11u);
  EXPECT_EQ(cgroupCounter("usage_usec 2500000\nuser_usec 1\n", "usage_usec"), 2500000u);
  EXPECT_EQ(cgroupCounter("max 0\n", "oom_kill"), 0u);
}

TEST(RunCgroupTest, HoldsARunWhereHydraCanMakeOneAndSaysWhyNotElsewhere) {
  const ResourceLimits limits{256, 20, 5};
  if (limitSupport().mechanism == LimitMechanism::Rlimits) {
    EXPECT_FALSE(limitSupport().reason.empty());
    if (limitSupport().reason != "HYDRA_RESOURCE_LIMITS=rlimits") {
      EXPECT_THROW(RunCgroup::create(limits), std::runtime_error);
    }
    return;
  }
  std::vector<fs::path> dirs;
  {
    auto cgroup = RunCgroup::create(limits);
    dirs = cgroup->directories();
    ASSERT_FALSE(dirs.empty());
    bool sawPids = false;
    for (const fs::path& dir : dirs) {
      ASSERT_TRUE(fs::is_directory(dir)) << dir;
      EXPECT_THAT(dir.parent_path().filename().string(), HasSubstr("hydra." + std::to_string(::getpid()) + "."));
      if (fs::exists(dir / "pids.max")) {
        EXPECT_EQ(read(dir / "pids.max"), "20\n");
        sawPids = true;
      }
      if (fs::exists(dir / "memory.limit_in_bytes")) {
        EXPECT_EQ(read(dir / "memory.limit_in_bytes"), "268435456\n");
      }
      if (fs::exists(dir / "memory.max")) {
        EXPECT_EQ(read(dir / "memory.max"), "268435456\n");
      }
    }
    EXPECT_TRUE(sawPids);
    EXPECT_FALSE(cgroup->over());

    // A child joins before it runs anything, as Process's does; then it
    // sleeps in the cgroup, for the removal below to end.
    const pid_t child = ::fork();
    if (child == 0) {
      for (int fd : cgroup->joinFds()) {
        if (::write(fd, "0", 1) != 1) ::_exit(1);
      }
      ::execl("/bin/sleep", "sleep", "1000", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ASSERT_GT(child, 0);
    for (int i = 0; i < 100 && read(dirs[0] / "cgroup.procs").empty(); ++i) ::usleep(10'000);
    EXPECT_EQ(read(dirs[0] / "cgroup.procs"), std::to_string(child) + "\n");
    // Reaped here (hydra's reaper does it for a run), or the removal would
    // wait on a zombie that is no longer in the cgroup anyway.
    std::thread([child] { ::waitpid(child, nullptr, 0); }).detach();
  }
  for (const fs::path& dir : dirs) EXPECT_FALSE(fs::exists(dir)) << dir << " outlived its run";
}

TEST(RunCgroupTest, ADeadHydrasCgroupsAreRemoved) {
  if (limitSupport().mechanism == LimitMechanism::Rlimits) {
    EXPECT_EQ(removeDeadOwnersCgroups(), 0);
    return;
  }
  // Where this process makes its own: the dead hydra's goes beside it.
  std::vector<fs::path> parents;
  {
    auto cgroup = RunCgroup::create(ResourceLimits{});
    for (const fs::path& dir : cgroup->directories()) parents.push_back(dir.parent_path().parent_path());
  }
  // A pid that no process has now (a child that exited), with a start time.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  std::vector<fs::path> left;
  for (const fs::path& parent : parents) {
    const fs::path owner = parent / ("hydra." + std::to_string(gone) + ".12345");
    ASSERT_EQ(::mkdir(owner.c_str(), 0755), 0) << owner;
    ASSERT_EQ(::mkdir((owner / "run.1").c_str(), 0755), 0);
    left.push_back(owner);
  }
  EXPECT_EQ(removeDeadOwnersCgroups(), static_cast<int>(parents.size()));
  for (const fs::path& owner : left) EXPECT_FALSE(fs::exists(owner)) << owner;
}

}  // namespace
}  // namespace hydra::core
