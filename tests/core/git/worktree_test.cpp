#include "core/git/result_size.h"
#include "core/git/worktree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/git/git.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::readFile;
using testing::run;
using testing::shellQuote;
using testing::TempDir;
using testing::TempRepo;
using testing::writeFile;

constexpr const char* kWorkspace = ".hydra-workspaces";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int countPrefixed(const std::string& text, const std::string& prefix) {
  const auto all = lines(text);
  return static_cast<int>(std::count_if(
      all.begin(), all.end(), [&](const std::string& l) { return l.starts_with(prefix); }));
}

std::string gitIn(const fs::path& dir, const std::string& args) {
  return TempRepo::gitIn(dir, args);
}

// A process that is gone: this one's pid with another start time, as when
// the pid was reused by a later process.
ProcessOwner deadOwner() {
  ProcessOwner owner = ProcessOwner::self();
  owner.startTime += 1;
  return owner;
}

// A pid no process can have (above any pid_max).
constexpr int kNoSuchPid = std::numeric_limits<int>::max();

std::vector<Worktree> sortedByName(std::vector<Worktree> wts) {
  std::sort(wts.begin(), wts.end(),
            [](const Worktree& a, const Worktree& b) { return a.name < b.name; });
  return wts;
}

// Everything of the user's checkout that hydra must leave alone.
struct UserState {
  std::string head;
  std::string headRef;
  std::string indexBytes;
  fs::file_time_type indexTime;
  std::string status;
  std::string fileA;
  std::string fileB;
  std::string untracked;
};

class WorktreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.isolateLibgit2();
    base_ = repo_.git("rev-parse HEAD");
  }

  WorktreeManager manager() const { return WorktreeManager(repo_.root(), kWorkspace); }
  fs::path workspace() const { return repo_.root() / kWorkspace; }
  fs::path admin(const std::string& name) const { return repo_.root() / ".git/worktrees" / name; }
  std::string hydraBranches() const {
    return repo_.git("branch --list 'hydra/*' --format='%(refname:short)'");
  }
  int registeredWorktrees() const {
    return countPrefixed(repo_.git("worktree list --porcelain"), "worktree ");
  }
  bool workspaceIsEmpty() const { return !fs::exists(workspace()) || fs::is_empty(workspace()); }

  UserState snapshot() const {
    // Index first: nothing below may rewrite it (the test git runs with
    // GIT_OPTIONAL_LOCKS=0), but reading it before `git status` removes all doubt.
    UserState s;
    const fs::path index = repo_.root() / ".git/index";
    s.indexBytes = readFile(index);
    s.indexTime = fs::last_write_time(index);
    s.head = repo_.git("rev-parse HEAD");
    s.headRef = repo_.git("symbolic-ref HEAD");
    s.status = repo_.git("status --porcelain --untracked-files=all");
    s.fileA = readFile(repo_.root() / "src/a.txt");
    s.fileB = readFile(repo_.root() / "src/b.txt");
    s.untracked =
        fs::exists(repo_.root() / "notes.txt") ? readFile(repo_.root() / "notes.txt") : "";
    return s;
  }

  git::LibGit2 libgit2_;
  TempRepo repo_;
  std::string base_;
};

// ---- construction -----------------------------------------------------------

TEST_F(WorktreeTest, ConstructorRejectsWorkspaceOutsideTheRepositoryOrInsideGit) {
  for (const char* bad : {"", "/tmp/elsewhere", "../outside", "a/../../outside", ".", ".git/ws"}) {
    EXPECT_THROW(WorktreeManager(repo_.root(), bad), std::invalid_argument) << bad;
  }
}

TEST_F(WorktreeTest, ConstructorRejectsDirectoriesThatAreNotARepositoryRoot) {
  TempDir plain;
  EXPECT_THROW(WorktreeManager(plain.path(), kWorkspace), git::GitError);
  EXPECT_THROW(WorktreeManager(repo_.root() / "src", kWorkspace), git::GitError);
}

// ---- create -----------------------------------------------------------------

TEST_F(WorktreeTest, CreateChecksOutTheBaseOnANewHydraBranch) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "20261121T110501");

  EXPECT_EQ(wt.name, "claude-20261121T110501");
  EXPECT_EQ(wt.agentId, "claude");
  EXPECT_EQ(wt.branch, "hydra/claude-20261121T110501");
  EXPECT_EQ(wt.path, workspace() / "claude-20261121T110501");
  EXPECT_EQ(wt.baseCommit, base_);

  EXPECT_EQ(readFile(wt.path / "src/a.txt"), "alpha\n");
  EXPECT_EQ(readFile(wt.path / "README.md"), "# sample\n");
  EXPECT_EQ(gitIn(wt.path, "rev-parse HEAD"), base_);
  EXPECT_EQ(gitIn(wt.path, "symbolic-ref --short HEAD"), wt.branch);
  EXPECT_EQ(gitIn(wt.path, "status --porcelain --untracked-files=all"), "");
  EXPECT_EQ(repo_.git("rev-parse " + wt.branch), base_);

  const std::string listing = repo_.git("worktree list --porcelain");
  EXPECT_THAT(listing, HasSubstr("worktree " + wt.path.string() + "\n"));
  EXPECT_THAT(listing, HasSubstr("branch refs/heads/" + wt.branch));
}

// An unconfined agent can put anything where hydra keeps its record of the
// worktree (.git/worktrees/<name>/hydra) or its .git link: a FIFO there is
// not waited on (opening it for reading would block until a writer came), a
// link to a device not read without end. The worktree reads as broken.
TEST_F(WorktreeTest, ARecordSwappedForAFifoOrADeviceIsNeverWaitedOnOrReadWithoutEnd) {
  WorktreeManager m = manager();
  const Worktree fifo = m.create("fifo", "HEAD", "20261121T110501");
  const Worktree device = m.create("device", "HEAD", "20261121T110501");
  fs::remove(admin(fifo.name) / kWorktreeRecordFile);
  ASSERT_EQ(::mkfifo((admin(fifo.name) / kWorktreeRecordFile).c_str(), 0600), 0);
  fs::remove(admin(device.name) / kWorktreeRecordFile);
  fs::create_symlink("/dev/zero", admin(device.name) / kWorktreeRecordFile);
  fs::remove(device.path / ".git");
  fs::create_symlink("/dev/zero", device.path / ".git");

  const std::vector<Worktree> listed = m.list();
  for (const Worktree& wt : listed) EXPECT_NE(wt.agentId, "fifo") << "its record could not be read";
  EXPECT_TRUE(m.pool().empty());
  EXPECT_NO_THROW(m.repairPool());
}

// .git/info/exclude is the user's: hydra adds its folders to it, and one it
// cannot read whole is an error, never taken for empty and rewritten without
// the user's patterns.
TEST_F(WorktreeTest, AnExcludeFileThatCannotBeReadWholeIsAnErrorAndKeepsItsPatterns) {
  const fs::path exclude = repo_.root() / ".git/info/exclude";
  fs::create_directories(exclude.parent_path());
  std::string patterns;
  while (patterns.size() <= (std::size_t{16} << 20)) patterns += "generated/very/long/pattern/of/the/users/own/*.tmp\n";
  writeFile(exclude, patterns);
  WorktreeManager m = manager();
  try {
    m.create("claude", "HEAD", "20261121T110501");
    ADD_FAILURE() << "created a worktree without its folders excluded";
  } catch (const git::GitError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot add hydra's folders to"));
    EXPECT_THAT(e.what(), HasSubstr("larger than"));
  }
  EXPECT_EQ(fs::file_size(exclude), patterns.size());

  fs::remove(exclude);
  ASSERT_EQ(::mkfifo(exclude.c_str(), 0600), 0);
  EXPECT_THROW(m.create("claude", "HEAD", "20261121T110502"), git::GitError) << "a FIFO is not waited on";
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(exclude)));
}

