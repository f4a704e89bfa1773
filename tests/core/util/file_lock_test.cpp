#include "core/util/file_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "tests/core/util/temp_dir.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

TEST(FileLockTest, CreatesTheFileAndItsDirectory) {
  TempDir dir;
  const fs::path path = dir / "a/b/registry.lock";
  { FileLock lock(path); }
  EXPECT_TRUE(fs::is_regular_file(path)) << "left in place for the next one";
}

TEST(FileLockTest, TwoHoldersExcludeEachOtherEvenInOneProcess) {
  TempDir dir;
  const fs::path path = dir / "registry.lock";
  std::optional<FileLock> first(std::in_place, path);
  std::atomic<bool> taken{false};
  std::thread second([&] {
    FileLock lock(path);
    taken = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(taken) << "the second waits while the first holds it";
  first.reset();
  second.join();
  EXPECT_TRUE(taken);
}

TEST(FileLockTest, AnotherProcessWaitsAndAKilledHolderReleasesIt) {
  TempDir dir;
  const fs::path path = dir / "registry.lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    FileLock lock(path);
    char c = 'x';
    (void)!::write(ready[1], &c, 1);
    ::pause();  // holds it until killed
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  std::atomic<bool> taken{false};
  std::thread waiter([&] {
    FileLock lock(path);
    taken = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(taken) << "held by the other process";
  ::kill(holder, SIGKILL);
  int status = 0;
  ::waitpid(holder, &status, 0);
  waiter.join();  // the kernel let go of a dead holder's lock
  EXPECT_TRUE(taken);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(FileLockTest, AnUnopenablePathIsAnErrorNamingIt) {
  TempDir dir;
  fs::create_directory(dir / "lock-is-a-dir");
  try {
    FileLock lock(dir / "lock-is-a-dir");
    FAIL() << "a directory cannot be locked as a file";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "lock-is-a-dir").string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hydra::core
