// The warm pool of worktrees (WorktreeManager::release, pool, emptyPool,
// repairPool; core/git/checkout.h resetTree and moveTree), on real
// repositories, with git itself checking what a reused worktree holds.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/git/git.h"
#include "core/git/result_size.h"
#include "core/git/worktree.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using testing::readFile;
using testing::TempRepo;
using testing::writeFile;

constexpr const char* kWorkspace = ".hydra-workspaces";

// Every path below `root` (files, links and folders), relative, skipping `.git`
// at the top and whatever lies below the folders in `opaque`.
std::set<std::string> pathsBelow(const fs::path& root, const std::set<std::string>& opaque = {}) {
  std::set<std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string relative = it->path().lexically_relative(root).generic_string();
    if (relative == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    out.insert(relative);
    if (opaque.contains(relative)) it.disable_recursion_pending();
  }
  return out;
}

// What a checkout of `commit` holds: its files and the folders above them.
std::set<std::string> pathsOfCommit(const TempRepo& repo, const std::string& commit) {
  std::set<std::string> out;
  std::istringstream files(repo.git("ls-tree -r --name-only " + commit));
  for (std::string file; std::getline(files, file);) {
    out.insert(file);
    for (auto slash = file.find('/'); slash != std::string::npos; slash = file.find('/', slash + 1)) {
      out.insert(file.substr(0, slash));
    }
  }
  return out;
}

class PoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.isolateLibgit2();
    repo_.write(".gitignore", "*.log\nbuild/\nnode_modules/\n");
    repo_.write("tools/run.sh", "#!/bin/sh\necho run\n");
    ::chmod((repo_.root() / "tools/run.sh").c_str(), 0755);
    repo_.write("docs/guide.md", "guide\n");
    base_ = repo_.commit("a project with dependencies");
  }

  WorktreeManager manager() const { return WorktreeManager(repo_.root(), kWorkspace); }
  fs::path workspace() const { return repo_.root() / kWorkspace; }
  int registeredWorktrees() const {
    std::istringstream in(repo_.git("worktree list --porcelain"));
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.starts_with("worktree ") ? 1 : 0;
    return n;
  }

  // What a hostile or careless agent leaves: every kind of change git can
  // see and some it cannot.
  void leaveAMess(const Worktree& wt) {
    const fs::path w = wt.path;
    writeFile(w / "src/a.txt", "changed by the agent\n");             // tracked, modified
    fs::remove(w / "src/b.txt");                                        // tracked, deleted
    writeFile(w / "untracked.txt", "agent's notes\n");                   // untracked
    writeFile(w / "new/dir/deep.txt", "deep\n");                         // untracked folder
    writeFile(w / "agent.log", "a log\n");                               // ignored file
    writeFile(w / "build/out.o", "object\n");                            // ignored folder
    writeFile(w / "node_modules/left-pad/index.js", "module.exports = 1;\n");  // kept
    ::chmod((w / "tools/run.sh").c_str(), 0644);                         // lost its executable bit
    fs::remove(w / "README.md");
    fs::create_symlink("/etc/passwd", w / "README.md");                  // a file became a link
    // The same content, but a second link to it could change it from elsewhere.
    fs::create_hard_link(w / "docs/guide.md", w / "guide-link.md");
    ::chmod((w / "docs").c_str(), 0500);                                 // a folder made read-only
    // A commit of its own, and an index that claims everything is as before.
    TempRepo::gitIn(w, "add -A");
    TempRepo::gitIn(w, "-c user.name=a -c user.email=a@b commit -q -m agent --no-verify");
    writeFile(w / "src/a.txt", "changed again after the commit\n");
    fs::create_directories(w / "nested-repo/.git");                      // a repository of its own
    writeFile(w / "nested-repo/.git/HEAD", "ref: refs/heads/main\n");
  }

  // The worktree holds exactly `commit` (its files, modes and index) plus what `kept` names.
  void expectExactly(const Worktree& wt, const std::string& commit, const std::set<std::string>& kept) {
    std::set<std::string> expected = pathsOfCommit(repo_, commit);
    for (const auto& k : kept) {
      expected.insert(k);
      for (auto slash = k.find('/'); slash != std::string::npos; slash = k.find('/', slash + 1)) {
        expected.insert(k.substr(0, slash));
      }
    }
    EXPECT_EQ(pathsBelow(wt.path, kept), expected);
    EXPECT_EQ(TempRepo::gitIn(wt.path, "rev-parse HEAD"), commit);
    EXPECT_EQ(TempRepo::gitIn(wt.path, "symbolic-ref --short HEAD"), wt.branch);
    // Nothing differs from the commit: not in the index, not on disk (modes included).
    EXPECT_EQ(TempRepo::gitIn(wt.path, "status --porcelain --untracked-files=all"), "");
    EXPECT_EQ(TempRepo::gitIn(wt.path, "diff HEAD --stat"), "");
    EXPECT_EQ(TempRepo::gitIn(wt.path, "write-tree"), repo_.git("rev-parse " + commit + "^{tree}"));
    std::string ignored = TempRepo::gitIn(wt.path, "status --porcelain --ignored");
    std::string expectedIgnored;
    for (const auto& k : kept) expectedIgnored += (expectedIgnored.empty() ? "" : "\n") + ("!! " + k + "/");
    EXPECT_EQ(ignored, expectedIgnored);
  }

  git::LibGit2 libgit2_;
  TempRepo repo_;
  std::string base_;
};