// The first checkout is written from the object database: every kind of
// entry must land as git itself would write it, with an index that git finds
// clean without re-reading a file.
TEST_F(WorktreeTest, TheDirectCheckoutWritesEveryKindOfEntryAsGitDoes) {
  repo_.write("bin/run.sh", "#!/bin/sh\necho run\n");
  repo_.write("empty.txt", "");
  repo_.write("deep/er/and/deeper/file.c", "int main(void) { return 0; }\n");
  repo_.write("a.b", "sorts before a/ in git's order\n");
  repo_.write("a/inside.txt", "inside\n");
  repo_.write("binary.dat", std::string("\0\x01\xff\0tail", 8));
  run("chmod +x " + shellQuote((repo_.root() / "bin/run.sh").string()));
  run("ln -s ../README.md " + shellQuote((repo_.root() / "deep/link").string()));
  repo_.git("add -A");
  // A submodule's gitlink, as a superproject records it.
  repo_.git("update-index --add --cacheinfo 160000," + std::string(40, '1') + ",vendor/lib");
  repo_.git("commit -q -m 'every kind of entry'");
  const std::string base = repo_.git("rev-parse HEAD");

  for (const char* writers : {"1", "4"}) {
    SCOPED_TRACE(std::string("writers ") + writers);
    ::setenv("HYDRA_CHECKOUT_WRITERS", writers, 1);
    WorktreeManager m = manager();
    const Worktree wt = m.create("claude", base, std::string("t") + writers);
    ::unsetenv("HYDRA_CHECKOUT_WRITERS");
    EXPECT_EQ(readFile(wt.path / "bin/run.sh"), "#!/bin/sh\necho run\n");
    EXPECT_TRUE((fs::status(wt.path / "bin/run.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
    EXPECT_TRUE((fs::status(wt.path / "README.md").permissions() & fs::perms::owner_exec) == fs::perms::none);
    EXPECT_EQ(readFile(wt.path / "empty.txt"), "");
    EXPECT_EQ(readFile(wt.path / "binary.dat"), std::string("\0\x01\xff\0tail", 8));
    EXPECT_EQ(readFile(wt.path / "deep/er/and/deeper/file.c"), "int main(void) { return 0; }\n");
    ASSERT_TRUE(fs::is_symlink(wt.path / "deep/link"));
    EXPECT_EQ(fs::read_symlink(wt.path / "deep/link"), "../README.md");
    EXPECT_TRUE(fs::is_directory(wt.path / "vendor/lib"));
    // git agrees: the index holds the tree, and nothing differs from it.
    EXPECT_EQ(gitIn(wt.path, "status --porcelain --untracked-files=all"), "");
    EXPECT_EQ(gitIn(wt.path, "ls-files -s"), repo_.git("ls-files -s"));
    EXPECT_EQ(gitIn(wt.path, "write-tree"), repo_.git("rev-parse " + base + "^{tree}"));
    // ...and without re-reading contents: the stat data is what the files have.
    EXPECT_EQ(gitIn(wt.path, "diff-files --name-only"), "");
    m.remove(wt);
  }
}

// Where attributes or configuration change what a file holds on disk, the
// checkout is libgit2's, which applies them as git does.
TEST_F(WorktreeTest, ContentFiltersAreAppliedAsGitAppliesThem) {
  repo_.write(".gitattributes", "*.txt text eol=crlf\n");
  repo_.write("notes/crlf.txt", "one\ntwo\n");
  const std::string base = repo_.commit("line endings");
  const Worktree wt = manager().create("codex", base, "20261126T050000");
  EXPECT_EQ(readFile(wt.path / "notes/crlf.txt"), "one\r\ntwo\r\n");
  EXPECT_EQ(gitIn(wt.path, "status --porcelain --untracked-files=all"), "");
}

TEST_F(WorktreeTest, CreateStartsFromANamedBranchTagOrSha) {
  repo_.git("switch -q -c feature");
  repo_.write("src/feature.txt", "feature work\n");
  const std::string feature = repo_.commit("feature");
  repo_.git("tag -a -m release v1.2");
  repo_.git("switch -q main");

  WorktreeManager m = manager();
  const Worktree fromBranch = m.create("a", "feature", "1");
  const Worktree fromTag = m.create("b", "v1.2", "1");
  const Worktree fromSha = m.create("c", feature.substr(0, 12), "1");
  for (const Worktree& wt : {fromBranch, fromTag, fromSha}) {
    EXPECT_EQ(wt.baseCommit, feature) << wt.name;
    EXPECT_EQ(gitIn(wt.path, "rev-parse HEAD"), feature) << wt.name;
    EXPECT_EQ(readFile(wt.path / "src/feature.txt"), "feature work\n") << wt.name;
  }
  EXPECT_EQ(repo_.git("symbolic-ref --short HEAD"), "main");
  EXPECT_FALSE(fs::exists(repo_.root() / "src/feature.txt"));
}

TEST_F(WorktreeTest, CreateFromUnknownRefThrowsGitErrorAndLeavesNothing) {
  WorktreeManager m = manager();
  try {
    m.create("claude", "no-such-ref", "1");
    FAIL() << "create did not throw";
  } catch (const git::GitError& e) {
    EXPECT_EQ(e.code(), GIT_ENOTFOUND);
    EXPECT_THAT(e.what(), HasSubstr("'no-such-ref'"));
  }
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_EQ(registeredWorktrees(), 1);
  EXPECT_TRUE(workspaceIsEmpty());
  EXPECT_FALSE(fs::exists(admin("claude-1")));
}

TEST_F(WorktreeTest, CreateRejectsIdsOutsideLettersDigitsUnderscoreAndDash) {
  WorktreeManager m = manager();
  for (const char* bad : {"", "a/b", "..", "x y", "a.b", "caf\xc3\xa9", "a:b", "~1"}) {
    EXPECT_THROW(m.create(bad, "HEAD", "1"), std::invalid_argument) << bad;
    EXPECT_THROW(m.create("claude", "HEAD", bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_TRUE(workspaceIsEmpty());
}

TEST_F(WorktreeTest, CreateAcceptsUnixSecondsAndDashedIds) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude-opus_4", "HEAD", "1763722800");
  EXPECT_EQ(wt.name, "claude-opus_4-1763722800");
  EXPECT_EQ(gitIn(wt.path, "symbolic-ref --short HEAD"), "hydra/claude-opus_4-1763722800");
}

TEST_F(WorktreeTest, CreateOfATakenNameFailsAndKeepsTheExistingWorktree) {
  WorktreeManager m = manager();
  const Worktree first = m.create("claude", "HEAD", "1");
  writeFile(first.path / "work.txt", "in progress\n");
  try {
    m.create("claude", "HEAD", "1");
    FAIL() << "second create did not throw";
  } catch (const git::GitError& e) {
    EXPECT_EQ(e.code(), GIT_EEXISTS);
    EXPECT_THAT(e.what(), HasSubstr("claude-1"));
  }
  EXPECT_EQ(readFile(first.path / "work.txt"), "in progress\n");
  EXPECT_EQ(gitIn(first.path, "symbolic-ref --short HEAD"), first.branch);
  EXPECT_EQ(m.list(), std::vector<Worktree>{first});
}

TEST_F(WorktreeTest, CreateFailsWhenTheBranchExistsAndLeavesThatBranchAlone) {
  repo_.write("src/a.txt", "older work\n");
  const std::string other = repo_.commit("other");
  repo_.git("branch hydra/codex-7 " + other);
  repo_.git("reset -q --hard " + base_);

  WorktreeManager m = manager();
  try {
    m.create("codex", "HEAD", "7");
    FAIL() << "create did not throw";
  } catch (const git::GitError& e) {
    EXPECT_EQ(e.code(), GIT_EEXISTS);
    EXPECT_THAT(e.what(), HasSubstr("hydra/codex-7"));
  }
  EXPECT_EQ(repo_.git("rev-parse hydra/codex-7"), other);
  EXPECT_TRUE(workspaceIsEmpty());
  EXPECT_EQ(registeredWorktrees(), 1);
}

TEST_F(WorktreeTest, CreateFailsWhenTheDirectoryExistsAndLeavesItsFilesAlone) {
  writeFile(workspace() / "codex-7" / "keep.txt", "someone's file\n");
  WorktreeManager m = manager();
  EXPECT_THROW(m.create("codex", "HEAD", "7"), git::GitError);
  EXPECT_EQ(readFile(workspace() / "codex-7" / "keep.txt"), "someone's file\n");
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_FALSE(fs::exists(admin("codex-7")));
}

TEST_F(WorktreeTest, WorktreesAreIsolatedFromEachOtherAndFromTheMainTree) {
  WorktreeManager m = manager();
  const auto wts = m.createMany({"a", "b"}, "HEAD", "1");
  writeFile(wts[0].path / "only-in-a.txt", "a\n");
  writeFile(wts[0].path / "src/a.txt", "changed by a\n");

  EXPECT_FALSE(fs::exists(wts[1].path / "only-in-a.txt"));
  EXPECT_EQ(readFile(wts[1].path / "src/a.txt"), "alpha\n");
  EXPECT_FALSE(fs::exists(repo_.root() / "only-in-a.txt"));
  EXPECT_EQ(readFile(repo_.root() / "src/a.txt"), "alpha\n");
  EXPECT_EQ(gitIn(wts[1].path, "status --porcelain --untracked-files=all"), "");
  EXPECT_EQ(gitIn(wts[0].path, "status --porcelain --untracked-files=all"),
            " M src/a.txt\n?? only-in-a.txt");
}

// ---- excludes ---------------------------------------------------------------

TEST_F(WorktreeTest, MainStatusStaysCleanWithFilesInWorktrees) {
  WorktreeManager m = manager();
  const auto wts = m.createMany({"a", "b"}, "HEAD", "1");
  writeFile(wts[0].path / "new.txt", "new\n");
  writeFile(repo_.root() / ".hydra/state.json", "{}\n");
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"), "");

  // Without the exclude lines the same tree is not clean: they are what keeps it so.
  writeFile(repo_.root() / ".git/info/exclude", "");
  EXPECT_NE(repo_.git("status --porcelain --untracked-files=all"), "");
}

TEST_F(WorktreeTest, EnsureExcludedAddsEachPatternOnceAndKeepsExistingLines) {
  writeFile(repo_.root() / ".git/info/exclude", "# mine\n*.swp");  // no final newline
  WorktreeManager m = manager();
  m.ensureExcluded();
  m.ensureExcluded();
  m.create("a", "HEAD", "1");
  EXPECT_EQ(readFile(repo_.root() / ".git/info/exclude"),
            "# mine\n*.swp\n/.hydra-workspaces/\n.hydra/\n");
}

TEST_F(WorktreeTest, NestedWorkspaceWithWildcardCharactersIsExcludedLiterally) {
  WorktreeManager m(repo_.root(), "work/spaces[1]");
  const Worktree wt = m.create("a", "HEAD", "1");
  EXPECT_EQ(wt.path, repo_.root() / "work/spaces[1]/a-1");
  writeFile(wt.path / "new.txt", "new\n");
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"), "");
  EXPECT_THAT(readFile(repo_.root() / ".git/info/exclude"), HasSubstr("/work/spaces\\[1]/\n"));
}

TEST_F(WorktreeTest, FromALinkedWorktreeExcludesGoToTheCommonGitDir) {
  const fs::path linked = repo_.outside() / "linked";
  repo_.git("worktree add -q -b user-branch " + testing::shellQuote(linked.string()));

  WorktreeManager m(linked, kWorkspace);
  const Worktree wt = m.create("a", "HEAD", "1");
  EXPECT_EQ(wt.path, linked / kWorkspace / "a-1");
  writeFile(wt.path / "new.txt", "new\n");

  EXPECT_THAT(readFile(repo_.root() / ".git/info/exclude"), HasSubstr("/.hydra-workspaces/\n"));
  EXPECT_FALSE(fs::exists(repo_.root() / ".git/worktrees/linked/info/exclude"));
  EXPECT_EQ(gitIn(linked, "status --porcelain --untracked-files=all"), "");
  EXPECT_EQ(gitIn(linked, "symbolic-ref --short HEAD"), "user-branch");
  EXPECT_EQ(manager().list(), std::vector<Worktree>{wt});  // same repository, same worktrees

  m.remove(wt);
  EXPECT_FALSE(fs::exists(wt.path));
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_TRUE(fs::exists(linked / "src/a.txt"));  // the user's linked worktree is untouched
}

// ---- list -------------------------------------------------------------------

TEST_F(WorktreeTest, ListReturnsOnlyHydraWorktreesWithWhatCreateReturned) {
  repo_.git("worktree add -q -b user-branch " +
            testing::shellQuote((repo_.outside() / "mine").string()));
  WorktreeManager m = manager();
  const auto made = m.createMany({"zed", "alpha", "mid"}, "main", "1");
  EXPECT_EQ(m.list(), sortedByName(made));
}

TEST_F(WorktreeTest, ListKeepsAWorktreeWhoseAgentSwitchedBranches) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("a", "HEAD", "1");
  gitIn(wt.path, "switch -q -c agent-made-branch");
  EXPECT_EQ(m.list(), std::vector<Worktree>{wt});
}

TEST_F(WorktreeTest, ListIncludesHydraBranchWorktreesMadeByHand) {
  const fs::path path = workspace() / "manual-1";
  repo_.git("worktree add -q -b hydra/manual-1 " + testing::shellQuote(path.string()));
  const auto found = manager().list();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].name, "manual-1");
  EXPECT_EQ(found[0].branch, "hydra/manual-1");
  EXPECT_EQ(found[0].path, path);
  EXPECT_EQ(found[0].agentId, "");
}

// ---- remove -----------------------------------------------------------------

TEST_F(WorktreeTest, RemoveDeletesDirectoryMetadataAndBranch) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  writeFile(wt.path / "scratch/notes.txt", "temporary\n");
  ASSERT_TRUE(fs::exists(admin(wt.name)));

  m.remove(wt);
  EXPECT_FALSE(fs::exists(wt.path));
  EXPECT_FALSE(fs::exists(admin(wt.name)));
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_EQ(registeredWorktrees(), 1);
  EXPECT_TRUE(m.list().empty());
}

TEST_F(WorktreeTest, RemoveCanKeepTheBranchWithTheAgentsCommit) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  writeFile(wt.path / "result.txt", "done\n");
  const auto commit = m.commitAll(wt, "result");
  ASSERT_TRUE(commit);

  m.remove(wt, /*deleteBranch=*/false);
  EXPECT_FALSE(fs::exists(wt.path));
  EXPECT_FALSE(fs::exists(admin(wt.name)));
  EXPECT_EQ(repo_.git("rev-parse " + wt.branch), *commit);
  EXPECT_EQ(repo_.git("show " + wt.branch + ":result.txt"), "done");
}

