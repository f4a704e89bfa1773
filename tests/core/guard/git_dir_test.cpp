// The git directory's settings: what an unconfined agent could write there
// to run its code in the user's next git command (core.fsmonitor, a hook,
// attributes naming a filter, alternates) is found and put back.

#include "core/guard/git_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/git/git.h"
#include "core/git/object_quarantine.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::guard {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::TempRepo;

class GitDirTest : public ::testing::Test {
 protected:
  fs::path git() const { return repo.root() / ".git"; }
  git::LibGit2 libgit2;
  TempRepo repo;
};

TEST_F(GitDirTest, NothingChangedSaysNothing) {
  GitDirSnapshot snapshot = snapshotGitDir(git());
  EXPECT_TRUE(snapshot.files.count("config"));
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
}

TEST_F(GitDirTest, QuarantinesOtherRacesOpenAndDropMeanwhileAreTheirsNotAnEscape) {
  GitDirSnapshot snapshot = snapshotGitDir(git());
  // Another race starts while this race's agent runs: its line is added.
  const ObjectQuarantine other = ObjectQuarantine::open(git(), "other-race");
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
  EXPECT_EQ(testing::readFile(git() / "objects" / "info" / "alternates"), other.path().string() + "\n");
  // The agent adds a line of its own: that one goes, the race's stays.
  testing::writeFile(git() / "objects" / "info" / "alternates", other.path().string() + "\n/elsewhere/objects\n");
  EXPECT_THAT(restoreGitDir(snapshot), ElementsAre(".git/objects/info/alternates added (removed)"));
  EXPECT_EQ(testing::readFile(git() / "objects" / "info" / "alternates"), other.path().string() + "\n");
  // A line that only looks like a quarantine's (outside hydra's folder) is the agent's too.
  testing::writeFile(git() / "objects" / "info" / "alternates",
                     other.path().string() + "\n" + (git() / "hydra-objects" / ".." / "evil").string() + "\n");
  EXPECT_THAT(restoreGitDir(snapshot), ElementsAre(".git/objects/info/alternates added (removed)"));
  EXPECT_EQ(testing::readFile(git() / "objects" / "info" / "alternates"), other.path().string() + "\n");
  // The other race ends.
  other.seal();
  other.drop();
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
  EXPECT_FALSE(fs::exists(git() / "objects" / "info" / "alternates"));
}

TEST_F(GitDirTest, ConfigHooksAndAttributesArePutBack) {
  const std::string config = testing::readFile(git() / "config");
  GitDirSnapshot snapshot = snapshotGitDir(git());

  repo.git("config core.fsmonitor 'touch pwned'");
  repo.git("config filter.evil.clean cat");
  testing::writeFile(git() / "hooks" / "pre-commit", "#!/bin/sh\ntouch pwned\n");
  fs::permissions(git() / "hooks" / "pre-commit", fs::perms::owner_all);
  testing::writeFile(git() / "info" / "attributes", "* filter=evil\n");
  testing::writeFile(git() / "objects" / "info" / "alternates", "/elsewhere/objects\n");

  EXPECT_THAT(restoreGitDir(snapshot),
              ElementsAre(".git/config changed (put back)", ".git/hooks/pre-commit added (removed)",
                          ".git/info/attributes added (removed)", ".git/objects/info/alternates added (removed)"));
  EXPECT_EQ(testing::readFile(git() / "config"), config);
  EXPECT_FALSE(fs::exists(git() / "hooks" / "pre-commit"));
  EXPECT_FALSE(fs::exists(git() / "info" / "attributes"));
  EXPECT_FALSE(fs::exists(git() / "objects" / "info" / "alternates"));
  EXPECT_EQ(repo.git("config --get core.fsmonitor || echo unset"), "unset");
  // Told once: the snapshot is the state now.
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
}

