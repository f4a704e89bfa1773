// ObjectQuarantine on real repositories: what a race writes stays out of the
// user's store until a merge or the user's own git needs it, and dropping it
// never leaves the repository missing an object (git fsck says so).

#include "core/git/object_quarantine.h"

#include <git2.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "core/git/git.h"
#include "core/util/owner.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using testing::readFile;
using testing::run;
using testing::shellQuote;
using testing::TempRepo;

class ObjectQuarantineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    git_libgit2_init();
    repo_.isolateLibgit2();
  }
  void TearDown() override { git_libgit2_shutdown(); }

  fs::path commonDir() const { return repo_.root() / ".git"; }
  fs::path looseInUserStore(const std::string& id) const {
    return commonDir() / "objects" / id.substr(0, 2) / id.substr(2);
  }
  bool inUserStore(const std::string& id) const { return fs::exists(looseInUserStore(id)); }
  std::string alternates() const {
    const fs::path file = commonDir() / "objects" / "info" / "alternates";
    return fs::exists(file) ? readFile(file) : "";
  }

  // Runs git in the repository as an agent would: its writes go to `q`.
  std::string agentGit(const ObjectQuarantine& q, const std::string& args) const {
    std::string env;
    for (const auto& [key, value] : q.environment()) env += key + "=" + shellQuote(value) + " ";
    return trimmed(run("cd " + shellQuote(repo_.root().string()) + " && " + env + "git " + args));
  }
  static std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  }

  // A commit on branch `branch` holding `file` = `content`, written the way
  // hydra commits a result: through libgit2 with the quarantine above the store.
  std::string commitThroughLibgit2(const ObjectQuarantine& q, const std::string& branch, const std::string& file,
                                   const std::string& content) const {
    git::RepositoryPtr repo = git::openRepository(repo_.root());
    q.writeInto(repo.get());
    git_oid blob;
    git::check(git_blob_create_from_buffer(&blob, repo.get(), content.data(), content.size()), "blob");
    git::CommitPtr parent = git::lookupCommit(repo.get(), git::resolveCommit(repo.get(), "HEAD"));
    git_tree* rawBase = nullptr;
    git::check(git_commit_tree(&rawBase, parent.get()), "tree");
    git::TreePtr base(rawBase);
    git_treebuilder* rawBuilder = nullptr;
    git::check(git_treebuilder_new(&rawBuilder, repo.get(), base.get()), "builder");
    git::check(git_treebuilder_insert(nullptr, rawBuilder, file.c_str(), &blob, GIT_FILEMODE_BLOB), "insert");
    git_oid treeId;
    git::check(git_treebuilder_write(&treeId, rawBuilder), "write tree");
    git_treebuilder_free(rawBuilder);
    git_tree* rawTree = nullptr;
    git::check(git_tree_lookup(&rawTree, repo.get(), &treeId), "lookup");
    git::TreePtr tree(rawTree);
    git::SignaturePtr who = git::makeSignature("hydra", "hydra@localhost");
    const git_commit* parents[] = {parent.get()};
    git_oid id;
    git::check(git_commit_create(&id, repo.get(), ("refs/heads/" + branch).c_str(), who.get(), who.get(), nullptr,
                                 "result", tree.get(), 1, parents),
               "commit");
    return git::toHex(id);
  }

  void expectFsckClean() const { EXPECT_NO_THROW(repo_.git("fsck --full --no-dangling --strict")); }

  TempRepo repo_;
};

TEST_F(ObjectQuarantineTest, HydrasWritesLandInTheQuarantineAndTheUsersGitReadsThem) {
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-1");
  EXPECT_EQ(q.path(), commonDir() / "hydra-objects" / "race-1");
  EXPECT_EQ(alternates(), q.path().string() + "\n");
  const std::string commit = commitThroughLibgit2(q, "hydra/race-1/careful", "fix.txt", "the fix\n");
  EXPECT_FALSE(inUserStore(commit));
  EXPECT_TRUE(fs::exists(q.path() / commit.substr(0, 2) / commit.substr(2)));
  EXPECT_EQ(repo_.git("show hydra/race-1/careful:fix.txt"), "the fix");
  expectFsckClean();
  // Opened again (a second hydra of the same race): one line, not two.
  ObjectQuarantine::open(commonDir(), "race-1");
  EXPECT_EQ(alternates(), q.path().string() + "\n");
}

