// The lint-output parsers, on outputs captured from the real linters
// (tests/fixtures/linters, where README.md lists the tool versions and why
// each file has the counts expected here).

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "core/scoring/parsers.h"

namespace hydra::core::scoring {
namespace {

std::string fixture(const std::string& relative) {
  const std::string path = std::string(HYDRA_SOURCE_DIR) + "/tests/fixtures/linters/" + relative;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "missing fixture " << path;
    return {};
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// ---------------------------------------------------------------------------
// Every captured output, read with its format named and with no format.

struct Captured {
  const char* file;
  const char* format;    // the lint_format that reads it
  const char* detected;  // what is recognised without lint_format
  int errors;
  int warnings;
};

std::ostream& operator<<(std::ostream& out, const Captured& c) { return out << c.file; }

class CapturedOutputTest : public ::testing::TestWithParam<Captured> {};

TEST_P(CapturedOutputTest, NamedFormatCountsKnownProblems) {
  const Captured& c = GetParam();
  const auto parsed = parseLintOutput(fixture(c.file), c.format);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, c.format);
  EXPECT_EQ(parsed->counts, (LintCounts{c.errors, c.warnings}))
      << "errors " << parsed->counts.errors << ", warnings " << parsed->counts.warnings;
}

TEST_P(CapturedOutputTest, FormatIsRecognisedWithoutBeingNamed) {
  const Captured& c = GetParam();
  const auto parsed = parseLintOutput(fixture(c.file));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, c.detected);
  EXPECT_EQ(parsed->counts, (LintCounts{c.errors, c.warnings}))
      << "errors " << parsed->counts.errors << ", warnings " << parsed->counts.warnings;
}

TEST_P(CapturedOutputTest, WindowsLineEndingsChangeNothing) {
  const Captured& c = GetParam();
  const auto parsed = parseLintOutput(replaceAll(fixture(c.file), "\n", "\r\n"), c.format);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{c.errors, c.warnings}));
}