TEST_F(WorktreeTest, RemoveDeletesTheDirectoryEvenWhenTheAgentDeletedItsGitFile) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  fs::remove(wt.path / ".git");
  m.remove(wt);
  EXPECT_FALSE(fs::exists(wt.path));
  EXPECT_FALSE(fs::exists(admin(wt.name)));
  EXPECT_EQ(hydraBranches(), "");
}

TEST_F(WorktreeTest, RemoveRefusesALockedWorktree) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  repo_.git("worktree lock --reason 'user holds it' " + testing::shellQuote(wt.path.string()));
  try {
    m.remove(wt);
    FAIL() << "remove did not throw";
  } catch (const git::GitError& e) {
    EXPECT_EQ(e.code(), GIT_ELOCKED);
    EXPECT_THAT(e.what(), HasSubstr("user holds it"));
  }
  EXPECT_TRUE(fs::exists(wt.path / "src/a.txt"));
  EXPECT_EQ(hydraBranches(), wt.branch);
}

TEST_F(WorktreeTest, RemoveRefusesToDeleteBranchesOtherThanHydras) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  Worktree forged = wt;
  forged.branch = "main";
  EXPECT_THROW(m.remove(forged), std::invalid_argument);
  forged = wt;
  forged.name = "../../src";
  EXPECT_THROW(m.remove(forged), std::invalid_argument);
  EXPECT_TRUE(fs::exists(wt.path / "src/a.txt"));
  EXPECT_TRUE(fs::exists(repo_.root() / "src/a.txt"));
  EXPECT_EQ(repo_.git("rev-parse main"), base_);
}

