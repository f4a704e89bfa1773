// The test-output parsers, read against outputs captured from the real runners
// (tests/fixtures/runners: each runner's project, its captures, and
// regenerate.sh, which rebuilds them). Expected counts are the ones the
// projects were written to produce; README.md there lists them per capture.
// Expected test names are the projects' tests as each runner prints them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/scoring/parsers.h"
#include "core/scoring/scores.h"

namespace hydra::core::scoring {

// Lets GoogleTest print counts in failure messages.
void PrintTo(const TestCounts& c, std::ostream* os) {
  *os << "{passed " << c.passed << ", failed " << c.failed << ", skipped " << c.skipped << "}";
}

void PrintTo(TestOutcome o, std::ostream* os) {
  *os << (o == TestOutcome::Passed ? "Passed" : o == TestOutcome::Failed ? "Failed" : "Skipped");
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

// Which of the tests it counts a capture names.
enum class Naming {
  kEvery,  // every passed and failed test (some skips may go unnamed)
  kSome,   // only some, e.g. pytest without -v or -rA names the failures
  kNone,   // none: the runner prints no line naming a test unambiguously
};

struct Capture {
  std::string file;  // relative to tests/fixtures/runners
  std::string format;
  TestCounts counts;
  Naming naming;
};

void PrintTo(const Capture& c, std::ostream* os) { *os << c.file; }

// Every capture, with the counts its project was written to produce.
const std::vector<Capture>& captures() {
  static const std::vector<Capture> all{
      {"jest/default.txt", "jest", {4, 2, 2}, Naming::kNone},
      {"jest/verbose.txt", "jest", {4, 2, 2}, Naming::kNone},
      {"jest/colour.txt", "jest", {4, 2, 2}, Naming::kNone},
      {"jest/all_pass.txt", "jest", {2, 0, 0}, Naming::kNone},
      {"vitest/default.txt", "vitest", {5, 1, 2}, Naming::kNone},
      {"vitest/verbose.txt", "vitest", {5, 1, 2}, Naming::kEvery},
      {"vitest/all_pass.txt", "vitest", {3, 0, 0}, Naming::kNone},
      {"mocha/spec.txt", "mocha", {3, 3, 1}, Naming::kNone},
      {"node/tap.txt", "node", {4, 1, 2}, Naming::kEvery},
      {"node/spec.txt", "node", {4, 1, 2}, Naming::kEvery},
      {"cargo/workspace.txt", "cargo", {8, 3, 2}, Naming::kEvery},
      {"cargo/colour.txt", "cargo", {8, 3, 2}, Naming::kEvery},
      {"cargo/fail_fast.txt", "cargo", {3, 1, 1}, Naming::kEvery},
      {"pytest/default.txt", "pytest", {9, 3, 2}, Naming::kSome},
      {"pytest/quiet.txt", "pytest", {9, 3, 2}, Naming::kSome},
      {"pytest/colour.txt", "pytest", {9, 3, 2}, Naming::kSome},
      {"pytest/all_pass.txt", "pytest", {3, 0, 0}, Naming::kSome},
      {"pytest/verbose.txt", "pytest", {9, 3, 2}, Naming::kEvery},
      {"pytest/report_all.txt", "pytest", {9, 3, 2}, Naming::kEvery},
      // An unexpected success fails (unittest reports the run FAILED); an
      // expected failure is skipped.
      {"unittest/verbose.txt", "unittest", {5, 3, 2}, Naming::kEvery},
      {"unittest/default.txt", "unittest", {5, 3, 2}, Naming::kSome},
      {"unittest/all_pass.txt", "unittest", {1, 0, 0}, Naming::kEvery},
      {"go/plain.txt", "go", {0, 2, 0}, Naming::kNone},
      {"go/all_pass.txt", "go", {2, 0, 0}, Naming::kNone},
      {"go/verbose.txt", "go", {7, 2, 1}, Naming::kEvery},
      {"go/json.txt", "go", {7, 2, 1}, Naming::kEvery},
      {"go/verbose_build_failure.txt", "go", {7, 3, 1}, Naming::kEvery},
      {"go/json_build_failure.txt", "go", {7, 3, 1}, Naming::kEvery},
      {"ctest/default.txt", "ctest", {5, 2, 2}, Naming::kEvery},
      {"ctest/output_on_failure.txt", "ctest", {5, 2, 2}, Naming::kEvery},
      // One ctest test per executable: the framework's own names count.
      {"ctest/verbose_gtest.txt", "ctest", {5, 1, 1}, Naming::kEvery},
      {"ctest/verbose_unity.txt", "ctest", {25, 1, 1}, Naming::kEvery},
      // Catch2 v2 and doctest name only their failing cases by default: the
      // executables stay named and counted whole, as ctest has them.
      {"ctest/verbose_catch2_doctest.txt", "ctest", {0, 2, 0}, Naming::kEvery},
      {"ctest/verbose_catch2_doctest_case_deleted.txt", "ctest", {2, 0, 0}, Naming::kEvery},
      {"gtest/default.txt", "gtest", {8, 2, 2}, Naming::kEvery},
      {"gtest/brief.txt", "gtest", {8, 2, 2}, Naming::kSome},
      {"gtest/colour_all_pass.txt", "gtest", {6, 0, 0}, Naming::kEvery},
  };
  return all;
}

const std::vector<std::string> kTextFormats{"jest", "vitest", "mocha", "node",  "cargo",
                                            "pytest", "unittest", "go", "ctest", "gtest"};

using Tests = std::map<std::string, TestOutcome>;
constexpr TestOutcome kPassed = TestOutcome::Passed;
constexpr TestOutcome kFailed = TestOutcome::Failed;
constexpr TestOutcome kSkipped = TestOutcome::Skipped;

// The exact names and verdicts of the captures that name tests. Captures of
// the same run in another shape (colour, --output-on-failure) must match the
// same entry.
const std::map<std::string, Tests>& exactNames() {
  static const Tests pytestFailures{
      {"test_inventory.py::test_remove_never_goes_negative", kFailed},
      {"test_inventory.py::test_remove_unknown_item_raises", kFailed},
      {"test_inventory.py::test_restock_from_warehouse", kFailed},  // ERROR at setup
  };
  static const Tests pytestVerbose{
      {"test_inventory.py::test_new_inventory_is_empty", kPassed},
      {"test_inventory.py::test_add_accumulates", kPassed},
      {"test_inventory.py::test_items_are_sorted", kPassed},
      {"test_inventory.py::test_add_rejects_non_positive_counts[0]", kPassed},
      {"test_inventory.py::test_add_rejects_non_positive_counts[-1]", kPassed},
      {"test_inventory.py::test_remove_never_goes_negative", kFailed},
      {"test_inventory.py::test_remove_unknown_item_raises", kFailed},
      {"test_inventory.py::test_restock_from_warehouse", kFailed},
      {"test_inventory.py::test_reads_legacy_ledger", kSkipped},
      {"test_inventory.py::test_bulk_discount", kSkipped},                 // XFAIL
      {"test_inventory.py::test_count_of_unknown_item_is_zero", kPassed},  // XPASS
      {"test_passing.py::test_count_after_single_add", kPassed},
      {"test_passing.py::test_items_hide_sold_out_lines", kPassed},
      {"test_passing.py::test_add_then_remove_keeps_the_rest", kPassed},
  };
  // -rA lists a skip by file and line, not by node id: it goes unnamed.
  static const Tests pytestReportAll = [] {
    Tests tests = pytestVerbose;
    tests.erase("test_inventory.py::test_reads_legacy_ledger");
    return tests;
  }();
  static const Tests unittestFailures{
      {"tests.test_inventory.InventoryTests.test_remove_never_goes_negative", kFailed},
      {"tests.test_inventory.InventoryTests.test_zero_count_is_rejected", kFailed},  // ERROR
      {"tests.test_inventory.InventoryTests.test_gap_now_closed", kFailed},          // unexpected success
  };
  static const Tests unittestAllPass{
      {"tests.test_inventory.PassingTests.test_items_are_sorted", kPassed},
  };
  static const Tests unittestVerbose = [] {
    Tests tests = unittestFailures;
    tests.insert(unittestAllPass.begin(), unittestAllPass.end());
    for (const char* passed : {"test_new_inventory_is_empty", "test_add_accumulates",
                               "test_key",     // its docstring's line carries the verdict
                               "test_token"})  // what it printed comes before its verdict
      tests.emplace(std::string("tests.test_inventory.InventoryTests.") + passed, kPassed);
    tests.emplace("tests.test_inventory.InventoryTests.test_price", kSkipped);
    tests.emplace("tests.test_inventory.InventoryTests.test_known_gap", kSkipped);  // expected failure
    return tests;
  }();
  static const Tests goLeaves{
      {"example.com/fixture/calc.TestAdd/positive", kPassed},
      {"example.com/fixture/calc.TestAdd/negative", kPassed},
      {"example.com/fixture/calc.TestAdd/zero", kPassed},
      {"example.com/fixture/calc.TestMul", kPassed},
      {"example.com/fixture/calc.TestDiv/exact", kPassed},
      {"example.com/fixture/calc.TestDiv/floors_negatives", kFailed},
      {"example.com/fixture/calc.TestDivByZeroPanics", kSkipped},
      {"example.com/fixture/textutil.TestReverseASCII", kPassed},
      {"example.com/fixture/textutil.TestReverseRunes", kFailed},
      {"example.com/fixture/textutil.TestShout", kPassed},
  };
  static const Tests goBuildFailure = [] {
    Tests tests = goLeaves;
    tests.emplace("example.com/fixture/broken", kFailed);  // a package that did not build
    return tests;
  }();
  static const Tests cargoWorkspace{
      {"tests::area_of_unit_square", kPassed},
      {"tests::area_with_zero_side", kPassed},
      {"tests::distance_of_irrational_length", kSkipped},
      {"tests::distance_is_symmetric", kPassed},
      {"tests::perimeter_of_square", kFailed},
      {"tests::splits_at_the_first_equals_sign", kPassed},
      {"tests::rejects_a_line_without_equals", kPassed},
      {"parses_a_large_file", kSkipped},
      {"trims_the_value", kPassed},
      {"trims_the_key", kFailed},
      {"geometry/src/lib.rs - area (line 5)", kPassed},
      {"geometry/src/lib.rs - distance (line 23)", kPassed},
      {"geometry/src/lib.rs - perimeter (line 14)", kFailed},
  };
  static const Tests ctest{
      {"Ring.StartsEmpty", kPassed},
      {"Ring.PopOfEmptyIsNothing", kPassed},
      {"Ring.RefusesPushWhenFull", kPassed},
      {"Ring.SizeCountsPushes", kPassed},
      {"Ring.PopsInInsertionOrder", kPassed},
      {"Ring.KeepsTheLastSlot", kFailed},
      {"Ring.GrowsOnDemand", kSkipped},
      {"config_file_is_valid", kFailed},
      {"legacy_import", kSkipped},
  };
  // GoogleTest's names inside `ctest -V` of one executable registered whole.
  static const Tests ctestVerboseGtest{
      {"ring_test::Ring.StartsEmpty", kPassed},
      {"ring_test::Ring.PopOfEmptyIsNothing", kPassed},
      {"ring_test::Ring.RefusesPushWhenFull", kPassed},
      {"ring_test::Ring.SizeCountsPushes", kPassed},
      {"ring_test::Ring.PopsInInsertionOrder", kPassed},
      {"ring_test::Ring.KeepsTheLastSlot", kFailed},
      {"ring_test::Ring.GrowsOnDemand", kSkipped},
  };
  // Unity's names inside `ctest -V` of cJSON 1.7.15's own tests.
  static const Tests ctestVerboseUnity{
      {"parse_hex4::parse_hex4_should_parse_all_combinations", kPassed},
      {"parse_hex4::parse_hex4_should_parse_mixed_case", kPassed},
      {"misc_tests::cjson_array_foreach_should_loop_over_arrays", kPassed},
      {"misc_tests::cjson_array_foreach_should_not_dereference_null_pointer", kSkipped},
      {"misc_tests::cjson_get_object_item_should_get_object_items", kFailed},
      {"misc_tests::cjson_get_object_item_case_sensitive_should_get_object_items", kPassed},
      {"misc_tests::cjson_get_object_item_should_not_crash_with_array", kPassed},
      {"misc_tests::cjson_get_object_item_case_sensitive_should_not_crash_with_array", kPassed},
      {"misc_tests::typecheck_functions_should_check_type", kPassed},
      {"misc_tests::cjson_should_not_parse_to_deeply_nested_jsons", kPassed},
      {"misc_tests::cjson_set_number_value_should_set_numbers", kPassed},
      {"misc_tests::cjson_detach_item_via_pointer_should_detach_items", kPassed},
      {"misc_tests::cjson_replace_item_via_pointer_should_replace_items", kPassed},
      {"misc_tests::cjson_replace_item_in_object_should_preserve_name", kPassed},
      {"misc_tests::cjson_functions_should_not_crash_with_null_pointers", kPassed},
      {"misc_tests::ensure_should_fail_on_failed_realloc", kPassed},
      {"misc_tests::skip_utf8_bom_should_skip_bom", kPassed},
      {"misc_tests::skip_utf8_bom_should_not_skip_bom_if_not_at_beginning", kPassed},
      {"misc_tests::cjson_get_string_value_should_get_a_string", kPassed},
      {"misc_tests::cjson_get_number_value_should_get_a_number", kPassed},
      {"misc_tests::cjson_create_string_reference_should_create_a_string_reference", kPassed},
      {"misc_tests::cjson_create_object_reference_should_create_an_object_reference", kPassed},
      {"misc_tests::cjson_create_array_reference_should_create_an_array_reference", kPassed},
      {"misc_tests::cjson_add_item_to_object_or_array_should_not_add_itself", kPassed},
      {"misc_tests::cjson_add_item_to_object_should_not_use_after_free_when_string_is_aliased", kPassed},
      {"misc_tests::cjson_delete_item_from_array_should_not_broken_list_structure", kPassed},
      {"misc_tests::cjson_set_valuestring_to_object_should_not_leak_memory", kPassed},
  };
  static const Tests gtestAllPass{
      {"Capitalize.UppercasesTheFirstLetter", kPassed},
      {"Capitalize.LeavesTheRestAlone", kPassed},
      {"Capitalize.KeepsDigits", kPassed},
      {"Words/VowelTest.CountsVowels/0", kPassed},
      {"Words/VowelTest.CountsVowels/1", kPassed},
      {"Words/VowelTest.CountsVowels/2", kPassed},
  };
  static const Tests gtestFailures{
      {"Palindrome.IgnoresCase", kFailed},
      {"Palindrome.IgnoresSpaces", kFailed},
  };
  static const Tests gtestDefault = [] {
    Tests tests = gtestAllPass;
    tests.insert(gtestFailures.begin(), gtestFailures.end());
    tests.emplace("Palindrome.AcceptsRacecar", kPassed);
    tests.emplace("Palindrome.RejectsHydra", kPassed);
    tests.emplace("Palindrome.DISABLED_HandlesUnicode", kSkipped);
    tests.emplace("Vowels.CountsY", kSkipped);
    return tests;
  }();
  static const Tests node{
      {"toFahrenheit > maps freezing to 32", kPassed},
      {"toFahrenheit > maps boiling to 212", kPassed},
      {"toFahrenheit > meets Celsius at -40", kPassed},
      {"toKelvin > maps absolute zero to 0", kFailed},
      {"toKelvin > is never negative", kSkipped},
      {"rounds to two decimals", kSkipped},  // todo
      {"handles body temperature", kPassed},
  };
  static const std::map<std::string, Tests> all{
      {"pytest/default.txt", pytestFailures},
      {"pytest/quiet.txt", pytestFailures},
      {"pytest/colour.txt", pytestFailures},
      {"pytest/all_pass.txt", {}},
      {"pytest/verbose.txt", pytestVerbose},
      {"pytest/report_all.txt", pytestReportAll},
      {"unittest/verbose.txt", unittestVerbose},
      {"unittest/default.txt", unittestFailures},
      {"unittest/all_pass.txt", unittestAllPass},
      // Counted per package, which names no test.
      {"go/plain.txt", {}},
      {"go/all_pass.txt", {}},
      {"go/verbose.txt", goLeaves},
      {"go/json.txt", goLeaves},
      {"go/verbose_build_failure.txt", goBuildFailure},
      {"go/json_build_failure.txt", goBuildFailure},
      {"cargo/workspace.txt", cargoWorkspace},
      {"cargo/colour.txt", cargoWorkspace},
      {"cargo/fail_fast.txt",
       {{"tests::area_of_unit_square", kPassed},
        {"tests::area_with_zero_side", kPassed},
        {"tests::distance_of_irrational_length", kSkipped},
        {"tests::distance_is_symmetric", kPassed},
        {"tests::perimeter_of_square", kFailed}}},
      {"ctest/default.txt", ctest},
      {"ctest/output_on_failure.txt", ctest},
      {"ctest/verbose_gtest.txt", ctestVerboseGtest},
      {"ctest/verbose_unity.txt", ctestVerboseUnity},
      {"ctest/verbose_catch2_doctest.txt", {{"shelf_catch2", kFailed}, {"shelf_doctest", kFailed}}},
      {"ctest/verbose_catch2_doctest_case_deleted.txt", {{"shelf_catch2", kPassed}, {"shelf_doctest", kPassed}}},
      {"gtest/default.txt", gtestDefault},
      {"gtest/brief.txt", gtestFailures},
      {"gtest/colour_all_pass.txt", gtestAllPass},
      {"node/tap.txt", node},
      {"node/spec.txt", node},
      {"vitest/verbose.txt",
       {{"slug.test.js > slugify > lowercases words", kPassed},
        {"slug.test.js > slugify > drops punctuation at the ends", kPassed},
        {"slug.test.js > slugify > keeps accented letters", kFailed},
        {"slug.test.js > slugify > transliterates Cyrillic", kSkipped},
        {"slug.test.js > slugify > limits the length", kSkipped},
        {"words.test.js > counts nothing in blank text", kPassed},
        {"words.test.js > counts words split by any whitespace", kPassed},
        {"words.test.js > counts a single word", kPassed}}},
  };
  return all;
}

int countOf(const Tests& tests, TestOutcome outcome) {
  int n = 0;
  for (const auto& [name, o] : tests) n += o == outcome ? 1 : 0;
  return n;
}

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

TEST_P(CaptureTest, NamesTheTestsItCounts) {
  const Capture& c = GetParam();
  const auto parsed = parseTestOutput(fixture(c.file));
  ASSERT_TRUE(parsed.has_value());
  const Tests& tests = parsed->tests;
  switch (c.naming) {
    case Naming::kEvery:
      EXPECT_EQ(countOf(tests, kPassed), c.counts.passed);
      EXPECT_EQ(countOf(tests, kFailed), c.counts.failed);
      EXPECT_LE(countOf(tests, kSkipped), c.counts.skipped);
      break;
    case Naming::kSome:
      EXPECT_LE(countOf(tests, kPassed), c.counts.passed);
      EXPECT_LE(countOf(tests, kFailed), c.counts.failed);
      EXPECT_LE(countOf(tests, kSkipped), c.counts.skipped);
      break;
    case Naming::kNone:
      EXPECT_THAT(tests, ::testing::IsEmpty());
      break;
  }
  const auto exact = exactNames().find(c.file);
  if (exact != exactNames().end()) {
    EXPECT_EQ(tests, exact->second);
  } else {
    EXPECT_EQ(c.naming, Naming::kNone) << "a capture that names tests needs its exact names";
  }
}

// Line endings, noise before the output and forcing the format change nothing.
TEST_P(CaptureTest, NamesDoNotDependOnHowTheOutputArrived) {
  const Capture& c = GetParam();
  const std::string text = fixture(c.file);
  const auto plain = parseTestOutput(text);
  ASSERT_TRUE(plain.has_value());
  for (const auto& variant :
       {parseTestOutput(withCrlf(text)), parseTestOutput(text, c.format),
        parseTestOutput("[3/4] Linking CXX executable app\n[ RUN      ] Noise.Line\n" + text)}) {
    ASSERT_TRUE(variant.has_value());
    EXPECT_EQ(variant->tests, plain->tests);
  }
}

// Output cut off anywhere names no test the whole output does not, and every
// name is one line.
TEST_P(CaptureTest, TruncatedOutputNamesOnlyTestsOfTheWholeOutput) {
  const Capture& c = GetParam();
  const std::string text = fixture(c.file);
  const auto full = parseTestOutput(text, c.format);
  ASSERT_TRUE(full.has_value());
  for (std::size_t cut = 0; cut <= text.size(); cut += 1 + text.size() / 193) {
    const auto parsed = parseTestOutput(std::string_view(text).substr(0, cut), c.format);
    if (!parsed) continue;
    EXPECT_LE(parsed->tests.size(), full->tests.size()) << "cut at " << cut;
    for (const auto& [name, outcome] : parsed->tests) {
      EXPECT_TRUE(full->tests.contains(name)) << name << " (cut at " << cut << ")";
      EXPECT_EQ(name.find('\n'), std::string::npos);
    }
  }
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
           {"gtest/default.txt", "gtest/brief.txt"},  // the first run's lists name no test
           {"pytest/verbose.txt", "pytest/default.txt"},
           {"unittest/verbose.txt", "unittest/all_pass.txt"},
           {"vitest/verbose.txt", "vitest/all_pass.txt"},
           {"node/spec.txt", "node/spec.txt"},  // the first run's list of failures names no test
           {"node/tap.txt", "node/tap.txt"},
           {"cargo/workspace.txt", "cargo/fail_fast.txt"},
           {"ctest/default.txt", "ctest/output_on_failure.txt"},
       }) {
    const auto expected = parseTestOutput(fixture(second));
    const auto parsed = parseTestOutput(fixture(first) + fixture(second));
    ASSERT_TRUE(expected.has_value()) << second;
    ASSERT_TRUE(parsed.has_value()) << first << " then " << second;
    EXPECT_EQ(parsed->counts, expected->counts) << first << " then " << second;
    EXPECT_EQ(parsed->tests, expected->tests) << first << " then " << second;
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
  EXPECT_EQ(parsed->tests, (Tests{{"example.com/m.TestAdd/a", kPassed},
                                  {"example.com/m.TestAdd/b", kPassed},
                                  {"example.com/m.TestAdd/c", kPassed},
                                  {"example.com/m.TestDiv/exact", kPassed},
                                  {"example.com/m.TestDiv/floor", kFailed},
                                  {"example.com/m.TestDivide", kPassed}}));
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
  EXPECT_EQ(parsed->tests,
            (Tests{{"example.com/a.TestParse", kPassed}, {"example.com/b.TestParse", kFailed}}));
}

// The package line names the tests above it; without one they are counted
// but their package, part of their name, is unknown.
TEST(TestParsersTest, GoNamesNoTestWhosePackageLineIsMissing) {
  const std::string text =
      "=== RUN   TestParse\n"
      "--- PASS: TestParse (0.00s)\n"
      "PASS\n"
      "ok  \texample.com/a\t0.01s\n"
      "=== RUN   TestCut\n"
      "--- PASS: TestCut (0.00s)\n";
  const auto parsed = parseTestOutput(text, "go");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{2, 0, 0}));
  EXPECT_EQ(parsed->tests, (Tests{{"example.com/a.TestParse", kPassed}}));
}