INSTANTIATE_TEST_SUITE_P(
    Linters, CapturedOutputTest,
    ::testing::Values(
        // gcc: notes, "In function" and "In file included from" lines are not counted.
        Captured{"gcc/warnings.txt", "gcc", "gcc", 0, 3},
        Captured{"gcc/error.txt", "gcc", "gcc", 1, 0},
        // helper.h's warning is printed once per translation unit, counted once.
        Captured{"gcc/twice-included.txt", "gcc", "gcc", 0, 3},
        Captured{"gcc/missing-file.txt", "gcc", "gcc", 1, 0},
        Captured{"gcc/warnings-color.txt", "gcc", "gcc", 0, 3},
        Captured{"clang/warnings.txt", "gcc", "gcc", 0, 3},
        Captured{"clang/error.txt", "gcc", "gcc", 1, 0},
        // clang-tidy's "3 warnings and 1 error generated." is not what it shows.
        Captured{"clang_tidy/warnings.txt", "clang_tidy", "clang_tidy", 0, 2},
        Captured{"clang_tidy/errors.txt", "clang_tidy", "clang_tidy", 1, 2},
        Captured{"clang_tidy/clean.txt", "clang_tidy", "clang_tidy", 0, 0},
        // cargo's "generated 3 warnings" and "could not compile" lines are not counted.
        Captured{"clippy/warnings.txt", "clippy", "clippy", 0, 3},
        Captured{"clippy/errors.txt", "clippy", "clippy", 1, 4},
        Captured{"clippy/warnings-color.txt", "clippy", "clippy", 0, 3},
        Captured{"clippy/warnings-short.txt", "clippy", "clippy", 0, 3},
        Captured{"eslint/stylish.txt", "eslint", "eslint", 2, 3},
        Captured{"eslint/stylish-color.txt", "eslint", "eslint", 2, 3},
        Captured{"eslint/parse-error.txt", "eslint", "eslint", 1, 0},
        Captured{"eslint/json.txt", "eslint_json", "eslint_json", 2, 3},
        Captured{"eslint/parse-error-json.txt", "eslint_json", "eslint_json", 1, 0},
        // F821 (undefined name) and E999 (syntax error) are errors, the rest warnings.
        Captured{"flake8/inventory.txt", "flake8", "flake8", 1, 3},
        Captured{"flake8/all.txt", "flake8", "flake8", 2, 3},
        Captured{"flake8/count-statistics.txt", "flake8", "flake8", 2, 3},
        // pyflakes alone (no codes): an undefined name, an assert that is
        // always true and a syntax error are errors, the rest warnings.
        Captured{"pyflakes/inventory.txt", "pyflakes", "pyflakes", 2, 3},
        Captured{"pyflakes/all.txt", "pyflakes", "pyflakes", 3, 3},
        Captured{"go_vet/findings.txt", "go_vet", "go_vet", 0, 2},
        // broken: 1 type error; syntax: 1 error "(and 1 more errors)".
        Captured{"go_vet/all.txt", "go_vet", "go_vet", 3, 2},
        // Not captured (ruff is not installable here): written in the shapes
        // ruff documents, see tests/fixtures/linters/README.md.
        Captured{"ruff/documented-concise.txt", "ruff", "ruff", 2, 2},
        Captured{"ruff/documented-full.txt", "ruff", "ruff", 2, 1}),
    [](const ::testing::TestParamInfo<Captured>& info) {
      std::string name = info.param.file;
      name = name.substr(0, name.rfind('.'));
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

// ---------------------------------------------------------------------------
// Clean runs, failed runs and formats that do not count.

TEST(LintParsersTest, SilentCleanRunIsZeroProblemsWhenFormatIsNamed) {
  // eslint, flake8, go vet and compilers print nothing when all is well.
  const std::string clean = fixture("eslint/clean.txt");
  ASSERT_TRUE(clean.empty());
  for (const char* format : {"gcc", "clang_tidy", "clippy", "eslint", "ruff", "flake8", "pyflakes", "go_vet"}) {
    const auto parsed = parseLintOutput(clean, format);
    ASSERT_TRUE(parsed.has_value()) << format;
    EXPECT_EQ(parsed->counts, (LintCounts{0, 0})) << format;
  }
}

TEST(LintParsersTest, SilentOutputIsNotRecognisedWithoutFormat) {
  // Nothing to recognise: the exit code decides.
  EXPECT_FALSE(parseLintOutput(fixture("eslint/clean.txt")).has_value());
  EXPECT_FALSE(parseLintOutput("\n  \n").has_value());
}

TEST(LintParsersTest, PyflakesCleanRunIsZeroProblems) {
  // pyflakes prints nothing and exits 0 on a clean file.
  const std::string clean = fixture("pyflakes/clean.txt");
  ASSERT_TRUE(clean.empty());
  const auto parsed = parseLintOutput(clean, "pyflakes");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{0, 0}));
}

// pyflakes exits 1 whenever it finds anything: a base that already has
// findings must not make every agent's lint "failed". Its findings are counted
// and compared with the base's, with no format named.
TEST(LintParsersTest, PyflakesFindingsAreComparedWithTheBaseNotJudgedByItsExitCode) {
  const auto base = parseLintOutput(fixture("pyflakes/inventory.txt"));
  ASSERT_TRUE(base.has_value());
  EXPECT_EQ(lintScore(base->counts, base->counts, /*agentExitedZero=*/false), 100.0);
  const auto worse = parseLintOutput(fixture("pyflakes/all.txt"));
  ASSERT_TRUE(worse.has_value());
  EXPECT_LT(lintScore(worse->counts, base->counts, false), 100.0);
  EXPECT_GT(lintScore(worse->counts, base->counts, false), 0.0);
}

TEST(LintParsersTest, OtherPythonToolsAreNotTakenForPyflakes) {
  // mypy says "error:", pylint and flake8 give codes, pytest's tracebacks have no column.
  for (const char* output : {"calc.py:3: error: Name \"x\" is not defined  [name-defined]\n",
                             "calc.py:1:0: C0114: Missing module docstring (missing-module-docstring)\n",
                             "calc.py:1:1: F401 'os' imported but unused\n",
                             "test_calc.py:12: AssertionError\n"}) {
    const auto parsed = parseLintOutput(output);
    EXPECT_TRUE(!parsed || parsed->format != "pyflakes") << output;
  }
}

TEST(LintParsersTest, EslintJsonNeedsItsReport) {
  // `eslint -f json` always prints an array; nothing at all is a failure.
  EXPECT_FALSE(parseLintOutput("", "eslint_json").has_value());
  const auto empty = parseLintOutput("[]\n", "eslint_json");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->counts, (LintCounts{0, 0}));
}

