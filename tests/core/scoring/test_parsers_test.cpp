// The test-output parsers, read against outputs captured from the real runners
// (tests/fixtures/runners: each runner's project, its captures, and
// regenerate.sh, which rebuilds them). Expected counts are the ones the
// projects were written to produce; README.md there lists them per capture.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/scoring/parsers.h"

namespace hydra::core::scoring {

// Lets GoogleTest print counts in failure messages.
void PrintTo(const TestCounts& c, std::ostream* os) {
  *os << "{passed " << c.passed << ", failed " << c.failed << ", skipped " << c.skipped << "}";
}

namespace {

namespace fs = std::filesystem;

const fs::path kRunners = fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "runners";

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string fixture(std::string_view relative) { return readFile(kRunners / relative); }

std::string withCrlf(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

struct Capture {
  std::string file;  // relative to tests/fixtures/runners
  std::string format;
  TestCounts counts;
};

void PrintTo(const Capture& c, std::ostream* os) { *os << c.file; }

// Every capture, with the counts its project was written to produce.
const std::vector<Capture>& captures() {
  static const std::vector<Capture> all{
      {"jest/default.txt", "jest", {4, 2, 2}},
      {"jest/verbose.txt", "jest", {4, 2, 2}},
      {"jest/colour.txt", "jest", {4, 2, 2}},
      {"jest/all_pass.txt", "jest", {2, 0, 0}},
      {"vitest/default.txt", "vitest", {5, 1, 2}},
      {"vitest/verbose.txt", "vitest", {5, 1, 2}},
      {"vitest/all_pass.txt", "vitest", {3, 0, 0}},
      {"mocha/spec.txt", "mocha", {3, 3, 1}},
      {"node/tap.txt", "node", {4, 1, 2}},
      {"node/spec.txt", "node", {4, 1, 2}},
      {"cargo/workspace.txt", "cargo", {8, 3, 2}},
      {"cargo/colour.txt", "cargo", {8, 3, 2}},
      {"cargo/fail_fast.txt", "cargo", {3, 1, 1}},
      {"pytest/default.txt", "pytest", {9, 3, 2}},
      {"pytest/quiet.txt", "pytest", {9, 3, 2}},
      {"pytest/colour.txt", "pytest", {9, 3, 2}},
      {"pytest/all_pass.txt", "pytest", {3, 0, 0}},
      {"go/plain.txt", "go", {0, 2, 0}},
      {"go/all_pass.txt", "go", {2, 0, 0}},
      {"go/verbose.txt", "go", {7, 2, 1}},
      {"go/json.txt", "go", {7, 2, 1}},
      {"go/verbose_build_failure.txt", "go", {7, 3, 1}},
      {"go/json_build_failure.txt", "go", {7, 3, 1}},
      {"ctest/default.txt", "ctest", {5, 2, 2}},
      {"ctest/output_on_failure.txt", "ctest", {5, 2, 2}},
      {"gtest/default.txt", "gtest", {8, 2, 2}},
      {"gtest/brief.txt", "gtest", {8, 2, 2}},
      {"gtest/colour_all_pass.txt", "gtest", {6, 0, 0}},
  };
  return all;
}

const std::vector<std::string> kTextFormats{"jest",   "vitest", "mocha", "node", "cargo",
                                            "pytest", "go",     "ctest", "gtest"};

class CaptureTest : public ::testing::TestWithParam<Capture> {};

TEST_P(CaptureTest, DetectsTheRunnerAndReadsItsCounts) {
  const Capture& c = GetParam();
  const auto parsed = parseTestOutput(fixture(c.file));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, c.format);
  EXPECT_EQ(parsed->counts, c.counts);
}

TEST_P(CaptureTest, ReadsTheSameCountsWhenTheFormatIsForced) {
  const Capture& c = GetParam();
  const auto parsed = parseTestOutput(fixture(c.file), c.format);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, c.format);
  EXPECT_EQ(parsed->counts, c.counts);
}

TEST_P(CaptureTest, ReadsTheSameCountsWithCrlfLineEndings) {
  const Capture& c = GetParam();
  const auto parsed = parseTestOutput(withCrlf(fixture(c.file)));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, c.format);
  EXPECT_EQ(parsed->counts, c.counts);
}

