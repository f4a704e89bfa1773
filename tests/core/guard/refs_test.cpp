// Ref snapshots, their comparison and the restore, against refs changed by
// the git CLI (loose and packed, symbolic and detached HEAD), checked with
// the git CLI afterwards.

#include "core/guard/refs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/git/git.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::guard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Key;
using testing::TempRepo;
using ::testing::UnorderedElementsAre;

// HEAD as the git CLI sees it: the branch, or the commit when detached.
std::string headByGit(const TempRepo& repo) {
  try {
    return repo.git("symbolic-ref HEAD");
  } catch (const std::runtime_error&) {
    return repo.git("rev-parse HEAD");
  }
}

// Every ref and HEAD as the git CLI lists them: what "byte-identical refs" means.
std::string refsByGit(const TempRepo& repo) {
  return repo.git("for-each-ref --format='%(refname) %(objectname) %(symref)'") + "\nHEAD " +
         headByGit(repo);
}

class RefGuardTest : public ::testing::Test {
 protected:
  RefGuardTest() {
    first = repo.git("rev-parse HEAD");
    repo.write("src/c.txt", "gamma\n");
    second = repo.commit("second");
    repo.git("tag v1");
    repo.git("branch feature " + first);
    repo.git("pack-refs --all");       // main, feature and v1 packed
    repo.git("branch hydra/agent-1");  // loose
  }

  git::LibGit2 libgit2;
  TempRepo repo;
  std::string first;
  std::string second;
};

TEST_F(RefGuardTest, SnapshotHasLooseAndPackedRefsAndHead) {
  const RefSnapshot snapshot = snapshotRefs(repo.root());
  EXPECT_THAT(snapshot.refs,
              UnorderedElementsAre(Key("HEAD"), Key("refs/heads/main"), Key("refs/heads/feature"),
                                   Key("refs/tags/v1"), Key("refs/heads/hydra/agent-1")));
  EXPECT_EQ(snapshot.refs.at("HEAD"), (RefTarget{"", "refs/heads/main"}));
  EXPECT_EQ(snapshot.refs.at("refs/heads/main"), (RefTarget{second, ""}));
  EXPECT_EQ(snapshot.refs.at("refs/heads/feature"), (RefTarget{first, ""}));
  EXPECT_EQ(snapshot.refs.at("refs/heads/hydra/agent-1"), (RefTarget{second, ""}));
}

TEST_F(RefGuardTest, NothingChangedIsNoChange) {
  const RefSnapshot before = snapshotRefs(repo.root());
  repo.git("status");
  EXPECT_THAT(compareRefs(before, snapshotRefs(repo.root())), IsEmpty());
}

TEST_F(RefGuardTest, CreatedDeletedAndMovedRefsAreListedExceptAllowedOnes) {
  const RefSnapshot before = snapshotRefs(repo.root());
  repo.git("update-ref refs/heads/main " + first);
  repo.git("update-ref refs/heads/planted " + first);
  repo.git("update-ref -d refs/tags/v1");
  repo.git("update-ref refs/heads/hydra/agent-1 " + first);  // the run's own branch
  repo.git("symbolic-ref HEAD refs/heads/planted");
  const auto changes = compareRefs(before, snapshotRefs(repo.root()), {"refs/heads/hydra/agent-1"});
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0], (RefChange{"HEAD", RefChange::Kind::Moved, RefTarget{"", "refs/heads/main"},
                                   RefTarget{"", "refs/heads/planted"}}));
  EXPECT_EQ(changes[1], (RefChange{"refs/heads/main", RefChange::Kind::Moved, RefTarget{second, ""},
                                   RefTarget{first, ""}}));
  EXPECT_EQ(changes[2], (RefChange{"refs/heads/planted", RefChange::Kind::Created, std::nullopt,
                                   RefTarget{first, ""}}));
  EXPECT_EQ(changes[3], (RefChange{"refs/tags/v1", RefChange::Kind::Deleted, RefTarget{second, ""},
                                   std::nullopt}));
  EXPECT_EQ(changes[0].describe(), "HEAD moved from -> refs/heads/main to -> refs/heads/planted");
  EXPECT_EQ(changes[1].describe(),
            "refs/heads/main moved from " + second.substr(0, 7) + " to " + first.substr(0, 7));
  EXPECT_EQ(changes[2].describe(), "refs/heads/planted created (" + first.substr(0, 7) + ")");
  EXPECT_EQ(changes[3].describe(), "refs/tags/v1 deleted (was " + second.substr(0, 7) + ")");
}