TEST_F(ObjectQuarantineTest, AnAgentsGitWritesIntoTheQuarantine) {
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-2");
  repo_.write("agent.txt", "written by an agent\n");
  const std::string blob = agentGit(q, "hash-object -w agent.txt");
  EXPECT_FALSE(inUserStore(blob));
  EXPECT_TRUE(fs::exists(q.path() / blob.substr(0, 2) / blob.substr(2)));
}

TEST_F(ObjectQuarantineTest, DroppingARaceNobodyKeptLeavesNothingOfItInTheUsersStore) {
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-3");
  const std::string commit = commitThroughLibgit2(q, "hydra/race-3/careful", "fix.txt", "dropped\n");
  q.seal();
  repo_.git("branch -D hydra/race-3/careful");
  const QuarantineDrop dropped = q.drop();
  EXPECT_TRUE(dropped.removed);
  EXPECT_EQ(dropped.adoptedObjects, 0u);
  EXPECT_FALSE(fs::exists(q.path()));
  EXPECT_FALSE(inUserStore(commit));
  EXPECT_EQ(alternates(), "");
  expectFsckClean();
  EXPECT_TRUE(ObjectQuarantine::list(commonDir()).empty());
}

// A hydra killed while copying an object into the user's store leaves its
// temporary copy, named for it: the next drop removes what a dead hydra left
// and leaves a live one's, and the quarantines' folder goes with the last one.
TEST_F(ObjectQuarantineTest, ADropRemovesTheCopiesAKilledHydraLeftAndTheEmptyFolder) {
  const fs::path fan = commonDir() / "objects" / "ab";
  fs::create_directories(fan);
  ProcessOwner dead = ProcessOwner::self();
  dead.startTime += 1;  // this pid, but a later process: the one named is gone
  const fs::path deadCopy = fan / (".hydra-adopt-" + toWord(dead) + "-cdef0123456789abcdef0123456789abcdef01");
  const fs::path liveCopy =
      fan / (".hydra-adopt-" + toWord(ProcessOwner::self()) + "-cdef0123456789abcdef0123456789abcdef02");
  for (const fs::path& p : {deadCopy, liveCopy}) testing::writeFile(p, "x");

  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-9");
  q.seal();
  q.drop();
  EXPECT_FALSE(fs::exists(deadCopy));
  EXPECT_TRUE(fs::exists(liveCopy)) << "a live hydra's copy is its own";
  EXPECT_FALSE(fs::exists(commonDir() / "hydra-objects"));
  // And a later race makes the folder again.
  EXPECT_NO_THROW(ObjectQuarantine::open(commonDir(), "race-10"));
}

// An agent's own `git commit` writes into the user's store. claim() moves
// what its commits brought there since the quarantine was made, and leaves
// what the base holds (a file the agent copied) and what the user had.
TEST_F(ObjectQuarantineTest, ClaimMovesWhatAnAgentsOwnCommitsWroteAndLeavesTheBase) {
  repo_.write("base.txt", "in the base\n");
  repo_.git("add base.txt");
  repo_.git("commit -q -m base");
  const std::string base = repo_.git("rev-parse HEAD");
  const std::string baseBlob = repo_.git("rev-parse HEAD:base.txt");
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-11");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the clock tick of its birth
  repo_.git("checkout -q -b agent");
  repo_.write("own.txt", "the agent's own\n");
  repo_.write("copy.txt", "in the base\n");  // the base's blob again: git freshens it
  repo_.git("add own.txt copy.txt");
  repo_.git("commit -q -m own");
  const std::string tip = repo_.git("rev-parse HEAD");
  const std::string ownBlob = repo_.git("rev-parse HEAD:own.txt");
  const std::string tree = repo_.git("rev-parse HEAD^{tree}");
  ASSERT_TRUE(inUserStore(tip));

  git::RepositoryPtr repo = git::openRepository(repo_.root());
  EXPECT_EQ(q.claim(repo.get(), tip, base), 3u);  // the commit, its tree, the new blob
  for (const std::string& id : {tip, tree, ownBlob}) {
    EXPECT_FALSE(inUserStore(id)) << id;
    EXPECT_TRUE(fs::exists(q.path() / id.substr(0, 2) / id.substr(2))) << id;
  }
  EXPECT_TRUE(inUserStore(baseBlob)) << "the base's own blob left the user's store";
  EXPECT_TRUE(inUserStore(base));
  EXPECT_EQ(repo_.git("show agent:own.txt"), "the agent's own");
  expectFsckClean();
  // Claimed again: nothing more to move.
  EXPECT_EQ(q.claim(repo.get(), tip, base), 0u);

  // The agent's branch (and, as with a worktree's, its reflog) goes with the
  // race: so do its objects.
  repo_.git("checkout -q -");
  repo_.git("branch -D agent");
  repo_.git("reflog expire --expire=now --all");
  q.seal();
  q.drop();
  EXPECT_FALSE(inUserStore(tip));
  EXPECT_NE(repo_.git("cat-file -e " + tip + " 2>/dev/null; echo $?"), "0");
  expectFsckClean();
}