TEST(LintParsersTest, EslintCrashIsNotReadAsCleanRun) {
  // "Oops! Something went wrong! :(" with exit status 2: no counts, so the
  // exit code scores it.
  const std::string crash = fixture("eslint/config-error.txt");
  EXPECT_FALSE(parseLintOutput(crash, "eslint").has_value());
  EXPECT_FALSE(parseLintOutput(crash, "eslint_json").has_value());
  EXPECT_FALSE(parseLintOutput(crash).has_value());
}

TEST(LintParsersTest, UnrelatedOutputIsNotReadAsCleanRun) {
  // What a lint_command prints when the linter is missing.
  const std::string notFound = "sh: 1: eslint: not found\n";
  for (const char* format : {"gcc", "clang_tidy", "clippy", "eslint", "ruff", "flake8", "pyflakes", "go_vet"})
    EXPECT_FALSE(parseLintOutput(notFound, format).has_value()) << format;
  EXPECT_FALSE(parseLintOutput(notFound).has_value());
}

TEST(LintParsersTest, ExitCodeFormatNeverCounts) {
  EXPECT_FALSE(parseLintOutput(fixture("gcc/warnings.txt"), "exit_code").has_value());
  EXPECT_FALSE(parseLintOutput("", "exit_code").has_value());
}

TEST(LintParsersTest, UnknownFormatIsNotGuessed) {
  EXPECT_FALSE(parseLintOutput(fixture("gcc/warnings.txt"), "pylint").has_value());
}

// ---------------------------------------------------------------------------
// Per-format rules, on the captured outputs.

TEST(GccParserTest, NotesAloneAreNotProblems) {
  // gcc/error.txt without its error line: only the "In function" line and the note are left.
  std::string text = fixture("gcc/error.txt");
  std::string withoutError;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find(": error: ") == std::string::npos) withoutError += line + "\n";
  ASSERT_NE(withoutError.find(": note: "), std::string::npos);
  const auto parsed = parseLintOutput(withoutError, "gcc");
  // Nothing counted, and lines that are not a clean run: not read.
  EXPECT_FALSE(parsed.has_value());
}

TEST(GccParserTest, OutputsOfSeveralCompilerRunsAddUp) {
  // A lint_command that runs the compiler twice, on two files: each run's
  // diagnostics count.
  const auto parsed =
      parseLintOutput(fixture("gcc/warnings.txt") + fixture("clang/error.txt"), "gcc");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{1, 3}));
}

TEST(ClippyParserTest, SummariesAloneAreNotProblems) {
  // Keep only cargo's own lines from clippy/errors.txt: its summaries restate
  // counts and must not be read as diagnostics.
  const std::string summaries =
      "warning: `lintdemo` (lib) generated 4 warnings\n"
      "error: could not compile `lintdemo` (lib) due to 1 previous error; 4 warnings emitted\n";
  ASSERT_NE(fixture("clippy/errors.txt").find(summaries), std::string::npos);
  EXPECT_FALSE(parseLintOutput(summaries, "clippy").has_value());
}

TEST(ClippyParserTest, CargoStatusLinesAloneAreCleanRun) {
  // The first and last lines of clippy/warnings.txt are what a clean run prints.
  const std::string text = fixture("clippy/warnings.txt");
  const std::string clean =
      text.substr(0, text.find('\n') + 1) + text.substr(text.rfind("    Finished"));
  const auto parsed = parseLintOutput(clean, "clippy");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{0, 0}));
}

TEST(ClippyParserTest, SameDiagnosticForTwoTargetsCountsOnce) {
  // `cargo clippy --all-targets` reports a library's warning for the library
  // and again for its test build.
  const std::string text = fixture("clippy/warnings.txt");
  const std::string block =
      text.substr(text.find("warning: unused variable"),
                  text.find("warning: the loop") - text.find("warning: unused variable"));
  const auto parsed = parseLintOutput(text + block, "clippy");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{0, 3}));
}

TEST(EslintParserTest, ProblemLinesCountWhenSummaryIsMissing) {
  std::string text = fixture("eslint/stylish.txt");
  const std::size_t summary = text.find("5 problems");
  ASSERT_NE(summary, std::string::npos);
  text.erase(text.rfind('\n', summary) + 1);
  const auto parsed = parseLintOutput(text, "eslint");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{2, 3}));
}

