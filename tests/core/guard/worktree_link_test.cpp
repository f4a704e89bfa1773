// A worktree's .git link: intact as made, broken by deleting or rewriting it
// (or putting a directory in its place), and whole again after the restore.

#include "core/guard/worktree_link.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/git/git.h"
#include "core/git/worktree.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::guard {
namespace {

namespace fs = std::filesystem;
using testing::TempRepo;

class WorktreeLinkTest : public ::testing::Test {
 protected:
  WorktreeLinkTest()
      : worktree(WorktreeManager(repo.root(), ".hydra-workspaces").create("agent", "HEAD", "1")),
        metadata(repo.root() / ".git" / "worktrees" / worktree.name) {}

  void expectWorksAgain() {
    restoreWorktreeLink(worktree.path, metadata);
    EXPECT_TRUE(worktreeLinkIntact(worktree.path, metadata));
    EXPECT_EQ(TempRepo::gitIn(worktree.path, "rev-parse --abbrev-ref HEAD"), worktree.branch);
  }

  git::LibGit2 libgit2;
  TempRepo repo;
  Worktree worktree;
  fs::path metadata;
};

TEST_F(WorktreeLinkTest, AFreshWorktreeIsIntact) {
  EXPECT_TRUE(worktreeLinkIntact(worktree.path, metadata));
  EXPECT_FALSE(worktreeLinkIntact(worktree.path, repo.root() / ".git"));
}

TEST_F(WorktreeLinkTest, DeletedIsBrokenAndRestored) {
  fs::remove(worktree.path / ".git");
  EXPECT_FALSE(worktreeLinkIntact(worktree.path, metadata));
  expectWorksAgain();
}

TEST_F(WorktreeLinkTest, PointedAtTheMainRepositoryIsBrokenAndRestored) {
  testing::writeFile(worktree.path / ".git", "gitdir: " + (repo.root() / ".git").string() + "\n");
  EXPECT_FALSE(worktreeLinkIntact(worktree.path, metadata));
  expectWorksAgain();
}

TEST_F(WorktreeLinkTest, ReplacedByARepositoryOfItsOwnIsBrokenAndRestored) {
  fs::remove(worktree.path / ".git");
  TempRepo::gitIn(worktree.path, "init -q");
  EXPECT_TRUE(fs::is_directory(worktree.path / ".git"));
  EXPECT_FALSE(worktreeLinkIntact(worktree.path, metadata));
  expectWorksAgain();
}

TEST_F(WorktreeLinkTest, ASymlinkToTheRightPlaceIsNotIntact) {
  // A symlink could be repointed at any time; only hydra's own file counts.
  const fs::path copy = repo.outside() / "link-copy";
  fs::copy_file(worktree.path / ".git", copy);
  fs::remove(worktree.path / ".git");
  fs::create_symlink(copy, worktree.path / ".git");
  EXPECT_FALSE(worktreeLinkIntact(worktree.path, metadata));
  expectWorksAgain();
  EXPECT_FALSE(fs::is_symlink(worktree.path / ".git"));
}

}  // namespace
}  // namespace hydra::core::guard