TEST_P(CaptureTest, ReadsTheSameCountsAfterCompilerNoise) {
  const Capture& c = GetParam();
  const std::string noise =
      "src/util.c:12:9: warning: unused variable 'tmp' [-Wunused-variable]\n"
      "   12 |     int tmp = 0;\n"
      "      |         ^~~\n"
      "[3/4] Linking CXX executable app\n"
      "npm WARN deprecated inflight@1.0.6: This module is not supported\n";
  const auto parsed = parseTestOutput(noise + fixture(c.file));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, c.format);
  EXPECT_EQ(parsed->counts, c.counts);
}

TEST_P(CaptureTest, ExitCodeFormatNeverParses) {
  EXPECT_FALSE(parseTestOutput(fixture(GetParam().file), "exit_code").has_value());
}

TEST_P(CaptureTest, JunitFormatDoesNotReadTextOutput) {
  EXPECT_FALSE(parseTestOutput(fixture(GetParam().file), "junit").has_value());
}

// A forced format reads only its own runner's summary. The one overlap is by
// design: ctest --output-on-failure re-prints the GoogleTest output of each
// failed test, which the gtest parser, when forced, reads as what it is.
TEST_P(CaptureTest, OtherForcedFormatsFindNothing) {
  const Capture& c = GetParam();
  const std::string text = fixture(c.file);
  for (const std::string& format : kTextFormats) {
    if (format == c.format) continue;
    if (c.file == "ctest/output_on_failure.txt" && format == "gtest") continue;
    EXPECT_FALSE(parseTestOutput(text, format).has_value()) << "forced " << format;
  }
}

