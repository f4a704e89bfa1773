// Protected paths: which changed files the globs cover, and the base versions
// put back into a real checkout of an agent's commit, never through a symlink
// the agent committed.

#include "core/checks/protected_paths.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "core/git/git.h"
#include "core/merge/diff.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::checks {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::readFile;
using testing::TempRepo;

// What the test and lint commands run decides what they prove: `make test`
// with its test target turned into `@true` passes every test.
TEST(DefaultProtectedPathsTest, TheScriptsTheTestAndLintCommandsRunAreProtectedToo) {
  const std::vector<std::string>& defaults = defaultProtectedPaths();
  EXPECT_EQ(defaultProtectedPathsFor(std::nullopt, std::nullopt), defaults);
  // The runner's own configuration is already among the defaults: nothing twice.
  EXPECT_EQ(defaultProtectedPathsFor("npm test", "npx eslint ."), defaults);
  const std::vector<std::string> withScripts = defaultProtectedPathsFor("make test", "./scripts/lint.sh --strict");
  ASSERT_EQ(withScripts.size(), defaults.size() + 5);
  EXPECT_TRUE(std::equal(defaults.begin(), defaults.end(), withScripts.begin()));
  EXPECT_THAT(std::vector<std::string>(withScripts.begin() + static_cast<std::ptrdiff_t>(defaults.size()), withScripts.end()),
              ElementsAre("*.mk", "GNUmakefile", "Makefile", "makefile", "/scripts/lint.sh"));
  const auto covered = [&withScripts](const std::string& path) {
    return std::any_of(withScripts.begin(), withScripts.end(),
                       [&path](const std::string& pattern) { return matchesProtected(pattern, path); });
  };
  EXPECT_TRUE(covered("Makefile"));
  EXPECT_TRUE(covered("scripts/lint.sh"));
  EXPECT_FALSE(covered("other/scripts/lint.sh"));
  EXPECT_FALSE(covered("src/main.c"));
}

TEST(ProtectedGlobTest, APatternWithoutASlashMatchesANameAtAnyDepth) {
  EXPECT_TRUE(matchesProtected("conftest.py", "conftest.py"));
  EXPECT_TRUE(matchesProtected("conftest.py", "tests/unit/conftest.py"));
  EXPECT_FALSE(matchesProtected("conftest.py", "tests/my_conftest.py"));
  EXPECT_TRUE(matchesProtected("*.spec.ts", "web/src/login.spec.ts"));
  EXPECT_FALSE(matchesProtected("*.spec.ts", "web/src/login.ts"));
}

TEST(ProtectedGlobTest, APatternWithASlashIsAnchoredAtTheRoot) {
  EXPECT_TRUE(matchesProtected("tests/conftest.py", "tests/conftest.py"));
  EXPECT_TRUE(matchesProtected("/tests/conftest.py", "tests/conftest.py"));
  EXPECT_FALSE(matchesProtected("tests/conftest.py", "pkg/tests/conftest.py"));
}

TEST(ProtectedGlobTest, AFolderCoversEverythingInIt) {
  EXPECT_TRUE(matchesProtected("tests", "tests/test_login.py"));
  EXPECT_TRUE(matchesProtected("tests/", "tests/unit/test_login.py"));
  EXPECT_TRUE(matchesProtected("tests/**", "tests/unit/test_login.py"));
  EXPECT_TRUE(matchesProtected("tests", "pkg/tests/test_login.py"));  // no slash: any depth
  EXPECT_FALSE(matchesProtected("tests/", "tests"));                  // a file named tests is no folder
  EXPECT_TRUE(matchesProtected("tests", "tests"));
  EXPECT_FALSE(matchesProtected("tests", "tests_old/test_a.py"));
}

