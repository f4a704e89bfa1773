// Reading pass/fail/skip counts out of what test runners print.
//
// Each parser reads the runner's own end-of-run summary, never the per-test
// lines alone, because only the summary is complete (runners print failures in
// detail but successes tersely or not at all). Where a runner may print several
// summaries the rule is per runner: cargo prints one per test binary and they
// add up; the others print one per run, so in watch mode the last one wins.
//
// Output is matched with small hand-written scanners instead of std::regex:
// libstdc++'s regex recurses per character and can overflow the stack on one
// long line, and test output is untrusted input that must never crash us.

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <climits>
#include <cstddef>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/scoring/parsers.h"

namespace hydra::core::scoring {
namespace {

using Lines = std::vector<std::string_view>;

// ---------------------------------------------------------------------------
// Text preparation

// Skips the escape sequence that starts at `text[i]` (an ESC) and returns the
// index just past it. Handles CSI (colours, cursor moves), OSC (hyperlinks,
// titles) and the two- and three-byte forms such as "ESC ( B", which terminfo's
// sgr0 emits after colours in cargo's output.
std::size_t skipEscape(std::string_view text, std::size_t i) {
  std::size_t j = i + 1;
  if (j >= text.size()) return j;
  const char kind = text[j++];
  if (kind == '[') {
    while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) ++j;
    return std::min(j + 1, text.size());
  }
  if (kind == ']') {
    while (j < text.size()) {
      if (text[j] == '\a') return j + 1;
      if (text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\') return j + 2;
      ++j;
    }
    return j;
  }
  if (kind == '(' || kind == ')' || kind == '*' || kind == '+') return std::min(j + 1, text.size());
  return j;
}

// The output without ANSI escape sequences and with every line ending turned
// into "\n": CRLF from Windows runners, and a bare CR, which progress displays
// use to redraw a line, starts a new line so the final text is kept.
std::string cleanOutput(std::string_view output) {
  std::string clean;
  clean.reserve(output.size());
  for (std::size_t i = 0; i < output.size();) {
    const char c = output[i];
    if (c == '\x1b') {
      i = skipEscape(output, i);
    } else if (c == '\r') {
      clean.push_back('\n');
      i += (i + 1 < output.size() && output[i + 1] == '\n') ? 2 : 1;
    } else {
      clean.push_back(c);
      ++i;
    }
  }
  return clean;
}

Lines splitLines(std::string_view text) {
  Lines lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool consume(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

void skipSpaces(std::string_view& s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
}

int saturatingAdd(int a, int b) {
  const long long sum = static_cast<long long>(a) + b;
  return static_cast<int>(std::clamp<long long>(sum, 0, INT_MAX));
}

// Reads a count at the front of `s`: digits, optionally grouped in threes by
// ',' ("1,234"). Counts too large for an int saturate rather than wrap.
std::optional<int> consumeCount(std::string_view& s) {
  auto digitAt = [&s](std::size_t k) { return k < s.size() && isDigit(s[k]); };
  if (!digitAt(0)) return std::nullopt;
  long long value = 0;
  auto take = [&value, &s](std::size_t k) {
    value = std::min<long long>(value * 10 + (s[k] - '0'), INT_MAX);
  };
  std::size_t i = 0;
  for (; digitAt(i); ++i) take(i);
  // A ',' followed by exactly three digits continues the number; anything
  // else, such as the ", " between list items, ends it.
  while (i < s.size() && s[i] == ',' && digitAt(i + 1) && digitAt(i + 2) && digitAt(i + 3) &&
         !digitAt(i + 4)) {
    for (std::size_t k = i + 1; k <= i + 3; ++k) take(k);
    i += 4;
  }
  s.remove_prefix(i);
  return static_cast<int>(value);
}

// A count that is the whole of `s` (surrounding blanks allowed).
std::optional<int> wholeCount(std::string_view s) {
  s = trim(s);
  const auto count = consumeCount(s);
  if (!count || !s.empty()) return std::nullopt;
  return count;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// "N word" items separated by ',', ';' or '|', as in jest's "2 failed,
// 4 passed, 8 total", vitest's "1 failed | 5 passed (8)" or cargo's "3 passed;
// 1 failed; 0 filtered out". Text after an item's word ("out", "(8)") is
// skipped up to the next separator. Reading stops at the first item that does
// not start with a count. Words are lowercased; repeated words add up.
using CountList = std::map<std::string, int>;

CountList readCountList(std::string_view s) {
  CountList items;
  while (true) {
    skipSpaces(s);
    const auto count = consumeCount(s);
    if (!count) break;
    skipSpaces(s);
    std::size_t wordEnd = 0;
    while (wordEnd < s.size() && isLetter(s[wordEnd])) ++wordEnd;
    if (wordEnd == 0) break;
    int& slot = items[lowercase(s.substr(0, wordEnd))];
    slot = saturatingAdd(slot, *count);
    const std::size_t next = s.find_first_of(",;|", wordEnd);
    if (next == std::string_view::npos) break;
    s.remove_prefix(next + 1);
  }
  return items;
}

int countOf(const CountList& items, std::string_view word) {
  const auto it = items.find(std::string(word));
  return it == items.end() ? 0 : it->second;
}

bool has(const CountList& items, std::string_view word) {
  return items.contains(std::string(word));
}

TestCounts makeCounts(long long passed, long long failed, long long skipped) {
  auto clampCount = [](long long v) {
    return static_cast<int>(std::clamp<long long>(v, 0, INT_MAX));
  };
  return TestCounts{clampCount(passed), clampCount(failed), clampCount(skipped)};
}

// Index of the last line for which `matches` holds.
template <typename Pred>
std::optional<std::size_t> findLast(const Lines& lines, Pred matches) {
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (matches(lines[i])) return i;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// jest: "Tests:       2 failed, 1 skipped, 1 todo, 4 passed, 8 total"

std::optional<CountList> jestSummary(std::string_view line) {
  line = trim(line);
  if (!consume(line, "Tests:")) return std::nullopt;
  CountList items = readCountList(line);
  if (!has(items, "total")) return std::nullopt;
  return items;
}

std::optional<TestCounts> parseJest(const Lines& lines) {
  const auto at = findLast(lines, [](std::string_view l) { return jestSummary(l).has_value(); });
  if (!at) return std::nullopt;
  const CountList items = *jestSummary(lines[*at]);
  return makeCounts(countOf(items, "passed"), countOf(items, "failed"),
                    static_cast<long long>(countOf(items, "skipped")) + countOf(items, "todo"));
}

// ---------------------------------------------------------------------------
// vitest: "      Tests  1 failed | 5 passed | 1 skipped | 1 todo (8)"
// Unlike jest there is no colon, items are split by '|' and the total is in
// parentheses; "Test Files  ..." above it counts files, not tests.

std::optional<CountList> vitestSummary(std::string_view line) {
  line = trim(line);
  if (!consume(line, "Tests") || line.empty() || !isSpace(line.front())) return std::nullopt;
  if (!line.ends_with(")")) return std::nullopt;
  CountList items = readCountList(line);
  if (items.empty()) return std::nullopt;
  for (const auto& [word, count] : items) {
    if (word != "passed" && word != "failed" && word != "skipped" && word != "todo")
      return std::nullopt;
  }
  return items;
}

std::optional<TestCounts> parseVitest(const Lines& lines) {
  const auto at = findLast(lines, [](std::string_view l) { return vitestSummary(l).has_value(); });
  if (!at) return std::nullopt;
  const CountList items = *vitestSummary(lines[*at]);
  return makeCounts(countOf(items, "passed"), countOf(items, "failed"),
                    static_cast<long long>(countOf(items, "skipped")) + countOf(items, "todo"));
}

// ---------------------------------------------------------------------------
// mocha (spec reporter): "  3 passing (8ms)", then "  1 pending" and
// "  3 failing" on the next lines when there are any.

// The count of a line that reads "<count> <word>" plus anything after the word.
std::optional<int> countedLine(std::string_view line, std::string_view word) {
  line = trim(line);
  const auto count = consumeCount(line);
  if (!count || !consume(line, " ") || !consume(line, word)) return std::nullopt;
  if (!line.empty() && !isSpace(line.front())) return std::nullopt;
  return count;
}

std::optional<TestCounts> parseMocha(const Lines& lines) {
  const auto at =
      findLast(lines, [](std::string_view l) { return countedLine(l, "passing").has_value(); });
  if (!at) return std::nullopt;
  TestCounts counts;
  counts.passed = *countedLine(lines[*at], "passing");
  for (std::size_t i = *at + 1; i < lines.size(); ++i) {
    if (const auto pending = countedLine(lines[i], "pending")) {
      counts.skipped = *pending;
    } else if (const auto failing = countedLine(lines[i], "failing")) {
      counts.failed = *failing;
    } else {
      break;
    }
  }
  return counts;
}

// ---------------------------------------------------------------------------
// node --test: a block of "<prefix><key> <count>" lines closes the run, with
// "# " under the TAP reporter (the default when piped) and "ℹ " under spec.

constexpr std::string_view kInfoSign = "\xe2\x84\xb9";  // U+2139 INFORMATION SOURCE

// For a line such as "# pass 4" returns {"pass", 4}; `prefix` is "#" or "ℹ".
std::optional<std::pair<std::string_view, int>> nodeStat(std::string_view line,
                                                         std::string_view prefix) {
  line = trim(line);
  if (!consume(line, prefix) || line.empty() || !isSpace(line.front())) return std::nullopt;
  skipSpaces(line);
  std::size_t keyEnd = 0;
  while (keyEnd < line.size() && (isLetter(line[keyEnd]) || line[keyEnd] == '_')) ++keyEnd;
  if (keyEnd == 0 || keyEnd >= line.size() || !isSpace(line[keyEnd])) return std::nullopt;
  const std::string_view key = line.substr(0, keyEnd);
  line.remove_prefix(keyEnd);
  skipSpaces(line);
  if (key == "duration_ms") return std::pair{key, 0};  // a decimal, not a count
  const auto count = wholeCount(line);
  if (!count) return std::nullopt;
  return std::pair{key, *count};
}

std::optional<TestCounts> parseNode(const Lines& lines) {
  std::optional<std::size_t> at;
  std::string_view prefix;
  for (const std::string_view candidate : {std::string_view("#"), kInfoSign}) {
    const auto found = findLast(lines, [&](std::string_view l) {
      const auto stat = nodeStat(l, candidate);
      return stat && stat->first == "tests";
    });
    if (found && (!at || *found > *at)) {
      at = found;
      prefix = candidate;
    }
  }
  if (!at) return std::nullopt;

  std::map<std::string_view, int> stats;
  for (std::size_t i = *at; i < lines.size(); ++i) {
    const auto stat = nodeStat(lines[i], prefix);
    if (!stat || (i > *at && stat->first == "tests")) break;
    stats[stat->first] = stat->second;
  }
  if (!stats.contains("pass") || !stats.contains("fail")) return std::nullopt;
  // A cancelled test (its parent failed or timed out) did not pass; todo
  // tests run but their result does not count, so they sit with the skipped.
  return makeCounts(stats["pass"], static_cast<long long>(stats["fail"]) + stats["cancelled"],
                    static_cast<long long>(stats["skipped"]) + stats["todo"]);
}

// ---------------------------------------------------------------------------
// cargo: one "test result: ok. 3 passed; 1 failed; 1 ignored; 0 measured;
// 0 filtered out; finished in 0.01s" per test binary and per crate's
// doc-tests. They are summed over the last cargo invocation, which starts
// after cargo's own "Finished `test` profile ..." build line.

std::optional<CountList> cargoResult(std::string_view line) {
  line = trim(line);
  if (!consume(line, "test result: ")) return std::nullopt;
  if (!consume(line, "ok.") && !consume(line, "FAILED.")) return std::nullopt;
  CountList items = readCountList(line);
  if (!has(items, "passed") || !has(items, "failed")) return std::nullopt;
  return items;
}

bool isCargoFinishedLine(std::string_view line) {
  line = trim(line);
  return consume(line, "Finished ") && line.find("target(s) in") != std::string_view::npos;
}

std::optional<TestCounts> parseCargo(const Lines& lines) {
  const auto last = findLast(lines, [](std::string_view l) { return cargoResult(l).has_value(); });
  if (!last) return std::nullopt;
  std::size_t from = 0;
  for (std::size_t i = *last; i-- > 0;) {
    if (isCargoFinishedLine(lines[i])) {
      from = i + 1;
      break;
    }
  }
  long long passed = 0, failed = 0, ignored = 0;
  for (std::size_t i = from; i <= *last; ++i) {
    if (const auto items = cargoResult(lines[i])) {
      passed += countOf(*items, "passed");
      failed += countOf(*items, "failed");
      ignored += countOf(*items, "ignored");
    }
  }
  return makeCounts(passed, failed, ignored);
}

// ---------------------------------------------------------------------------
// pytest: "==== 2 failed, 5 passed, 1 skipped, 1 xfailed, 1 error in 0.04s ===="
// (without the rules under -q), or "no tests ran in 0.01s".

bool isPytestDuration(std::string_view s) {
  // "0.04s", "61.20s (0:01:01)"
  std::size_t i = 0;
  while (i < s.size() && (isDigit(s[i]) || s[i] == '.')) ++i;
  if (i == 0 || i >= s.size() || s[i] != 's') return false;
  const std::string_view rest = trim(s.substr(i + 1));
  return rest.empty() || (rest.front() == '(' && rest.back() == ')');
}

std::optional<CountList> pytestSummary(std::string_view line) {
  line = trim(line);
  while (!line.empty() && line.front() == '=') line.remove_prefix(1);
  while (!line.empty() && line.back() == '=') line.remove_suffix(1);
  line = trim(line);
  const std::size_t in = line.rfind(" in ");
  if (in == std::string_view::npos || !isPytestDuration(line.substr(in + 4))) return std::nullopt;
  const std::string_view tally = line.substr(0, in);
  if (tally == "no tests ran") return CountList{};
  CountList items = readCountList(tally);
  if (items.empty()) return std::nullopt;
  static constexpr std::array<std::string_view, 11> kWords{
      "passed",  "failed",     "error",   "errors",   "skipped", "xfailed",
      "xpassed", "deselected", "warning", "warnings", "rerun"};
  for (const auto& [word, count] : items) {
    if (std::find(kWords.begin(), kWords.end(), word) == kWords.end()) return std::nullopt;
  }
  return items;
}

std::optional<TestCounts> parsePytest(const Lines& lines) {
  const auto at = findLast(lines, [](std::string_view l) { return pytestSummary(l).has_value(); });
  if (!at) return std::nullopt;
  const CountList items = *pytestSummary(lines[*at]);
  // An unexpected pass (xpassed) passed; an expected failure (xfailed) is a
  // known gap, reported like a skip. Errors (in fixtures, collection) fail.
  return makeCounts(static_cast<long long>(countOf(items, "passed")) + countOf(items, "xpassed"),
                    static_cast<long long>(countOf(items, "failed")) + countOf(items, "error") +
                        countOf(items, "errors"),
                    static_cast<long long>(countOf(items, "skipped")) + countOf(items, "xfailed"));
}

// ---------------------------------------------------------------------------
// go test. Three shapes:
//   -json: one event per line; the last pass/fail/skip event of each test counts.
//   -v:    "=== RUN" and "--- PASS|FAIL|SKIP: name (0.00s)" per test, then a
//          package line ("ok  \tpkg\t0.01s" or "FAIL\tpkg\t0.01s").
//   plain: only failing tests are listed, so counts are per package: each
//          "ok" package passed, each "FAIL" package failed.
// Tests are counted at the leaves: a test with subtests stands for them, so a
// failing subtest is not counted twice. A package that failed without any
// failing test to show for it (it did not build, a test panicked, TestMain
// exited) counts as one failure, so breaking a build never looks like fewer tests.

enum class GoStatus { kPass, kFail, kSkip };

struct GoPackage {
  std::map<std::string, GoStatus> tests;
  std::optional<GoStatus> status;  // of the package itself
};

void countGoPackage(const GoPackage& pkg, long long& passed, long long& failed,
                    long long& skipped) {
  std::set<std::string_view> parents;
  for (const auto& [name, status] : pkg.tests) {
    for (std::size_t slash = name.find('/'); slash != std::string::npos;
         slash = name.find('/', slash + 1)) {
      parents.insert(std::string_view(name).substr(0, slash));
    }
  }
  bool anyFailure = false;
  for (const auto& [name, status] : pkg.tests) {
    if (parents.contains(name)) continue;
    switch (status) {
      case GoStatus::kPass:
        ++passed;
        break;
      case GoStatus::kFail:
        ++failed;
        anyFailure = true;
        break;
      case GoStatus::kSkip:
        ++skipped;
        break;
    }
  }
  if (pkg.status == GoStatus::kFail && !anyFailure) ++failed;
}

std::optional<GoStatus> goAction(std::string_view action) {
  if (action == "pass") return GoStatus::kPass;
  if (action == "fail") return GoStatus::kFail;
  if (action == "skip") return GoStatus::kSkip;
  return std::nullopt;
}

struct GoPackageLine {
  GoStatus status;  // kSkip: "[no test files]"
  std::string_view package;
};

// "ok  \tpkg\t0.01s", "FAIL\tpkg\t0.01s", "FAIL\tpkg [build failed]",
// "?   \tpkg\t[no test files]". nullopt for anything else, including the
// bare "FAIL" line that precedes a package's FAIL line.
std::optional<GoPackageLine> goPackageLine(std::string_view line) {
  const std::optional<GoStatus> status = consume(line, "ok")     ? GoStatus::kPass
                                         : consume(line, "FAIL") ? GoStatus::kFail
                                         : consume(line, "?")    ? GoStatus::kSkip
                                                                 : std::optional<GoStatus>();
  if (!status) return std::nullopt;
  while (line.starts_with(' ')) line.remove_prefix(1);
  if (!consume(line, "\t") || line.empty() || isSpace(line.front())) return std::nullopt;
  const std::size_t end = line.find_first_of(" \t");
  return GoPackageLine{*status, line.substr(0, end)};
}

std::optional<TestCounts> parseGoJson(const Lines& lines) {
  std::map<std::string, GoPackage> packages;
  bool sawEvent = false;
  for (std::string_view line : lines) {
    // go test -json still prints a package that fails to build as a plain
    // "FAIL\tpkg [build failed]" line, with no event for it.
    if (const auto text = goPackageLine(line)) {
      if (text->status == GoStatus::kFail)
        packages[std::string(text->package)].status = GoStatus::kFail;
      continue;
    }
    line = trim(line);
    if (!line.starts_with('{')) continue;
    boost::system::error_code ec;
    const boost::json::value event = boost::json::parse(line, ec);
    if (ec || !event.is_object()) continue;
    const auto& object = event.get_object();
    const auto* action = object.if_contains("Action");
    if (!action || !action->is_string()) continue;
    sawEvent = true;
    const auto status = goAction(action->get_string());
    if (!status) continue;
    const auto* package = object.if_contains("Package");
    const auto* test = object.if_contains("Test");
    GoPackage& pkg =
        packages[package && package->is_string() ? std::string(package->get_string()) : ""];
    if (test && test->is_string()) {
      pkg.tests[std::string(test->get_string())] = *status;
    } else {
      pkg.status = *status;
    }
  }
  if (!sawEvent) return std::nullopt;
  long long passed = 0, failed = 0, skipped = 0;
  for (const auto& [name, pkg] : packages) countGoPackage(pkg, passed, failed, skipped);
  return makeCounts(passed, failed, skipped);
}

// "--- PASS: TestAdd/zero (0.00s)", indented for subtests.
std::optional<std::pair<std::string, GoStatus>> goTestResult(std::string_view line) {
  line = trim(line);
  const std::optional<GoStatus> status = consume(line, "--- PASS: ")   ? GoStatus::kPass
                                         : consume(line, "--- FAIL: ") ? GoStatus::kFail
                                         : consume(line, "--- SKIP: ") ? GoStatus::kSkip
                                                                       : std::optional<GoStatus>();
  if (!status) return std::nullopt;
  const std::size_t end = line.find(' ');
  const std::string_view name = line.substr(0, end);
  if (name.empty()) return std::nullopt;
  return std::pair{std::string(name), *status};
}

std::optional<TestCounts> parseGoText(const Lines& lines) {
  const bool verbose = std::any_of(lines.begin(), lines.end(), [](std::string_view l) {
    return trim(l).starts_with("=== RUN ");
  });
  long long passed = 0, failed = 0, skipped = 0;
  GoPackage block;  // the tests seen since the last package line
  bool recognised = false;
  for (const std::string_view line : lines) {
    if (verbose) {
      if (auto result = goTestResult(line)) {
        block.tests[std::move(result->first)] = result->second;
        recognised = true;
        continue;
      }
    }
    const auto package = goPackageLine(line);
    if (!package) continue;
    recognised = true;
    if (verbose) {
      block.status = package->status;
      countGoPackage(block, passed, failed, skipped);
    } else if (package->status == GoStatus::kPass) {
      ++passed;
    } else if (package->status == GoStatus::kFail) {
      ++failed;
    }
    block = GoPackage{};
  }
  // Output cut off before its package line still reports the tests it ran.
  if (verbose) countGoPackage(block, passed, failed, skipped);
  if (!recognised) return std::nullopt;
  return makeCounts(passed, failed, skipped);
}

std::optional<TestCounts> parseGo(const Lines& lines) {
  if (auto counts = parseGoJson(lines)) return counts;
  return parseGoText(lines);
}

// ---------------------------------------------------------------------------
// ctest: "71% tests passed, 2 tests failed out of 7", then optionally
//   The following tests did not run:
//   	  6 - Ring.GrowsOnDemand (Skipped)
//   	  9 - legacy_import (Disabled)
// ctest counts a skipped test among the passed ones and leaves disabled tests
// out of the total; here both are skipped and neither passed.

std::optional<std::pair<int, int>> ctestSummary(std::string_view line) {
  line = trim(line);
  const auto percent = consumeCount(line);
  if (!percent || !consume(line, "% tests passed, ")) return std::nullopt;
  const auto failed = consumeCount(line);
  if (!failed || !consume(line, " tests failed out of ")) return std::nullopt;
  const auto total = wholeCount(line);
  if (!total) return std::nullopt;
  return std::pair{*failed, *total};
}

// For "  6 - Ring.GrowsOnDemand (Skipped)" returns "Skipped".
std::optional<std::string_view> ctestNotRunReason(std::string_view line) {
  line = trim(line);
  if (!consumeCount(line) || !consume(line, " - ") || !line.ends_with(')')) return std::nullopt;
  const std::size_t open = line.rfind('(');
  if (open == std::string_view::npos) return std::nullopt;
  return line.substr(open + 1, line.size() - open - 2);
}

std::optional<TestCounts> parseCtest(const Lines& lines) {
  const auto at = findLast(lines, [](std::string_view l) { return ctestSummary(l).has_value(); });
  if (!at) return std::nullopt;
  const auto [failed, total] = *ctestSummary(lines[*at]);
  int skippedInTotal = 0, disabled = 0;
  for (std::size_t i = *at + 1; i < lines.size(); ++i) {
    if (trim(lines[i]) != "The following tests did not run:") continue;
    for (std::size_t j = i + 1; j < lines.size(); ++j) {
      const auto reason = ctestNotRunReason(lines[j]);
      if (!reason) break;
      ++(*reason == "Disabled" ? disabled : skippedInTotal);
    }
    break;
  }
  return makeCounts(static_cast<long long>(total) - failed - skippedInTotal, failed,
                    static_cast<long long>(skippedInTotal) + disabled);
}

// ---------------------------------------------------------------------------
// GoogleTest: after "[==========] 11 tests from 4 test suites ran. (0 ms total)"
//   [  PASSED  ] 8 tests.
//   [  SKIPPED ] 1 test, listed below:
//   [  FAILED  ] 2 tests, listed below:
//     YOU HAVE 1 DISABLED TEST
// --gtest_brief drops the FAILED line, so failures are what ran and neither
// passed nor skipped. Disabled tests never ran: they count as skipped.

// The count of "[  TAG  ] N test(s)..." lines; `tag` is e.g. "PASSED".
std::optional<int> gtestTagged(std::string_view line, std::string_view tag) {
  line = trim(line);
  if (!consume(line, "[")) return std::nullopt;
  const std::size_t close = line.find(']');
  if (close == std::string_view::npos || trim(line.substr(0, close)) != tag) return std::nullopt;
  line.remove_prefix(close + 1);
  skipSpaces(line);
  const auto count = consumeCount(line);
  if (!count || !(consume(line, " tests") || consume(line, " test"))) return std::nullopt;
  return count;
}

std::optional<int> gtestRan(std::string_view line) {
  const auto count = gtestTagged(line, "==========");
  if (!count) return std::nullopt;
  // "... from 4 test suites ran." (older releases: "test cases ran.")
  if (trim(line).find(" ran.") == std::string_view::npos) return std::nullopt;
  return count;
}

std::optional<int> gtestDisabled(std::string_view line) {
  line = trim(line);
  if (!consume(line, "YOU HAVE ")) return std::nullopt;
  const auto count = consumeCount(line);
  if (!count || !consume(line, " DISABLED TEST")) return std::nullopt;
  return count;
}

std::optional<TestCounts> parseGtest(const Lines& lines) {
  const auto at = findLast(lines, [](std::string_view l) { return gtestRan(l).has_value(); });
  if (!at) return std::nullopt;
  const int ran = *gtestRan(lines[*at]);
  std::optional<int> passed;
  int skipped = 0, disabled = 0;
  for (std::size_t i = *at + 1; i < lines.size(); ++i) {
    if (const auto n = gtestTagged(lines[i], "PASSED")) {
      passed = *n;
    } else if (const auto n = gtestTagged(lines[i], "SKIPPED")) {
      skipped = *n;
    } else if (const auto n = gtestDisabled(lines[i])) {
      disabled = *n;
    }
  }
  if (!passed) return std::nullopt;
  return makeCounts(*passed, static_cast<long long>(ran) - *passed - skipped,
                    static_cast<long long>(skipped) + disabled);
}

// ---------------------------------------------------------------------------
// Dispatch

using ParseFn = std::optional<TestCounts> (*)(const Lines&);

struct Parser {
  std::string_view name;
  ParseFn parse;
};

// Detection order: a format whose output can embed another's comes first.
// ctest re-prints its tests' own output (GoogleTest, pytest, ...) under
// --output-on-failure; go and cargo summaries are unmistakable and may carry
// anything a test printed; vitest before jest keeps jest's looser "Tests:"
// line from claiming a vitest log that quotes it; pytest's "N passed in 0.1s"
// is the loosest shape, so it goes last.
constexpr std::array kParsers{
    Parser{"ctest", parseCtest}, Parser{"go", parseGo},         Parser{"cargo", parseCargo},
    Parser{"gtest", parseGtest}, Parser{"vitest", parseVitest}, Parser{"jest", parseJest},
    Parser{"mocha", parseMocha}, Parser{"node", parseNode},     Parser{"pytest", parsePytest},
};

}  // namespace

std::span<const std::string_view> testFormatNames() {
  // Every parser, then the two formats that are not read from the output.
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const Parser& parser : kParsers) out.push_back(parser.name);
    std::sort(out.begin(), out.end());  // listed for people: alphabetically, not in detection order
    out.push_back("junit");
    out.push_back("exit_code");
    return out;
  }();
  return names;
}

std::optional<TestParse> parseTestOutput(std::string_view output,
                                         std::optional<std::string_view> format) {
  try {
    const std::string clean = cleanOutput(output);
    const Lines lines = splitLines(clean);
    for (const Parser& parser : kParsers) {
      if (format && *format != parser.name) continue;
      if (auto counts = parser.parse(lines)) return TestParse{*counts, std::string(parser.name)};
    }
  } catch (const std::exception&) {
    // Only allocation can throw here; a result we cannot compute is "unparsed".
  }
  // Also reached for "exit_code" (the documented fallback), "junit" (read from
  // its report file, not from output) and any unknown format name.
  return std::nullopt;
}

}  // namespace hydra::core::scoring