TEST_F(WorktreeTest, RemoveKeepsABranchTheUserHasCheckedOut) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  m.remove(wt, /*deleteBranch=*/false);
  repo_.git("switch -q " + wt.branch);  // the user inspects the agent's work
  EXPECT_THROW(m.remove(wt), git::GitError);
  EXPECT_EQ(repo_.git("symbolic-ref --short HEAD"), wt.branch);

  repo_.git("switch -q main");
  const fs::path linked = repo_.outside() / "inspect";
  repo_.git("worktree add -q " + testing::shellQuote(linked.string()) + " " + wt.branch);
  EXPECT_THROW(m.remove(wt), git::GitError);
  EXPECT_EQ(hydraBranches(), wt.branch);
  EXPECT_EQ(gitIn(linked, "symbolic-ref --short HEAD"), wt.branch);
}

TEST_F(WorktreeTest, RemoveAllRemovesEveryWorktree) {
  WorktreeManager m = manager();
  const auto wts = m.createMany({"a", "b", "c"}, "HEAD", "1");
  m.removeAll(wts);
  for (const Worktree& wt : wts) EXPECT_FALSE(fs::exists(wt.path)) << wt.name;
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_EQ(registeredWorktrees(), 1);
  EXPECT_TRUE(workspaceIsEmpty());
}

// ---- commitAll --------------------------------------------------------------

TEST_F(WorktreeTest, CommitAllCommitsNewModifiedAndDeletedFilesButNotIgnoredOnes) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  writeFile(wt.path / "src/a.txt", "alpha changed\n");
  fs::remove(wt.path / "src/b.txt");
  writeFile(wt.path / "src/new/c.txt", "gamma\n");
  writeFile(wt.path / "debug.log", "ignored\n");
  writeFile(wt.path / "build/out.o", "ignored\n");

  const auto id = m.commitAll(wt, "claude: rework src");
  ASSERT_TRUE(id);
  EXPECT_EQ(repo_.git("rev-parse " + wt.branch), *id);
  EXPECT_EQ(m.headCommit(wt), *id);
  EXPECT_EQ(repo_.git("show -s --format='%an <%ae>|%cn <%ce>|%s|%P' " + *id),
            "hydra <hydra@localhost>|hydra <hydra@localhost>|claude: rework src|" + base_);
  EXPECT_EQ(repo_.git("diff-tree --no-commit-id --name-status -r " + *id),
            "M\tsrc/a.txt\nD\tsrc/b.txt\nA\tsrc/new/c.txt");
  // The worktree's own index now matches its files; ignored files stay untracked.
  EXPECT_EQ(gitIn(wt.path, "status --porcelain"), "");
  EXPECT_EQ(gitIn(wt.path, "status --porcelain --ignored"), "!! build/\n!! debug.log");
  EXPECT_EQ(repo_.git("rev-parse HEAD"), base_);
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"), "");
}

// Committing what measureResult() found (new, changed, racily clean and gone
// files, no second pass over the worktree) gives the tree `git add -A` gives.
TEST_F(WorktreeTest, CommittingWhatTheWalkFoundIsWhatGitAddAllWouldCommit) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  const auto commitMeasured = [&](const std::string& message) {
    const ResultSize size = measureResult(wt.path, ResultLimits{});
    EXPECT_TRUE(size.exact);
    return m.commitAll(wt, message, nullptr, &size);
  };
  const auto expectAsGitWouldHave = [&](const std::optional<std::string>& id) {
    ASSERT_TRUE(id);
    EXPECT_EQ(gitIn(wt.path, "status --porcelain --untracked-files=all"), "") << "left unstaged";
    gitIn(wt.path, "add -A");
    EXPECT_EQ(gitIn(wt.path, "write-tree"), repo_.git("rev-parse " + *id + "^{tree}"));
  };

  writeFile(wt.path / "src/a.txt", "alpha changed\n");
  fs::remove(wt.path / "src/b.txt");
  writeFile(wt.path / "src/b.txt/inner.txt", "a folder where a file was\n");
  writeFile(wt.path / "dir/deep/er/c.txt", "gamma\n");
  writeFile(wt.path / "run.sh", "#!/bin/sh\n");
  fs::permissions(wt.path / "run.sh", fs::perms::owner_exec, fs::perm_options::add);
  fs::create_symlink("src/a.txt", wt.path / "link");
  writeFile(wt.path / "debug.log", "ignored\n");
  writeFile(wt.path / "build/out.o", "ignored\n");
  expectAsGitWouldHave(commitMeasured("first"));

  // The other way round, a mode taken back, a link retargeted.
  fs::remove_all(wt.path / "dir");
  writeFile(wt.path / "dir", "a file where a folder was\n");
  fs::permissions(wt.path / "run.sh", fs::perms::owner_exec, fs::perm_options::remove);
  fs::remove(wt.path / "link");
  fs::create_symlink("run.sh", wt.path / "link");
  expectAsGitWouldHave(commitMeasured("second"));

  // Racily clean: changed within the clock tick its entry (and the index)
  // was written, same size, same time. Only the content tells.
  const fs::path file = wt.path / "src/a.txt";
  struct stat before {};
  ASSERT_EQ(::stat(file.c_str(), &before), 0);
  writeFile(file, "ALPHA CHANGED\n");
  const struct timespec times[2] = {before.st_mtim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
  const fs::path index = repo_.root() / ".git" / "worktrees" / wt.name / "index";
  ASSERT_EQ(::utimensat(AT_FDCWD, index.c_str(), times, 0), 0);
  const auto racy = commitMeasured("racy");
  expectAsGitWouldHave(racy);
  EXPECT_EQ(repo_.git("show " + *racy + ":src/a.txt"), "ALPHA CHANGED");
}