// Two races write the same file. libgit2 writes no object it finds anywhere,
// so were the other race's quarantine in sight, this race's result would rely
// on it, and lose the object when that race is dropped. Each race's writes
// see only its own quarantine and the user's store.
TEST_F(ObjectQuarantineTest, ARaceWritesItsOwnCopyOfWhatAnotherRaceHolds) {
  const ObjectQuarantine first = ObjectQuarantine::open(commonDir(), "race-12");
  const ObjectQuarantine second = ObjectQuarantine::open(commonDir(), "race-13");
  commitThroughLibgit2(first, "hydra/race-12/a", "same.txt", "the same fix\n");
  const std::string commit = commitThroughLibgit2(second, "hydra/race-13/a", "same.txt", "the same fix\n");
  const std::string blob = repo_.git("rev-parse " + commit + ":same.txt");
  EXPECT_TRUE(fs::exists(second.path() / blob.substr(0, 2) / blob.substr(2)));
  repo_.git("branch -D hydra/race-12/a");
  first.seal();
  first.drop();
  EXPECT_EQ(repo_.git("show hydra/race-13/a:same.txt"), "the same fix");
  expectFsckClean();
}

TEST_F(ObjectQuarantineTest, WhatTheUserCommittedFromTheQuarantineMeanwhileIsKept) {
  // The danger: the user's git finds the agent's blob in the alternate and
  // does not write its own copy.
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-4");
  repo_.write("same.txt", "identical content\n");
  const std::string blob = agentGit(q, "hash-object -w same.txt");
  const std::string userCommit = repo_.commit("the user's own commit");
  ASSERT_FALSE(inUserStore(blob)) << "git wrote its own copy: the danger this test is about is not there";
  q.seal();
  const QuarantineDrop dropped = q.drop();
  EXPECT_GE(dropped.adoptedObjects, 1u);
  EXPECT_TRUE(inUserStore(blob));
  EXPECT_EQ(repo_.git("show " + userCommit + ":same.txt"), "identical content");
  expectFsckClean();
}

TEST_F(ObjectQuarantineTest, AnObjectFreshenedAfterTheRaceSealedItIsKept) {
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-5");
  repo_.write("late.txt", "asked for after the race\n");
  const std::string blob = agentGit(q, "hash-object -w late.txt");
  const fs::path file = q.path() / blob.substr(0, 2) / blob.substr(2);
  // The race wrote it a minute before it sealed the quarantine...
  const struct utimbuf old {time(nullptr) - 60, time(nullptr) - 60};
  ASSERT_EQ(::utime(file.c_str(), &old), 0);
  q.seal();
  // ...then the user's git took it for its own (a write it skipped, no ref yet).
  repo_.git("hash-object -w late.txt");
  ASSERT_FALSE(inUserStore(blob));
  q.drop();
  EXPECT_TRUE(inUserStore(blob));
}

TEST_F(ObjectQuarantineTest, AUserCommitRepackedMeanwhileStillKeepsItsObjects) {
  repo_.git("gc --quiet");  // the history the quarantine meets is packed
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-11");
  repo_.write("dedup.txt", "written by the race first\n");
  const std::string blob = agentGit(q, "hash-object -w dedup.txt");
  const std::string userCommit = repo_.commit("the user's commit, then a repack");
  repo_.git("gc --quiet");
  ASSERT_FALSE(inUserStore(blob));
  ASSERT_FALSE(inUserStore(userCommit)) << "the user's commit was not packed";
  q.seal();
  q.drop();
  EXPECT_TRUE(inUserStore(blob));
  EXPECT_EQ(repo_.git("show " + userCommit + ":dedup.txt"), "written by the race first");
  expectFsckClean();
}

