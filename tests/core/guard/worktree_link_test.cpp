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

// The attack of an unconfined agent: `mv "$W" "$W.orig" && ln -s "$MAIN" "$W"`.
// Through the link, the user's .git directory is "not intact"; the restore
// must refuse rather than replace it with a one-line file.
TEST_F(WorktreeLinkTest, AWorktreeSwappedForALinkToTheCheckoutIsRefusedAndTheCheckoutKeepsItsHistory) {
  const std::string head = TempRepo::gitIn(repo.root(), "rev-parse HEAD");
  fs::rename(worktree.path, worktree.path.string() + ".orig");
  fs::create_symlink(repo.root(), worktree.path);
  EXPECT_FALSE(worktreeLinkIntact(worktree.path, metadata));
  try {
    restoreWorktreeLink(worktree.path, metadata);
    ADD_FAILURE() << "wrote through the link";
  } catch (const SwappedPathError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(worktree.path.string()));
  }
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(repo.root() / ".git")));
  EXPECT_EQ(TempRepo::gitIn(repo.root(), "rev-parse HEAD"), head);
}

// Opened before the swap, the worktree's directory is repaired where it now
// is, and nothing reaches the link's target.
TEST_F(WorktreeLinkTest, TheOpenedWorktreeIsRepairedWhereverItWasMoved) {
  const SafeDir opened = SafeDir::open(worktree.path);
  const fs::path moved = worktree.path.string() + ".orig";
  fs::rename(worktree.path, moved);
  fs::create_symlink(repo.root(), worktree.path);
  fs::remove(moved / ".git");
  EXPECT_FALSE(worktreeLinkIntact(opened, metadata));
  restoreWorktreeLink(opened, metadata);
  EXPECT_TRUE(worktreeLinkIntact(opened, metadata));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(moved / ".git")));
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(repo.root() / ".git")));
}

TEST_F(WorktreeLinkTest, ALinkPlantedAsDotGitIsReplacedAndItsTargetLeftAlone) {
  const fs::path victim = repo.outside() / "victim";
  testing::writeFile(victim, "the user's file\n");
  fs::remove(worktree.path / ".git");
  fs::create_symlink(victim, worktree.path / ".git");
  expectWorksAgain();
  EXPECT_EQ(testing::readFile(victim), "the user's file\n");
}

}  // namespace
}  // namespace hydra::core::guard