TEST(ProtectedGlobTest, DoubleStarSpansAnyNumberOfFolders) {
  EXPECT_TRUE(matchesProtected("**/test_*.py", "test_a.py"));
  EXPECT_TRUE(matchesProtected("**/test_*.py", "a/b/c/test_a.py"));
  EXPECT_TRUE(matchesProtected("src/**/fixtures/*.json", "src/fixtures/a.json"));
  EXPECT_TRUE(matchesProtected("src/**/fixtures/*.json", "src/x/y/fixtures/a.json"));
  EXPECT_FALSE(matchesProtected("src/**/fixtures/*.json", "lib/fixtures/a.json"));
}

TEST(ProtectedGlobTest, StarAndQuestionMarkStayWithinOneSegment) {
  EXPECT_FALSE(matchesProtected("tests/*.py", "tests/unit/test_a.py"));
  EXPECT_TRUE(matchesProtected("tests/test_?.py", "tests/test_a.py"));
  EXPECT_FALSE(matchesProtected("tests/test_?.py", "tests/test_ab.py"));
  EXPECT_TRUE(matchesProtected("jest.config.*", "jest.config.js"));
}

TEST(ProtectedGlobTest, PatternsThatLeaveTheRepositoryAreRefused) {
  EXPECT_THAT(protectedPatternProblem("tests/**"), IsEmpty());
  EXPECT_THAT(protectedPatternProblem("/conftest.py"), IsEmpty());
  EXPECT_THAT(protectedPatternProblem(""), ::testing::HasSubstr("must name something"));
  EXPECT_THAT(protectedPatternProblem("/"), ::testing::HasSubstr("must name something"));
  EXPECT_THAT(protectedPatternProblem("../secrets"), ::testing::HasSubstr("inside the repository"));
  EXPECT_THAT(protectedPatternProblem("tests/./x"), ::testing::HasSubstr("inside the repository"));
  EXPECT_THAT(protectedPatternProblem("//etc/passwd"), ::testing::HasSubstr("relative"));
}

TEST(ProtectedGlobTest, ARenameCountsAtBothPaths) {
  auto change = [](std::string path, std::string status, std::string oldPath = {}) {
    merge::FileChange c;
    c.path = std::move(path);
    c.status = std::move(status);
    c.oldPath = std::move(oldPath);
    return c;
  };
  const std::vector<merge::FileChange> changes{change("src/login.py", "modified"),
                                               change("old_tests/test_login.py", "renamed", "tests/test_login.py"),
                                               change("conftest.py", "added")};
  EXPECT_THAT(protectedChanges(changes, {"tests/", "conftest.py"}),
              ElementsAre("conftest.py", "tests/test_login.py"));
  EXPECT_THAT(protectedChanges(changes, {}), IsEmpty());
}

TEST(ProtectedGlobTest, TestFilesAreToldFromRunnerConfiguration) {
  for (const char* name : {"tests/test_login.py", "login_test.go", "web/login.test.ts", "web/login.spec.js",
                           "spec/login_spec.rb", "src/LoginTest.java", "src/LoginTests.cs"}) {
    EXPECT_TRUE(looksLikeTestFile(name)) << name;
  }
  for (const char* name : {"conftest.py", "tests/conftest.py", "pytest.ini", "jest.config.js", "tests/helpers.py"}) {
    EXPECT_FALSE(looksLikeTestFile(name)) << name;
  }
}

class RestoreProtectedTest : public ::testing::Test {
 protected:
  RestoreProtectedTest() {
    repo.isolateLibgit2();
    repo.write("tests/test_login.py", "def test_login():\n    assert login()\n");
    repo.write("tests/conftest.py", "# shared fixtures\n");
    repo.write("run_tests.sh", "#!/bin/sh\npytest\n");
    fs::permissions(repo.root() / "run_tests.sh", fs::perms::owner_exec, fs::perm_options::add);
    base = repo.commit("base");
  }

  // A commit of the agent's changes, checked out in a worktree of its own
  // the way a race checks it.
  std::string agentCommit(const std::function<void()>& change) {
    change();
    return repo.commit("agent");
  }