TEST_F(RefGuardTest, RestorePutsEveryRefBackAsItWas) {
  const std::string byGitBefore = refsByGit(repo);
  const RefSnapshot before = snapshotRefs(repo.root());
  repo.git("update-ref refs/heads/main " + first);  // a packed ref, now also loose
  repo.git("update-ref refs/heads/planted " + first);
  repo.git("update-ref -d refs/tags/v1");  // a packed ref, deleted
  repo.git("update-ref -d refs/heads/feature");
  repo.git("symbolic-ref HEAD refs/heads/planted");
  const auto changes = compareRefs(before, snapshotRefs(repo.root()));
  ASSERT_EQ(changes.size(), 5u);

  const RestoreReport report = restoreRefs(repo.root(), changes);
  EXPECT_THAT(report.failed, IsEmpty());
  EXPECT_EQ(report.restored.size(), 5u);
  EXPECT_THAT(compareRefs(before, snapshotRefs(repo.root())), IsEmpty());
  EXPECT_EQ(refsByGit(repo), byGitBefore);
  // The restore is on record in main's reflog.
  EXPECT_THAT(repo.git("reflog show -1 --format=%gs refs/heads/main"),
              HasSubstr("hydra: put back"));
  // And the user's checkout is consistent again.
  EXPECT_EQ(repo.git("status --porcelain"), "");
}

TEST_F(RefGuardTest, RestoreOfADetachedHead) {
  repo.git("checkout -q --detach " + first);
  const RefSnapshot before = snapshotRefs(repo.root());
  EXPECT_EQ(before.refs.at("HEAD"), (RefTarget{first, ""}));
  repo.git("update-ref --no-deref HEAD " + second);
  const auto changes = compareRefs(before, snapshotRefs(repo.root()));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_THAT(restoreRefs(repo.root(), changes).failed, IsEmpty());
  EXPECT_EQ(headByGit(repo), first);
}

TEST_F(RefGuardTest, ARefThatTookTheFolderOfAnotherIsRemovedFirst) {
  // refs/heads/feature deleted and refs/heads/feature/x created in its place:
  // putting feature back needs feature/x gone first.
  const RefSnapshot before = snapshotRefs(repo.root());
  repo.git("update-ref -d refs/heads/feature");
  repo.git("update-ref refs/heads/feature/x " + second);
  const auto changes = compareRefs(before, snapshotRefs(repo.root()));
  ASSERT_EQ(changes.size(), 2u);
  const RestoreReport report = restoreRefs(repo.root(), changes);
  EXPECT_THAT(report.failed, IsEmpty());
  EXPECT_EQ(repo.git("rev-parse refs/heads/feature"), first);
  EXPECT_THAT(compareRefs(before, snapshotRefs(repo.root())), IsEmpty());
}

TEST_F(RefGuardTest, ARefThatCannotBePutBackIsReportedNotThrown) {
  const std::string missing(40, 'e');
  const RefChange impossible{"refs/heads/main", RefChange::Kind::Moved, RefTarget{missing, ""},
                             RefTarget{second, ""}};
  const RefChange fine{"refs/heads/planted", RefChange::Kind::Created, std::nullopt,
                       RefTarget{first, ""}};
  repo.git("update-ref refs/heads/planted " + first);
  const RestoreReport report = restoreRefs(repo.root(), {impossible, fine});
  ASSERT_EQ(report.failed.size(), 1u);
  EXPECT_EQ(report.failed[0].first, impossible);
  EXPECT_THAT(report.failed[0].second, HasSubstr("put back refs/heads/main"));
  EXPECT_THAT(report.restored, ElementsAre(fine));
  EXPECT_EQ(repo.git("rev-parse main"), second);
  EXPECT_EQ(repo.git("for-each-ref refs/heads/planted"), "");
}

TEST_F(RefGuardTest, AGarbledRefFileIsAChange) {
  const RefSnapshot before = snapshotRefs(repo.root());
  testing::writeFile(repo.root() / ".git/refs/heads/hydra/agent-1", "not a ref\n");
  std::vector<RefChange> changes;
  ASSERT_NO_THROW(changes = compareRefs(before, snapshotRefs(repo.root())));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].name, "refs/heads/hydra/agent-1");
  EXPECT_THAT(restoreRefs(repo.root(), changes).failed, IsEmpty());
  EXPECT_EQ(repo.git("rev-parse hydra/agent-1"), second);
}

TEST_F(RefGuardTest, SnapshotOfANonRepositoryThrows) {
  EXPECT_THROW(snapshotRefs(repo.outside()), git::GitError);
}

}  // namespace
}  // namespace hydra::core::guard