TEST_F(WorktreeTest, CommitAllWithNothingToCommitReturnsNullopt) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  EXPECT_EQ(m.commitAll(wt, "nothing"), std::nullopt);
  writeFile(wt.path / "only.log", "ignored\n");
  EXPECT_EQ(m.commitAll(wt, "still nothing"), std::nullopt);
  EXPECT_EQ(m.headCommit(wt), base_);

  writeFile(wt.path / "real.txt", "x\n");
  const auto first = m.commitAll(wt, "something");
  ASSERT_TRUE(first);
  EXPECT_EQ(m.commitAll(wt, "nothing again"), std::nullopt);
  EXPECT_EQ(m.headCommit(wt), *first);
}

// ---- result size, streamed and cancelled commits ---------------------------------

TEST_F(WorktreeTest, MeasureResultCountsNewAndChangedFilesButNotIgnoredOrUntouchedOnes) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  writeFile(wt.path / "src/a.txt", "alpha changed, longer\n");  // changed: 22 bytes
  writeFile(wt.path / "src/new/c.txt", "gamma\n");              // new: 6 bytes
  fs::remove(wt.path / "src/b.txt");                             // deleted: not counted
  writeFile(wt.path / "debug.log", "ignored\n");
  writeFile(wt.path / "build/out.o", std::string(4 << 20, 'x'));  // in an ignored folder
  writeFile(wt.path / "big.bin", std::string(kStreamedFileBytes, 'y'));

  const ResultSize size = measureResult(wt.path, ResultLimits{});
  EXPECT_FALSE(size.overLimit);
  EXPECT_EQ(size.files, 3);
  EXPECT_EQ(size.bytes, 22 + 6 + kStreamedFileBytes);
  EXPECT_THAT(size.largeFiles, ::testing::ElementsAre("big.bin"));

  // Stops at the first file over the limit.
  const ResultSize files = measureResult(wt.path, ResultLimits{.maxFiles = 1, .maxBytes = 1 << 30});
  EXPECT_TRUE(files.overLimit);
  EXPECT_EQ(files.files, 2);
  EXPECT_THAT(files.describe({.maxFiles = 1, .maxBytes = 1 << 30}),
              ::testing::StartsWith("result too large: more than 1 files (max_result_files = 1); counted 2 files, "));
  const ResultSize bytes = measureResult(wt.path, ResultLimits{.maxFiles = 10, .maxBytes = 1024});
  EXPECT_TRUE(bytes.overLimit);
  EXPECT_EQ(bytes.describe({.maxFiles = 10, .maxBytes = 1024}).find("result too large: more than 1024 bytes (max_result_bytes = 1024)"), 0u);

  std::atomic<bool> cancel{true};
  EXPECT_THROW(measureResult(wt.path, ResultLimits{}, &cancel), ResultCancelled);
}

TEST_F(WorktreeTest, CommitAllStreamsLargeFilesAndACancelCommitsNothing) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  std::string big(3 * kStreamedFileBytes + 17, 'z');
  big[12345] = '\n';
  writeFile(wt.path / "big.bin", big);
  writeFile(wt.path / "small.txt", "s\n");
  const ResultSize size = measureResult(wt.path, ResultLimits{});

  std::atomic<bool> cancel{true};
  EXPECT_THROW(m.commitAll(wt, "cancelled", &cancel, &size), ResultCancelled);
  EXPECT_EQ(m.headCommit(wt), base_);
  EXPECT_EQ(gitIn(wt.path, "status --porcelain"), "?? big.bin\n?? small.txt") << "nothing was staged";

  const auto id = m.commitAll(wt, "streamed", nullptr, &size);
  ASSERT_TRUE(id);
  EXPECT_EQ(repo_.git("diff-tree --no-commit-id --name-status -r " + *id), "A\tbig.bin\nA\tsmall.txt");
  EXPECT_EQ(repo_.git("rev-parse " + *id + ":big.bin") + "\n", run("git hash-object " + shellQuote((wt.path / "big.bin").string())));
  EXPECT_EQ(gitIn(wt.path, "status --porcelain"), "") << "the streamed entry matches the file";
}

// Every file under `objects` that is a loose object or a pack.
std::vector<std::string> storeFiles(const fs::path& objects) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(objects)) {
    const std::string relative = entry.path().lexically_relative(objects).string();
    if (entry.is_regular_file() && !relative.starts_with("info")) files.push_back(relative);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// A race's commit, streamed files included, lands in its quarantine; the
// user's store is untouched and reads it all the same. The quarantine
// belongs to the checkout whose race made it.
TEST_F(WorktreeTest, CommitAllIntoARacesQuarantineLeavesTheUsersStoreAsItWas) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  const std::string big(2 * kStreamedFileBytes + 5, 'q');
  writeFile(wt.path / "big.bin", big);
  writeFile(wt.path / "src/a.txt", "alpha for the quarantine\n");
  const ResultSize size = measureResult(wt.path, ResultLimits{});
  ASSERT_EQ(size.largeFiles, std::vector<std::string>{"big.bin"});
  const fs::path objects = repo_.root() / ".git" / "objects";
  const std::vector<std::string> before = storeFiles(objects);

  const ObjectQuarantine quarantine = m.quarantine("race-1");
  const auto id = m.commitAll(wt, "quarantined", nullptr, &size, &quarantine);
  ASSERT_TRUE(id);
  EXPECT_EQ(storeFiles(objects), before);
  EXPECT_TRUE(fs::exists(quarantine.path() / id->substr(0, 2) / id->substr(2)));
  EXPECT_EQ(repo_.git("show " + *id + ":src/a.txt"), "alpha for the quarantine");
  EXPECT_EQ(repo_.git("cat-file -s " + *id + ":big.bin"), std::to_string(big.size()));

  // A checkout of the result (a check's) writes it byte for byte from the quarantine.
  const Worktree check = m.create("check", *id, "2", false);
  EXPECT_EQ(readFile(check.path / "big.bin"), big);
  EXPECT_EQ(readFile(check.path / "src/a.txt"), "alpha for the quarantine\n");

  ASSERT_EQ(m.quarantines().size(), 1u);
  EXPECT_EQ(m.quarantines()[0].name(), "race-1");
  const fs::path linked = repo_.outside() / "linked";
  repo_.git("worktree add -q -b user-branch " + testing::shellQuote(linked.string()));
  EXPECT_TRUE(WorktreeManager(linked, kWorkspace).quarantines().empty()) << "another checkout's race";
}