TEST_P(CaptureTest, TruncatedOutputNeverThrowsNorGoesNegative) {
  const std::string text = fixture(GetParam().file);
  for (std::size_t cut = 0; cut <= text.size(); cut += 1 + text.size() / 97) {
    std::optional<TestParse> parsed;
    EXPECT_NO_THROW(parsed = parseTestOutput(std::string_view(text).substr(0, cut)));
    if (parsed) {
      EXPECT_GE(parsed->counts.passed, 0);
      EXPECT_GE(parsed->counts.failed, 0);
      EXPECT_GE(parsed->counts.skipped, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RealRunners, CaptureTest, ::testing::ValuesIn(captures()),
                         [](const ::testing::TestParamInfo<Capture>& info) {
                           std::string name;
                           for (char ch : info.param.file) {
                             name += (std::isalnum(static_cast<unsigned char>(ch)) != 0) ? ch : '_';
                           }
                           return name.substr(0, name.size() - 4);  // without "_txt"
                         });

TEST(TestParsersTest, CtestIsReadAsCtestThoughItEmbedsGoogleTestOutput) {
  const std::string text = fixture("ctest/output_on_failure.txt");
  ASSERT_NE(text.find("[==========] 1 test from 1 test suite ran."), std::string::npos);
  const auto forcedGtest = parseTestOutput(text, "gtest");
  ASSERT_TRUE(forcedGtest.has_value());
  EXPECT_EQ(forcedGtest->counts, (TestCounts{0, 1, 0}));  // the one re-printed failing test
  const auto detected = parseTestOutput(text);
  ASSERT_TRUE(detected.has_value());
  EXPECT_EQ(detected->format, "ctest");
}

// Watch modes rerun the suite and print a fresh summary each time.
TEST(TestParsersTest, TheLastSummaryWinsWhenARunnerRanTwice) {
  for (const auto& [first, second] : std::vector<std::pair<std::string, std::string>>{
           {"jest/default.txt", "jest/all_pass.txt"},
           {"jest/all_pass.txt", "jest/colour.txt"},
           {"vitest/default.txt", "vitest/all_pass.txt"},
           {"pytest/default.txt", "pytest/all_pass.txt"},
           {"gtest/default.txt", "gtest/colour_all_pass.txt"},
           {"cargo/workspace.txt", "cargo/fail_fast.txt"},
           {"ctest/default.txt", "ctest/output_on_failure.txt"},
       }) {
    const auto expected = parseTestOutput(fixture(second));
    const auto parsed = parseTestOutput(fixture(first) + fixture(second));
    ASSERT_TRUE(expected.has_value()) << second;
    ASSERT_TRUE(parsed.has_value()) << first << " then " << second;
    EXPECT_EQ(parsed->counts, expected->counts) << first << " then " << second;
  }
}

TEST(TestParsersTest, CargoAddsUpEveryTestBinaryAndTheDocTests) {
  const std::string text = fixture("cargo/workspace.txt");
  // Four binaries (two libs, one integration test) and two doc-test runs.
  int results = 0;
  for (std::size_t at = text.find("test result:"); at != std::string::npos;
       at = text.find("test result:", at + 1)) {
    ++results;
  }
  ASSERT_EQ(results, 5);
  const auto parsed = parseTestOutput(text, "cargo");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{3 + 2 + 1 + 2 + 0, 1 + 0 + 1 + 1 + 0, 1 + 0 + 1 + 0 + 0}));
}

TEST(TestParsersTest, GoCountsSubtestsAtTheLeavesOnly) {
  // TestAdd has three passing subtests; TestDiv one passing and one failing.
  const std::string text =
      "=== RUN   TestAdd\n"
      "--- PASS: TestAdd (0.00s)\n"
      "    --- PASS: TestAdd/a (0.00s)\n"
      "    --- PASS: TestAdd/b (0.00s)\n"
      "    --- PASS: TestAdd/c (0.00s)\n"
      "--- FAIL: TestDiv (0.00s)\n"
      "    --- PASS: TestDiv/exact (0.00s)\n"
      "    --- FAIL: TestDiv/floor (0.00s)\n"
      "--- PASS: TestDivide (0.00s)\n"
      "FAIL\n"
      "FAIL\texample.com/m\t0.01s\n";
  const auto parsed = parseTestOutput(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, "go");
  EXPECT_EQ(parsed->counts, (TestCounts{5, 1, 0}));
}

TEST(TestParsersTest, GoKeepsTestsOfTheSameNameInDifferentPackagesApart) {
  const std::string text =
      "=== RUN   TestParse\n"
      "--- PASS: TestParse (0.00s)\n"
      "PASS\n"
      "ok  \texample.com/a\t0.01s\n"
      "=== RUN   TestParse\n"
      "--- FAIL: TestParse (0.00s)\n"
      "FAIL\n"
      "FAIL\texample.com/b\t0.01s\n";
  const auto parsed = parseTestOutput(text, "go");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{1, 1, 0}));
}

TEST(TestParsersTest, NodeCountsCancelledAsFailedAndTodoAsSkipped) {
  const std::string text =
      "# tests 9\n# suites 1\n# pass 4\n# fail 1\n# cancelled 2\n# skipped 1\n# todo 1\n"
      "# duration_ms 12.5\n";
  const auto parsed = parseTestOutput(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, "node");
  EXPECT_EQ(parsed->counts, (TestCounts{4, 3, 2}));
}

TEST(TestParsersTest, CountsWithThousandsSeparatorsAreRead) {
  const auto jest = parseTestOutput("Tests:       1,024 failed, 12,345 passed, 13,369 total\n");
  ASSERT_TRUE(jest.has_value());
  EXPECT_EQ(jest->counts, (TestCounts{12345, 1024, 0}));

  const auto pytest =
      parseTestOutput("===== 3 failed, 1,234,567 passed in 812.10s (0:13:32) =====\n");
  ASSERT_TRUE(pytest.has_value());
  EXPECT_EQ(pytest->format, "pytest");
  EXPECT_EQ(pytest->counts, (TestCounts{1234567, 3, 0}));
}

