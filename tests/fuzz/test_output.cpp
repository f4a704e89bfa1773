// The test-output fuzz target: whatever a test runner (that is, the tests an
// agent wrote) prints or writes as a JUnit report, read by every parser of
// core/scoring, then kept in a check's record: counts never negative, test
// names on one line, valid UTF-8 and bounded, and the record's JSON valid and
// read back the same. The same output read for findings (what a build or lint
// names at a place) keeps to the same rules.

#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/util/utf8.h"
#include "core/scoring/parsers.h"
#include "core/scoring/scores.h"
#include "tests/fuzz/fuzz_checks.h"

namespace hydra::fuzz {

namespace json = boost::json;
namespace fs = std::filesystem;
using core::scoring::TestParse;

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw Failure(what);
}

void checkParse(const TestParse& parse, const std::string& how) {
  const auto& c = parse.counts;
  require(c.passed >= 0 && c.failed >= 0 && c.skipped >= 0, how + ": a negative count");
  require(parse.tests.size() <= 100000, how + ": more than 100000 test names");
  for (const auto& [name, outcome] : parse.tests) {
    require(!name.empty() && name.size() <= 1000, how + ": a test name of " + std::to_string(name.size()) + " bytes");
    require(name.find('\n') == std::string::npos && name.find('\r') == std::string::npos,
            how + ": a test name on more than one line");
    require(core::isValidUtf8(name), how + ": a test name that is not UTF-8");
  }
  // As a check's record keeps it: valid JSON that reads back the same.
  core::scoring::CheckResult check;
  check.command = "tests";
  check.exitCode = 1;
  check.tests = parse.counts;
  check.testCases = parse.tests;
  check.format = parse.format;
  const std::string text = json::serialize(json::value_from(check));
  json::value back;
  try {
    back = json::parse(text);
  } catch (const std::exception& e) {
    throw Failure(how + ": the record is not JSON: " + e.what());
  }
  const auto read = json::value_to<core::scoring::CheckResult>(back);
  require(read.testCases == check.testCases && read.tests == check.tests, how + ": the record reads back otherwise");
}

// A file of its own per process: libFuzzer may run several workers.
fs::path reportFile() {
  static const fs::path file = fs::temp_directory_path() / ("hydra-fuzz-junit-" + std::to_string(::getpid()) + ".xml");
  return file;
}

// The problems a build or lint output names at a place: bounded, each on one
// line, UTF-8, and kept in a check's record as they were found.
void checkFindings(const std::string& printed) {
  const auto findings = core::scoring::parseFindings(printed);
  require(findings.size() <= core::scoring::kMaxFindings, "findings: more than the bound");
  for (const auto& f : findings) {
    require(!f.path.empty() && f.line > 0 && f.column >= 0, "findings: no place");
    require(f.severity == "error" || f.severity == "warning", "findings: severity " + f.severity);
    require(f.message.size() <= core::scoring::kMaxFindingMessageBytes, "findings: a message too long");
    for (const std::string* text : {&f.path, &f.message}) {
      require(text->find('\n') == std::string::npos, "findings: more than one line");
      require(core::isValidUtf8(*text), "findings: not UTF-8");
    }
  }
  core::scoring::CheckResult check;
  check.command = "lint";
  check.exitCode = 1;
  check.findings = findings;
  json::value back;
  try {
    back = json::parse(json::serialize(json::value_from(check)));
  } catch (const std::exception& e) {
    throw Failure(std::string("findings: the record is not JSON: ") + e.what());
  }
  require(json::value_to<core::scoring::CheckResult>(back).findings == findings, "findings: read back otherwise");
}

}  // namespace

void testOutput(std::string_view input) {
  // As printed: lines reach the parsers as core::Process makes them, UTF-8.
  const std::string printed = core::isValidUtf8(input) ? std::string(input) : core::makeValidUtf8(input);
  if (auto parse = core::scoring::parseTestOutput(printed)) checkParse(*parse, "detected " + parse->format);
  checkFindings(printed);
  for (std::string_view format : core::scoring::testFormatNames()) {
    if (auto parse = core::scoring::parseTestOutput(printed, format)) checkParse(*parse, std::string(format));
  }
  // As a report: the bytes as they are, which no one made UTF-8.
  {
    std::ofstream out(reportFile(), std::ios::binary | std::ios::trunc);
    out.write(input.data(), static_cast<std::streamsize>(input.size()));
  }
  if (auto parse = core::scoring::parseJUnitReport(reportFile())) checkParse(*parse, "junit");
}

}  // namespace hydra::fuzz