TEST_F(PoolTest, AReleasedWorktreeHoldsItsBaseAgainAndNothingTheAgentLeft) {
  WorktreeManager m = manager();
  const Worktree used = m.create("claude", "HEAD", "20261126T070000");
  leaveAMess(used);

  const std::vector<Worktree> pooled = m.release({used}, true, PoolPolicy{2, {"node_modules"}});
  ASSERT_THAT(pooled, SizeIs(1));
  EXPECT_FALSE(fs::exists(used.path));
  EXPECT_EQ(repo_.git("branch --list 'hydra/*'"), "") << "the branch goes, as with remove()";
  const std::vector<PooledWorktree> pool = m.pool();
  ASSERT_THAT(pool, SizeIs(1));
  EXPECT_TRUE(pool[0].name.starts_with("_pool-")) << pool[0].name;
  EXPECT_EQ(pool[0].path, workspace() / pool[0].name);
  EXPECT_EQ(pool[0].commit, base_);
  EXPECT_GT(pool[0].bytes, 0u);
  EXPECT_TRUE(m.list().empty()) << "a pooled worktree is no agent's";
  EXPECT_EQ(registeredWorktrees(), 2) << "git knows it, so nothing else takes its place";
  // Exactly the base, the kept dependencies and nothing else, on a detached HEAD.
  EXPECT_EQ(TempRepo::gitIn(pool[0].path, "rev-parse HEAD"), base_);
  EXPECT_EQ(TempRepo::gitIn(pool[0].path, "status --porcelain --ignored"), "!! node_modules/");
  EXPECT_EQ(readFile(pool[0].path / "node_modules/left-pad/index.js"), "module.exports = 1;\n");
  EXPECT_EQ(readFile(pool[0].path / "src/a.txt"), "alpha\n");
  EXPECT_FALSE(fs::is_symlink(pool[0].path / "README.md"));
  EXPECT_EQ(fs::hard_link_count(pool[0].path / "docs/guide.md"), 1u);
  EXPECT_TRUE((fs::status(pool[0].path / "tools/run.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
}

TEST_F(PoolTest, TheNextRaceTakesItMovedToItsBaseWithOnlyTheKeptFoldersExtra) {
  WorktreeManager m = manager();
  const std::vector<Worktree> first = m.createMany({"claude", "codex"}, "HEAD", "20261126T070000");
  for (const auto& wt : first) leaveAMess(wt);
  ASSERT_THAT(m.release(first, true, PoolPolicy{8, {"node_modules"}}), SizeIs(2));

  // The user moves on: files changed, added (in a new folder), deleted, a folder gone.
  repo_.write("src/a.txt", "alpha, second edition\n");
  repo_.write("lib/new/module.txt", "new\n");
  fs::remove_all(repo_.root() / "docs");
  fs::remove(repo_.root() / "src/b.txt");
  const std::string next = repo_.commit("the next base");

  const std::vector<Worktree> second = m.createMany({"claude", "gemini", "aider"}, "HEAD", "20261126T080000");
  ASSERT_THAT(second, SizeIs(3));
  EXPECT_THAT(m.pool(), IsEmpty()) << "both pooled worktrees were taken";
  int reused = 0;
  for (const auto& wt : second) {
    const bool fromPool = fs::exists(wt.path / "node_modules");
    reused += fromPool ? 1 : 0;
    SCOPED_TRACE(wt.name);
    EXPECT_EQ(wt.baseCommit, next);
    EXPECT_EQ(wt.path, workspace() / wt.name);
    expectExactly(wt, next, fromPool ? std::set<std::string>{"node_modules"} : std::set<std::string>{});
  }
  EXPECT_EQ(reused, 2);
  // Listed and removed like any other.
  EXPECT_THAT(m.list(), SizeIs(3));
  m.removeAll(second);
  EXPECT_EQ(registeredWorktrees(), 1);
  EXPECT_TRUE(fs::is_empty(workspace()));
}

TEST_F(PoolTest, AKeptNameIsKeptOnlyWhereGitIgnoresItAndTheTreeHasNothing) {
  repo_.write(".gitignore", "*.log\nbuild/\nweb/node_modules/\n");
  repo_.write("vendor/node_modules/tracked.js", "tracked\n");
  repo_.write("web/index.html", "<p>\n");
  const std::string base = repo_.commit("node_modules ignored in web/ only, tracked in vendor/");
  WorktreeManager m = manager();
  const Worktree used = m.create("claude", base, "20261126T070000");
  writeFile(used.path / "web/node_modules/dep.js", "installed\n");    // ignored: kept
  writeFile(used.path / "node_modules/dep.js", "not ignored here\n");   // not ignored: goes
  writeFile(used.path / "vendor/node_modules/extra.js", "agent's\n");   // inside a tracked folder: goes
  writeFile(used.path / "target/debug/app", "binary\n");                // not named: goes
  ASSERT_THAT(m.release({used}, true, PoolPolicy{1, {"node_modules", "target"}}), SizeIs(1));
  const PooledWorktree pooled = m.pool().at(0);
  EXPECT_TRUE(fs::exists(pooled.path / "web/node_modules/dep.js"));
  EXPECT_FALSE(fs::exists(pooled.path / "node_modules"));
  EXPECT_FALSE(fs::exists(pooled.path / "vendor/node_modules/extra.js"));
  EXPECT_TRUE(fs::exists(pooled.path / "vendor/node_modules/tracked.js"));
  EXPECT_FALSE(fs::exists(pooled.path / "target"));
}

TEST_F(PoolTest, AKeptFolderGivesWayToWhatTheNewBaseTracksThere) {
  WorktreeManager m = manager();
  const Worktree used = m.create("claude", "HEAD", "20261126T070000");
  writeFile(used.path / "node_modules/left-pad/index.js", "installed\n");
  ASSERT_THAT(m.release({used}, true, PoolPolicy{1, {"node_modules"}}), SizeIs(1));
  // The project starts committing a file where the kept folder is.
  repo_.write(".gitignore", "*.log\nbuild/\n");
  repo_.write("node_modules/vendored.js", "vendored\n");
  const std::string next = repo_.commit("vendor a module");
  const Worktree wt = m.create("codex", next, "20261126T080000");
  EXPECT_EQ(readFile(wt.path / "node_modules/vendored.js"), "vendored\n");
  EXPECT_FALSE(fs::exists(wt.path / "node_modules/left-pad")) << "the agent's commit would have taken it in";
  expectExactly(wt, next, {});
}

TEST_F(PoolTest, AnIndexHydraDoesNotPatchItselfIsMovedByLibgit2) {
  // hydra patches only the index files it writes (versions 2 and 3, optional
  // extensions); git's version 4, with compressed paths, is left to libgit2.
  WorktreeManager m = manager();
  m.release(m.createMany({"a", "b"}, "HEAD", "20261126T070000"), true, PoolPolicy{2, {}});
  const auto pooled = m.pool();
  ASSERT_THAT(pooled, SizeIs(2));
  TempRepo::gitIn(pooled[0].path, "update-index --index-version 4");
  repo_.write("src/a.txt", "alpha, again\n");
  repo_.write("lib/added.txt", "added\n");
  fs::remove(repo_.root() / "docs/guide.md");
  const std::string next = repo_.commit("the next base");
  for (const auto& wt : m.createMany({"c", "d"}, "HEAD", "20261126T080000")) {
    SCOPED_TRACE(wt.name);
    expectExactly(wt, next, {});
    EXPECT_EQ(TempRepo::gitIn(wt.path, "ls-files -s"), TempRepo::gitIn(wt.path, "ls-tree -r HEAD --format='%(objectmode) %(objectname) 0\t%(path)'"));
  }
}

// The index's cached tree (git's TREE extension) as its bytes show it: a
// folder's entry is its name, a NUL, then "<entries> <subtrees>\n", with
// -1 entries when it is invalidated.
bool cachesFolder(const fs::path& worktree, const std::string& name, const std::string& counts) {
  const std::string index = readFile(fs::path(TempRepo::gitIn(worktree, "rev-parse --absolute-git-dir")) / "index");
  const std::size_t extension = index.find("TREE");
  return extension != std::string::npos && index.find(name + std::string(1, '\0') + counts + "\n", extension) != std::string::npos;
}

// A checkout caches its commit's trees in the index, a move keeps those of
// the folders it did not touch, and a commit keeps them for the next: writing
// a result's tree then costs the folders it changed, not the repository.
TEST_F(PoolTest, TheIndexCachesTheTreesOfWhatDidNotChangeThroughCheckoutMoveAndCommit) {
  repo_.write("src/deep/c.txt", "gamma\n");  // src/ holds a.txt, b.txt and this
  const std::string first = repo_.commit("a deeper tree");
  WorktreeManager m = manager();
  const Worktree fresh = m.create("claude", first, "20261126T070000");
  EXPECT_TRUE(cachesFolder(fresh.path, "tools", "1 0"));
  EXPECT_TRUE(cachesFolder(fresh.path, "src", "3 1"));
  ASSERT_THAT(m.release({fresh}, true, PoolPolicy{1, {}}), SizeIs(1));

  repo_.write("src/a.txt", "alpha, second edition\n");
  repo_.write("lib/new/module.txt", "new\n");
  const std::string next = repo_.commit("the next base");
  const Worktree moved = m.create("codex", next, "20261126T080000");
  ASSERT_FALSE(fs::exists(workspace() / fresh.name)) << "taken from the pool";
  EXPECT_TRUE(cachesFolder(moved.path, "tools", "1 0"));
  EXPECT_TRUE(cachesFolder(moved.path, "deep", "1 0")) << "below a folder that changed";
  EXPECT_TRUE(cachesFolder(moved.path, "src", "-1 1"));
  expectExactly(moved, next, {});

  writeFile(moved.path / "docs/guide.md", "a better guide\n");
  const auto size = measureResult(moved.path, {});
  const auto commit = m.commitAll(moved, "the agent's work", nullptr, &size);
  ASSERT_TRUE(commit.has_value());
  EXPECT_EQ(TempRepo::gitIn(moved.path, "write-tree"), repo_.git("rev-parse " + *commit + "^{tree}"));
  EXPECT_EQ(TempRepo::gitIn(moved.path, "status --porcelain --untracked-files=all"), "");
  EXPECT_TRUE(cachesFolder(moved.path, "tools", "1 0"));
  EXPECT_TRUE(cachesFolder(moved.path, "docs", "1 0")) << "written with the commit";
  EXPECT_EQ(repo_.git("diff --name-only " + next + " " + *commit), "docs/guide.md");
}

TEST_F(PoolTest, MovingAPooledWorktreeNeverWritesThroughALinkAtItsIndexLock) {
  // Something left a link named index.lock in a pooled worktree's git
  // directory, pointing at a file of the user's: moving the worktree to the
  // next base must not write the new index into that file.
  WorktreeManager m = manager();
  m.release(m.createMany({"a"}, "HEAD", "20261126T070000"), true, PoolPolicy{1, {}});
  const auto pooled = m.pool();
  ASSERT_THAT(pooled, SizeIs(1));
  std::string gitDirText = TempRepo::gitIn(pooled[0].path, "rev-parse --absolute-git-dir");
  while (!gitDirText.empty() && gitDirText.back() == '\n') gitDirText.pop_back();
  const fs::path gitDir = gitDirText;
  ASSERT_TRUE(fs::exists(gitDir / "index")) << gitDir;
  const fs::path victim = repo_.root().parent_path() / "users-file.txt";
  writeFile(victim, "the user's own words\n");
  fs::create_symlink(victim, gitDir / "index.lock");

  repo_.write("src/a.txt", "alpha, again\n");
  const std::string next = repo_.commit("the next base");
  try {
    for (const auto& wt : m.createMany({"b"}, "HEAD", "20261126T080000")) {
      expectExactly(wt, next, {});
      EXPECT_FALSE(fs::is_symlink(fs::symlink_status(gitDir / "index")));
    }
  } catch (const git::GitError& e) {
    // libgit2 refuses the lock the same way: the race cannot take that
    // worktree, and says why.
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the index is locked")) << e.what();
  }
  EXPECT_EQ(readFile(victim), "the user's own words\n");
}

TEST_F(PoolTest, ACheckoutForChecksIsAlwaysFresh) {
  // Scoring and verification checkouts never run among a previous agent's kept folders.
  WorktreeManager m = manager();
  const Worktree used = m.create("claude", "HEAD", "20261126T070000");
  writeFile(used.path / "node_modules/jest/index.js", "module.exports = () => 'all tests pass';\n");
  m.release({used}, true, PoolPolicy{1, {"node_modules"}});
  const Worktree check = m.create("_check-codex", "HEAD", "20261126T080000", /*fromPool=*/false);
  EXPECT_FALSE(fs::exists(check.path / "node_modules"));
  expectExactly(check, base_, {});
  EXPECT_THAT(m.pool(), SizeIs(1)) << "left for the next agent";
}

TEST_F(PoolTest, ThePoolHoldsAtMostPoolSizeAndShrinksWhenItIsLowered) {
  WorktreeManager m = manager();
  const auto three = m.createMany({"a", "b", "c"}, "HEAD", "20261126T070000");
  EXPECT_THAT(m.release(three, true, PoolPolicy{2, {}}), SizeIs(2));
  EXPECT_THAT(m.pool(), SizeIs(2));
  EXPECT_EQ(registeredWorktrees(), 3);
  const auto one = m.createMany({"d", "e", "f"}, "HEAD", "20261126T080000");
  EXPECT_THAT(m.pool(), IsEmpty());
  EXPECT_THAT(m.release(one, true, PoolPolicy{1, {}}), SizeIs(1));
  EXPECT_THAT(m.pool(), SizeIs(1));
  // pool_size = 0: nothing kept, and what was pooled goes too.
  const auto more = m.createMany({"g"}, "HEAD", "20261126T090000");
  const Worktree extra = m.create("h", "HEAD", "20261126T090000");
  EXPECT_THAT(m.release({more[0], extra}, true, PoolPolicy{0, {}}), IsEmpty());
  EXPECT_THAT(m.pool(), IsEmpty());
  EXPECT_EQ(registeredWorktrees(), 1);
  EXPECT_TRUE(fs::is_empty(workspace()));
}

TEST_F(PoolTest, KeepingTheBranchKeepsTheAgentsCommits) {
  WorktreeManager m = manager();
  const Worktree used = m.create("claude", "HEAD", "20261126T070000");
  leaveAMess(used);
  const std::string agentCommit = repo_.git("rev-parse " + used.branch);
  ASSERT_THAT(m.release({used}, false, PoolPolicy{1, {}}), SizeIs(1));
  EXPECT_EQ(repo_.git("rev-parse " + used.branch), agentCommit);
  EXPECT_NE(agentCommit, base_);
  // The branch is free again: nothing has it checked out.
  EXPECT_EQ(repo_.git("branch -D " + used.branch).find("Deleted"), 0u);
}

TEST_F(PoolTest, EmptyPoolRemovesEveryPooledWorktree) {
  WorktreeManager m = manager();
  m.release(m.createMany({"a", "b"}, "HEAD", "20261126T070000"), true, PoolPolicy{4, {}});
  ASSERT_THAT(m.pool(), SizeIs(2));
  const auto removed = m.emptyPool();
  EXPECT_THAT(removed, SizeIs(2));
  EXPECT_THAT(m.pool(), IsEmpty());
  EXPECT_EQ(registeredWorktrees(), 1);
  EXPECT_TRUE(fs::is_empty(workspace()));
  EXPECT_EQ(repo_.git("worktree prune --dry-run -v"), "");
}

TEST_F(PoolTest, ContentFiltersMeanTheWorktreeIsRemovedNotPooled) {
  repo_.write(".gitattributes", "*.txt text eol=crlf\n");
  const std::string base = repo_.commit("line endings");
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", base, "20261126T070000");
  EXPECT_THAT(m.release({wt}, true, PoolPolicy{2, {}}), IsEmpty());
  EXPECT_THAT(m.pool(), IsEmpty());
  EXPECT_EQ(registeredWorktrees(), 1);
}

TEST_F(PoolTest, AMoveThatBringsAttributesChecksOutAfresh) {
  WorktreeManager m = manager();
  m.release({m.create("claude", "HEAD", "20261126T070000")}, true, PoolPolicy{1, {}});
  repo_.write(".gitattributes", "*.txt text eol=crlf\n");
  repo_.write("src/c.txt", "one\ntwo\n");
  const std::string next = repo_.commit("line endings");
  const Worktree wt = m.create("codex", next, "20261126T080000");
  EXPECT_THAT(m.pool(), IsEmpty()) << "taken from the pool all the same";
  EXPECT_EQ(readFile(wt.path / "src/c.txt"), "one\r\ntwo\r\n") << "written by git's rules";
  EXPECT_EQ(TempRepo::gitIn(wt.path, "status --porcelain --untracked-files=all --ignored"), "");
}

TEST_F(PoolTest, RepairRemovesWhatAHydraKilledMidwayLeft) {
  WorktreeManager m = manager();
  ProcessOwner gone = ProcessOwner::self();
  gone.startTime += 1;  // the pid of a process that ended, now reused
  m.setOwner(gone);
  m.release(m.createMany({"a", "b", "c", "d"}, "HEAD", "20261126T070000"), true, PoolPolicy{4, {}});
  auto pool = m.pool();
  ASSERT_THAT(pool, SizeIs(4));
  const fs::path admins = repo_.root() / ".git/worktrees";
  // Killed while pooling: the metadata renamed, the directory not yet.
  fs::rename(pool[0].path, workspace() / "a-20261126T070000");
  writeFile(admins / pool[0].name / "gitdir", (workspace() / "a-20261126T070000/.git").string() + "\n");
  // Killed while taking one: the metadata renamed to the new name, the directory not yet.
  fs::rename(admins / pool[1].name, admins / "e-20261126T080000");
  // A directory whose metadata is gone.
  fs::remove_all(admins / pool[2].name);
  const std::set<std::string> before = pathsBelow(workspace(), {pool[0].name, pool[1].name, pool[2].name, pool[3].name,
                                                                 "a-20261126T070000"});
  ASSERT_EQ(before.size(), 4u);

  const auto removed = m.repairPool();
  EXPECT_THAT(removed, SizeIs(5)) << "three directories, two metadata directories";
  EXPECT_THAT(m.pool(), ElementsAre(pool[3]));
  EXPECT_EQ(registeredWorktrees(), 2);
  EXPECT_EQ(pathsBelow(workspace(), {pool[3].name}), std::set<std::string>{pool[3].name});
  EXPECT_TRUE(m.list().empty());
  EXPECT_TRUE(m.repairPool().empty()) << "nothing more to do";
}

// A hydra that is pooling a worktree now (its metadata already says pooled,
// the renames are still to come) is left to finish by another hydra's repair.
TEST_F(PoolTest, RepairLeavesWhatALiveHydraIsPooling) {
  WorktreeManager m = manager();
  m.release(m.createMany({"a", "b"}, "HEAD", "20261126T070000"), true, PoolPolicy{2, {}});
  auto pool = m.pool();
  ASSERT_THAT(pool, SizeIs(2));
  const fs::path admins = repo_.root() / ".git/worktrees";
  fs::rename(pool[0].path, workspace() / "a-20261126T070000");
  writeFile(admins / pool[0].name / "gitdir", (workspace() / "a-20261126T070000/.git").string() + "\n");

  EXPECT_THAT(manager().repairPool(), IsEmpty()) << "its owner, this process, still runs";
  EXPECT_TRUE(fs::exists(workspace() / "a-20261126T070000"));
  EXPECT_TRUE(fs::exists(admins / pool[0].name));
  EXPECT_EQ(m.pool(), std::vector<PooledWorktree>{pool[1]});
}

// What is being removed is set aside under a name that says who removes it:
// another hydra's repair leaves a live remover's alone and finishes a dead one's.
TEST_F(PoolTest, RepairFinishesWhatADeadRemoverSetAsideAndLeavesALiveOnesAlone) {
  WorktreeManager m = manager();
  m.release({m.create("a", "HEAD", "20261126T070000")}, true, PoolPolicy{1, {}});
  ProcessOwner gone = ProcessOwner::self();
  gone.startTime += 1;
  const fs::path dead = workspace() / ("_pool-drop-" + toWord(gone) + "-0123456789ab");
  const fs::path live = workspace() / ("_pool-drop-" + toWord(ProcessOwner::self()) + "-0123456789ab");
  writeFile(dead / "src/a.txt", "half removed\n");
  writeFile(live / "src/a.txt", "being removed\n");

  EXPECT_EQ(manager().repairPool(), std::vector<fs::path>{dead});
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live / "src/a.txt"));
  EXPECT_THAT(m.pool(), SizeIs(1)) << "the pool itself is untouched";
  fs::remove_all(live);
  EXPECT_THAT(m.emptyPool(), SizeIs(1));
  EXPECT_TRUE(fs::is_empty(workspace())) << "emptyPool removes what it set aside";
}

TEST_F(PoolTest, TwoManagersNeverTakeTheSamePooledWorktree) {
  WorktreeManager m = manager();
  m.release(m.createMany({"a", "b", "c"}, "HEAD", "20261126T070000"), true, PoolPolicy{3, {}});
  std::vector<Worktree> left, right;
  std::thread one([&] { left = manager().createMany({"x", "y"}, "HEAD", "20261126T080001"); });
  std::thread two([&] { right = manager().createMany({"x", "y"}, "HEAD", "20261126T080002"); });
  one.join();
  two.join();
  EXPECT_THAT(m.pool(), IsEmpty());
  EXPECT_EQ(registeredWorktrees(), 5);
  for (const auto& wt : left) expectExactly(wt, base_, {});
  for (const auto& wt : right) expectExactly(wt, base_, {});
}

}  // namespace
}  // namespace hydra::core
