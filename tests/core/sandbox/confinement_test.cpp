// Every hostile agent of tests/fixtures/hostile, run for real under
// bubblewrap the way hydra runs an agent: whatever it tries, the user's
// checkout (files, index, HEAD, refs, hydra.toml, .hydra/, the sibling's
// worktree) is byte-for-byte what it was, and nothing it started is left
// running. This test process is a child subreaper, so anything that got out
// of the sandbox's PID namespace would show up as its descendant.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/guard/git_dir.h"
#include "core/guard/refs.h"
#include "core/guard/worktree_link.h"
#include "core/process/reaper.h"
#include "core/sandbox/policy.h"
#include "tests/support/race_repo.h"

namespace hydra::core::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::Confinement;
using ::testing::Contains;
using testing::FixtureOptions;
using testing::FixtureRun;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::RaceRepo;
using ::testing::StartsWith;

class ConfinementTest : public ::testing::Test {
 protected:
  void SetUp() override { becomeChildSubreaper(); }
  void TearDown() override {
    // A failed test must not leave processes behind for the next one.
    killAllDescendants(std::chrono::milliseconds(200));
  }

  // Runs `script` confined; checks that nothing escaped and nothing is left.
  FixtureRun expectContained(const std::string& script, FixtureOptions options = {}) {
    const auto before = repo.userImage();
    const auto refsBefore = guard::snapshotRefs(repo.root());
    FixtureRun run = testing::runFixture(script, repo, std::move(options));
    EXPECT_TRUE(run.result.has_value());
    if (run.result) {
      EXPECT_EQ(run.result->spawnError, "");
    }
    const auto after = repo.userImage();
    EXPECT_TRUE(before == after) << "the user's side changed:\n"
                                 << testing::imageDifferences(before, after) << run.transcript();
    EXPECT_THAT(guard::compareRefs(refsBefore, guard::snapshotRefs(repo.root())), IsEmpty());
    EXPECT_THAT(testing::waitForNoDescendants(), IsEmpty()) << "processes left running";
    return run;
  }

  static void expectAllBlocked(const FixtureRun& run, std::size_t attempts) {
    std::size_t blocked = 0;
    for (const std::string& line : run.out) {
      EXPECT_THAT(line, ::testing::Not(StartsWith("escaped:"))) << run.transcript();
      if (line.starts_with("blocked:")) ++blocked;
    }
    EXPECT_EQ(blocked, attempts) << run.transcript();
  }

  RaceRepo repo;
};

TEST_F(ConfinementTest, WritingTheCheckoutByAbsolutePathFails) {
  const FixtureRun run = expectContained("write_checkout_absolute.sh");
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  expectAllBlocked(run, 4);
  EXPECT_THAT(run.out, Contains(HasSubstr("Read-only file system")));
}

TEST_F(ConfinementTest, WritingTheCheckoutByRelativePathFails) {
  const FixtureRun run = expectContained("write_checkout_relative.sh");
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  expectAllBlocked(run, 2);
}

TEST_F(ConfinementTest, WorkingInPwdMeansWorkingInTheWorktree) {
  // Even with hydra's own PWD pointing at the checkout, bwrap's --chdir sets
  // PWD to the worktree.
  FixtureOptions options;
  options.adjust = [&](ProcessSpec& spec) { spec.env["PWD"] = repo.root().string(); };
  const FixtureRun run = expectContained("write_checkout_pwd.sh", options);
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  EXPECT_THAT(run.out, Contains("working in " + repo.agent().path.string()));
  EXPECT_EQ(testing::readFile(repo.agent().path / "ESCAPE_pwd.txt"), "pwned\n");
  EXPECT_EQ(testing::readFile(repo.agent().path / "src/b.txt"), "pwned\n");
}