TEST(TestParsersTest, GoJsonNamesStayOnOneLine) {
  const std::string text = R"({"Action":"fail","Package":"example.com/a","Test":"TestOdd\nname"})"
                           "\n"
                           R"({"Action":"fail","Package":"example.com/a"})"
                           "\n";
  const auto parsed = parseTestOutput(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->tests, (Tests{{"example.com/a.TestOdd name", kFailed}}));
}

// A test that passed and then failed in teardown is reported twice.
TEST(TestParsersTest, ANameSeenTwiceKeepsItsWorstVerdict) {
  const std::string text =
      "t.py::test_a PASSED                                    [ 33%]\n"
      "t.py::test_a ERROR                                     [ 33%]\n"
      "t.py::test_b[a b] SKIPPED (no reason)                  [ 66%]\n"
      "t.py::test_c[x-] PASSED                                [100%]\n"
      "=========================== short test summary info ============================\n"
      "ERROR t.py::test_a - RuntimeError: teardown\n"
      "==== 2 passed, 1 skipped, 1 error in 0.01s ====\n";
  const auto parsed = parseTestOutput(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, "pytest");
  EXPECT_EQ(parsed->tests, (Tests{{"t.py::test_a", kFailed},
                                  {"t.py::test_b[a b]", kSkipped},
                                  {"t.py::test_c[x-]", kPassed}}));
}