TEST(TestParsersTest, HugeCountsSaturateInsteadOfOverflowing) {
  const auto parsed =
      parseTestOutput("Tests:       99999999999999999999 passed, 99999999999999999999 total\n");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts.passed, INT_MAX);

  const auto summed = parseTestOutput(
      "test result: ok. 2147483647 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
      "test result: ok. 2147483647 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n");
  ASSERT_TRUE(summed.has_value());
  EXPECT_EQ(summed->counts.passed, INT_MAX);
}

TEST(TestParsersTest, ProgressRedrawnWithBareCarriageReturnsKeepsTheFinalText) {
  const auto parsed =
      parseTestOutput("Running 3 tests...\rTests:       1 failed, 2 passed, 3 total\r\n");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{2, 1, 0}));
}

TEST(TestParsersTest, UnknownFormatNameParsesNothing) {
  EXPECT_FALSE(parseTestOutput(fixture("jest/default.txt"), "jasmine").has_value());
  EXPECT_FALSE(parseTestOutput(fixture("jest/default.txt"), "").has_value());
}

TEST(TestParsersTest, OutputWithoutASummaryIsNotParsed) {
  EXPECT_FALSE(parseTestOutput("").has_value());
  EXPECT_FALSE(parseTestOutput("\n\n\r\n").has_value());
  EXPECT_FALSE(parseTestOutput("make: *** [Makefile:12: test] Error 1\n").has_value());
  EXPECT_FALSE(parseTestOutput("Tests: many passed\nTests: 3 passed\n").has_value());
  EXPECT_FALSE(parseTestOutput("\x1b[31m\x1b[0m\x1b]8;;http://x\x07\x1b").has_value());
  EXPECT_FALSE(parseTestOutput(std::string("3 passed\0in 1s", 14)).has_value());
  // A crash before the summary: only the per-test lines made it out.
  const std::string gtest = fixture("gtest/default.txt");
  EXPECT_FALSE(parseTestOutput(gtest.substr(0, gtest.find("[==========] 11 tests"))).has_value());
}

TEST(TestParsersTest, RandomBytesNeverThrow) {
  std::mt19937 random(20240611);  // fixed seed: the same bytes every run
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 200; ++round) {
    std::string bytes(1 + round * 37, '\0');
    for (char& b : bytes) b = static_cast<char>(byte(random));
    for (const std::optional<std::string_view> format :
         {std::optional<std::string_view>{}, std::optional<std::string_view>{"go"},
          std::optional<std::string_view>{"gtest"}}) {
      EXPECT_NO_THROW((void)parseTestOutput(bytes, format));
    }
  }
}

TEST(TestParsersTest, AVeryLongLineIsHandled) {
  std::string line(4 << 20, '9');  // 4 MiB of digits, no newline
  EXPECT_NO_THROW((void)parseTestOutput(line));
  line += " passed in 1.00s\n";
  const auto parsed = parseTestOutput(line);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts.passed, INT_MAX);
}

TEST(TestParsersTest, DeeplyNestedJsonLinesAreIgnored) {
  const std::string deep =
      "{\"Action\":" + std::string(100000, '[') + "\n" + fixture("go/json.txt");
  const auto parsed = parseTestOutput(deep);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{7, 2, 1}));
}

// ---------------------------------------------------------------------------
// JUnit XML reports

class JUnitReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hydra-junit-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  fs::path dir_;
};

TEST_F(JUnitReportTest, ReadsPytestReport) {
  std::string error;
  const auto parsed = parseJUnitReport(kRunners / "pytest" / "junit.xml", &error);
  ASSERT_TRUE(parsed.has_value()) << error;
  EXPECT_EQ(parsed->format, "junit");
  // Same as pytest's own summary: xfailed is reported as skipped, xpassed as passed.
  EXPECT_EQ(parsed->counts, (TestCounts{9, 3, 2}));
}

