#include "core/util/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "tests/core/util/temp_dir.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

std::vector<std::string> namesIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// Runs `body` in a forked child and returns its exit code (or 128 + signal).
template <class Body>
int runInChild(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int code = 100;
    try {
      code = body();
    } catch (...) {
      code = 101;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(AtomicFileTest, WritesNewFileWithExactContent) {
  TempDir dir;
  std::string data("line one\nline two\0binary", 24);
  writeFileAtomic(dir / "out.txt", data);
  EXPECT_EQ(readFile(dir / "out.txt"), data);
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFileTest, ReplacesExistingFileAndKeepsItsPermissions) {
  TempDir dir;
  fs::path target = dir / "race.json";
  writeFileAtomic(target, "old content that is longer than the new one");
  ASSERT_EQ(::chmod(target.c_str(), 0640), 0);

  writeFileAtomic(target, "new");

  EXPECT_EQ(readFile(target), "new");
  struct stat info {};
  ASSERT_EQ(::stat(target.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"race.json"});
}

TEST(AtomicFileTest, WritesEmptyContent) {
  TempDir dir;
  writeFileAtomic(dir / "empty", "something");
  writeFileAtomic(dir / "empty", "");
  EXPECT_EQ(fs::file_size(dir / "empty"), 0u);
}

TEST(AtomicFileTest, TargetThatIsADirectoryThrowsNamingItAndLeavesNoTemporaryFile) {
  TempDir dir;
  fs::path target = dir / "race.json";
  fs::create_directory(target);
  std::ofstream(target / "inside") << "keep me";

  try {
    writeFileAtomic(target, "new content");
    FAIL() << "writing over a directory succeeded";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(readFile(target / "inside"), "keep me");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"race.json"});
}

TEST(AtomicFileTest, MissingDirectoryThrowsNamingThePath) {
  TempDir dir;
  fs::path target = dir / "no-such-dir" / "race.json";
  try {
    writeFileAtomic(target, "x");
    FAIL() << "writing into a missing directory succeeded";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
    EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
  }
}

// A write that fails half-way (here: the file size limit, as a full disk would)
// must leave the old file as it was and no temporary file behind. It runs in a
// child so the limit does not touch the test process.
TEST(AtomicFileTest, WriteFailingHalfWayKeepsOldContentAndRemovesTemporaryFile) {
  TempDir dir;
  fs::path target = dir / "race.json";
  writeFileAtomic(target, "{\"old\": true}\n");

  int code = runInChild([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
    try {
      writeFileAtomic(target, std::string(64 * 1024, 'x'));
    } catch (const std::system_error& e) {
      bool namesPath = std::string(e.what()).find(target.string()) != std::string::npos;
      return e.code() == std::errc::file_too_large && namesPath ? 0 : 3;
    }
    return 4;
  });

  EXPECT_EQ(code, 0);
  EXPECT_EQ(readFile(target), "{\"old\": true}\n");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"race.json"});
}

// A child rewrites the file in a loop, alternating two contents of different
// sizes, and is killed with SIGKILL at varying moments: what is left is always
// one of the two in full.
TEST(AtomicFileTest, WriterKilledMidWriteLeavesOldOrNewContentNeverAMix) {
  TempDir dir;
  fs::path target = dir / "race.json";
  const std::string a(256 * 1024, 'a');
  const std::string b(384 * 1024, 'b');
  writeFileAtomic(target, a);

  for (int round = 0; round < 12; ++round) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(ready[0]);
      try {
        for (long i = 0;; ++i) {
          writeFileAtomic(target, i % 2 == 0 ? b : a);
          if (i == 0 && ::write(ready[1], "x", 1) != 1) ::_exit(2);
        }
      } catch (...) {
        ::_exit(3);
      }
    }
    ::close(ready[1]);
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the writer died before its first write";
    ::close(ready[0]);
    std::this_thread::sleep_for(std::chrono::microseconds(200 * round));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself, status " << status;

    std::string content = readFile(target);
    EXPECT_TRUE(content == a || content == b)
        << "round " << round << " left " << content.size() << " bytes";
  }
  // Whatever else is there is a temporary file a killed writer could not remove.
  for (const auto& name : namesIn(dir.path())) {
    if (name != "race.json") {
      EXPECT_TRUE(isAtomicTempName(name)) << name;
    }
  }
}

TEST(AtomicFileTest, TemporaryNamesAreRecognisedAndTargetsAreNot) {
  EXPECT_TRUE(isAtomicTempName(".race.json.tmp-123-0-abcd1234"));
  EXPECT_FALSE(isAtomicTempName("race.json"));
  EXPECT_FALSE(isAtomicTempName("events.jsonl"));
  EXPECT_FALSE(isAtomicTempName("20261121-110501-a3f9"));
  EXPECT_FALSE(isAtomicTempName("."));
}

TEST(AppendFileTest, AppendWritesWholeLinesAddingMissingNewlines) {
  TempDir dir;
  AppendFile file(dir / "events.jsonl");
  file.append("first");
  file.append("second\n");
  file.append("");
  file.append("third\nfourth");
  EXPECT_EQ(readFile(dir / "events.jsonl"), "first\nsecond\n\nthird\nfourth\n");
  EXPECT_EQ(file.size(), fs::file_size(dir / "events.jsonl"));
  file.sync();
}

TEST(AppendFileTest, ReopeningAppendsAfterExistingContent) {
  TempDir dir;
  {
    AppendFile file(dir / "agent.log");
    file.append("one");
  }
  AppendFile again(dir / "agent.log");
  again.append("two");
  EXPECT_EQ(readFile(dir / "agent.log"), "one\ntwo\n");
}

TEST(AppendFileTest, MovedFileKeepsWritingToTheSamePath) {
  TempDir dir;
  AppendFile first(dir / "a.log");
  AppendFile moved(std::move(first));
  moved.append("still here");
  EXPECT_EQ(moved.path(), dir / "a.log");
  EXPECT_EQ(readFile(dir / "a.log"), "still here\n");
}

TEST(AppendFileTest, OpeningInMissingDirectoryThrowsNamingThePath) {
  TempDir dir;
  fs::path path = dir / "missing" / "a.log";
  try {
    AppendFile file(path);
    FAIL() << "opened a file in a missing directory";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

// Two processes append to one file at once: every line arrives whole.
TEST(AppendFileTest, LinesFromTwoProcessesNeverInterleave) {
  TempDir dir;
  fs::path path = dir / "shared.log";
  constexpr int kLines = 2000;
  auto writer = [&](char tag) {
    return [&, tag] {
      AppendFile file(path);
      for (int i = 0; i < kLines; ++i) {
        file.append(std::string(1, tag) + std::to_string(i) + ":" + std::string(200, tag));
      }
      return 0;
    };
  };
  pid_t first = ::fork();
  if (first == 0) ::_exit(writer('a')());
  int second = runInChild(writer('b'));
  int status = 0;
  ::waitpid(first, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(second, 0);

  std::istringstream lines(readFile(path));
  std::map<char, int> next{{'a', 0}, {'b', 0}};
  std::string line;
  while (std::getline(lines, line)) {
    ASSERT_FALSE(line.empty());
    char tag = line[0];
    ASSERT_TRUE(tag == 'a' || tag == 'b') << line.substr(0, 40);
    // Each writer's lines arrive in its own order and unbroken.
    EXPECT_EQ(line, std::string(1, tag) + std::to_string(next[tag]) + ":" + std::string(200, tag));
    ++next[tag];
  }
  EXPECT_EQ(next['a'], kLines);
  EXPECT_EQ(next['b'], kLines);
}

}  // namespace
}  // namespace hydra::core