TEST_F(ConfinementTest, SiblingWorktreesAreHiddenAndOutOfReach) {
  const FixtureRun run = expectContained("write_sibling.sh");
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  // Nothing but its own worktree in the worktrees' folder; the sibling's
  // recorded path leads nowhere writable.
  EXPECT_THAT(run.out, Contains(StartsWith("blocked: no sibling worktree visible")));
  expectAllBlocked(run, 3);
  EXPECT_FALSE(fs::exists(repo.sibling().path / "ESCAPE_sibling_direct.txt"));
}

TEST_F(ConfinementTest, MovingRefsFailsAndNothingMoves) {
  const FixtureRun run = expectContained("move_refs.sh");
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  EXPECT_THAT(run.out, Contains("blocked: commit in the worktree"));
  expectAllBlocked(run, 5);
}

TEST_F(ConfinementTest, HydrasRecordsAreHiddenAndOutOfReach) {
  const FixtureRun run = expectContained("write_hydra_dir.sh");
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  EXPECT_THAT(run.out, Contains(StartsWith("blocked: no record visible")));
  expectAllBlocked(run, 3);  // the forged race, the files under .hydra/, the scores
}

TEST_F(ConfinementTest, ItsOwnGitLinkCannotBeDeletedOrRewritten) {
  const FixtureRun run = expectContained("delete_git_link.sh");
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  expectAllBlocked(run, 2);
  EXPECT_TRUE(guard::worktreeLinkIntact(repo.agent().path, repo.gitMetadata(repo.agent())));
  EXPECT_EQ(testing::TempRepo::gitIn(repo.agent().path, "rev-parse --abbrev-ref HEAD"),
            repo.agent().branch);
}

// Its worktree is a mount point in the sandbox: it cannot be moved away and
// replaced with a link to the user's checkout.
TEST_F(ConfinementTest, ItsWorktreeCannotBeSwappedForALink) {
  const FixtureRun run = expectContained("swap_worktree.sh");
  expectAllBlocked(run, 3);
  EXPECT_TRUE(std::filesystem::is_directory(std::filesystem::symlink_status(repo.agent().path)));
  EXPECT_TRUE(guard::worktreeLinkIntact(repo.agent().path, repo.gitMetadata(repo.agent())));
  EXPECT_TRUE(std::filesystem::is_directory(std::filesystem::symlink_status(repo.root() / ".git")));
}

// The git directory's settings are read-only to a confined agent.
TEST_F(ConfinementTest, TheGitDirectorysSettingsCannotBeWritten) {
  const guard::GitDirSnapshot before = guard::snapshotGitDir(repo.root() / ".git");
  const FixtureRun run = expectContained("write_git_dir.sh");
  expectAllBlocked(run, 6);
  EXPECT_EQ(guard::snapshotGitDir(repo.root() / ".git").files, before.files);
}

TEST_F(ConfinementTest, RemountingTheSystemReadWriteFails) {
  const FixtureRun run = expectContained("remount.sh");
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  expectAllBlocked(run, 5);
}

TEST_F(ConfinementTest, SetsidDaemonsDieWithTheSandbox) {
  // No reaper here: the PID namespace alone must end them.
  const FixtureRun run = expectContained("setsid_daemon.sh");
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  EXPECT_THAT(run.out, Contains("ready"));
  EXPECT_TRUE(testing::readPidFile(repo.agent().path / "daemon-plain.pid").has_value());
  EXPECT_TRUE(testing::readPidFile(repo.agent().path / "daemon-bare.pid").has_value());
}

TEST_F(ConfinementTest, CancelEndsGrandchildrenThatIgnoreSigterm) {
  FixtureOptions options;
  options.cancelOnReady = true;
  const FixtureRun run = expectContained("stubborn_grandchild.sh", options);
  EXPECT_TRUE(run.result->cancelled) << run.transcript();
  EXPECT_THAT(run.out, Contains("ready"));
}

