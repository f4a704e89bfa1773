#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "core/process/process.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;

class FindExecutableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "hydra-find-exe-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path makeFile(const fs::path& relative, fs::perms perms) {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "#!/bin/sh\nexit 0\n";
    fs::permissions(path, perms);
    return path;
  }

  fs::path root_;
};

constexpr auto kExecutable = fs::perms::owner_all;
constexpr auto kNotExecutable = fs::perms::owner_read | fs::perms::owner_write;

TEST_F(FindExecutableTest, FindsTheFirstExecutableOnThePath) {
  makeFile("a/tool", kExecutable);
  makeFile("b/tool", kExecutable);
  const std::string path = (root_ / "a").string() + ":" + (root_ / "b").string();
  EXPECT_EQ(findExecutable("tool", path), root_ / "a" / "tool");
}

TEST_F(FindExecutableTest, SkipsFilesThatAreNotExecutable) {
  makeFile("a/tool", kNotExecutable);
  const fs::path wanted = makeFile("b/tool", kExecutable);
  const std::string path = (root_ / "a").string() + ":" + (root_ / "b").string();
  EXPECT_EQ(findExecutable("tool", path), wanted);
}

TEST_F(FindExecutableTest, SkipsDirectoriesNamedLikeTheProgram) {
  fs::create_directories(root_ / "a" / "tool");
  const fs::path wanted = makeFile("b/tool", kExecutable);
  const std::string path = (root_ / "a").string() + ":" + (root_ / "b").string();
  EXPECT_EQ(findExecutable("tool", path), wanted);
}

TEST_F(FindExecutableTest, SkipsEmptyEntries) {
  const fs::path wanted = makeFile("b/tool", kExecutable);
  EXPECT_EQ(findExecutable("tool", "::" + (root_ / "b").string() + ":"), wanted);
}

TEST_F(FindExecutableTest, AbsentProgramIsNotFound) {
  makeFile("a/other", kExecutable);
  EXPECT_EQ(findExecutable("tool", (root_ / "a").string()), std::nullopt);
  EXPECT_EQ(findExecutable("tool", ""), std::nullopt);
  EXPECT_EQ(findExecutable("", (root_ / "a").string()), std::nullopt);
}

TEST_F(FindExecutableTest, ProgramWithASlashIsNotLookedUp) {
  const fs::path tool = makeFile("a/tool", kExecutable);
  EXPECT_EQ(findExecutable(tool.string(), "/nonexistent"), tool);
  const fs::path plain = makeFile("a/plain", kNotExecutable);
  EXPECT_EQ(findExecutable(plain.string(), (root_ / "a").string()), std::nullopt);
}

}  // namespace
}  // namespace hydra::core
