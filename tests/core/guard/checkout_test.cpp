// The user's checkout snapshot: what counts as a change (and what does not:
// a `git status` that refreshes the index), and that taking it writes
// nothing.

#include "core/guard/checkout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/git/git.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::guard {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::TempRepo;

class CheckoutGuardTest : public ::testing::Test {
 protected:
  CheckoutGuardTest() {
    repo.write("src/wip.txt", "user's work in progress\n");
    repo.write("src/a.txt", "alpha, being edited\n");
  }

  std::vector<CheckoutChange> changesSince(const CheckoutSnapshot& before) {
    return compareCheckout(before, snapshotCheckout(repo.root()));
  }

  git::LibGit2 libgit2;
  TempRepo repo;
};

TEST_F(CheckoutGuardTest, SnapshotSeesHeadIndexAndDirtyFiles) {
  const CheckoutSnapshot snapshot = snapshotCheckout(repo.root());
  EXPECT_EQ(snapshot.head, (RefTarget{"", "refs/heads/main"}));
  EXPECT_EQ(snapshot.headCommit, repo.git("rev-parse HEAD"));
  EXPECT_EQ(snapshot.indexDigest.size(), 40u);
  ASSERT_EQ(snapshot.files.size(), 2u);
  EXPECT_EQ(snapshot.files.at("src/a.txt").status, static_cast<unsigned>(GIT_STATUS_WT_MODIFIED));
  EXPECT_EQ(snapshot.files.at("src/a.txt").contentId, repo.git("hash-object src/a.txt"));
  EXPECT_EQ(snapshot.files.at("src/wip.txt").status, static_cast<unsigned>(GIT_STATUS_WT_NEW));
}

TEST_F(CheckoutGuardTest, TakingASnapshotWritesNothing) {
  const std::string index = testing::readFile(repo.root() / ".git/index");
  const auto indexTime = fs::last_write_time(repo.root() / ".git/index");
  snapshotCheckout(repo.root());
  EXPECT_EQ(testing::readFile(repo.root() / ".git/index"), index);
  EXPECT_EQ(fs::last_write_time(repo.root() / ".git/index"), indexTime);
}

TEST_F(CheckoutGuardTest, NothingChangedIsNoChangeEvenAfterAnIndexRefresh) {
  const CheckoutSnapshot before = snapshotCheckout(repo.root());
  // A plain `git status` may rewrite the index with fresh stat data.
  testing::run("git -C " + testing::shellQuote(repo.root().string()) + " status >/dev/null");
  EXPECT_THAT(changesSince(before), IsEmpty());
}

TEST_F(CheckoutGuardTest, ANewFileIsAChange) {
  const CheckoutSnapshot before = snapshotCheckout(repo.root());
  repo.write("ESCAPE.txt", "pwned\n");
  EXPECT_THAT(changesSince(before),
              ElementsAre(CheckoutChange{CheckoutChange::Kind::File, "ESCAPE.txt",
                                         "ESCAPE.txt: was unchanged, now untracked"}));
}

TEST_F(CheckoutGuardTest, ACleanTrackedFileModifiedIsAChange) {
  const CheckoutSnapshot before = snapshotCheckout(repo.root());
  repo.write("README.md", "# hijacked\n");
  EXPECT_THAT(changesSince(before),
              ElementsAre(CheckoutChange{CheckoutChange::Kind::File, "README.md",
                                         "README.md: was unchanged, now modified"}));
}

TEST_F(CheckoutGuardTest, AnAlreadyModifiedFileModifiedAgainIsAChange) {
  const CheckoutSnapshot before = snapshotCheckout(repo.root());
  repo.write("src/a.txt", "alpha, overwritten\n");
  EXPECT_THAT(
      changesSince(before),
      ElementsAre(CheckoutChange{CheckoutChange::Kind::File, "src/a.txt",
                                 "src/a.txt: was modified, now modified with other content"}));
}

TEST_F(CheckoutGuardTest, ADirtyFileRevertedIsAChange) {
  const CheckoutSnapshot before = snapshotCheckout(repo.root());
  repo.git("checkout -- src/a.txt");
  fs::remove(repo.root() / "src/wip.txt");
  const auto changes = changesSince(before);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].detail, "src/a.txt: was modified, now unchanged");
  EXPECT_EQ(changes[1].detail, "src/wip.txt: was untracked, now unchanged");
}

TEST_F(CheckoutGuardTest, StagingIsAnIndexChange) {
  const CheckoutSnapshot before = snapshotCheckout(repo.root());
  repo.git("add src/wip.txt");
  const auto changes = changesSince(before);
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(changes[0].kind, CheckoutChange::Kind::Index);
  EXPECT_EQ(changes[0].detail, "the index (staged changes) changed");
  EXPECT_EQ(changes[1].detail, "src/wip.txt: was untracked, now added to the index");
}

TEST_F(CheckoutGuardTest, ACommitMovesHead) {
  const CheckoutSnapshot before = snapshotCheckout(repo.root());
  const std::string old = repo.git("rev-parse HEAD");
  const std::string now = repo.commit("sneaky");
  const auto changes = changesSince(before);
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(changes[0].kind, CheckoutChange::Kind::Head);
  EXPECT_EQ(changes[0].detail, "HEAD moved from -> refs/heads/main at " + old.substr(0, 7) +
                                   " to -> refs/heads/main at " + now.substr(0, 7));
}

TEST_F(CheckoutGuardTest, IgnoredFilesAreNotLookedAt) {
  const CheckoutSnapshot before = snapshotCheckout(repo.root());
  repo.write("build/out.log", "noise\n");
  EXPECT_THAT(changesSince(before), IsEmpty());
}

}  // namespace
}  // namespace hydra::core::guard