TEST_F(ObjectQuarantineTest, ABranchTheUserMadeFromAResultKeepsItsObjects) {
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-6");
  const std::string commit = commitThroughLibgit2(q, "hydra/race-6/careful", "kept.txt", "the user kept this\n");
  repo_.git("branch keep hydra/race-6/careful");
  q.seal();
  repo_.git("branch -D hydra/race-6/careful");
  q.drop();
  EXPECT_TRUE(inUserStore(commit));
  EXPECT_EQ(repo_.git("show keep:kept.txt"), "the user kept this");
  expectFsckClean();
}

TEST_F(ObjectQuarantineTest, AdoptCopiesAWinnersObjectsBeforeAMerge) {
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-7");
  const std::string commit = commitThroughLibgit2(q, "hydra/race-7/careful", "won.txt", "the winner\n");
  EXPECT_GE(q.adopt(commit), 3u);  // the commit, its tree and the new blob
  EXPECT_TRUE(inUserStore(commit));
  repo_.git("merge --ff-only hydra/race-7/careful");
  q.seal();
  repo_.git("branch -D hydra/race-7/careful");
  const QuarantineDrop dropped = q.drop();
  EXPECT_EQ(dropped.adoptedObjects, 0u);
  EXPECT_EQ(repo_.git("show HEAD:won.txt"), "the winner");
  expectFsckClean();
}

TEST_F(ObjectQuarantineTest, AQuarantineAnAgentPackedIsCopiedAsAPackWhenNeeded) {
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-8");
  repo_.write("packed.txt", "packed by an agent\n");
  const std::string blob = agentGit(q, "hash-object -w packed.txt");
  const std::string userCommit = repo_.commit("relies on the packed blob");
  // The agent packs its objects directory: the loose file is gone.
  fs::create_directories(q.path() / "pack");
  run("printf '%s\\n' " + blob + " | GIT_DIR=" + shellQuote(commonDir().string()) + " GIT_OBJECT_DIRECTORY=" +
      shellQuote(q.path().string()) + " git pack-objects " + shellQuote((q.path() / "pack" / "pack").string()) +
      " >/dev/null");
  fs::remove(q.path() / blob.substr(0, 2) / blob.substr(2));
  ASSERT_FALSE(inUserStore(blob));
  q.seal();
  const QuarantineDrop dropped = q.drop();
  EXPECT_EQ(dropped.adoptedPacks, 1u);
  EXPECT_EQ(repo_.git("show " + userCommit + ":packed.txt"), "packed by an agent");
  expectFsckClean();
}

TEST_F(ObjectQuarantineTest, ALinkInPlaceOfTheAlternatesFileIsRefusedNotWrittenThrough) {
  const fs::path outside = repo_.outside();
  fs::create_directories(outside);
  testing::writeFile(outside / "victim", "untouched\n");
  fs::create_directories(commonDir() / "objects" / "info");
  fs::create_symlink(outside / "victim", commonDir() / "objects" / "info" / "alternates");
  try {
    ObjectQuarantine::open(commonDir(), "race-9");
    ADD_FAILURE() << "a link in place of the alternates file was accepted";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("alternates is not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_EQ(readFile(outside / "victim"), "untouched\n");
  EXPECT_TRUE(fs::is_symlink(commonDir() / "objects" / "info" / "alternates"));
}

TEST_F(ObjectQuarantineTest, ANameThatCouldLeaveTheFolderIsRefused) {
  EXPECT_THROW(ObjectQuarantine::open(commonDir(), "../objects"), std::invalid_argument);
  EXPECT_THROW(ObjectQuarantine::open(commonDir(), ""), std::invalid_argument);
  EXPECT_FALSE(fs::exists(commonDir() / "hydra-objects"));
}

TEST_F(ObjectQuarantineTest, TheUsersOwnAlternatesLinesStay) {
  const fs::path info = commonDir() / "objects" / "info";
  fs::create_directories(info);
  const fs::path elsewhere = repo_.outside() / "objects";
  fs::create_directories(elsewhere);
  testing::writeFile(info / "alternates", elsewhere.string() + "\n");
  const ObjectQuarantine q = ObjectQuarantine::open(commonDir(), "race-10");
  EXPECT_EQ(alternates(), elsewhere.string() + "\n" + q.path().string() + "\n");
  q.seal();
  q.drop();
  EXPECT_EQ(alternates(), elsewhere.string() + "\n");
}

}  // namespace
}  // namespace hydra::core