TEST(EslintParserTest, SummaryWinsWhenOutputHeadWasCut) {
  // A capture that kept only the tail of a long output lost cart.js's lines
  // (1 error, 2 warnings); eslint's summary still has the whole run.
  std::string text = fixture("eslint/stylish.txt");
  const std::size_t secondFile = text.find("\n/", text.find("cart.js"));
  ASSERT_NE(secondFile, std::string::npos);
  text.erase(0, secondFile + 1);
  ASSERT_EQ(text.find("cart.js"), std::string::npos);
  const auto parsed = parseLintOutput(text, "eslint");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{2, 3}));
}

TEST(EslintParserTest, SummariesOfSeveralRunsAddUp) {
  // Two eslint runs in one lint_command (workspaces): 2 + 1 errors, 3 + 0 warnings.
  const auto parsed =
      parseLintOutput(fixture("eslint/stylish.txt") + fixture("eslint/parse-error.txt"), "eslint");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{3, 3}));
}

TEST(EslintJsonParserTest, ReportAfterNpmScriptEchoIsFound) {
  // `npm run lint` prints the script before eslint's report.
  const std::string npmEcho = "\n> fixture@1.0.0 lint\n> eslint -f json src\n\n";
  const auto parsed = parseLintOutput(npmEcho + fixture("eslint/json.txt"));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, "eslint_json");
  EXPECT_EQ(parsed->counts, (LintCounts{2, 3}));
}

TEST(EslintJsonParserTest, TruncatedReportIsNotRead) {
  const std::string text = fixture("eslint/json.txt");
  EXPECT_FALSE(parseLintOutput(text.substr(0, text.size() / 2), "eslint_json").has_value());
}

TEST(EslintJsonParserTest, ArrayWithoutCountsIsNotEslint) {
  EXPECT_FALSE(parseLintOutput(R"([{"file": "a.js", "problems": 3}])", "eslint_json").has_value());
}

TEST(Flake8ParserTest, CountOfCleanRunIsCleanRun) {
  // `flake8 --count` on a clean tree prints just the total.
  const auto parsed = parseLintOutput("0\n", "flake8");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{0, 0}));
  // A total without its lines (`flake8 -qq --count`) cannot be split into
  // errors and warnings: not read.
  EXPECT_FALSE(parseLintOutput("5\n", "flake8").has_value());
}

// ruff's shapes below are written from its documentation (ruff could not be
// installed to capture them).

TEST(RuffParserTest, AllChecksPassedIsRecognisedCleanRun) {
  const auto parsed = parseLintOutput("All checks passed!\n");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, "ruff");
  EXPECT_EQ(parsed->counts, (LintCounts{0, 0}));
}

TEST(RuffParserTest, OlderSyntaxErrorSpellingIsError) {
  // ruff 0.1 to 0.11 wrote "SyntaxError:" where later versions write "invalid-syntax:".
  const auto parsed = parseLintOutput(
      "numbers/broken.py:2:12: SyntaxError: Expected ')', found ':'\n"
      "Found 1 error.\n",
      "ruff");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{1, 0}));
}

TEST(RuffParserTest, SummaryWithoutFindingLinesCountsRemainingAsWarnings) {
  // After --fix, only what remains counts; the codes are unknown, so warnings.
  const auto fixed = parseLintOutput("Found 4 errors (3 fixed, 1 remaining).\n", "ruff");
  ASSERT_TRUE(fixed.has_value());
  EXPECT_EQ(fixed->counts, (LintCounts{0, 1}));
  // ruff's tutorial: everything fixed, nothing left.
  const auto allFixed = parseLintOutput("Found 1 error (1 fixed, 0 remaining).\n", "ruff");
  ASSERT_TRUE(allFixed.has_value());
  EXPECT_EQ(allFixed->counts, (LintCounts{0, 0}));
  const auto statistics = parseLintOutput("Found 3 errors.\n");
  ASSERT_TRUE(statistics.has_value());
  EXPECT_EQ(statistics->format, "ruff");
  EXPECT_EQ(statistics->counts, (LintCounts{0, 3}));
}