// Output of ctest with a long test name (the dots shrink to fit it), a
// failing test and one whose executable is missing, which ctest counts as
// failed, unlike a disabled test.
TEST(TestParsersTest, CtestNamesLongNamesAndMissingExecutables) {
  const std::string text =
      "    Start 1: a_very_long_test_name_that_goes_on_and_on_and_on_forever\n"
      "1/3 Test #1: a_very_long_test_name_that_goes_on_and_on_and_on_forever ...   Passed    "
      "0.00 sec\n"
      "    Start 2: short\n"
      "2/3 Test #2: short ......................................................***Failed    "
      "0.00 sec\n"
      "    Start 3: missing\n"
      "Unable to find executable: /nonexistent/bin\n"
      "3/3 Test #3: missing ....................................................***Not Run   "
      "0.00 sec\n"
      "\n"
      "33% tests passed, 2 tests failed out of 3\n";
  const auto parsed = parseTestOutput(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, "ctest");
  EXPECT_EQ(parsed->counts, (TestCounts{1, 2, 0}));
  EXPECT_EQ(parsed->tests,
            (Tests{{"a_very_long_test_name_that_goes_on_and_on_and_on_forever", kPassed},
                   {"short", kFailed},
                   {"missing", kFailed}}));
}

// An executable that crashed after some of its tests passed keeps its own
// failed name beside theirs, so the crash still counts; one whose inner
// test failed is named by that test alone.
TEST(TestParsersTest, CtestVerboseKeepsACrashedExecutableFailed) {
  const std::string text =
      "    Start 1: misc_tests\n"
      "1: Test command: /build/tests/misc_tests\n"
      "1: ../tests/misc_tests.c:650:first_test:PASS\n"
      "1/2 Test #1: misc_tests .......................***Exception: SegFault  0.00 sec\n"
      "    Start 2: parse_tests\n"
      "2: ../tests/parse_tests.c:90:parses_numbers:FAIL: Expected 1 Was 2\n"
      "2: ../tests/parse_tests.c:91:parses_strings:IGNORE\n"
      "2/2 Test #2: parse_tests ......................***Failed    0.00 sec\n"
      "\n"
      "0% tests passed, 2 tests failed out of 2\n";
  const auto parsed = parseTestOutput(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->format, "ctest");
  EXPECT_EQ(parsed->tests, (Tests{{"misc_tests", kFailed},
                                  {"misc_tests::first_test", kPassed},
                                  {"parse_tests::parses_numbers", kFailed},
                                  {"parse_tests::parses_strings", kSkipped}}));
  EXPECT_EQ(parsed->counts, (TestCounts{1, 2, 1}));
}