// The user's own commit during a race may start `git gc --auto`, whose
// repack rewrites info/refs: that is git's, not an agent's escape.
TEST_F(GitDirTest, GitsOwnGcSaysNothing) {
  repo.git("update-server-info");
  ASSERT_TRUE(fs::exists(git() / "info" / "refs"));
  GitDirSnapshot snapshot = snapshotGitDir(git());
  repo.git("branch another-branch");
  repo.git("gc -q");
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
  // A planted file beside it still is one.
  testing::writeFile(git() / "info" / "attributes", "* filter=evil\n");
  EXPECT_THAT(restoreGitDir(snapshot), ElementsAre(".git/info/attributes added (removed)"));
}

TEST_F(GitDirTest, ADeletedOrReModedFileComesBackWithItsMode) {
  testing::writeFile(git() / "hooks" / "post-checkout", "#!/bin/sh\necho mine\n");
  fs::permissions(git() / "hooks" / "post-checkout", fs::perms::owner_all);
  testing::writeFile(git() / "info" / "exclude", "mine\n");
  GitDirSnapshot snapshot = snapshotGitDir(git());

  fs::remove(git() / "info" / "exclude");
  fs::permissions(git() / "hooks" / "post-checkout", fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_THAT(restoreGitDir(snapshot),
              ElementsAre(".git/hooks/post-checkout changed (put back)", ".git/info/exclude deleted (put back)"));
  EXPECT_EQ(testing::readFile(git() / "info" / "exclude"), "mine\n");
  EXPECT_TRUE((fs::status(git() / "hooks" / "post-checkout").permissions() & fs::perms::owner_exec) != fs::perms::none);
}

// hooks/ swapped for a link to a folder of the agent's: hydra neither reads
// nor writes through it, and says it could not put it back.
TEST_F(GitDirTest, AFolderSwappedForALinkIsNotWrittenThrough) {
  testing::writeFile(git() / "hooks" / "pre-push", "#!/bin/sh\n");
  GitDirSnapshot snapshot = snapshotGitDir(git());
  fs::create_directories(repo.outside() / "hooks");
  testing::writeFile(repo.outside() / "hooks" / "pre-push", "#!/bin/sh\ntouch pwned\n");
  fs::rename(git() / "hooks", repo.outside() / "old-hooks");
  fs::create_directory_symlink(repo.outside() / "hooks", git() / "hooks");

  const auto said = restoreGitDir(snapshot);
  ASSERT_FALSE(said.empty());
  EXPECT_THAT(said.front(), ::testing::HasSubstr(".git/hooks"));
  EXPECT_EQ(testing::readFile(repo.outside() / "hooks" / "pre-push"), "#!/bin/sh\ntouch pwned\n")
      << "nothing was written through the link";
}

// The loose objects the base commit needs: one replaced or deleted comes back
// as it was, and the repository is whole again; one git's own gc packed is
// still there, and is not a change.
TEST_F(GitDirTest, TheBasesLooseObjectsArePutBack) {
  const std::string head = repo.git("rev-parse HEAD");
  const std::string blob = repo.git("rev-parse HEAD:src/a.txt");
  const std::string tree = repo.git("rev-parse HEAD^{tree}");
  GitDirSnapshot snapshot = snapshotBaseObjects(repo.root(), head);
  ASSERT_TRUE(snapshot.files.count("objects/" + blob.substr(0, 2) + "/" + blob.substr(2)));
  ASSERT_TRUE(snapshot.files.count("objects/" + head.substr(0, 2) + "/" + head.substr(2)));
  EXPECT_FALSE(snapshot.settings);
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());

  const fs::path blobFile = git() / "objects" / blob.substr(0, 2) / blob.substr(2);
  const fs::path treeFile = git() / "objects" / tree.substr(0, 2) / tree.substr(2);
  const std::string kept = testing::readFile(blobFile);
  fs::remove(blobFile);
  testing::writeFile(blobFile, "not a git object\n");
  fs::remove(treeFile);
  EXPECT_THAT(restoreGitDir(snapshot),
              ElementsAre("object " + blob + " of the base commit (.git/objects/" + blob.substr(0, 2) + "/" +
                              blob.substr(2) + ") changed (put back)",
                          "object " + tree + " of the base commit (.git/objects/" + tree.substr(0, 2) + "/" +
                              tree.substr(2) + ") deleted (put back)"));
  EXPECT_EQ(testing::readFile(blobFile), kept);
  EXPECT_EQ(fs::status(blobFile).permissions() & fs::perms::owner_write, fs::perms::none);
  EXPECT_NO_THROW(repo.git("fsck --full --no-progress"));

  repo.git("gc -q --prune=now");
  ASSERT_FALSE(fs::exists(blobFile));
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
}