TEST(RuffParserTest, MypySummaryIsNotRuffs) {
  // Lines in mypy's shape (mypy is not among the captured tools): no column,
  // and a summary that says more than ruff's. The compiler-style reading
  // counts them, not ruff's summary fallback.
  const std::string mypy =
      "app.py:3: error: Incompatible return value type (got \"int\", expected \"str\")\n"
      "Found 1 error in 1 file (checked 2 source files)\n";
  EXPECT_FALSE(parseLintOutput(mypy, "ruff").has_value());
  const auto detected = parseLintOutput(mypy);
  ASSERT_TRUE(detected.has_value());
  EXPECT_EQ(detected->format, "gcc");
  EXPECT_EQ(detected->counts, (LintCounts{1, 0}));
}

TEST(RuffParserTest, FindingLinesWinOverSummary) {
  // The concise report's 4 lines (2 errors, 2 warnings) are what count, not
  // "Found 4 errors." as 4 of anything.
  const auto parsed = parseLintOutput(fixture("ruff/documented-concise.txt"), "ruff");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts.errors + parsed->counts.warnings, 4);
  EXPECT_EQ(parsed->counts.errors, 2);
}

TEST(GoVetParserTest, TypeErrorsAreErrorsAndFindingsWarnings) {
  const auto parsed = parseLintOutput(fixture("go_vet/all.txt"), "go_vet");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts.errors, 3);    // broken: 1; syntax: 1 "(and 1 more errors)"
  EXPECT_EQ(parsed->counts.warnings, 2);  // self-assignment, Printf verb
}

// ---------------------------------------------------------------------------
// Robustness: parsers read untrusted output and must never throw or crash.

TEST(LintParsersTest, HostileInputNeverThrows) {
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary.push_back(static_cast<char>((i * 131 + 7) % 256));
  const std::string longLine(1 << 20, ':');  // one megabyte, one line
  const std::string digits = "a.c:" + std::string(5000, '9') + ":1: warning: big line\n";
  const std::string deepJson = std::string(100000, '[') + "\n";
  const std::string unterminatedEscapes = "\x1b[31merror\x1b]8;;http://x\x1b";
  const std::string hugeSummary = "Found 99999999999999999999 errors.\n";
  for (const std::string& input : {binary, longLine, digits, deepJson, unterminatedEscapes,
                                   hugeSummary, std::string("\0\0\n", 3)}) {
    EXPECT_NO_THROW((void)parseLintOutput(input));
    for (const char* format :
         {"gcc", "clang_tidy", "clippy", "eslint", "eslint_json", "ruff", "flake8", "pyflakes", "go_vet"})
      EXPECT_NO_THROW((void)parseLintOutput(input, format)) << format;
  }
}

TEST(LintParsersTest, HugeNumbersSaturateInsteadOfOverflowing) {
  const auto parsed = parseLintOutput("Found 99999999999999999999 errors.\n", "ruff");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts.warnings, std::numeric_limits<int>::max());
}

TEST(LintParsersTest, LineNumberTooLargeStillLocatesDiagnostic) {
  const auto parsed =
      parseLintOutput("a.c:" + std::string(40, '9') + ":1: warning: far down\n", "gcc");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (LintCounts{0, 1}));
}

}  // namespace
}  // namespace hydra::core::scoring

// --- findings: the problems an output names at a place ------------------------------------