// The tests check of `ctest --test-dir build -V` that printed `parsed`.
CheckSet ctestChecksOf(const TestParse& parsed, int exitCode) {
  CheckSet checks;
  checks.tests = CheckResult{};
  checks.tests->command = "ctest --test-dir build -V";
  checks.tests->exitCode = exitCode;
  checks.tests->tests = parsed.counts;
  checks.tests->testCases = parsed.tests;
  checks.tests->testsReadByCase.assign(parsed.readByCase.begin(), parsed.readByCase.end());
  checks.tests->format = parsed.format;
  return checks;
}

// Catch2 v2 and doctest print a passing case by no name by default (and read
// no environment variable that would make them), so inside `ctest -V` hydra
// names their executables whole, as ctest does, rather than invent names
// for the cases that passed. The real captures: the base with one failing
// case in each, and the same project after that case was deleted from both
// test files. Read by counts the deletion passes like a fix, so an agent that
// changed protected test files this way is unprovable (tests 0), and one
// whose checks ran the base's files is not.
TEST(TestParsersTest, Catch2AndDoctestInsideCtestAreNamedWholeSoADeletedCaseIsUnprovable) {
  const auto base = parseTestOutput(fixture("ctest/verbose_catch2_doctest.txt"));
  const auto deleted = parseTestOutput(fixture("ctest/verbose_catch2_doctest_case_deleted.txt"));
  ASSERT_TRUE(base.has_value());
  ASSERT_TRUE(deleted.has_value());
  for (const auto* parsed : {&*base, &*deleted}) {
    for (const auto& [name, outcome] : parsed->tests)
      EXPECT_EQ(name.find("::"), std::string::npos) << name << " is a name the output never printed";
  }

  Baseline baseline;
  baseline.commit = "base";
  baseline.checks = ctestChecksOf(*base, 8);
  AgentScore deleter;
  deleter.agentId = deleter.agent = "deleter";
  deleter.durationMs = 100;
  deleter.diff = {2, 0, 12};
  deleter.checks = ctestChecksOf(*deleted, 0);
  deleter.protectedChanges = {"shelf_catch2.cpp", "shelf_doctest.cpp"};
  deleter.protectedMode = "flag";
  ScoringConfig config;
  config.testCommand = "ctest --test-dir build -V";

  auto scores = rankAgents("r", {deleter}, baseline, config);
  ASSERT_EQ(scores.rankings.size(), 1u);
  EXPECT_EQ(scores.rankings[0].breakdown.tests, 0.0);
  EXPECT_THAT(scores.rankings[0].flags, ::testing::Contains(::testing::HasSubstr("tests unprovable")));

  deleter.protectedMode = "restore";
  scores = rankAgents("r", {deleter}, baseline, config);
  EXPECT_EQ(scores.rankings[0].breakdown.tests, 100.0);
  EXPECT_THAT(scores.rankings[0].flags, ::testing::Not(::testing::Contains(::testing::HasSubstr("unprovable"))));
}