// What an agent needs to work must still work.
class ConfinedWorkTest : public ConfinementTest {
 protected:
  // Runs `script` with /bin/sh under the agent's policy; stdout lines.
  FixtureRun runShell(const std::string& script, std::vector<fs::path> writable = {}) {
    FixtureOptions options;
    options.writable = std::move(writable);
    options.adjust = [&](ProcessSpec& spec) {
      // Keep the layout, replace the command after "--".
      const auto separator = std::find(spec.args.begin(), spec.args.end(), "--");
      spec.args.erase(separator + 1, spec.args.end());
      spec.args.insert(spec.args.end(), {"/bin/sh", "-c", script});
    };
    return testing::runFixture("write_checkout_pwd.sh", repo, options);
  }
};

TEST_F(ConfinedWorkTest, TheWorktreeIsWritableAndGitReadsWork) {
  const auto before = repo.userImage();
  const FixtureRun run = runShell(
      "echo fixed > src/a.txt && git status --short && git diff --stat && git log --oneline -1");
  ASSERT_EQ(run.result->exitCode, 0) << run.transcript();
  EXPECT_THAT(run.out, Contains(" M src/a.txt"));
  EXPECT_THAT(run.out, Contains(HasSubstr("1 file changed")));
  EXPECT_EQ(testing::readFile(repo.agent().path / "src/a.txt"), "fixed\n");
  EXPECT_TRUE(before == repo.userImage()) << testing::imageDifferences(before, repo.userImage());
}

TEST_F(ConfinedWorkTest, StagingAndCommittingNeedTheCommitPaths) {
  // git add writes blobs into the shared object store; commit also the branch.
  const std::string commit =
      "echo fixed > src/a.txt && git add -A && "
      "git -c user.name=a -c user.email=a@example.com commit -q -m work";
  const std::string tipBefore = repo.git("rev-parse " + repo.agent().branch);
  FixtureRun refused = runShell(commit);
  EXPECT_NE(refused.result->exitCode, 0) << refused.transcript();
  EXPECT_THAT(refused.err, Contains(HasSubstr("Read-only file system")));
  EXPECT_EQ(repo.git("rev-parse " + repo.agent().branch), tipBefore);

  const auto paths = gitCommitPaths(repo.root() / ".git", repo.agent().branch);
  FixtureRun done = runShell(commit, paths);
  EXPECT_EQ(done.result->exitCode, 0) << done.transcript();
  EXPECT_NE(repo.git("rev-parse " + repo.agent().branch), tipBefore);
  EXPECT_EQ(repo.git("show " + repo.agent().branch + ":src/a.txt"), "fixed");
  EXPECT_EQ(repo.git("rev-parse main"), repo.git("rev-parse v1"));
}

TEST_F(ConfinedWorkTest, TmpIsPrivateAndEnvironmentPointsAtTheWorktree) {
  const std::string marker = "hydra-confined-" + std::to_string(::getpid());
  const FixtureRun run =
      runShell("echo x > /tmp/" + marker + " && ls /tmp && pwd && echo PWD=$PWD" +
               " && echo GIT_DIR=${GIT_DIR-unset} && grep CapEff /proc/self/status");
  ASSERT_EQ(run.result->exitCode, 0) << run.transcript();
  EXPECT_FALSE(fs::exists(fs::path("/tmp") / marker)) << "the sandbox's /tmp is its own";
  EXPECT_THAT(run.out, Contains(repo.agent().path.string()));
  EXPECT_THAT(run.out, Contains("PWD=" + repo.agent().path.string()));
  EXPECT_THAT(run.out, Contains("GIT_DIR=unset"));
  EXPECT_THAT(run.out, Contains("CapEff:\t0000000000000000"));
}

TEST_F(ConfinedWorkTest, TheLoopbackNetworkIsReachable) {
  // Agents talk to their model, sometimes on 127.0.0.1.
  const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(server, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(server, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(server, 1), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(server, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int port = ntohs(address.sin_port);
  const FixtureRun run =
      runShell("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " +
               std::to_string(port) + ")); print(\"connected\")'");
  ::close(server);
  EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
  EXPECT_THAT(run.out, Contains("connected"));
}

}  // namespace
}  // namespace hydra::core::sandbox