  fs::path checkoutOf(const std::string& commit) {
    const fs::path path = repo.outside() / ("check-" + commit.substr(0, 8));
    repo.git("worktree add --detach " + testing::shellQuote(path.string()) + " " + commit);
    return path;
  }

  git::LibGit2 libgit2;
  TempRepo repo;
  std::string base;
};

TEST_F(RestoreProtectedTest, PutsBackChangedAndDeletedFilesAndRemovesNewConfiguration) {
  const std::string commit = agentCommit([&] {
    repo.write("tests/conftest.py", "def pytest_runtest_makereport(item, call):\n    pass  # every test passes\n");
    fs::remove(repo.root() / "tests" / "test_login.py");
    repo.write("conftest.py", "# a new conftest at the root\n");
    repo.write("tests/test_logout.py", "def test_logout():\n    assert True\n");
    repo.write("run_tests.sh", "#!/bin/sh\nexit 0\n");
    fs::permissions(repo.root() / "run_tests.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::remove);
  });
  const fs::path checkout = checkoutOf(commit);
  const auto changed = protectedChanges(merge::diffCommits(repo.root(), base, commit).files,
                                        {"tests/", "conftest.py", "run_tests.sh"});
  ASSERT_THAT(changed, ElementsAre("conftest.py", "run_tests.sh", "tests/conftest.py", "tests/test_login.py",
                                   "tests/test_logout.py"));

  const auto done = restoreProtected(repo.root(), base, checkout, changed);

  EXPECT_THAT(done, ElementsAre("removed conftest.py (new, and not a test file)",
                                "put back run_tests.sh as the base commit has it",
                                "put back tests/conftest.py as the base commit has it",
                                "put back tests/test_login.py as the base commit has it",
                                "kept tests/test_logout.py (a new test file)"));
  EXPECT_FALSE(fs::exists(checkout / "conftest.py"));
  EXPECT_EQ(readFile(checkout / "tests" / "conftest.py"), "# shared fixtures\n");
  EXPECT_EQ(readFile(checkout / "tests" / "test_login.py"), "def test_login():\n    assert login()\n");
  EXPECT_EQ(readFile(checkout / "tests" / "test_logout.py"), "def test_logout():\n    assert True\n");
  EXPECT_EQ(readFile(checkout / "run_tests.sh"), "#!/bin/sh\npytest\n");
  struct stat st {};
  ASSERT_EQ(::stat((checkout / "run_tests.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR) << "the base's executable bit is put back too";
}

TEST_F(RestoreProtectedTest, NeverWritesThroughAFolderTheAgentTurnedIntoASymlink) {
  const fs::path elsewhere = repo.outside() / "elsewhere";
  fs::create_directories(elsewhere);
  const std::string commit = agentCommit([&] {
    fs::remove_all(repo.root() / "tests");
    fs::create_directory_symlink(elsewhere, repo.root() / "tests");
  });
  const fs::path checkout = checkoutOf(commit);
  ASSERT_TRUE(fs::is_symlink(checkout / "tests"));
  const auto changed =
      protectedChanges(merge::diffCommits(repo.root(), base, commit).files, {"tests/conftest.py", "tests/test_*.py"});

  restoreProtected(repo.root(), base, checkout, changed);

  EXPECT_FALSE(fs::is_symlink(checkout / "tests"));
  EXPECT_EQ(readFile(checkout / "tests" / "conftest.py"), "# shared fixtures\n");
  EXPECT_TRUE(fs::is_empty(elsewhere)) << "nothing may be written where the symlink pointed";
}

TEST_F(RestoreProtectedTest, NothingChangedNothingDone) {
  const fs::path checkout = checkoutOf(base);
  EXPECT_THAT(restoreProtected(repo.root(), base, checkout, {}), IsEmpty());
}

}  // namespace
}  // namespace hydra::core::checks