// A ctest project that mixes frameworks: under `ctest -V` its GoogleTest
// executable is named by its cases, its Catch2 one only whole. The real
// captures: the base (one failing case in each) and the same project after
// the failing Catch2 case was deleted. The GoogleTest names prove nothing
// about the Catch2 executable, so an agent that changed protected files is
// unprovable for it; a GoogleTest-only project read by its cases is not.
TEST(TestParsersTest, InAMixedCtestProjectAnExecutableNamedOnlyWholeLeavesAChangedTestFileUnprovable) {
  const auto base = parseTestOutput(fixture("ctest/verbose_mixed.txt"));
  const auto deleted = parseTestOutput(fixture("ctest/verbose_mixed_case_deleted.txt"));
  ASSERT_TRUE(base.has_value());
  ASSERT_TRUE(deleted.has_value());
  EXPECT_EQ(base->format, "ctest");
  EXPECT_EQ(base->tests.at("ring_test::Ring.KeepsTheLastSlot"), kFailed);
  EXPECT_EQ(base->tests.at("shelf_catch2"), kFailed);
  EXPECT_EQ(deleted->tests.at("shelf_catch2"), kPassed);
  EXPECT_EQ(base->counts, (TestCounts{5, 2, 1}));
  EXPECT_EQ(deleted->counts, (TestCounts{6, 1, 1}));
  for (const auto* parsed : {&*base, &*deleted}) EXPECT_EQ(parsed->readByCase, std::set<std::string>{"ring_test"});

  Baseline baseline;
  baseline.commit = "base";
  baseline.checks = ctestChecksOf(*base, 8);
  AgentScore deleter;
  deleter.agentId = deleter.agent = "deleter";
  deleter.durationMs = 100;
  deleter.diff = {1, 0, 6};
  deleter.checks = ctestChecksOf(*deleted, 8);
  deleter.protectedChanges = {"shelf_catch2.cpp"};
  deleter.protectedMode = "flag";
  ScoringConfig config;
  config.testCommand = "ctest --test-dir build -V";
  auto scores = rankAgents("r", {deleter}, baseline, config);
  ASSERT_EQ(scores.rankings.size(), 1u);
  EXPECT_EQ(scores.rankings[0].breakdown.tests, 0.0);
  EXPECT_THAT(scores.rankings[0].flags,
              ::testing::Contains(::testing::HasSubstr("tests unprovable: ctest named only whole test executables "
                                                       "(shelf_catch2)")));
  // Read by counts and names alone it would be a fix of shelf_catch2.
  ASSERT_TRUE(scores.rankings[0].testChanges);
  EXPECT_THAT(scores.rankings[0].testChanges->fixed, ::testing::ElementsAre("shelf_catch2"));

  // Without the Catch2 executable (GoogleTest read by its cases on both
  // sides) the same protected change is provable.
  const auto gtestOnly = parseTestOutput(fixture("ctest/verbose_gtest.txt"));
  ASSERT_TRUE(gtestOnly.has_value());
  EXPECT_EQ(gtestOnly->readByCase, std::set<std::string>{"ring_test"});
  baseline.checks = ctestChecksOf(*gtestOnly, 8);
  deleter.checks = ctestChecksOf(*gtestOnly, 8);
  deleter.protectedChanges = {"ring_test.cpp"};
  scores = rankAgents("r", {deleter}, baseline, config);
  EXPECT_THAT(scores.rankings[0].flags, ::testing::Not(::testing::Contains(::testing::HasSubstr("unprovable"))));
  EXPECT_GT(scores.rankings[0].breakdown.tests, 0.0);
}