namespace hydra::core::scoring {
namespace {

TEST(FindingsTest, CompilerLinterAndRustDiagnosticsGiveFileLineColumnSeverityAndMessage) {
  const std::string output =
      "src/cart.c: In function 'total':\n"
      "src/cart.c:12:5: warning: unused variable 'x' [-Wunused-variable]\n"
      "   12 |     int x;\n"
      "      |     ^\n"
      "src/cart.c:20:1: error: expected ';' before '}' token\n"
      "src/cart.c:20:1: note: to match this '{'\n"
      "In file included from src/main.c:2:\n"
      "/usr/include/stdio.h:5:10: fatal error: nothere.h: No such file or directory\n"
      "warning: unused variable: `y`\n"
      " --> src/lib.rs:4:9\n"
      "  |\n"
      "error[E0425]: cannot find value `z` in this scope\n"
      "  --> src/lib.rs:9:13\n"
      "shop/views.py:3:1: F401 'os' imported but unused\n"
      "shop/views.py:7:5: E999 SyntaxError: invalid syntax\n"
      "tests/test_cart.py:14: in test_total\n"
      "cmd/main.go:8:2: fmt.Printf format %d has arg s of wrong type string\n"
      "\x1b[1msrc/cart.c:30:2: \x1b[35mwarning: \x1b[0mcoloured [-Wall]\n";
  std::vector<Finding> found = parseFindings(output);
  ASSERT_EQ(found.size(), 8u);
  EXPECT_EQ(found[0], (Finding{"src/cart.c", 12, 5, "warning", "unused variable 'x' [-Wunused-variable]"}));
  EXPECT_EQ(found[1], (Finding{"src/cart.c", 20, 1, "error", "expected ';' before '}' token"}));
  EXPECT_EQ(found[2], (Finding{"/usr/include/stdio.h", 5, 10, "error", "nothere.h: No such file or directory"}));
  EXPECT_EQ(found[3], (Finding{"src/lib.rs", 4, 9, "warning", "unused variable: `y`"}));
  EXPECT_EQ(found[4], (Finding{"src/lib.rs", 9, 13, "error", "cannot find value `z` in this scope"}));
  EXPECT_EQ(found[5], (Finding{"shop/views.py", 3, 1, "warning", "F401 'os' imported but unused"}));
  EXPECT_EQ(found[6], (Finding{"shop/views.py", 7, 5, "error", "E999 SyntaxError: invalid syntax"}));
  EXPECT_EQ(found[7], (Finding{"src/cart.c", 30, 2, "warning", "coloured [-Wall]"}));
}

TEST(FindingsTest, PyflakesMessagesAndSyntaxErrorsAreFindings) {
  std::vector<Finding> found = parseFindings(fixture("pyflakes/all.txt"));
  ASSERT_EQ(found.size(), 6u);
  EXPECT_EQ(found[0], (Finding{"./inventory.py", 3, 1, "warning", "'os' imported but unused"}));
  EXPECT_EQ(found[4], (Finding{"./inventory.py", 11, 22, "error", "undefined name 'backorders'"}));
  EXPECT_EQ(found[5], (Finding{"./broken.py", 2, 12, "error", "invalid syntax"}));
}

TEST(FindingsTest, EslintStylishBlocksNameTheirFile) {
  const std::string output =
      "\n/work/shop/src/cart.js\n"
      "   3:9   error    'x' is assigned a value but never used  no-unused-vars\n"
      "  10:1   warning  Unexpected console statement            no-console\n"
      "\n"
      "src/util.js\n"
      "  1:15  error  Missing semicolon  semi\n"
      "\n"
      "✖ 3 problems (2 errors, 1 warning)\n";
  std::vector<Finding> found = parseFindings(output);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0], (Finding{"/work/shop/src/cart.js", 3, 9, "error",
                               "'x' is assigned a value but never used  no-unused-vars"}));
  EXPECT_EQ(found[1], (Finding{"/work/shop/src/cart.js", 10, 1, "warning",
                               "Unexpected console statement            no-console"}));
  EXPECT_EQ(found[2], (Finding{"src/util.js", 1, 15, "error", "Missing semicolon  semi"}));
}

TEST(FindingsTest, HostileOutputIsBoundedAndRepeatsAreListedOnce) {
  std::string output;
  for (int i = 0; i < 3; ++i) output += "a.c:1:1: error: the same one\n";
  for (std::size_t i = 0; i < kMaxFindings + 50; ++i) output += "b.c:" + std::to_string(i + 1) + ": warning: w\n";
  std::vector<Finding> found = parseFindings(output);
  ASSERT_EQ(found.size(), kMaxFindings);
  EXPECT_EQ(found[0], (Finding{"a.c", 1, 1, "error", "the same one"}));
  EXPECT_EQ(found[1], (Finding{"b.c", 1, 0, "warning", "w"}));

  // A long message is cut at a character, never inside one.
  std::string message;
  while (message.size() < 2 * kMaxFindingMessageBytes) message += "é";
  std::vector<Finding> cut = parseFindings("x.c:2:3: warning: a" + message + "\n");
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_LE(cut[0].message.size(), kMaxFindingMessageBytes);
  EXPECT_EQ(cut[0].message.size() % 2, 1u) << "'a' then whole two-byte characters";
  // Lines that only look like places give nothing.
  EXPECT_TRUE(parseFindings("note: see x.c:3\n:3:4: error: no path\nx.c:0:1: error: line 0\n").empty());
}

}  // namespace
}  // namespace hydra::core::scoring
