// Reading test counts from a JUnit XML report ([scoring] junit_report).
//
// JUnit XML has no single schema: pytest writes <testsuites><testsuite>,
// ctest a bare <testsuite>, and others nest suites inside suites, with each
// parent's attributes summing its children's. The <testcase> elements are the
// ground truth, so they are counted when present, each exactly once however
// deep it sits. A report with no <testcase> at all (a summary-only report)
// falls back to the counting attributes of its innermost suites, which never
// count a test twice.
//
// Each <testcase> is also named (TestParse::tests): "classname::name", or the
// name alone when the classname is empty or missing. The classname is kept
// because test names are only unique within it (a Java class, a pytest
// module); "::" is pytest's own separator, and neither a Java class nor a
// Python module name holds it. Reports that repeat the name as the classname
// (ctest: "Ring.StartsEmpty::Ring.StartsEmpty") are named as written, which is
// as stable. A summary-only report names nothing. The limits on names match the
// text parsers' (test_parsers.cpp): at most 100000 names, 1000 bytes each.

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "core/scoring/parsers.h"

namespace hydra::core::scoring {
namespace {

bool named(const pugi::xml_node& node, std::string_view name) { return name == node.name(); }

bool isSuite(const pugi::xml_node& node) {
  return named(node, "testsuite") || named(node, "testsuites");
}

struct Tally {
  long long passed = 0;
  long long failed = 0;
  long long skipped = 0;
  long long testcases = 0;
  std::map<std::string, TestOutcome> tests;
};

std::string testcaseName(const pugi::xml_node& testcase) {
  const std::string classname = testcase.attribute("classname").as_string();
  const std::string name = testcase.attribute("name").as_string();
  return classname.empty() ? name : classname + "::" + name;
}

// ctest marks tests that never ran by a status attribute alone (a disabled
// test has no child element at all).
bool notRunByStatus(const pugi::xml_node& testcase) {
  const std::string_view status = testcase.attribute("status").as_string();
  return status == "disabled" || status == "notrun" || status == "skipped";
}

TestOutcome verdictOf(const pugi::xml_node& testcase) {
  if (testcase.child("failure") || testcase.child("error")) return TestOutcome::Failed;
  if (testcase.child("skipped") || notRunByStatus(testcase)) return TestOutcome::Skipped;
  return TestOutcome::Passed;
}

void countTestcase(const pugi::xml_node& testcase, Tally& tally) {
  ++tally.testcases;
  const TestOutcome outcome = verdictOf(testcase);
  switch (outcome) {
    case TestOutcome::Failed:
      ++tally.failed;
      break;
    case TestOutcome::Skipped:
      ++tally.skipped;
      break;
    case TestOutcome::Passed:
      ++tally.passed;
      break;
  }
  addTest(tally.tests, testcaseName(testcase), outcome);
}

// Counts the <testcase> elements under `suite`, descending through nested
// suites but not into test cases (whose output may quote XML-like text).
void countTestcases(const pugi::xml_node& suite, Tally& tally) {
  for (const pugi::xml_node& child : suite.children()) {
    if (named(child, "testcase")) {
      countTestcase(child, tally);
    } else if (isSuite(child)) {
      countTestcases(child, tally);
    }
  }
}

// A counting attribute such as tests="14"; a missing or malformed value is 0.
long long countAttribute(const pugi::xml_node& suite, const char* name) {
  const char* text = suite.attribute(name).as_string();
  long long value = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || value < 0) return 0;
  return value;
}

void countFromAttributes(const pugi::xml_node& suite, Tally& tally) {
  bool hasNestedSuite = false;
  for (const pugi::xml_node& child : suite.children()) {
    if (isSuite(child)) {
      hasNestedSuite = true;
      countFromAttributes(child, tally);
    }
  }
  if (hasNestedSuite) return;  // its attributes only repeat its children's sums
  const long long tests = countAttribute(suite, "tests");
  const long long failed = countAttribute(suite, "failures") + countAttribute(suite, "errors");
  // "disabled" (ctest, GoogleTest) is part of "tests" but never ran.
  const long long skipped = countAttribute(suite, "skipped") + countAttribute(suite, "disabled");
  tally.failed += failed;
  tally.skipped += skipped;
  tally.passed += std::max(0LL, tests - failed - skipped);
}

int clampCount(long long value) {
  return static_cast<int>(std::clamp<long long>(value, 0, INT_MAX));
}

std::optional<TestParse> fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return std::nullopt;
}

}  // namespace

std::optional<TestParse> parseJUnitReport(const std::filesystem::path& file, std::string* error) {
  try {
    pugi::xml_document document;
    const pugi::xml_parse_result loaded = document.load_file(file.c_str());
    if (loaded.status == pugi::status_file_not_found || loaded.status == pugi::status_io_error) {
      return fail(error, "cannot read JUnit report " + file.string() + ": " + loaded.description());
    }
    if (!loaded) {
      return fail(error, "JUnit report " + file.string() + " is not well-formed XML: " +
                             loaded.description() + " at byte " + std::to_string(loaded.offset));
    }
    const pugi::xml_node root = document.document_element();
    if (!isSuite(root)) {
      return fail(error, "JUnit report " + file.string() + " has root element <" + root.name() +
                             ">, expected <testsuites> or <testsuite>");
    }

    Tally tally;
    countTestcases(root, tally);
    if (tally.testcases == 0) countFromAttributes(root, tally);
    return TestParse{
        TestCounts{clampCount(tally.passed), clampCount(tally.failed), clampCount(tally.skipped)},
        "junit", std::move(tally.tests), {}};
  } catch (const std::exception& e) {
    return fail(error, "cannot read JUnit report " + file.string() + ": " + e.what());
  }
}

}  // namespace hydra::core::scoring