TEST(TestParsersTest, GtestNamesDropTheParameterValue) {
  const std::string text =
      "[ RUN      ] Ptr/Holder.Holds/0\n"
      "[  FAILED  ] Ptr/Holder.Holds/0, where GetParam() = 0x7ffd5c1e2a40 (0 ms)\n"
      "[==========] 1 test from 1 test suite ran. (0 ms total)\n"
      "[  PASSED  ] 0 tests.\n"
      "[  FAILED  ] 1 test, listed below:\n"
      "[  FAILED  ] Ptr/Holder.Holds/0, where GetParam() = 0x7ffd5c1e2a40\n";
  const auto parsed = parseTestOutput(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->tests, (Tests{{"Ptr/Holder.Holds/0", kFailed}}));
}

// Hostile output cannot make the parser keep unbounded names.
TEST(TestParsersTest, NamesAreCappedInNumberAndLength) {
  std::string many;
  for (int i = 0; i < 100005; ++i) many += "[       OK ] S.T" + std::to_string(i) + " (0 ms)\n";
  many +=
      "[==========] 100005 tests from 1 test suite ran. (1 ms total)\n[  PASSED  ] 100005 tests.\n";
  const auto parsed = parseTestOutput(many);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts.passed, 100005);
  EXPECT_EQ(parsed->tests.size(), 100000U);

  // "S.T" and two-byte characters: byte 1000 falls inside one, so the name
  // stops before it rather than split it.
  std::string accented = "S.T";
  for (int i = 0; i < 3000; ++i) accented += "\xc3\xa9";
  const auto cut = parseTestOutput("[       OK ] " + accented +
                                   " (0 ms)\n[==========] 1 test from 1 test suite ran. (0 ms "
                                   "total)\n[  PASSED  ] 1 test.\n");
  ASSERT_TRUE(cut.has_value());
  ASSERT_EQ(cut->tests.size(), 1U);
  EXPECT_EQ(cut->tests.begin()->first, accented.substr(0, 999));
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