// The base's objects in packs. Packs cannot be kept, so hydra watches their
// files and, when one was touched, reads the base's objects again: git's own
// repack and freshening say nothing; bytes written into a pack, or a pack
// removed with what only it held, are told, as not put back.
class PackedBaseTest : public GitDirTest {
 protected:
  void SetUp() override {
    repo.git("gc -q --prune=now");
    head = repo.git("rev-parse HEAD");
    blob = repo.git("rev-parse HEAD:src/a.txt");
    ASSERT_FALSE(fs::exists(git() / "objects" / blob.substr(0, 2) / blob.substr(2)));
  }
  // The one pack gc made, without its extension.
  fs::path pack() const {
    for (const auto& entry : fs::directory_iterator(git() / "objects" / "pack")) {
      if (entry.path().extension() == ".pack") return entry.path().parent_path() / entry.path().stem();
    }
    ADD_FAILURE() << "no pack";
    return {};
  }
  std::string head, blob;
};

TEST_F(PackedBaseTest, GitsOwnRepackAndFresheningSayNothing) {
  GitDirSnapshot snapshot = snapshotBaseObjects(repo.root(), head);
  ASSERT_EQ(snapshot.packs.size(), 2u);
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
  // Freshening: git touches a pack that holds an object it would have written.
  fs::last_write_time(pack().string() + ".pack", fs::file_time_type::clock::now());
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
  repo.git("repack -q -a -d -f");
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
  EXPECT_NO_THROW(repo.git("fsck --full --no-progress"));
}

TEST_F(PackedBaseTest, BytesWrittenIntoAPackAreToldAsNotPutBack) {
  GitDirSnapshot snapshot = snapshotBaseObjects(repo.root(), head);
  // Where the blob's compressed data starts in the pack (verify-pack: id type size packed-size offset).
  std::istringstream listing(repo.git("verify-pack -v " + pack().string() + ".idx"));
  std::streamoff offset = -1;
  for (std::string line; std::getline(listing, line);) {
    if (line.rfind(blob, 0) == 0) offset = std::stoll(line.substr(line.find_last_of(' ') + 1));
  }
  ASSERT_GE(offset, 0);
  const std::string packFile = pack().string() + ".pack";
  fs::permissions(packFile, fs::perms::owner_write, fs::perm_options::add);
  {
    std::fstream file(packFile, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(offset + 3);
    file.write("XXXX", 4);
  }

  const auto said = restoreGitDir(snapshot);
  ASSERT_EQ(said.size(), 1u) << ::testing::PrintToString(said);
  EXPECT_THAT(said[0], ::testing::StartsWith(".git/objects/pack/" + pack().filename().string() + ".pack was written: "));
  EXPECT_THAT(said[0], ::testing::HasSubstr(blob));
  EXPECT_THAT(said[0], ::testing::HasSubstr("could not be put back"));
  // Told once.
  EXPECT_THAT(restoreGitDir(snapshot), IsEmpty());
}

TEST_F(PackedBaseTest, APackRemovedWithTheBasesObjectsIsTold) {
  GitDirSnapshot snapshot = snapshotBaseObjects(repo.root(), head);
  const fs::path stem = pack();
  fs::remove(stem.string() + ".pack");
  fs::remove(stem.string() + ".idx");
  const auto said = restoreGitDir(snapshot);
  ASSERT_EQ(said.size(), 1u) << ::testing::PrintToString(said);
  EXPECT_THAT(said[0], ::testing::StartsWith(".git/objects/pack/" + stem.filename().string() + ".pack removed: "));
  EXPECT_THAT(said[0], ::testing::HasSubstr("of the base commit are gone"));
  EXPECT_THAT(said[0], ::testing::HasSubstr("could not be put back"));
}

}  // namespace
}  // namespace hydra::core::guard
