#include "core/git/git.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/core/git/temp_repo.h"

namespace hydra::core::git {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::TempRepo;

class GitTest : public ::testing::Test {
 protected:
  void SetUp() override { repo_.isolateLibgit2(); }

  LibGit2 libgit2_;
  TempRepo repo_;
};

TEST_F(GitTest, CheckLetsSuccessCodesThrough) {
  EXPECT_NO_THROW(check(0, "nothing"));
  EXPECT_NO_THROW(check(1, "a positive count"));
}

TEST_F(GitTest, CheckTurnsFailureIntoGitErrorWithLibgit2MessageCodeAndClass) {
  TempDir notARepo;
  git_repository* raw = nullptr;
  const int rc = git_repository_open_ext(&raw, notARepo.path().c_str(),
                                         GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  ASSERT_EQ(rc, GIT_ENOTFOUND);
  try {
    check(rc, "open the test directory");
    FAIL() << "check did not throw";
  } catch (const GitError& e) {
    EXPECT_EQ(e.code(), GIT_ENOTFOUND);
    EXPECT_EQ(e.klass(), GIT_ERROR_REPOSITORY);
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with("open the test directory: ")) << message;
    EXPECT_NE(message.find("could not find repository"), std::string::npos) << message;
  }
  // The error was consumed, not left for the next caller to misreport.
  EXPECT_EQ(git_error_last(), nullptr);
}

TEST_F(GitTest, OpenRepositoryDoesNotSearchUpwardsButDiscoverDoes) {
  const fs::path sub = repo_.root() / "src";
  EXPECT_THROW(openRepository(sub), GitError);
  RepositoryPtr found = discoverRepository(sub);
  EXPECT_EQ(workdir(found.get()), repo_.root());
  RepositoryPtr opened = openRepository(repo_.root());
  EXPECT_EQ(workdir(opened.get()), repo_.root());
  EXPECT_EQ(commonDir(opened.get()), repo_.root() / ".git");
}

TEST_F(GitTest, ResolveCommitAcceptsHeadBranchTagsShaAndAncestry) {
  const std::string first = repo_.git("rev-parse HEAD");
  repo_.git("tag light");
  repo_.git("tag -a -m 'annotated tag' v1.2");
  repo_.write("src/a.txt", "alpha 2\n");
  const std::string second = repo_.commit("second");
  repo_.git("branch feature " + first);

  RepositoryPtr repo = openRepository(repo_.root());
  EXPECT_EQ(toHex(resolveCommit(repo.get(), "HEAD")), second);
  EXPECT_EQ(toHex(resolveCommit(repo.get(), "main")), second);
  EXPECT_EQ(toHex(resolveCommit(repo.get(), "feature")), first);
  EXPECT_EQ(toHex(resolveCommit(repo.get(), "light")), first);
  EXPECT_EQ(toHex(resolveCommit(repo.get(), "v1.2")), first);  // peeled through the tag object
  EXPECT_EQ(toHex(resolveCommit(repo.get(), first)), first);
  EXPECT_EQ(toHex(resolveCommit(repo.get(), first.substr(0, 10))), first);
  EXPECT_EQ(toHex(resolveCommit(repo.get(), "main~1")), first);
}

TEST_F(GitTest, ResolveCommitOfUnknownRefThrowsNotFoundNamingTheRef) {
  RepositoryPtr repo = openRepository(repo_.root());
  try {
    resolveCommit(repo.get(), "no-such-branch");
    FAIL() << "resolveCommit did not throw";
  } catch (const GitError& e) {
    EXPECT_EQ(e.code(), GIT_ENOTFOUND);
    EXPECT_NE(std::string(e.what()).find("'no-such-branch'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolveCommit(repo.get(), ""), GitError);
}

TEST_F(GitTest, ResolveCommitRejectsObjectsThatAreNotCommits) {
  RepositoryPtr repo = openRepository(repo_.root());
  EXPECT_THROW(resolveCommit(repo.get(), "HEAD:README.md"), GitError);  // a blob
}

TEST_F(GitTest, CurrentBranchNamesTheCheckedOutBranchOrNothingWhenDetached) {
  repo_.git("switch -q -c feature/x");
  EXPECT_EQ(currentBranch(openRepository(repo_.root()).get()), "feature/x");
  repo_.git("switch -q --detach HEAD");
  EXPECT_EQ(currentBranch(openRepository(repo_.root()).get()), std::nullopt);
}

TEST_F(GitTest, CurrentBranchNamesAnUnbornBranch) {
  TempRepo empty(/*empty=*/true);
  EXPECT_EQ(currentBranch(openRepository(empty.root()).get()), "main");
}

TEST_F(GitTest, OidConvertsToHexAndBack) {
  const std::string head = repo_.git("rev-parse HEAD");
  const git_oid id = oidFromHex(head);
  EXPECT_EQ(toHex(id), head);
  EXPECT_THROW(oidFromHex(head.substr(0, 39)), GitError);
  EXPECT_THROW(oidFromHex(std::string(40, 'z')), GitError);
}

TEST_F(GitTest, CommonDirOfLinkedWorktreeIsTheMainGitDir) {
  const fs::path linked = repo_.outside() / "linked";
  repo_.git("worktree add -q -b other " + testing::shellQuote(linked.string()));
  RepositoryPtr repo = openRepository(linked);
  EXPECT_EQ(workdir(repo.get()), linked);
  EXPECT_EQ(commonDir(repo.get()), repo_.root() / ".git");
  EXPECT_EQ(currentBranch(repo.get()), "other");
}

TEST_F(GitTest, WorkdirOfBareRepositoryThrowsGitError) {
  const fs::path bare = repo_.outside() / "bare.git";
  testing::run("git init -q --bare " + testing::shellQuote(bare.string()));
  RepositoryPtr repo = openRepository(bare);
  try {
    workdir(repo.get());
    FAIL() << "workdir did not throw";
  } catch (const GitError& e) {
    EXPECT_EQ(e.code(), GIT_EBAREREPO);
  }
}

TEST_F(GitTest, MakeSignatureCarriesNameAndEmail) {
  SignaturePtr sig = makeSignature("hydra", "hydra@localhost");
  EXPECT_STREQ(sig->name, "hydra");
  EXPECT_STREQ(sig->email, "hydra@localhost");
}

}  // namespace
}  // namespace hydra::core::git