// Real per-test lines with random bytes spliced into them, then a summary
// for every format, so that the name scanners run on the debris.
TEST(TestParsersTest, SplicedCapturesNeverThrowNorNameAcrossLines) {
  std::mt19937 random(20240612);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const Capture& c : captures()) {
    std::string text = fixture(c.file);
    std::uniform_int_distribution<std::size_t> at(0, text.size() - 1);
    for (int i = 0; i < 64; ++i) text[at(random)] = static_cast<char>(byte(random));
    std::optional<TestParse> parsed;
    EXPECT_NO_THROW(parsed = parseTestOutput(text, c.format)) << c.file;
    if (!parsed) continue;
    for (const auto& [name, outcome] : parsed->tests) {
      EXPECT_EQ(name.find('\n'), std::string::npos) << c.file;
      EXPECT_LE(name.size(), 1000U) << c.file;
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
  // Every test case, named "classname::name".
  EXPECT_EQ(countOf(parsed->tests, kPassed), 9);
  EXPECT_EQ(countOf(parsed->tests, kFailed), 3);
  EXPECT_EQ(countOf(parsed->tests, kSkipped), 2);
  EXPECT_EQ(parsed->tests.at("test_inventory::test_add_rejects_non_positive_counts[-1]"), kPassed);
  EXPECT_EQ(parsed->tests.at("test_inventory::test_restock_from_warehouse"), kFailed);
  EXPECT_EQ(parsed->tests.at("test_inventory::test_bulk_discount"), kSkipped);
  EXPECT_EQ(parsed->tests.at("test_inventory::test_count_of_unknown_item_is_zero"), kPassed);
  EXPECT_EQ(parsed->tests.at("test_passing::test_count_after_single_add"), kPassed);
}

TEST_F(JUnitReportTest, ReadsCtestReportWithDisabledTestsAsSkipped) {
  std::string error;
  const auto parsed = parseJUnitReport(kRunners / "ctest" / "junit.xml", &error);
  ASSERT_TRUE(parsed.has_value()) << error;
  EXPECT_EQ(parsed->counts, (TestCounts{5, 2, 2}));
  // ctest writes each test's name as its classname too.
  EXPECT_EQ(parsed->tests.size(), 9U);
  EXPECT_EQ(parsed->tests.at("Ring.StartsEmpty::Ring.StartsEmpty"), kPassed);
  EXPECT_EQ(parsed->tests.at("Ring.KeepsTheLastSlot::Ring.KeepsTheLastSlot"), kFailed);
  EXPECT_EQ(parsed->tests.at("Ring.GrowsOnDemand::Ring.GrowsOnDemand"), kSkipped);
  EXPECT_EQ(parsed->tests.at("legacy_import::legacy_import"), kSkipped);
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
  EXPECT_EQ(parsed->tests, (Tests{{"a", kPassed},
                                  {"b", kPassed},
                                  {"c", kFailed},
                                  {"d", kFailed},
                                  {"e", kFailed},
                                  {"f", kSkipped}}));
}

TEST_F(JUnitReportTest, NamesTestCasesByClassnameAndName) {
  const auto path = write("names.xml", R"(<testsuite name="s" tests="6">
  <testcase classname="pkg.LoginTest" name="acceptsGoodPassword"/>
  <testcase classname="pkg.SignupTest" name="acceptsGoodPassword"><failure/></testcase>
  <testcase classname="" name="bare"/>
  <testcase name="noClassname"><skipped/></testcase>
  <testcase classname="pkg.Retried" name="flaky"><skipped/></testcase>
  <testcase classname="pkg.Retried" name="flaky"/>
  <testcase classname="pkg.Odd" name="two&#10;lines"/>
</testsuite>)");
  const auto parsed = parseJUnitReport(path);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->counts, (TestCounts{4, 1, 2}));
  // The same test twice keeps its worst verdict: passed over skipped.
  EXPECT_EQ(parsed->tests, (Tests{{"pkg.LoginTest::acceptsGoodPassword", kPassed},
                                  {"pkg.SignupTest::acceptsGoodPassword", kFailed},
                                  {"bare", kPassed},
                                  {"noClassname", kSkipped},
                                  {"pkg.Retried::flaky", kPassed},
                                  {"pkg.Odd::two lines", kPassed}}));
}

TEST_F(JUnitReportTest, LongNamesAreCut) {
  const auto path = write(
      "long.xml", "<testsuite><testcase name=\"" + std::string(5000, 'x') + "\"/></testsuite>");
  const auto parsed = parseJUnitReport(path);
  ASSERT_TRUE(parsed.has_value());
  ASSERT_EQ(parsed->tests.size(), 1U);
  EXPECT_EQ(parsed->tests.begin()->first, std::string(1000, 'x'));
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
  EXPECT_THAT(parsed->tests, ::testing::IsEmpty());  // a summary names no test
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
