#pragma once

// Reading test and lint results out of real tools' output.

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/scoring/formulas.h"

namespace hydra::core::scoring {

// The names [scoring] test_format and lint_format accept: one per parser,
// registered with it, plus "exit_code" (judge by the exit code alone) and, for
// tests, "junit" (read `junit_report`).
std::span<const std::string_view> testFormatNames();
std::span<const std::string_view> lintFormatNames();

struct TestParse {
  TestCounts counts;
  std::string format;  // which parser read it: "pytest", "jest", ...
  // Every test the output (or report) names, by a name that is the same from
  // run to run of the same command (pytest's node id
  // "tests/test_login.py::test_ok", GoogleTest's "Suite.Name", ...), with its
  // verdict. Empty when the output names no test. A name seen twice keeps its
  // worst verdict (failed over passed over skipped). It may name fewer tests
  // than `counts` holds (pytest without -v or -rA names only failures): the
  // scoring compares tests by name only where the names cover the counts.
  std::map<std::string, TestOutcome> tests;
  // ctest only: the ctest tests whose framework's own case lines were read
  // (`ctest -V`), so `tests` names their cases. A ctest test named in `tests`
  // without "::" and not listed here was named only whole.
  std::set<std::string> readByCase;
};

// Records `outcome` for the test `name` in `tests`, the one way every parser
// names tests: a name seen twice keeps its worst verdict (failed over passed
// over skipped), a line break in it becomes a space, a name longer than 1000
// bytes is cut (at a UTF-8 character), and past 100,000 names new ones are
// dropped, so hostile output cannot exhaust memory.
void addTest(std::map<std::string, TestOutcome>& tests, std::string_view name, TestOutcome outcome);

// `format` is [scoring] test_format when set ("exit_code" forces the fallback:
// nullopt); otherwise the parser is chosen by what the output looks like.
// nullopt when no parser recognises the output.
std::optional<TestParse> parseTestOutput(std::string_view output, std::optional<std::string_view> format = std::nullopt);

// A JUnit XML report (`junit_report`), read with a real XML parser. nullopt when
// the file is missing or is not a JUnit report; `error` says why.
std::optional<TestParse> parseJUnitReport(const std::filesystem::path& file, std::string* error = nullptr);

struct LintParse {
  LintCounts counts;
  std::string format;  // "gcc", "clang_tidy", "clippy", "eslint", "eslint_json", "ruff", "flake8", "pyflakes", "go_vet"
};

std::optional<LintParse> parseLintOutput(std::string_view output, std::optional<std::string_view> format = std::nullopt);

// The problems a build or lint output names with a file and a line, in the
// shapes of the lint parsers above: `path:line[:col]: error|warning: message`
// (gcc, clang, clang-tidy, rustc's short form), rustc/clippy blocks (a
// severity header, then ` --> path:line:col`), flake8/ruff `path:line:col:
// CODE message`, and eslint's stylish blocks (a path line, then `line:col
// severity message rule`). Each is listed once; notes and lines without a
// severity (go vet's, pytest's tracebacks) are not. At most kMaxFindings, each
// message one line of at most kMaxFindingMessageBytes, valid UTF-8.
inline constexpr std::size_t kMaxFindings = 500;
inline constexpr std::size_t kMaxFindingMessageBytes = 500;
std::vector<Finding> parseFindings(std::string_view output);

}  // namespace hydra::core::scoring
