// A finished agent's work becoming its result: real repositories, real
// worktrees, libgit2's commits checked with the git CLI.

#include "core/run/result_commit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/git/git.h"
#include "core/git/object_quarantine.h"
#include "core/run/agent_run.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::readFile;
using testing::TempRepo;

class ResultCommitTest : public ::testing::Test {
 protected:
  ResultCommitTest() { repo.isolateLibgit2(); }

  AgentFinished completed() {
    AgentFinished f;
    f.raceId = "race1";
    f.agentId = "a1";
    f.status = AgentStatus::Completed;
    return f;
  }

  AgentFinished commit(ResultLimits limits = {}, const std::atomic<bool>* cancelled = nullptr,
                       AgentFinished finished = {}) {
    if (finished.agentId.empty()) finished = completed();
    commitResult(ResultCommit{worktrees, checkout, "race1", "hydra: a1", limits, cancelled}, finished);
    return finished;
  }

  bool stored(const std::string& content) const {
    const std::string id = testing::run("printf %s " + testing::shellQuote(content) + " | git hash-object --stdin");
    try {
      repo.git("cat-file -e " + id.substr(0, id.find('\n')));
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  git::LibGit2 libgit2;
  TempRepo repo;
  WorktreeManager worktrees{repo.root(), ".hydra-workspaces"};
  std::string base = repo.git("rev-parse HEAD");
  Worktree checkout = worktrees.create("a1", base, "t1");
};

TEST_F(ResultCommitTest, WorkWithinTheLimitsIsCommittedOnItsBranchWithItsObjectsInTheRacesQuarantine) {
  testing::writeFile(checkout.path / "out.txt", "done");
  worktrees.quarantine("race1");  // made at launch, before the agent writes
  const AgentFinished f = commit();
  EXPECT_EQ(f.status, AgentStatus::Completed);
  EXPECT_FALSE(f.error);
  EXPECT_FALSE(f.tooLarge);
  ASSERT_TRUE(f.commit);
  EXPECT_EQ(*f.commit, repo.git("rev-parse " + checkout.branch));
  EXPECT_NE(*f.commit, base);
  EXPECT_EQ(repo.git("show " + checkout.branch + ":out.txt"), "done");
  EXPECT_EQ(repo.git("log -1 --format=%s " + checkout.branch), "hydra: a1");
  const auto holder = ObjectQuarantine::holding(repo.root() / ".git", *f.commit);
  ASSERT_TRUE(holder) << "its commit is in a quarantine, not the user's store";
  EXPECT_EQ(holder->name(), "race1");
}

TEST_F(ResultCommitTest, AResultOverALimitIsNotStoredAtAllAndTheAgentFails) {
  for (int i = 0; i < 5; ++i) testing::writeFile(checkout.path / ("f" + std::to_string(i) + ".txt"), "unique-" + std::to_string(i));
  const AgentFinished f = commit(ResultLimits{.maxFiles = 2, .maxBytes = 1 << 20});
  EXPECT_EQ(f.status, AgentStatus::Failed);
  ASSERT_TRUE(f.tooLarge);
  EXPECT_EQ(f.error, f.tooLarge);
  EXPECT_EQ(f.commit, base) << "its branch stays where it was";
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(stored("unique-" + std::to_string(i))) << i;

  // A status already not Completed, and an error already said, are kept.
  AgentFinished failed = completed();
  failed.status = AgentStatus::TimedOut;
  failed.error = "timed out after 5 s";
  failed = commit(ResultLimits{.maxFiles = 2, .maxBytes = 1 << 20}, nullptr, failed);
  EXPECT_EQ(failed.status, AgentStatus::TimedOut);
  EXPECT_EQ(failed.error, "timed out after 5 s");
  EXPECT_TRUE(failed.tooLarge);
}

TEST_F(ResultCommitTest, ACancelledCommitKeepsWhatTheBranchHadBefore) {
  testing::writeFile(checkout.path / "out.txt", "half");
  const std::atomic<bool> cancelled{true};
  const AgentFinished f = commit({}, &cancelled);
  EXPECT_EQ(f.status, AgentStatus::Cancelled);
  EXPECT_EQ(f.error, "cancelled while committing its work");
  EXPECT_EQ(f.commit, base);
  EXPECT_EQ(repo.git("rev-parse " + checkout.branch), base);
}

TEST_F(ResultCommitTest, AWorktreeGitCannotOpenFailsTheAgentWithWhy) {
  testing::writeFile(checkout.path / "out.txt", "done");
  testing::writeFile(checkout.path / ".git", "gitdir: " + (repo.outside() / "nowhere").string() + "\n");
  const AgentFinished f = commit();
  EXPECT_EQ(f.status, AgentStatus::Failed);
  ASSERT_TRUE(f.error);
  EXPECT_THAT(*f.error, HasSubstr("committing its work failed: "));
  EXPECT_FALSE(f.commit);
}

TEST_F(ResultCommitTest, AWorktreeSwappedForALinkIsNotCommittedAndTheLinkGoes) {
  const SafeDir opened = SafeDir::open(checkout.path);
  const fs::path moved = repo.outside() / "moved";
  fs::create_directories(repo.outside());
  fs::rename(checkout.path, moved);
  fs::create_directory_symlink(repo.root(), checkout.path);
  AgentFinished f = completed();
  EXPECT_FALSE(settleWorktree(checkout.path, &opened, linkTarget(moved), f));
  ASSERT_EQ(f.escapes.size(), 1u);
  EXPECT_THAT(f.escapes[0], HasSubstr("with a symbolic link to " + repo.root().string()));
  EXPECT_THAT(f.escapes[0], HasSubstr("(the link was removed)"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(checkout.path)));
  EXPECT_TRUE(fs::exists(repo.root() / "README.md")) << "what it named is untouched";
}

TEST_F(ResultCommitTest, ARewrittenGitLinkIsPutBackThroughTheDirectoryOpenedAtLaunch) {
  const auto metadata = linkTarget(checkout.path);
  ASSERT_TRUE(metadata);
  const SafeDir opened = SafeDir::open(checkout.path);
  testing::writeFile(checkout.path / ".git", "gitdir: " + (repo.root() / ".git").string() + "\n");
  AgentFinished f = completed();
  EXPECT_TRUE(settleWorktree(checkout.path, &opened, metadata, f));
  EXPECT_THAT(f.escapes, ElementsAre("deleted or rewrote its worktree's .git link (put back)"));
  EXPECT_EQ(linkTarget(checkout.path), metadata);

  // Put back, its work is committed where it belongs.
  testing::writeFile(checkout.path / "out.txt", "done");
  EXPECT_EQ(commit().status, AgentStatus::Completed);
  EXPECT_EQ(repo.git("show " + checkout.branch + ":out.txt"), "done");
  EXPECT_EQ(repo.git("rev-parse HEAD"), base) << "the user's checkout did not move";
}

TEST_F(ResultCommitTest, AGitLinkSwappedForAFifoOrADeviceIsNoLinkAndNeverWaitedOn) {
  fs::remove(checkout.path / ".git");
  ASSERT_EQ(::mkfifo((checkout.path / ".git").c_str(), 0600), 0);
  EXPECT_EQ(linkTarget(checkout.path), std::nullopt);
  fs::remove(checkout.path / ".git");
  fs::create_symlink("/dev/zero", checkout.path / ".git");
  EXPECT_EQ(linkTarget(checkout.path), std::nullopt);
}

TEST_F(ResultCommitTest, AnIntactWorktreeIsLeftAsItIs) {
  const SafeDir opened = SafeDir::open(checkout.path);
  AgentFinished f = completed();
  EXPECT_TRUE(settleWorktree(checkout.path, &opened, linkTarget(checkout.path), f));
  EXPECT_THAT(f.escapes, IsEmpty());
  EXPECT_EQ(worktreeReplaced(checkout.path, opened), std::nullopt);
  EXPECT_TRUE(settleWorktree(checkout.path, nullptr, std::nullopt, f)) << "nothing opened: nothing to check";

  // Another directory in its place, or none at all, is said as such.
  fs::create_directories(repo.outside());
  fs::rename(checkout.path, repo.outside() / "away");
  EXPECT_THAT(worktreeReplaced(checkout.path, opened).value_or(""), HasSubstr("moved its worktree"));
  fs::create_directory(checkout.path);
  EXPECT_THAT(worktreeReplaced(checkout.path, opened).value_or(""), HasSubstr("with another directory"));
}

TEST(LeftRunningTest, ConfinedTheSandboxCountCoversTheReapersUnconfinedTheyAdd) {
  AgentFinished f;
  ReapReport report;
  report.killed = {101, 102};
  noteLeftRunning(f, report, 3, /*countedInside=*/true);
  EXPECT_THAT(f.warnings, ElementsAre("3 processes it left running ended with it"));
  f.warnings.clear();
  noteLeftRunning(f, report, 3, /*countedInside=*/false);
  EXPECT_THAT(f.warnings, ElementsAre("5 processes it left running ended with it"));
  f.warnings.clear();
  noteLeftRunning(f, ReapReport{{7}, {}}, 0, false);
  EXPECT_THAT(f.warnings, ElementsAre("1 process it left running ended with it"));
  f.warnings.clear();
  noteLeftRunning(f, ReapReport{}, 0, true);
  EXPECT_THAT(f.warnings, IsEmpty());
}

}  // namespace
}  // namespace hydra::core
