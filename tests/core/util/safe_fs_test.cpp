// SafeDir: directories reached beneath a root without following a link, and
// writes, renames and removes in them that never go through one. Each test
// runs with openat2 and with the component-by-component walk older kernels get.

#include "core/util/safe_fs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/core/util/temp_dir.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void write(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class SafeFsTest : public ::testing::TestWithParam<bool> {
 protected:
  SafeFsTest() {
    safe_fs_detail::useOpenat2(GetParam());
    fs::create_directories(root() / "a" / "b");
    fs::create_directories(outside());
    write(outside() / "victim", "the user's file\n");
  }
  ~SafeFsTest() override { safe_fs_detail::useOpenat2(true); }

  fs::path root() const { return dir_ / "root"; }
  fs::path outside() const { return dir_ / "outside"; }

  // `relative` beneath root() is refused as swapped, and the message names it.
  void expectSwapped(const fs::path& relative) {
    try {
      SafeDir::openBeneath(root(), relative);
      ADD_FAILURE() << relative << " was opened";
    } catch (const SwappedPathError& e) {
      EXPECT_THAT(e.what(), HasSubstr((root() / relative).string()));
    }
  }

  test::TempDir dir_;
};

TEST_P(SafeFsTest, OpensItsOwnDirectories) {
  SafeDir b = SafeDir::openBeneath(root(), "a/b");
  b.writeFile("file", "text\n");
  EXPECT_EQ(read(root() / "a" / "b" / "file"), "text\n");
  EXPECT_EQ(b.readFile("file"), "text\n");
  EXPECT_EQ(SafeDir::openBeneath(root(), "").identity(), SafeDir::open(root()).identity());
}

TEST_P(SafeFsTest, ALinkInTheMiddleIsRefused) {
  fs::rename(root() / "a", root() / "a.orig");
  fs::create_directories(outside() / "b");
  fs::create_directory_symlink(outside(), root() / "a");
  expectSwapped("a/b");
}

TEST_P(SafeFsTest, ALinkAtTheEndIsRefused) {
  fs::remove(root() / "a" / "b");
  fs::create_directory_symlink(outside(), root() / "a" / "b");
  expectSwapped("a/b");
  try {
    SafeDir::open(root() / "a" / "b");
    ADD_FAILURE() << "opened through the link";
  } catch (const SwappedPathError& e) {
    EXPECT_EQ(e.code().value(), ELOOP);
    EXPECT_EQ(e.path(), root() / "a" / "b");
  }
}

TEST_P(SafeFsTest, DotDotIsRefused) {
  expectSwapped("a/../../outside");
  expectSwapped("..");
  EXPECT_THROW(SafeDir::openBeneath(root(), outside()), std::invalid_argument);
}

TEST_P(SafeFsTest, AFileWhereADirectoryWasIsRefused) {
  fs::remove(root() / "a" / "b");
  write(root() / "a" / "b", "not a directory\n");
  expectSwapped("a/b");
}

TEST_P(SafeFsTest, AMissingDirectoryIsAnErrorNamingIt) {
  try {
    SafeDir::openBeneath(root(), "a/missing");
    ADD_FAILURE();
  } catch (const SwappedPathError&) {
    ADD_FAILURE() << "nothing was swapped";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOENT);
    EXPECT_THAT(e.what(), HasSubstr((root() / "a" / "missing").string()));
  }
}

// Opened before the swap, the directory stays the one hydra made: what it
// writes goes there, not to the link's target, and the swap shows in its identity.
TEST_P(SafeFsTest, ADirectorySwappedAfterItWasOpenedIsNotWrittenThrough) {
  SafeDir b = SafeDir::openBeneath(root(), "a/b");
  const FileIdentity before = b.identity();
  fs::rename(root() / "a" / "b", root() / "a" / "b.orig");
  fs::create_directory_symlink(outside(), root() / "a" / "b");
  b.writeFile("victim", "hydra's\n");
  EXPECT_EQ(read(outside() / "victim"), "the user's file\n");
  EXPECT_EQ(read(root() / "a" / "b.orig" / "victim"), "hydra's\n");
  EXPECT_EQ(b.identity(), before);
  EXPECT_THROW(SafeDir::openBeneath(root(), "a/b"), SwappedPathError);
}

TEST_P(SafeFsTest, WritingOverALinkReplacesTheLink) {
  SafeDir a = SafeDir::openBeneath(root(), "a");
  fs::create_symlink(outside() / "victim", root() / "a" / "f");
  a.writeFile("f", "hydra's\n");
  EXPECT_FALSE(fs::is_symlink(root() / "a" / "f"));
  EXPECT_EQ(read(root() / "a" / "f"), "hydra's\n");
  EXPECT_EQ(read(outside() / "victim"), "the user's file\n");
}

TEST_P(SafeFsTest, ReadingALinkOrAFifoIsRefused) {
  SafeDir a = SafeDir::openBeneath(root(), "a");
  fs::create_symlink(outside() / "victim", root() / "a" / "link");
  EXPECT_THROW(a.readFile("link"), SwappedPathError);
  ASSERT_EQ(::mkfifo((root() / "a" / "fifo").c_str(), 0600), 0);
  EXPECT_THROW(a.readFile("fifo"), std::system_error);
}

TEST_P(SafeFsTest, RemovingALinkLeavesItsTarget) {
  SafeDir a = SafeDir::openBeneath(root(), "a");
  fs::create_directory_symlink(outside(), root() / "a" / "dir-link");
  a.remove("dir-link");
  EXPECT_FALSE(fs::exists(fs::symlink_status(root() / "a" / "dir-link")));
  EXPECT_EQ(read(outside() / "victim"), "the user's file\n");
}

TEST_P(SafeFsTest, RemovingATreeNeverFollowsALinkInside) {
  fs::create_directories(root() / "a" / "b" / "deep" / "read-only");
  write(root() / "a" / "b" / "deep" / "read-only" / "f", "x");
  fs::permissions(root() / "a" / "b" / "deep" / "read-only", fs::perms::owner_read | fs::perms::owner_exec);
  fs::create_directory_symlink(outside(), root() / "a" / "b" / "deep" / "out");
  fs::create_symlink(outside() / "victim", root() / "a" / "b" / "victim-link");
  SafeDir::openBeneath(root(), "a").remove("b");
  EXPECT_FALSE(fs::exists(root() / "a" / "b"));
  EXPECT_EQ(read(outside() / "victim"), "the user's file\n");
}

TEST_P(SafeFsTest, RenamesWithinTheDirectory) {
  SafeDir a = SafeDir::openBeneath(root(), "a");
  a.writeFile("one", "1");
  a.rename("one", "two");
  EXPECT_EQ(read(root() / "a" / "two"), "1");
  EXPECT_THROW(a.rename("two", "../escaped"), std::invalid_argument);
  EXPECT_THROW(a.writeFile("b/file", "x"), std::invalid_argument);
  a.remove("missing");  // nothing there is not an error
}

INSTANTIATE_TEST_SUITE_P(Resolution, SafeFsTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Openat2") : std::string("Walk");
                         });

}  // namespace
}  // namespace hydra::core