// A full quarantine is named in the error, not the user's store.
TEST_F(WorktreeTest, ACommitThatCannotWriteItsQuarantineNamesIt) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  writeFile(wt.path / "new.txt", "new\n");
  const ObjectQuarantine quarantine = m.quarantine("race-2");
  fs::permissions(quarantine.path(), fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(quarantine.path().c_str(), W_OK) == 0) {
    // Root writes anyway: a file where the fan-out folder goes stops it as surely.
    fs::permissions(quarantine.path(), fs::perms::owner_all);
    const std::string blob = run("git hash-object " + shellQuote((wt.path / "new.txt").string()));
    writeFile(quarantine.path() / blob.substr(0, 2), "in the way");
  }
  try {
    m.commitAll(wt, "cannot", nullptr, {}, &quarantine);
    FAIL() << "committed into a quarantine it cannot write";
  } catch (const git::GitError& e) {
    EXPECT_THAT(e.what(), HasSubstr(quarantine.path().string())) << e.what();
  }
  fs::permissions(quarantine.path(), fs::perms::owner_all);
  EXPECT_EQ(m.headCommit(wt), base_);
}

TEST_F(WorktreeTest, CheckoutWritesLooseAndPackedBlobsByteForByte) {
  // Several megabytes that inflate in many pieces, loose; then the same packed.
  std::string large;
  for (std::uint64_t i = 0; large.size() < (std::size_t{5} << 20); ++i) large += "line " + std::to_string(i * 7919 % 100003) + "\n";
  writeFile(repo_.root() / "large.txt", large);
  writeFile(repo_.root() / "empty.txt", "");
  repo_.git("add large.txt empty.txt");
  repo_.git("commit -q -m large");
  WorktreeManager m = manager();
  const Worktree loose = m.create("loose", "HEAD", "1");
  EXPECT_EQ(readFile(loose.path / "large.txt"), large);
  EXPECT_EQ(readFile(loose.path / "empty.txt"), "");
  repo_.git("gc -q");
  ASSERT_FALSE(fs::exists(repo_.root() / ".git/objects" / repo_.git("rev-parse HEAD:large.txt").substr(0, 2)));
  const Worktree packed = m.create("packed", "HEAD", "1");
  EXPECT_EQ(readFile(packed.path / "large.txt"), large);
  EXPECT_EQ(gitIn(packed.path, "status --porcelain"), "");
}

TEST_F(WorktreeTest, CommitAllBuildsOnCommitsTheAgentMadeItself) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  writeFile(wt.path / "step1.txt", "1\n");
  gitIn(wt.path, "add step1.txt");
  gitIn(wt.path, "commit -q -m 'agent step 1'");
  const std::string agentCommit = gitIn(wt.path, "rev-parse HEAD");
  writeFile(wt.path / "step2.txt", "2\n");

  const auto id = m.commitAll(wt, "hydra: final state");
  ASSERT_TRUE(id);
  EXPECT_EQ(repo_.git("rev-parse " + *id + "^"), agentCommit);
  EXPECT_EQ(repo_.git("rev-parse " + agentCommit + "^"), base_);
}

TEST_F(WorktreeTest, CommitAllRefusesWhenTheWorktreeLeftItsBranch) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("claude", "HEAD", "1");
  gitIn(wt.path, "switch -q -c elsewhere");
  writeFile(wt.path / "new.txt", "x\n");
  EXPECT_THROW(m.commitAll(wt, "msg"), git::GitError);
  EXPECT_EQ(m.headCommit(wt), base_);
  EXPECT_EQ(repo_.git("rev-parse elsewhere"), base_);
}

TEST_F(WorktreeTest, CommitAllRefusesTheMainWorkingTree) {
  WorktreeManager m = manager();
  Worktree forged{"main-tree", "x", repo_.root(), "main", base_, std::nullopt};
  repo_.write("src/a.txt", "user edit\n");
  const std::string indexBefore = readFile(repo_.root() / ".git/index");
  EXPECT_THROW(m.commitAll(forged, "msg"), git::GitError);
  EXPECT_EQ(readFile(repo_.root() / ".git/index"), indexBefore);
  EXPECT_EQ(repo_.git("rev-parse HEAD"), base_);
}

// ---- createMany -------------------------------------------------------------

TEST_F(WorktreeTest, CreateManyMakesEightIndependentWorktrees) {
  const std::vector<std::string> ids{"claude",   "codex", "cursor", "gemini",
                                     "opencode", "aider", "cmd-1",  "cmd_2"};
  WorktreeManager m = manager();
  const auto wts = m.createMany(ids, "main", "1763722800");

  ASSERT_EQ(wts.size(), ids.size());
  std::set<fs::path> paths;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Worktree& wt = wts[i];
    EXPECT_EQ(wt.agentId, ids[i]);
    EXPECT_EQ(wt.name, ids[i] + "-1763722800");
    EXPECT_EQ(wt.baseCommit, base_);
    EXPECT_EQ(readFile(wt.path / "src/b.txt"), "beta\n") << wt.name;
    EXPECT_EQ(gitIn(wt.path, "symbolic-ref --short HEAD"), wt.branch);
    EXPECT_EQ(gitIn(wt.path, "rev-parse HEAD"), base_);
    EXPECT_EQ(gitIn(wt.path, "status --porcelain --untracked-files=all"), "") << wt.name;
    paths.insert(wt.path);
  }
  EXPECT_EQ(paths.size(), ids.size());
  EXPECT_EQ(registeredWorktrees(), 9);
  EXPECT_EQ(lines(hydraBranches()).size(), ids.size());
  EXPECT_EQ(m.list(), sortedByName(wts));
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"), "");
}

TEST_F(WorktreeTest, CreateManyUndoesEverythingWhenOneFailsMidway) {
  // A ref below hydra/gemini-5 makes that branch impossible to create; the
  // branches before it in the list are made first and must be undone.
  repo_.git("branch hydra/gemini-5/old");
  WorktreeManager m = manager();
  EXPECT_THROW(m.createMany({"claude", "codex", "gemini", "opencode"}, "HEAD", "5"), git::GitError);
  EXPECT_EQ(hydraBranches(), "hydra/gemini-5/old");
  EXPECT_EQ(registeredWorktrees(), 1);
  EXPECT_TRUE(workspaceIsEmpty());
  EXPECT_FALSE(fs::exists(repo_.root() / ".git/worktrees/claude-5"));
}

TEST_F(WorktreeTest, CreateManyRejectsARepeatedAgentId) {
  WorktreeManager m = manager();
  EXPECT_THROW(m.createMany({"a", "b", "a"}, "HEAD", "1"), std::invalid_argument);
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_TRUE(m.createMany({}, "HEAD", "1").empty());
}

