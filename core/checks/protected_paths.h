#pragma once

// Protected paths: the files an agent must not be scored on having changed,
// such as the tests that judge it and the runner's configuration (a conftest.py
// that marks every test passed). hydra.toml's [scoring] protected_paths names
// them with globs; protected_mode says what a change there does:
//   flag     it is shown, and the agent can never be merged automatically;
//   restore  the same, and its checks run with the base versions of those
//            files put back (new test files it added still run).
//
// Globs (docs/configuration.md): paths are relative to the repository root
// with '/' separators. `*` matches within one path segment, `?` one character
// of it, and a `**` segment any number of segments. A pattern without '/'
// matches a name at any depth (like .gitignore); one with '/' is anchored at
// the root (a leading '/' is allowed). A pattern that matches a folder covers
// everything in it, and a trailing '/' matches folders only.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/merge/diff.h"

namespace hydra::core::checks {

// The protected paths when [scoring] protected_paths is not set: the
// configuration of the test runners and linters hydra reads (each a pattern
// that matches nothing in a project of another ecosystem), so that an agent
// cannot change how it is judged unseen:
//   Python   pytest.ini, pyproject.toml, setup.cfg, tox.ini, conftest.py at
//            any depth, .flake8, ruff.toml, .ruff.toml, .pylintrc, mypy.ini
//   Node     package.json, .eslintrc*, eslint.config.*, jest.config.*,
//            vitest.config.*, .mocharc*
//   Rust     Cargo.toml, .cargo/config.toml, clippy.toml
//   Go       go.mod, .golangci.*
//   C/C++    CMakeLists.txt, CTestTestfile.cmake, *.cmake, CTestCustom.cmake
// Test files themselves are not among them: `hydra init` proposes the
// project's test folders on top of these.
const std::vector<std::string>& defaultProtectedPaths();

// The protected paths in force when [scoring] protected_paths is not set:
// defaultProtectedPaths() and the scripts the test and lint commands run
// (build_script.h ties a command to them: `make test` reads the Makefile,
// `./run_tests.sh` is one), which decide what those checks prove: a test
// target turned into `@true` passes every test. The defaults first, each once.
std::vector<std::string> defaultProtectedPathsFor(const std::optional<std::string>& testCommand,
                                                  const std::optional<std::string>& lintCommand);

// Whether `path` (relative, '/'-separated, a file) is covered by `pattern`.
bool matchesProtected(std::string_view pattern, std::string_view path);

// Why `pattern` cannot be a protected path (empty, absolute beyond a leading
// '/', or naming '.' or '..' segments); empty when it can.
std::string protectedPatternProblem(std::string_view pattern);

// The paths of `changes` that `patterns` cover, sorted and unique. A rename
// counts at both its old and its new path.
std::vector<std::string> protectedChanges(const std::vector<merge::FileChange>& changes,
                                          const std::vector<std::string>& patterns);

// Whether `path` is named like a test file of the usual runners: test_*,
// *_test.*, *_tests.*, *.test.*, *.spec.*, *_spec.*, *Test.*, *Tests.*. The
// runners' configuration (conftest.py, pytest.ini, jest.config.js) is not.
bool looksLikeTestFile(std::string_view path);

// Puts the base versions of `paths` (protected files an agent changed) back
// into `checkout`, a checkout of the agent's commit in the repository at
// `repo`: a file the base has is written as the base has it (content and
// mode; a symlink as a symlink); a file the base does not have is removed,
// unless looksLikeTestFile(). Never follows a symlink the agent committed out
// of the checkout: a folder on the way that is not a real folder is replaced
// by one. Returns one line per file for the check's log ("put back
// tests/conftest.py", "removed conftest.py (new, not a test file)",
// "kept tests/test_new.py (new test file)"). Throws on a git or file error.
std::vector<std::string> restoreProtected(const std::filesystem::path& repo, const std::string& baseCommit,
                                          const std::filesystem::path& checkout,
                                          const std::vector<std::string>& paths);

}  // namespace hydra::core::checks
