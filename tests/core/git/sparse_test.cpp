// [general] sparse_paths: worktrees that hold only some folders of a large
// repository, checked by git itself (skip-worktree entries, a clean status,
// commits that keep every file the agent could not see).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/git/checkout.h"
#include "core/git/git.h"
#include "core/git/worktree.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using testing::readFile;
using testing::TempRepo;
using testing::writeFile;

TEST(SparseCheckoutTest, APathIsInWhenAtTheRootOrBelowAFolder) {
  const std::vector<std::string> sparse{"services/api", "libs"};
  EXPECT_TRUE(git::inSparseCheckout("README.md", sparse));
  EXPECT_TRUE(git::inSparseCheckout("services/api/main.go", sparse));
  EXPECT_TRUE(git::inSparseCheckout("libs/a/b/c.txt", sparse));
  EXPECT_FALSE(git::inSparseCheckout("services/web/index.js", sparse));
  EXPECT_FALSE(git::inSparseCheckout("services/api-old/x", sparse)) << "a folder, not a prefix of names";
  EXPECT_FALSE(git::inSparseCheckout("libsx/y", sparse));
  EXPECT_TRUE(git::inSparseCheckout("anything/at/all", {}));
}

class SparseTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    repo_.isolateLibgit2();
    repo_.write("services/api/main.go", "package main\n");
    repo_.write("services/web/index.js", "web\n");
    repo_.write("libs/common/util.txt", "util\n");
    repo_.write("docs/big/manual.txt", "manual\n");
    // With content filters, libgit2 checks out and hydra makes it sparse afterwards.
    if (GetParam()) repo_.write(".gitattributes", "*.txt text\n");
    base_ = repo_.commit("a monorepo");
  }

  git::LibGit2 libgit2_;
  TempRepo repo_;
  std::string base_;
};

TEST_P(SparseTest, OnlyTheFoldersAndTheRootAreWrittenAndTheAgentsCommitKeepsTheRest) {
  WorktreeManager m(repo_.root(), ".hydra-workspaces");
  m.setSparsePaths({"services/api", "libs"});
  const Worktree wt = m.create("claude", "HEAD", "20261126T070000");
  EXPECT_TRUE(fs::exists(wt.path / "README.md"));
  EXPECT_TRUE(fs::exists(wt.path / "services/api/main.go"));
  EXPECT_TRUE(fs::exists(wt.path / "libs/common/util.txt"));
  EXPECT_FALSE(fs::exists(wt.path / "services/web"));
  EXPECT_FALSE(fs::exists(wt.path / "docs"));
  // git sees a clean sparse checkout: the missing files are skip-worktree, not deleted.
  EXPECT_EQ(TempRepo::gitIn(wt.path, "status --porcelain --untracked-files=all"), "");
  const std::string flags = TempRepo::gitIn(wt.path, "ls-files -t");
  EXPECT_THAT(flags, ::testing::HasSubstr("S docs/big/manual.txt"));
  EXPECT_THAT(flags, ::testing::HasSubstr("S services/web/index.js"));
  EXPECT_THAT(flags, ::testing::HasSubstr("H services/api/main.go"));

  // The agent's work inside its folders is committed; what it never saw stays as it was.
  writeFile(wt.path / "services/api/main.go", "package main // fixed\n");
  writeFile(wt.path / "libs/common/new.txt", "new\n");
  ASSERT_TRUE(m.commitAll(wt, "agent's work"));
  const std::string branch = wt.branch;
  EXPECT_EQ(repo_.git("show " + branch + ":services/api/main.go"), "package main // fixed");
  EXPECT_EQ(repo_.git("show " + branch + ":libs/common/new.txt"), "new");
  EXPECT_EQ(repo_.git("show " + branch + ":services/web/index.js"), "web");
  EXPECT_EQ(repo_.git("show " + branch + ":docs/big/manual.txt"), "manual");
  EXPECT_EQ(repo_.git("diff --name-only " + base_ + " " + branch), "libs/common/new.txt\nservices/api/main.go");
}

TEST_P(SparseTest, SparseWorktreesAreNeitherPooledNorTakenFromThePool) {
  WorktreeManager m(repo_.root(), ".hydra-workspaces");
  m.release({m.create("full", "HEAD", "20261126T070000")}, true, PoolPolicy{2, {}});
  ASSERT_THAT(m.pool(), SizeIs(GetParam() ? 0u : 1u)) << "filters: not pooled either way";
  m.setSparsePaths({"libs"});
  const Worktree sparse = m.create("claude", "HEAD", "20261126T080000");
  EXPECT_FALSE(fs::exists(sparse.path / "services")) << "made sparse, not taken from the pool";
  EXPECT_THAT(m.pool(), SizeIs(GetParam() ? 0u : 1u));
  EXPECT_THAT(m.release({sparse}, true, PoolPolicy{2, {}}), IsEmpty());
  EXPECT_FALSE(fs::exists(sparse.path));
}

INSTANTIATE_TEST_SUITE_P(Filters, SparseTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("LibGit2Checkout") : std::string("HydrasOwnCheckout");
                         });

}  // namespace
}  // namespace hydra::core