TEST_F(JUnitReportTest, ReadsCtestReportWithDisabledTestsAsSkipped) {
  std::string error;
  const auto parsed = parseJUnitReport(kRunners / "ctest" / "junit.xml", &error);
  ASSERT_TRUE(parsed.has_value()) << error;
  EXPECT_EQ(parsed->counts, (TestCounts{5, 2, 2}));
}

TEST_F(JUnitReportTest, CountsNestedSuitesOnce) {
  const auto path = write("nested.xml", R"(<?xml version="1.0"?>
<testsuites tests="6" failures="2" errors="1" skipped="1">
  <testsuite name="outer" tests="6" failures="2" errors="1" skipped="1">
    <testcase name="a"/>
    <testsuite name="inner" tests="5" failures="2" errors="1" skipped="1">
      <testcase name="b"/>
      <testcase name="c"><failure message="boom"/></testcase>
      <testcase name="d"><failure/></testcase>
      <testcase name="e"><error type="RuntimeError"/></testcase>
      <testcase name="f"><skipped/></testcase>
    </testsuite>
  </testsuite>
</testsuites>)");
  const auto parsed = parseJUnitReport(path);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{2, 3, 1}));
}

TEST_F(JUnitReportTest, FallsBackToTheInnermostSuitesAttributes) {
  const auto path = write("summary.xml", R"(<testsuites tests="17" failures="3">
  <testsuite name="api" tests="10" failures="2" errors="1" skipped="2"/>
  <testsuite name="group" tests="7" failures="1">
    <testsuite name="ui" tests="7" failures="1" disabled="1"/>
  </testsuite>
</testsuites>)");
  const auto parsed = parseJUnitReport(path);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{5 + 5, 3 + 1, 2 + 1}));
}

TEST_F(JUnitReportTest, ReadsABareTestsuiteRoot) {
  const auto path = write("bare.xml", R"(<testsuite name="s" tests="3">
  <testcase name="a"/><testcase name="b"/><testcase name="c"><failure/></testcase>
</testsuite>)");
  const auto parsed = parseJUnitReport(path);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{2, 1, 0}));
}

TEST_F(JUnitReportTest, IgnoresMalformedCountAttributes) {
  const auto path = write("odd.xml", R"(<testsuite tests="lots" failures="-4" skipped="2"/>)");
  const auto parsed = parseJUnitReport(path);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{0, 0, 2}));
}

TEST_F(JUnitReportTest, MalformedXmlIsRejectedWithAReason) {
  const std::string report = readFile(kRunners / "pytest" / "junit.xml");
  const auto path = write("cut.xml", report.substr(0, report.size() / 2));
  std::string error;
  EXPECT_FALSE(parseJUnitReport(path, &error).has_value());
  EXPECT_THAT(error, ::testing::HasSubstr("not well-formed XML"));
  EXPECT_THAT(error, ::testing::HasSubstr("cut.xml"));
}

TEST_F(JUnitReportTest, EmptyFileIsRejectedWithAReason) {
  std::string error;
  EXPECT_FALSE(parseJUnitReport(write("empty.xml", ""), &error).has_value());
  EXPECT_FALSE(error.empty());
}

TEST_F(JUnitReportTest, OtherXmlIsNotAJUnitReport) {
  std::string error;
  EXPECT_FALSE(parseJUnitReport(write("page.xml", "<html><body/></html>"), &error).has_value());
  EXPECT_THAT(error, ::testing::HasSubstr("<html>"));
}

TEST_F(JUnitReportTest, MissingFileIsRejectedWithAReason) {
  std::string error;
  EXPECT_FALSE(parseJUnitReport(dir_ / "absent.xml", &error).has_value());
  EXPECT_THAT(error, ::testing::HasSubstr("cannot read"));
  EXPECT_FALSE(parseJUnitReport(dir_ / "absent.xml").has_value());  // no error sink needed
}

}  // namespace
}  // namespace hydra::core::scoring