TEST_F(WorktreeTest, TwoRacesInOneProcessCreateAndRemoveSideBySide) {
  // libgit2 1.5 mistakes another thread's half-made or half-removed worktree
  // for a checkout of the branch at hand; the manager must not let it.
  auto race = [this](const std::string& label) {
    WorktreeManager m = manager();
    for (int round = 0; round < 5; ++round) {
      const auto wts = m.createMany({"a", "b", "c", "d"}, "HEAD", label + std::to_string(round));
      m.removeAll(wts);
    }
  };
  std::exception_ptr errors[2];
  {
    std::jthread first([&] {
      try {
        race("x");
      } catch (...) {
        errors[0] = std::current_exception();
      }
    });
    std::jthread second([&] {
      try {
        race("y");
      } catch (...) {
        errors[1] = std::current_exception();
      }
    });
  }
  for (const std::exception_ptr& error : errors) {
    if (!error) continue;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_EQ(registeredWorktrees(), 1);
  EXPECT_TRUE(workspaceIsEmpty());
}

// ---- prune ------------------------------------------------------------------

TEST_F(WorktreeTest, PruneRemovesDeadWorktreesAndKeepsLiveOnes) {
  WorktreeManager m = manager();
  m.setOwner(deadOwner());
  const auto wts = m.createMany({"a", "b", "c"}, "HEAD", "9");
  const Worktree& live = wts[1];
  const auto removed = m.prune([&](const Worktree& wt) { return wt.name == live.name; });

  EXPECT_EQ(removed, (std::vector<Worktree>{wts[0], wts[2]}));
  EXPECT_EQ(m.list(), std::vector<Worktree>{live});
  EXPECT_FALSE(fs::exists(wts[0].path));
  EXPECT_FALSE(fs::exists(wts[2].path));
  EXPECT_TRUE(fs::exists(live.path / "src/a.txt"));
  EXPECT_EQ(hydraBranches(), live.branch);
  EXPECT_EQ(registeredWorktrees(), 2);
}

TEST_F(WorktreeTest, PruneRemovesADanglingWorktreeWhoseDirectoryIsGone) {
  WorktreeManager m = manager();
  m.setOwner(deadOwner());
  const Worktree wt = m.create("crashed", "HEAD", "1");
  fs::remove_all(wt.path);
  EXPECT_THAT(repo_.git("worktree list --porcelain"), HasSubstr("prunable"));
  EXPECT_EQ(m.list(), std::vector<Worktree>{wt});

  EXPECT_EQ(m.prune([](const Worktree&) { return false; }), std::vector<Worktree>{wt});
  EXPECT_FALSE(fs::exists(admin(wt.name)));
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_EQ(registeredWorktrees(), 1);
  EXPECT_THAT(repo_.git("worktree list --porcelain"), ::testing::Not(HasSubstr("prunable")));
}

TEST_F(WorktreeTest, PruneLeavesEverythingWhenAllAreLive) {
  WorktreeManager m = manager();
  m.setOwner(deadOwner());
  const auto wts = m.createMany({"a", "b"}, "HEAD", "1");
  EXPECT_TRUE(m.prune([](const Worktree&) { return true; }).empty());
  EXPECT_EQ(m.list(), sortedByName(wts));
}

TEST_F(WorktreeTest, EveryWorktreeRecordsItsOwner) {
  WorktreeManager m = manager();
  const Worktree wt = m.create("a", "HEAD", "1");
  EXPECT_EQ(wt.owner, ProcessOwner::self());
  EXPECT_EQ(m.list(), std::vector<Worktree>{wt});
  EXPECT_THAT(readFile(admin(wt.name) / "hydra"), HasSubstr("owner " + toWord(ProcessOwner::self()) + "\n"));
}

// What another hydra runs is never pruned, even when no record names it (a
// race's check and baseline worktrees): only a dead owner's leftovers go.
TEST_F(WorktreeTest, PruneRemovesOnlyWhatADeadOwnerLeft) {
  const ProcessOwner self = ProcessOwner::self();
  const std::string otherHost = self.host + "-elsewhere";
  struct Case {
    std::string agent;
    std::optional<ProcessOwner> owner;
    bool removed;
  };
  const std::vector<Case> cases{
      {"_check-live", self, false},
      {"_check-gone", ProcessOwner{kNoSuchPid, self.startTime, self.host}, true},
      {"_check-reused", deadOwner(), true},
      {"_check-elsewhere", ProcessOwner{kNoSuchPid, 1, otherHost}, false},
      {"_check-legacy", std::nullopt, true},
  };
  std::vector<Worktree> removed, kept;
  for (const Case& c : cases) {
    WorktreeManager m = manager();
    if (c.owner) m.setOwner(*c.owner);
    Worktree wt = m.create(c.agent, "HEAD", "1");
    if (!c.owner) {  // made by a hydra from before owners were recorded
      writeFile(admin(wt.name) / "hydra", "agent " + wt.agentId + "\nbase " + wt.baseCommit + "\nbranch " + wt.branch + "\n");
      wt.owner.reset();
    }
    (c.removed ? removed : kept).push_back(wt);
  }

  WorktreeManager pruner = manager();
  const auto pruned = pruner.prune([](const Worktree&) { return false; });
  EXPECT_EQ(sortedByName(pruned), sortedByName(removed));
  EXPECT_EQ(manager().list(), sortedByName(kept));
  for (const Worktree& wt : removed) EXPECT_FALSE(fs::exists(wt.path)) << wt.name;
  for (const Worktree& wt : kept) EXPECT_TRUE(fs::exists(wt.path / "src/a.txt")) << wt.name;
  EXPECT_EQ(registeredWorktrees(), 1 + static_cast<int>(kept.size()));
}

// A hydra killed inside a registration (under the registry lock) leaves an
// entry git cannot open: the next prune removes it, its directory and its
// branch, unless its owner still runs.
TEST_F(WorktreeTest, PruneRemovesARegistrationADeadHydraLeftHalfMade) {
  WorktreeManager dead = manager();
  dead.setOwner(deadOwner());
  const Worktree half = dead.create("_check-a", "HEAD", "1");
  const Worktree live = manager().create("_check-b", "HEAD", "1");
  for (const Worktree& wt : {half, live}) fs::remove(admin(wt.name) / "commondir");  // as if cut short
  ASSERT_EQ(manager().list(), std::vector<Worktree>{}) << "git cannot open either";

  const auto pruned = manager().prune([](const Worktree&) { return false; });
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_EQ(pruned[0].name, half.name);
  EXPECT_FALSE(fs::exists(admin(half.name)));
  EXPECT_FALSE(fs::exists(half.path));
  EXPECT_EQ(hydraBranches(), live.branch) << "the half-made one's branch is gone";
  EXPECT_TRUE(fs::exists(admin(live.name))) << "a live hydra's entry is left alone";
  EXPECT_TRUE(fs::exists(live.path / "src/a.txt"));
}

// A hydra killed between unregistering a worktree and deleting its branch
// leaves the branch named in a journal in the git directory: the next prune
// deletes it, and the journal goes too.
TEST_F(WorktreeTest, PruneDeletesTheBranchAKilledRemovalHadYetToDelete) {
  const Worktree wt = manager().create("_check-a", "HEAD", "1");
  const fs::path journal = repo_.root() / ".git" / ("hydra-delete-branch-" + wt.name);
  {
    std::ofstream(journal) << wt.branch << "\n";
  }
  manager().remove(wt, /*deleteBranch=*/false);  // killed before the branch went
  ASSERT_EQ(hydraBranches(), wt.branch);
  EXPECT_THAT(manager().prune([](const Worktree&) { return false; }), ::testing::IsEmpty());
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_FALSE(fs::exists(journal));
  // A removal that finishes leaves no journal behind.
  const Worktree other = manager().create("_check-b", "HEAD", "1");
  manager().remove(other);
  EXPECT_EQ(hydraBranches(), "");
  for (const auto& entry : fs::directory_iterator(repo_.root() / ".git")) {
    EXPECT_FALSE(entry.path().filename().string().starts_with("hydra-delete-branch-")) << entry.path();
  }
}

// A hydra killed between creating a worktree's branch and registering the
// worktree leaves the branch named in its creation journal: the next prune
// deletes the branches no registration names (even when branches are kept:
// they hold nothing of an agent's) and leaves a registered one to its
// registration. A live creator's journal is its own.
TEST_F(WorktreeTest, PruneDeletesTheBranchesAKilledCreationMadeBeforeItsWorktrees) {
  const Worktree registered = manager().create("_check-kept", "HEAD", "1");
  repo_.git("branch hydra/_check-a-1 HEAD");
  repo_.git("branch hydra/_check-b-1 HEAD");
  const fs::path git = repo_.root() / ".git";
  const fs::path dead = git / ("hydra-create-branches-" + toWord(deadOwner()) + "-0123456789ab");
  const fs::path live = git / ("hydra-create-branches-" + toWord(ProcessOwner::self()) + "-ba9876543210");
  writeFile(dead, "_check-a-1 hydra/_check-a-1\n" + registered.name + " " + registered.branch + "\n");
  writeFile(live, "_check-b-1 hydra/_check-b-1\n");

  EXPECT_THAT(manager().prune([](const Worktree&) { return true; }, /*deleteBranches=*/false), ::testing::IsEmpty());
  EXPECT_EQ(hydraBranches(), "hydra/_check-b-1\n" + registered.branch);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live)) << "a live creator's journal is left to it";
  EXPECT_TRUE(fs::exists(registered.path / "src/a.txt"));

  // A creation that finishes, or fails and is undone, leaves no journal behind.
  fs::remove(live);
  repo_.git("branch -D hydra/_check-b-1");
  const Worktree other = manager().create("_check-c", "HEAD", "1");
  EXPECT_THROW(manager().create("_check-d", "no-such-commit", "1"), std::exception);
  manager().removeAll({registered, other});
  EXPECT_EQ(hydraBranches(), "");
  for (const auto& entry : fs::directory_iterator(git)) {
    EXPECT_FALSE(entry.path().filename().string().starts_with("hydra-create-branches-")) << entry.path();
  }
}

