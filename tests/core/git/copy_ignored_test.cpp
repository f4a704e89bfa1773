#include "core/git/copy_ignored.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "core/git/git.h"
#include "core/git/worktree.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::git {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::readFile;
using testing::TempRepo;
using testing::writeFile;

class CopyIgnoredTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.isolateLibgit2();
    repo_.write(".gitignore", "*.log\nbuild/\nnode_modules/\n.venv/\n");
    repo_.commit("ignore dependencies");
    // What `npm install` leaves: nested packages, an executable, links inside and out.
    const fs::path modules = repo_.root() / "node_modules";
    writeFile(modules / "left-pad" / "index.js", "module.exports = (s) => s;\n");
    writeFile(modules / "left-pad" / "package.json", "{\"name\": \"left-pad\"}\n");
    writeFile(modules / ".bin" / "real-tool", "#!/bin/sh\necho tool\n");
    ::chmod((modules / ".bin" / "real-tool").c_str(), 0755);
    fs::create_symlink("real-tool", modules / ".bin" / "tool");
    fs::create_symlink("/etc/passwd", modules / "outside-link");
    worktree_ = WorktreeManager(repo_.root(), ".hydra-workspaces").create("claude", "HEAD", "20261126T060000");
  }

  LibGit2 libgit2_;
  TempRepo repo_;
  Worktree worktree_;
};

TEST_F(CopyIgnoredTest, AnIgnoredFolderIsCopiedWithItsModesAndLinksAsLinks) {
  CopyReport report = copyIgnored(repo_.root(), worktree_.path, {"node_modules"});
  EXPECT_THAT(report.copied, ElementsAre("node_modules"));
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();
  EXPECT_EQ(report.files, 5u);
  const fs::path copy = worktree_.path / "node_modules";
  EXPECT_EQ(readFile(copy / "left-pad" / "index.js"), "module.exports = (s) => s;\n");
  EXPECT_TRUE((fs::status(copy / ".bin" / "real-tool").permissions() & fs::perms::owner_exec) != fs::perms::none);
  ASSERT_TRUE(fs::is_symlink(copy / ".bin" / "tool"));
  EXPECT_EQ(fs::read_symlink(copy / ".bin" / "tool"), "real-tool");
  ASSERT_TRUE(fs::is_symlink(copy / "outside-link")) << "a link is copied as a link, never followed";
  EXPECT_EQ(fs::read_symlink(copy / "outside-link"), "/etc/passwd");
  // A copy, not a link to the user's: writing it leaves the checkout alone.
  writeFile(copy / "left-pad" / "index.js", "changed by the agent\n");
  EXPECT_EQ(readFile(repo_.root() / "node_modules" / "left-pad" / "index.js"), "module.exports = (s) => s;\n");
  // git still sees a clean worktree: the folder is ignored there too.
  EXPECT_EQ(TempRepo::gitIn(worktree_.path, "status --porcelain"), "");
}

TEST_F(CopyIgnoredTest, WhatIsMissingTrackedOrALinkIsSkippedAndSaidWhy) {
  fs::create_symlink(repo_.root() / "node_modules", repo_.root() / "linked");
  repo_.write(".gitignore", "*.log\nbuild/\nnode_modules/\n.venv/\nlinked\n");
  CopyReport report = copyIgnored(repo_.root(), worktree_.path, {".venv", "src", "linked", "README.md"});
  EXPECT_TRUE(report.copied.empty());
  ASSERT_EQ(report.problems.size(), 4u);
  EXPECT_THAT(report.problems[0], HasSubstr(".venv: not in your checkout"));
  EXPECT_THAT(report.problems[1], HasSubstr("src: git does not ignore it"));
  EXPECT_THAT(report.problems[2], HasSubstr("linked: not a directory of your checkout (links are not followed)"));
  EXPECT_THAT(report.problems[3], HasSubstr("README.md: not a directory"));
  EXPECT_FALSE(fs::exists(worktree_.path / ".venv"));
  EXPECT_EQ(readFile(worktree_.path / "src" / "a.txt"), "alpha\n") << "the checkout's own files are untouched";
}

TEST_F(CopyIgnoredTest, AFolderAReusedWorktreeKeptIsLeftAsItIs) {
  writeFile(worktree_.path / "node_modules" / "left-pad" / "index.js", "kept by the pool\n");
  CopyReport report = copyIgnored(repo_.root(), worktree_.path, {"node_modules"});
  EXPECT_TRUE(report.copied.empty());
  EXPECT_THAT(report.present, ElementsAre("node_modules"));
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(readFile(worktree_.path / "node_modules" / "left-pad" / "index.js"), "kept by the pool\n");
}

}  // namespace
}  // namespace hydra::core::git
