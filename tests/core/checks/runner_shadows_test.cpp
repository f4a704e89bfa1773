// Runner shadows: which files an agent added would run in place of the test
// runner, and the module names read from this host's Python folders.

#include "core/checks/runner_shadows.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/checks/protected_paths.h"

namespace hydra::core::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

merge::FileChange change(const std::string& path, const std::string& status = "added") {
  merge::FileChange c;
  c.path = path;
  c.status = status;
  return c;
}

// What a host with pytest installed would list, and the project's own names.
const std::set<std::string> kShadowable = {"pytest", "_pytest",        "iniconfig",
                                           "json",   "more_itertools", "tests"};
const std::set<std::string> kBaseRoot = {"calc.py", "test_calc.py", "more_itertools", ".gitignore"};

TEST(RunnerShadowsTest, ANewTopLevelModuleNamedLikeAnInstalledOneIsAShadow) {
  EXPECT_THAT(runnerShadows({change("pytest.py"), change("iniconfig.py"), change("calc_plugin.py"),
                             change("json.py"), change("calc.py", "modified")},
                            kBaseRoot, kShadowable),
              ElementsAre("iniconfig.py", "json.py", "pytest.py"));
}

TEST(RunnerShadowsTest, APackageAtTheRootShadowsWithEachOfItsFiles) {
  EXPECT_THAT(runnerShadows({change("_pytest/__init__.py"), change("_pytest/runner.py"),
                             change("_pytest/README")},
                            kBaseRoot, kShadowable),
              ElementsAre("_pytest/__init__.py", "_pytest/runner.py"));
}

TEST(RunnerShadowsTest, StartUpHooksAndNodeModulesAreShadowsAnywhere) {
  EXPECT_THAT(
      runnerShadows(
          {change("src/sitecustomize.py"), change("usercustomize.py"), change("lib/evil.pth"),
           change("node_modules/jest/bin/jest.js", "modified"), change("web/node_modules/x.js")},
          kBaseRoot, kShadowable),
      ElementsAre("lib/evil.pth", "node_modules/jest/bin/jest.js", "src/sitecustomize.py",
                  "usercustomize.py", "web/node_modules/x.js"));
}

TEST(RunnerShadowsTest, TheProjectsOwnNamesAndFoldersAreNever) {
  // more_itertools is installed too, but the base has it: it is the project.
  // tests/ is where projects keep tests, even where a package installed one.
  // A module below the root is not top-level; a deleted file loads nothing.
  EXPECT_THAT(runnerShadows({change("more_itertools/more.py"), change("tests/__init__.py"),
                             change("pkg/json.py"), change("pytest.py", "deleted")},
                            kBaseRoot, kShadowable),
              IsEmpty());
}

TEST(RunnerShadowsTest, TheHostsPythonModulesAndTheRunnersAreShadowable) {
  const std::set<std::string>& names = shadowableModules();
  // pytest and what it imports at start-up, wherever Python is.
  for (const char* name : {"pytest", "_pytest", "iniconfig", "pluggy"})
    EXPECT_TRUE(names.contains(name)) << name;
  if (std::filesystem::exists("/usr/lib/python3.11/json/__init__.py")) {
    EXPECT_TRUE(names.contains("json"));
    EXPECT_TRUE(names.contains("os"));
  }
  EXPECT_FALSE(names.contains("calc"));
  EXPECT_FALSE(names.contains("__pycache__"));
}

TEST(DefaultProtectedPathsTest, CoverTheRunnersAndLintersConfiguration) {
  auto covered = [](const std::string& path) {
    for (const std::string& p : defaultProtectedPaths()) {
      if (matchesProtected(p, path)) return true;
    }
    return false;
  };
  for (const char* path :
       {"pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini", "tests/unit/conftest.py", ".flake8",
        "ruff.toml", ".eslintrc.json", "jest.config.ts", "vitest.config.mjs", "package.json",
        "Cargo.toml", "go.mod", "CMakeLists.txt", "tests/CMakeLists.txt", "cmake/Tests.cmake"}) {
    EXPECT_TRUE(covered(path)) << path;
  }
  for (const char* path : {"calc.py", "src/main.rs", "test_calc.py", "README.md"})
    EXPECT_FALSE(covered(path)) << path;
}

}  // namespace
}  // namespace hydra::core::checks