// A removal retires a registration whole (one rename out of
// .git/worktrees) before deleting its files, so a kill leaves either the
// whole entry or a retired one named for its remover. What a dead remover
// left is deleted by the next prune, a live one's is left to it, and git
// sees neither as a worktree.
TEST_F(WorktreeTest, PruneFinishesTheRegistrationsAKilledRemovalWasDeleting) {
  const fs::path git = repo_.root() / ".git";
  const Worktree a = manager().create("_check-a", "HEAD", "1");
  const Worktree b = manager().create("_check-b", "HEAD", "1");
  fs::create_directory(git / "hydra-removing");
  const fs::path dead = git / "hydra-removing" / (toWord(deadOwner()) + "-0123456789ab");
  const fs::path live = git / "hydra-removing" / (toWord(ProcessOwner::self()) + "-ba9876543210");
  fs::rename(git / "worktrees" / a.name, dead);
  fs::rename(git / "worktrees" / b.name, live);
  fs::remove_all(a.path);
  fs::remove_all(b.path);
  EXPECT_THAT(gitIn(repo_.root(), "worktree list --porcelain"), ::testing::Not(HasSubstr("_check-")));

  manager().prune([](const Worktree&) { return false; });
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live / "HEAD")) << "a live hydra's retirement is its own to finish";
  // Its branches are no longer taken for checked out.
  manager().remove(a);
  manager().remove(b);
  EXPECT_EQ(hydraBranches(), "");

  fs::remove_all(live);
  const Worktree c = manager().create("_check-c", "HEAD", "1");
  manager().remove(c);
  EXPECT_FALSE(fs::exists(git / "hydra-removing")) << "a finished removal leaves nothing in .git";
  EXPECT_TRUE(fs::is_empty(git / "worktrees"));
}

// A hydra killed while it wrote a worktree's branch (its result's commit)
// leaves the ref's lock: removing the worktree later still deletes the branch.
TEST_F(WorktreeTest, RemovingAWorktreeDeletesItsBranchPastTheLockAKilledWriterLeft) {
  const Worktree wt = manager().create("_check-lock", "HEAD", "1");
  const fs::path lock = repo_.root() / ".git" / "refs" / "heads" / (wt.branch + ".lock");
  {
    std::ofstream(lock) << "";
  }
  manager().remove(wt);
  EXPECT_EQ(hydraBranches(), "");
  EXPECT_FALSE(fs::exists(lock));
}

// `hydra cleanup --keep-branches` prunes too: a half-made registration goes,
// its branch (the agent's commits) stays.
TEST_F(WorktreeTest, PruneKeepingBranchesRemovesAHalfMadeRegistrationButNotItsBranch) {
  WorktreeManager dead = manager();
  dead.setOwner(deadOwner());
  const Worktree half = dead.create("_check-a", "HEAD", "1");
  fs::remove(admin(half.name) / "commondir");  // as if cut short
  const auto pruned = manager().prune([](const Worktree&) { return false; }, /*deleteBranches=*/false);
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_FALSE(fs::exists(admin(half.name)));
  EXPECT_FALSE(fs::exists(half.path));
  EXPECT_EQ(hydraBranches(), half.branch);
}

// Metadata cut short (by an older hydra killed while writing it): the
// worktree is known by its HEAD's hydra/* branch, has no owner, and is pruned.
TEST_F(WorktreeTest, PruneRemovesAWorktreeWhoseMetadataWasCutShort) {
  const Worktree wt = manager().create("_baseline", "HEAD", "1");
  writeFile(admin(wt.name) / "hydra", "");
  const auto listed = manager().list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].branch, wt.branch);
  EXPECT_EQ(listed[0].owner, std::nullopt);
  EXPECT_EQ(manager().prune([](const Worktree&) { return false; }).size(), 1u);
  EXPECT_FALSE(fs::exists(wt.path));
  EXPECT_EQ(hydraBranches(), "");
}

// ---- the user's checkout ----------------------------------------------------

TEST_F(WorktreeTest, NeverTouchesTheUsersWorkingTreeIndexOrHead) {
  // A dirty checkout: an unstaged edit, a staged edit and an untracked file.
  repo_.write("src/a.txt", "alpha, edited by the user\n");
  repo_.write("src/b.txt", "beta, staged by the user\n");
  repo_.git("add src/b.txt");
  repo_.write("notes.txt", "untracked notes\n");
  const UserState before = snapshot();
  ASSERT_EQ(before.status, " M src/a.txt\nM  src/b.txt\n?? notes.txt");

  WorktreeManager m = manager();
  m.setOwner(deadOwner());
  const auto wts = m.createMany({"a", "b"}, "HEAD", "1");
  const Worktree c = m.create("c", "main", "1");
  EXPECT_EQ(readFile(wts[0].path / "src/a.txt"), "alpha\n");  // the commit, not the dirty file
  writeFile(wts[0].path / "src/a.txt", "agent a\n");
  fs::remove(wts[1].path / "src/b.txt");
  ASSERT_TRUE(m.commitAll(wts[0], "a"));
  ASSERT_TRUE(m.commitAll(wts[1], "b"));
  m.list();
  m.remove(c);
  m.prune([](const Worktree&) { return false; });

  const UserState after = snapshot();
  EXPECT_EQ(after.head, before.head);
  EXPECT_EQ(after.headRef, before.headRef);
  EXPECT_EQ(after.indexBytes, before.indexBytes);
  EXPECT_EQ(after.indexTime, before.indexTime);
  EXPECT_EQ(after.status, before.status);
  EXPECT_EQ(after.fileA, before.fileA);
  EXPECT_EQ(after.fileB, before.fileB);
  EXPECT_EQ(after.untracked, before.untracked);
}

}  // namespace
}  // namespace hydra::core
