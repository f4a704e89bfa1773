// Reading pass/fail/skip counts out of what test runners print.
//
// Each parser reads the runner's own end-of-run summary, never the per-test
// lines alone, because only the summary is complete (runners print failures in
// detail but successes tersely or not at all). Where a runner may print several
// summaries the rule is per runner: cargo prints one per test binary and they
// add up; the others print one per run, so in watch mode the last one wins.
//
// Parsers also name the tests they count (TestParse::tests), read from the
// per-test lines of the same run the counts come from (the last one in watch
// mode, the last invocation for cargo), so names and counts follow one rule.
// Each parser's comment gives its naming rule. jest and mocha never print a
// line that names a test by its file and full title (jest puts the file on a
// header above an indented tree of describe blocks, mocha never prints the
// file), nor does vitest's default reporter, so those name no test and their
// counts stand alone; vitest's verbose reporter does, and is read.
//
// Output is matched with small hand-written scanners instead of std::regex:
// libstdc++'s regex recurses per character and can overflow the stack on one
// long line, and test output is untrusted input that must never crash us.

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <cctype>
#include <climits>
#include <cstddef>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/text.h"
#include "core/util/utf8.h"
#include "core/scoring/parsers.h"

namespace hydra::core::scoring {

// Hostile output must not exhaust memory through names: new names past
// kMaxNames are dropped and a longer name is cut to kMaxNameBytes.
constexpr std::size_t kMaxNames = 100000;
constexpr std::size_t kMaxNameBytes = 1000;

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

// Index of the last line before `end` for which `matches` holds.
template <typename Pred>
std::optional<std::size_t> findLast(const Lines& lines, Pred matches,
                                    std::size_t end = std::numeric_limits<std::size_t>::max()) {
  for (std::size_t i = std::min(end, lines.size()); i-- > 0;) {
    if (matches(lines[i])) return i;
  }
  return std::nullopt;
}

// The first line of the run whose summary is at `at`: just past the summary
// before it, when the runner printed several (watch mode).
template <typename Pred>
std::size_t runStart(const Lines& lines, std::size_t at, Pred isSummary) {
  const auto previous = findLast(lines, isSummary, at);
  return previous ? *previous + 1 : 0;
}

std::size_t indentOf(std::string_view line) {
  std::size_t indent = 0;
  while (indent < line.size() && line[indent] == ' ') ++indent;
  return indent;
}

// ---------------------------------------------------------------------------
// Test names

using Tests = std::map<std::string, TestOutcome>;

// ---------------------------------------------------------------------------
// jest: "Tests:       2 failed, 1 skipped, 1 todo, 4 passed, 8 total"

std::optional<CountList> jestSummary(std::string_view line) {
  line = trim(line);
  if (!consume(line, "Tests:")) return std::nullopt;
  CountList items = readCountList(line);
  if (!has(items, "total")) return std::nullopt;
  return items;
}

// jest names no test (see the top of this file): `tests` stays empty.
std::optional<TestCounts> parseJest(const Lines& lines, Tests& /*tests*/) {
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

bool isVitestSummary(std::string_view line) { return vitestSummary(line).has_value(); }

constexpr std::string_view kVitestPassed = "\xe2\x9c\x93 ";   // U+2713 CHECK MARK
constexpr std::string_view kVitestFailed = "\xc3\x97 ";       // U+00D7 MULTIPLICATION SIGN
constexpr std::string_view kVitestSkipped = "\xe2\x86\x93 ";  // U+2193, skipped and todo alike

// `text` without a trailing " 12ms" duration.
std::string_view withoutVitestDuration(std::string_view text) {
  if (!text.ends_with("ms")) return text;
  std::size_t start = text.size() - 2;
  while (start > 0 && isDigit(text[start - 1])) --start;
  if (start == text.size() - 2 || start == 0 || text[start - 1] != ' ') return text;
  return text.substr(0, start - 1);
}

// The verbose reporter prints one line per test, one blank in:
//   " ✓ slug.test.js > slugify > lowercases words 1ms"
// The name is the file and the titles as printed ("slug.test.js > slugify >
// lowercases words"), without the duration. The default reporter's lines name
// a test without its file (indented under a file line) or a file alone ("✓
// words.test.js (3 tests)"); neither is read.
void nameVitestTests(const Lines& lines, std::size_t from, std::size_t to, Tests& tests) {
  for (std::size_t i = from; i < to; ++i) {
    std::string_view line = lines[i];
    if (indentOf(line) != 1) continue;
    line.remove_prefix(1);
    std::optional<TestOutcome> outcome;
    if (consume(line, kVitestPassed)) {
      outcome = TestOutcome::Passed;
    } else if (consume(line, kVitestFailed)) {
      outcome = TestOutcome::Failed;
    } else if (consume(line, kVitestSkipped)) {
      outcome = TestOutcome::Skipped;
    }
    const std::string_view name = withoutVitestDuration(trim(line));
    if (outcome && name.find(" > ") != std::string_view::npos) addTest(tests, name, *outcome);
  }
}

std::optional<TestCounts> parseVitest(const Lines& lines, Tests& tests) {
  const auto at = findLast(lines, isVitestSummary);
  if (!at) return std::nullopt;
  nameVitestTests(lines, runStart(lines, *at, isVitestSummary), *at, tests);
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

// mocha names no test (see the top of this file): `tests` stays empty.
std::optional<TestCounts> parseMocha(const Lines& lines, Tests& /*tests*/) {
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

// Node names a test by the names of the suites and tests it sits in and its
// own, joined by " > ": "toKelvin > maps absolute zero to 0". Neither reporter
// says which file a test came from, so equal paths in two files share a name.
std::string nodeTestName(std::span<const std::string_view> parents, std::size_t depth,
                         std::string_view name) {
  std::string joined;
  for (std::size_t i = 0; i < std::min(depth, parents.size()); ++i) {
    joined.append(parents[i]).append(" > ");
    if (joined.size() > kMaxNameBytes) break;  // addTest cuts it anyway; do not build more
  }
  return joined.append(name);
}

// TAP: "ok 1 - name", "not ok 2 - name", either with " # SKIP ..." or
// " # TODO ...". The reporter escapes '#' in names, so the first " # " opens
// the directive. The name is kept as escaped.
std::optional<std::pair<std::string_view, TestOutcome>> tapResult(std::string_view body) {
  const bool failed = consume(body, "not ok ");
  if (!failed && !consume(body, "ok ")) return std::nullopt;
  if (!consumeCount(body) || !consume(body, " - ")) return std::nullopt;
  const std::size_t hash = body.find(" # ");
  if (hash != std::string_view::npos) {
    const std::string_view directive = body.substr(hash + 3);
    if (directive.starts_with("SKIP") || directive.starts_with("TODO"))
      return std::pair{body.substr(0, hash), TestOutcome::Skipped};
  }
  return std::pair{body, failed ? TestOutcome::Failed : TestOutcome::Passed};
}

// Subtests are indented four blanks per level under "# Subtest: name" lines.
// A result is recorded once the YAML block under it has been read: node
// counts tests, not suites, and only that block says "type: 'suite'".
void nameNodeTapTests(const Lines& lines, std::size_t from, std::size_t to, Tests& tests) {
  // The result read last, recorded once its YAML block is known. (A plain
  // struct and a flag rather than std::optional: GCC 12 at -O2 takes the
  // optional's string for uninitialised.)
  struct Pending {
    bool present = false;
    std::string name;
    TestOutcome outcome = TestOutcome::Passed;
    std::size_t indent = 0;
    bool suite = false;
  };
  std::vector<std::string_view> parents;  // the "# Subtest:" names, by level
  Pending pending;
  auto record = [&] {
    if (pending.present && !pending.suite) addTest(tests, pending.name, pending.outcome);
    pending = Pending{};
  };
  for (std::size_t i = from; i < to; ++i) {
    const std::size_t indent = indentOf(lines[i]);
    std::string_view body = lines[i].substr(indent);
    if (pending.present && indent == pending.indent + 2 && body == "type: 'suite'") {
      pending.suite = true;
      continue;
    }
    const std::size_t depth = indent / 4;
    if (consume(body, "# Subtest: ")) {
      parents.resize(std::min(parents.size(), depth));
      parents.push_back(body);
    } else if (const auto result = tapResult(body)) {
      record();
      pending = Pending{true, nodeTestName(parents, depth, result->first), result->second, indent, false};
    }
  }
  record();
}

constexpr std::string_view kSpecPassed = "\xe2\x9c\x94 ";   // U+2714 HEAVY CHECK MARK
constexpr std::string_view kSpecFailed = "\xe2\x9c\x96 ";   // U+2716 HEAVY MULTIPLICATION X
constexpr std::string_view kSpecSkipped = "\xef\xb9\xa3 ";  // U+FE63 SMALL HYPHEN-MINUS
constexpr std::string_view kSpecParent = "\xe2\x96\xb6 ";   // U+25B6, opens a suite or parent test

// Splits "maps freezing to 32 (0.80ms)" or "rounds (0.17ms) # not designed
// yet" into the title and whether a " # " directive (skip or todo) follows
// the duration. A line without a duration is all title.
std::pair<std::string_view, bool> nodeSpecTitle(std::string_view text) {
  for (std::size_t open = text.rfind(" ("); open != std::string_view::npos;
       open = open == 0 ? std::string_view::npos : text.rfind(" (", open - 1)) {
    std::string_view rest = text.substr(open + 2);
    std::size_t digits = 0;
    while (digits < rest.size() && (isDigit(rest[digits]) || rest[digits] == '.')) ++digits;
    rest.remove_prefix(digits);
    if (digits == 0 || !consume(rest, "ms)")) continue;
    if (rest.empty()) return {text.substr(0, open), false};
    if (rest.starts_with(" # ")) return {text.substr(0, open), true};
  }
  return {text, false};
}

// Levels are indented two blanks each. A suite or a test with subtests opens
// with "▶ name" and closes with a result line of the same name after its
// children; spec does not say which of the two it is, so only the leaves are
// named (node counts a parent test too, so a run with parent tests names
// fewer tests than it counts). After the summary node lists the failures again,
// each under a "test at <file>" line; a previous run's list is skipped.
void nameNodeSpecTests(const Lines& lines, std::size_t from, std::size_t to, Tests& tests) {
  std::vector<std::string_view> parents;  // the open "▶" names, by level
  for (std::size_t i = from; i < to; ++i) {
    const std::size_t depth = indentOf(lines[i]) / 2;
    std::string_view body = trim(lines[i]);
    if (consume(body, kSpecParent)) {
      parents.resize(std::min(parents.size(), depth));
      parents.push_back(body);
      continue;
    }
    std::optional<TestOutcome> outcome;
    if (consume(body, kSpecPassed)) {
      outcome = TestOutcome::Passed;
    } else if (consume(body, kSpecFailed)) {
      outcome = TestOutcome::Failed;
    } else if (consume(body, kSpecSkipped)) {
      outcome = TestOutcome::Skipped;
    }
    if (!outcome || body == "failing tests:") continue;
    if (i > from && lines[i - 1].starts_with("test at ")) continue;
    const auto [title, directive] = nodeSpecTitle(body);
    if (depth < parents.size() && parents[depth] == title) {
      parents.resize(depth);  // a parent closing
      continue;
    }
    parents.resize(std::min(parents.size(), depth));
    // A todo test passes or fails without counting; node counts it as todo.
    addTest(tests, nodeTestName(parents, depth, title),
            directive ? TestOutcome::Skipped : *outcome);
  }
}

bool isNodeTestsLine(std::string_view line, std::string_view prefix) {
  const auto stat = nodeStat(line, prefix);
  return stat && stat->first == "tests";
}

std::optional<TestCounts> parseNode(const Lines& lines, Tests& tests) {
  std::optional<std::size_t> at;
  std::string_view prefix;
  for (const std::string_view candidate : {std::string_view("#"), kInfoSign}) {
    const auto found =
        findLast(lines, [&](std::string_view l) { return isNodeTestsLine(l, candidate); });
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
  const std::size_t from =
      runStart(lines, *at, [&](std::string_view l) { return isNodeTestsLine(l, prefix); });
  if (prefix == "#") {
    nameNodeTapTests(lines, from, *at, tests);
  } else {
    nameNodeSpecTests(lines, from, *at, tests);
  }
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

// libtest's per-test line, "test tests::area ... ok", "test pairs::big ...
// ignored, needs a helper" or "test src/lib.rs - area (line 5) ... FAILED"
// for a doc-test. The name is what cargo prints, with no crate prefix, so the
// same path in two test binaries shares a name.
std::optional<TestOutcome> cargoVerdict(std::string_view verdict) {
  if (verdict == "ok") return TestOutcome::Passed;
  if (verdict == "FAILED") return TestOutcome::Failed;
  if (verdict == "ignored" || verdict.starts_with("ignored, ")) return TestOutcome::Skipped;
  return std::nullopt;
}

std::optional<std::pair<std::string_view, TestOutcome>> cargoTest(std::string_view line) {
  line = trim(line);
  if (!consume(line, "test ")) return std::nullopt;
  const std::size_t dots = line.find(" ... ");
  if (dots == std::string_view::npos) return std::nullopt;
  const auto outcome = cargoVerdict(line.substr(dots + 5));
  if (!outcome) return std::nullopt;
  return std::pair{line.substr(0, dots), *outcome};
}

std::optional<TestCounts> parseCargo(const Lines& lines, Tests& tests) {
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
    } else if (const auto test = cargoTest(lines[i])) {
      addTest(tests, test->first, test->second);
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

bool isPytestSummary(std::string_view line) { return pytestSummary(line).has_value(); }

std::optional<TestOutcome> pytestVerdict(std::string_view word) {
  if (word == "PASSED" || word == "XPASS") return TestOutcome::Passed;
  if (word == "FAILED" || word == "ERROR") return TestOutcome::Failed;
  if (word == "SKIPPED" || word == "XFAIL") return TestOutcome::Skipped;
  return std::nullopt;
}

std::string_view consumeWord(std::string_view& s) {
  std::size_t end = 0;
  while (end < s.size() && isLetter(s[end])) ++end;
  const std::string_view word = s.substr(0, end);
  s.remove_prefix(end);
  return word;
}

// A node id at the front of `s`, "tests/test_x.py::test_y[a b]": it runs to
// the first blank outside brackets, as parameter ids may hold blanks.
std::optional<std::string_view> consumeNodeId(std::string_view& s) {
  int depth = 0;
  std::size_t end = 0;
  for (; end < s.size() && !(depth == 0 && isSpace(s[end])); ++end) {
    if (s[end] == '[') {
      ++depth;
    } else if (s[end] == ']' && depth > 0) {
      --depth;
    }
  }
  const std::string_view id = s.substr(0, end);
  if (id.find("::") == std::string_view::npos) return std::nullopt;
  s.remove_prefix(end);
  return id;
}

// Tests are named by node id, from the -v lines ("tests/test_x.py::test_y
// PASSED   [ 50%]") and from the short summary ("FAILED tests/test_x.py::
// test_y - message", every verdict under -rA). The summary's SKIPPED lines
// give a file and line rather than a node id, so they name nothing. xpassed
// passed and xfailed is skipped, as in the counts. Without -v or -rA only the
// failures are named.
std::optional<std::pair<std::string_view, TestOutcome>> pytestResult(std::string_view line) {
  std::string_view rest = line;
  if (const auto verdict = pytestVerdict(consumeWord(rest)); verdict && consume(rest, " ")) {
    const auto id = consumeNodeId(rest);
    if (!id) return std::nullopt;
    return std::pair{*id, *verdict};
  }
  rest = line;
  const auto id = consumeNodeId(rest);
  if (!id || !consume(rest, " ")) return std::nullopt;
  const auto verdict = pytestVerdict(consumeWord(rest));
  if (!verdict || !(rest.empty() || isSpace(rest.front()))) return std::nullopt;
  return std::pair{*id, *verdict};
}

std::optional<TestCounts> parsePytest(const Lines& lines, Tests& tests) {
  const auto at = findLast(lines, isPytestSummary);
  if (!at) return std::nullopt;
  for (std::size_t i = runStart(lines, *at, isPytestSummary); i < *at; ++i) {
    if (const auto result = pytestResult(lines[i])) addTest(tests, result->first, result->second);
  }
  const CountList items = *pytestSummary(lines[*at]);
  // An unexpected pass (xpassed) passed; an expected failure (xfailed) is a
  // known gap, reported like a skip. Errors (in fixtures, collection) fail.
  return makeCounts(static_cast<long long>(countOf(items, "passed")) + countOf(items, "xpassed"),
                    static_cast<long long>(countOf(items, "failed")) + countOf(items, "error") +
                        countOf(items, "errors"),
                    static_cast<long long>(countOf(items, "skipped")) + countOf(items, "xfailed"));
}

// ---------------------------------------------------------------------------
// Python's unittest (`python -m unittest`, `-v`):
//
//   test_add (tests.test_calc.CalcTests.test_add) ... ok
//   test_key (tests.test_calc.CalcTests.test_key)
//   A docstring's first line. ... FAIL
//   ...
//   ======================================================================
//   ERROR: test_zero (tests.test_calc.CalcTests.test_zero)
//   ----------------------------------------------------------------------
//   Ran 10 tests in 0.001s
//
//   FAILED (failures=1, errors=1, skipped=1, expected failures=1, unexpected successes=1)
//
// The counts come from the last "Ran N tests" line and the "OK (...)" or
// "FAILED (...)" line under it: failures and errors fail, and so does an
// unexpected success (unittest itself then reports the run FAILED); skips and
// expected failures are skipped; the rest of N passed. Tests are named
// "module.Class.method" from the -v lines; without -v only the failures'
// headers name tests. A test that prints puts its output between "... " and
// its verdict, which then comes on a line of its own.

std::optional<int> unittestRan(std::string_view line) {
  std::string_view rest = trim(line);
  if (!consume(rest, "Ran ")) return std::nullopt;
  const auto ran = consumeCount(rest);
  if (!ran || !(consume(rest, " tests in ") || consume(rest, " test in "))) return std::nullopt;
  std::size_t i = 0;
  while (i < rest.size() && (isDigit(rest[i]) || rest[i] == '.')) ++i;
  if (i == 0 || rest.substr(i) != "s") return std::nullopt;
  return ran;
}

bool isUnittestRan(std::string_view line) { return unittestRan(line).has_value(); }

// "OK", "OK (skipped=1)", "FAILED (failures=2, errors=1)", "NO TESTS RAN":
// the words and their numbers; nullopt for any other line.
std::optional<CountList> unittestResult(std::string_view line) {
  std::string_view rest = trim(line);
  if (rest == "NO TESTS RAN") return CountList{};
  if (!consume(rest, "OK") && !consume(rest, "FAILED")) return std::nullopt;
  CountList items;
  if (rest.empty()) return items;
  if (!consume(rest, " (") || !rest.ends_with(")")) return std::nullopt;
  rest.remove_suffix(1);
  while (!rest.empty()) {
    const std::size_t equals = rest.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string word(trim(rest.substr(0, equals)));
    rest.remove_prefix(equals + 1);
    const auto count = consumeCount(rest);
    if (!count) return std::nullopt;
    items[word] = saturatingAdd(countOf(items, word), *count);
    if (!rest.empty() && !consume(rest, ", ")) return std::nullopt;
  }
  return items;
}

std::optional<TestOutcome> unittestVerdict(std::string_view text) {
  text = trim(text);
  if (text == "ok") return TestOutcome::Passed;
  if (text == "FAIL" || text == "ERROR" || text == "unexpected success") return TestOutcome::Failed;
  if (text == "expected failure" || text == "skipped" || (text.starts_with("skipped '") && text.ends_with("'")))
    return TestOutcome::Skipped;
  return std::nullopt;
}

// "test_add (tests.test_calc.CalcTests.test_add)" at the front of `s`:
// "tests.test_calc.CalcTests.test_add". Before Python 3.11 the parentheses
// hold the class alone ("test_add (tests.test_calc.CalcTests)"), and a
// setUpClass error names no method: the two are joined.
std::optional<std::string> unittestTestName(std::string_view& s) {
  std::size_t i = 0;
  while (i < s.size() && (isLetter(s[i]) || isDigit(s[i]) || s[i] == '_')) ++i;
  if (i == 0) return std::nullopt;
  const std::string_view method = s.substr(0, i);
  std::string_view rest = s.substr(i);
  if (!consume(rest, " (")) return std::nullopt;
  const std::size_t close = rest.find(')');
  if (close == std::string_view::npos || close == 0) return std::nullopt;
  const std::string_view qualified = rest.substr(0, close);
  if (std::any_of(qualified.begin(), qualified.end(), [](char c) { return isSpace(c) || c == '('; }))
    return std::nullopt;
  s = rest.substr(close + 1);
  const std::string suffix = "." + std::string(method);
  if (qualified.ends_with(suffix)) return std::string(qualified);
  return std::string(qualified) + suffix;
}

void nameUnittestTests(const Lines& lines, std::size_t from, std::size_t to, Tests& tests) {
  std::optional<std::string> pending;  // a -v line whose verdict is still to come
  for (std::size_t i = from; i < to; ++i) {
    std::string_view line = lines[i];
    // The failures' headers: "FAIL: name (qualified)", maybe a subtest's " (i=1)" after it.
    std::string_view rest = line;
    if (consume(rest, "FAIL: ") || consume(rest, "ERROR: ") || consume(rest, "UNEXPECTED SUCCESS: ")) {
      if (auto name = unittestTestName(rest)) addTest(tests, *name, TestOutcome::Failed);
      pending.reset();
      continue;
    }
    if (auto name = unittestTestName(rest)) {
      pending = std::move(name);
      if (!consume(rest, " ... ")) continue;  // a docstring line follows
      line = rest;
    }
    if (!pending) continue;
    // The verdict: after "... " on the test's own line or its docstring's, or
    // alone on a line after what the test printed.
    const std::size_t dots = line.rfind(" ... ");
    const std::string_view verdict = dots == std::string_view::npos ? line : line.substr(dots + 5);
    if (const auto outcome = unittestVerdict(verdict)) {
      addTest(tests, *pending, *outcome);
      pending.reset();
    } else if (const auto whole = unittestVerdict(line)) {
      addTest(tests, *pending, *whole);
      pending.reset();
    }
  }
}

std::optional<TestCounts> parseUnittest(const Lines& lines, Tests& tests) {
  const auto at = findLast(lines, isUnittestRan);
  if (!at) return std::nullopt;
  std::size_t next = *at + 1;
  while (next < lines.size() && trim(lines[next]).empty()) ++next;
  if (next >= lines.size()) return std::nullopt;
  const auto items = unittestResult(lines[next]);
  if (!items) return std::nullopt;
  nameUnittestTests(lines, runStart(lines, *at, isUnittestRan), *at, tests);
  const long long ran = *unittestRan(lines[*at]);
  const long long failed = static_cast<long long>(countOf(*items, "failures")) + countOf(*items, "errors") +
                           countOf(*items, "unexpected successes");
  const long long skipped = static_cast<long long>(countOf(*items, "skipped")) + countOf(*items, "expected failures");
  return makeCounts(ran - failed - skipped, failed, skipped);
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
//
// What is counted is named: a test "importpath.TestName/sub", so packages stay
// apart, and a package that failed with no failing test by its import path
// alone. Plain output names nothing: its package lines stand for tests they do
// not name, so a failing test deleted from a package would read as that
// package fixed (hydra's checks ask for -v through GOFLAGS instead). Tests
// whose package line never came (the output was cut off) are counted but not
// named, their package unknown.

struct GoPackage {
  std::map<std::string, TestOutcome> tests;
  std::optional<TestOutcome> status;  // of the package itself
};

struct GoTally {
  long long passed = 0;
  long long failed = 0;
  long long skipped = 0;
  Tests tests;
};

void tallyOutcome(GoTally& tally, TestOutcome outcome) {
  switch (outcome) {
    case TestOutcome::Passed:
      ++tally.passed;
      break;
    case TestOutcome::Failed:
      ++tally.failed;
      break;
    case TestOutcome::Skipped:
      ++tally.skipped;
      break;
  }
}

// `package` is the import path, nullopt when unknown.
void countGoPackage(const GoPackage& pkg, std::optional<std::string_view> package, GoTally& tally) {
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
    tallyOutcome(tally, status);
    anyFailure = anyFailure || status == TestOutcome::Failed;
    if (package) {
      addTest(tally.tests, package->empty() ? name : std::string(*package) + "." + name, status);
    }
  }
  if (pkg.status == TestOutcome::Failed && !anyFailure) {
    ++tally.failed;
    if (package) addTest(tally.tests, *package, TestOutcome::Failed);
  }
}

std::optional<TestOutcome> goAction(std::string_view action) {
  if (action == "pass") return TestOutcome::Passed;
  if (action == "fail") return TestOutcome::Failed;
  if (action == "skip") return TestOutcome::Skipped;
  return std::nullopt;
}

struct GoPackageLine {
  TestOutcome status;  // Skipped: "[no test files]"
  std::string_view package;
};

// "ok  \tpkg\t0.01s", "FAIL\tpkg\t0.01s", "FAIL\tpkg [build failed]",
// "?   \tpkg\t[no test files]". nullopt for anything else, including the
// bare "FAIL" line that precedes a package's FAIL line, and a line that ends
// right after the import path: go always prints more, so it was cut short and
// the path may be too.
std::optional<GoPackageLine> goPackageLine(std::string_view line) {
  const std::optional<TestOutcome> status = consume(line, "ok")     ? TestOutcome::Passed
                                            : consume(line, "FAIL") ? TestOutcome::Failed
                                            : consume(line, "?")    ? TestOutcome::Skipped
                                                                    : std::optional<TestOutcome>();
  if (!status) return std::nullopt;
  while (line.starts_with(' ')) line.remove_prefix(1);
  if (!consume(line, "\t") || line.empty() || isSpace(line.front())) return std::nullopt;
  const std::size_t end = line.find_first_of(" \t");
  if (end == std::string_view::npos) return std::nullopt;
  return GoPackageLine{*status, line.substr(0, end)};
}

std::optional<TestCounts> parseGoJson(const Lines& lines, Tests& tests) {
  std::map<std::string, GoPackage> packages;
  bool sawEvent = false;
  for (std::string_view line : lines) {
    // go test -json still prints a package that fails to build as a plain
    // "FAIL\tpkg [build failed]" line, with no event for it.
    if (const auto text = goPackageLine(line)) {
      if (text->status == TestOutcome::Failed)
        packages[std::string(text->package)].status = TestOutcome::Failed;
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
  GoTally tally;
  for (const auto& [name, pkg] : packages) countGoPackage(pkg, name, tally);
  tests = std::move(tally.tests);
  return makeCounts(tally.passed, tally.failed, tally.skipped);
}

// "--- PASS: TestAdd/zero (0.00s)", indented for subtests.
std::optional<std::pair<std::string, TestOutcome>> goTestResult(std::string_view line) {
  line = trim(line);
  const std::optional<TestOutcome> status = consume(line, "--- PASS: ")   ? TestOutcome::Passed
                                            : consume(line, "--- FAIL: ") ? TestOutcome::Failed
                                            : consume(line, "--- SKIP: ")
                                                ? TestOutcome::Skipped
                                                : std::optional<TestOutcome>();
  if (!status) return std::nullopt;
  const std::size_t end = line.find(' ');
  const std::string_view name = line.substr(0, end);
  if (name.empty()) return std::nullopt;
  return std::pair{std::string(name), *status};
}

std::optional<TestCounts> parseGoText(const Lines& lines, Tests& tests) {
  const bool verbose = std::any_of(lines.begin(), lines.end(), [](std::string_view l) {
    return trim(l).starts_with("=== RUN ");
  });
  GoTally tally;
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
      countGoPackage(block, package->package, tally);
    } else if (package->status != TestOutcome::Skipped) {
      tallyOutcome(tally, package->status);
    }
    block = GoPackage{};
  }
  // Output cut off before its package line still reports the tests it ran.
  if (verbose) countGoPackage(block, std::nullopt, tally);
  if (!recognised) return std::nullopt;
  tests = std::move(tally.tests);
  return makeCounts(tally.passed, tally.failed, tally.skipped);
}

std::optional<TestCounts> parseGo(const Lines& lines, Tests& tests) {
  if (auto counts = parseGoJson(lines, tests)) return counts;
  return parseGoText(lines, tests);
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

bool isCtestSummary(std::string_view line) { return ctestSummary(line).has_value(); }

// "6/9 Test #6: Ring.KeepsTheLastSlot ............***Failed    0.00 sec": the
// test's name, then one blank and dots up to a width that fits the longest
// name, then the status. "Passed" passed; "***Skipped" and "***Not Run
// (Disabled)" are the skipped and disabled tests of the summary; any other
// "***" status failed, including a bare "***Not Run" (a missing executable),
// which ctest itself counts among the failures.
std::optional<std::pair<std::string_view, TestOutcome>> ctestResult(std::string_view line) {
  line = trim(line);
  if (!consumeCount(line) || !consume(line, "/") || !consumeCount(line)) return std::nullopt;
  skipSpaces(line);
  if (!consume(line, "Test")) return std::nullopt;
  skipSpaces(line);
  if (!consume(line, "#") || !consumeCount(line) || !consume(line, ": ")) return std::nullopt;
  std::string_view padded;
  TestOutcome outcome = TestOutcome::Passed;
  if (const std::size_t stars = line.find("***"); stars != std::string_view::npos) {
    const std::string_view status = line.substr(stars + 3);
    outcome = status.starts_with("Skipped") || status.starts_with("Not Run (Disabled)")
                  ? TestOutcome::Skipped
                  : TestOutcome::Failed;
    padded = line.substr(0, stars);
  } else if (const std::size_t passed = line.rfind(" Passed"); passed != std::string_view::npos) {
    padded = line.substr(0, passed);
  } else {
    return std::nullopt;
  }
  while (!padded.empty() && isSpace(padded.back())) padded.remove_suffix(1);
  while (!padded.empty() && padded.back() == '.') padded.remove_suffix(1);
  if (!padded.ends_with(' ')) return std::nullopt;
  return std::pair{padded.substr(0, padded.size() - 1), outcome};
}

void nameGtestTests(const Lines& lines, std::size_t from, std::size_t to, Tests& tests);

// "    Start 14: misc_tests" gives test 14's name.
std::optional<std::pair<int, std::string_view>> ctestStart(std::string_view line) {
  line = trim(line);
  if (!consume(line, "Start")) return std::nullopt;
  skipSpaces(line);
  const auto number = consumeCount(line);
  if (!number || !consume(line, ": ") || line.empty()) return std::nullopt;
  return std::pair{*number, line};
}

// Under -V (--verbose) ctest prints every line a test printed, passing or
// not, as "14: <line>". Returns the test's number and the line.
std::optional<std::pair<int, std::string_view>> ctestVerboseLine(std::string_view line) {
  const auto number = consumeCount(line);
  if (!number || !consume(line, ":")) return std::nullopt;
  if (!line.empty() && !consume(line, " ")) return std::nullopt;
  return std::pair{*number, line};
}

// Unity prints one line per test: "../tests/misc_tests.c:73:name:FAIL: why",
// with PASS, FAIL or IGNORE (":IGNORE: why" when given a reason).
std::optional<std::pair<std::string_view, TestOutcome>> unityResult(std::string_view line) {
  line = trim(line);
  for (const auto& [status, outcome] : {std::pair{std::string_view(":PASS"), TestOutcome::Passed},
                                        std::pair{std::string_view(":FAIL"), TestOutcome::Failed},
                                        std::pair{std::string_view(":IGNORE"), TestOutcome::Skipped}}) {
    for (std::size_t at = line.find(status); at != std::string_view::npos;
         at = line.find(status, at + 1)) {
      const std::string_view after = line.substr(at + status.size());
      if (!after.empty() && !after.starts_with(':')) continue;
      // Before the status: "path:LINE:name", name a C identifier.
      const std::string_view head = line.substr(0, at);
      const std::size_t nameStart = head.rfind(':');
      if (nameStart == std::string_view::npos) continue;
      const std::string_view name = head.substr(nameStart + 1);
      std::string_view rest = head.substr(0, nameStart);
      const std::size_t lineStart = rest.rfind(':');
      if (lineStart == std::string_view::npos || lineStart == 0) continue;
      std::string_view lineNumber = rest.substr(lineStart + 1);
      if (!wholeCount(lineNumber)) continue;
      const bool identifier =
          !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front())) &&
          std::all_of(name.begin(), name.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
          });
      if (identifier) return std::pair{name, outcome};
    }
  }
  return std::nullopt;
}

// The finer names a test framework printed inside ctest's verbose output:
// GoogleTest's "Suite.Name" and Unity's "name" lines of each ctest test,
// named "executable::Suite.Name" (or "Suite.Name" alone where ctest's own
// name is the same, as gtest_discover_tests registers them). They replace the
// executable's name, so deleting or ignoring one test inside an executable
// shows by name; an executable that failed without a failing inner test
// (a crash part way) keeps its own failed name beside them. Only the verbose
// form is read: --output-on-failure prints failing executables alone, which
// would name a test differently by whether its executable failed. Returns
// the ctest tests whose finer names were found.
std::set<std::string> nameCtestInnerTests(const Lines& lines, std::size_t from, std::size_t to, Tests& tests) {
  std::map<int, std::string_view> names;
  std::map<int, Lines> output;
  for (std::size_t i = from; i < to; ++i) {
    if (const auto start = ctestStart(lines[i])) {
      names[start->first] = start->second;
    } else if (const auto verbose = ctestVerboseLine(lines[i])) {
      output[verbose->first].push_back(verbose->second);
    }
  }
  std::set<std::string> found;
  for (const auto& [number, printed] : output) {
    const auto name = names.find(number);
    if (name == names.end()) continue;
    Tests inner;
    nameGtestTests(printed, 0, printed.size(), inner);
    for (const std::string_view line : printed) {
      if (const auto result = unityResult(line)) addTest(inner, result->first, result->second);
    }
    if (inner.empty()) continue;
    const std::string executable(name->second);
    found.insert(executable);
    const auto own = tests.find(executable);
    const bool innerFailed = std::any_of(inner.begin(), inner.end(), [](const auto& test) {
      return test.second == TestOutcome::Failed;
    });
    if (own != tests.end() && (own->second != TestOutcome::Failed || innerFailed)) tests.erase(own);
    for (const auto& [test, outcome] : inner)
      addTest(tests, test == executable ? test : executable + "::" + test, outcome);
  }
  return found;
}

std::optional<TestCounts> parseCtest(const Lines& lines, Tests& tests) {
  const auto at = findLast(lines, isCtestSummary);
  if (!at) return std::nullopt;
  const std::size_t start = runStart(lines, *at, isCtestSummary);
  for (std::size_t i = start; i < *at; ++i) {
    if (const auto result = ctestResult(lines[i])) addTest(tests, result->first, result->second);
  }
  if (!nameCtestInnerTests(lines, start, *at, tests).empty()) {
    // The counts follow the finer names, so a score counts tests, not executables.
    const auto count = [&tests](TestOutcome wanted) {
      return std::count_if(tests.begin(), tests.end(),
                           [wanted](const auto& test) { return test.second == wanted; });
    };
    return makeCounts(count(TestOutcome::Passed), count(TestOutcome::Failed),
                      count(TestOutcome::Skipped));
  }
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

// The ctest tests of the output's last run whose framework's case lines were
// read (TestParse::readByCase); the rest are named whole.
std::set<std::string> ctestReadByCase(const Lines& lines) {
  const auto at = findLast(lines, isCtestSummary);
  if (!at) return {};
  Tests scratch;
  return nameCtestInnerTests(lines, runStart(lines, *at, isCtestSummary), *at, scratch);
}

// ---------------------------------------------------------------------------
// GoogleTest: after "[==========] 11 tests from 4 test suites ran. (0 ms total)"
//   [  PASSED  ] 8 tests.
//   [  SKIPPED ] 1 test, listed below:
//   [  FAILED  ] 2 tests, listed below:
//     YOU HAVE 1 DISABLED TEST
// --gtest_brief drops the FAILED line, so failures are what ran and neither
// passed nor skipped. Disabled tests never ran: they count as skipped.

// A "[  TAG  ] rest" line split into the tag ("PASSED", "OK", ...) and the rest.
std::optional<std::pair<std::string_view, std::string_view>> gtestTag(std::string_view line) {
  line = trim(line);
  if (!consume(line, "[")) return std::nullopt;
  const std::size_t close = line.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  return std::pair{trim(line.substr(0, close)), trim(line.substr(close + 1))};
}

// The count of "[  TAG  ] N test(s)..." lines; `tag` is e.g. "PASSED".
std::optional<int> gtestTagged(std::string_view line, std::string_view tag) {
  const auto tagged = gtestTag(line);
  if (!tagged || tagged->first != tag) return std::nullopt;
  line = tagged->second;
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

bool isGtestRan(std::string_view line) { return gtestRan(line).has_value(); }

std::optional<TestOutcome> gtestVerdict(std::string_view tag) {
  if (tag == "OK") return TestOutcome::Passed;
  if (tag == "FAILED") return TestOutcome::Failed;
  if (tag == "SKIPPED" || tag == "DISABLED") return TestOutcome::Skipped;
  return std::nullopt;
}

// Tests are named "Suite.Name" ("Prefix/Suite.Name/3" when parameterised) from
// their result lines: "[       OK ] Suite.Name (0 ms)", "[  FAILED  ]
// Suite.Name, where GetParam() = 4 (0 ms)" (the parameter, which may print an
// address, is dropped), "[  SKIPPED ] ..." and "[ DISABLED ] ...". The lists
// under the summary's "[  FAILED  ] 2 tests, listed below:" repeat names the
// result lines gave; a previous run's lists open this run's lines, so they
// are recognised by their heading and skipped.
void nameGtestTests(const Lines& lines, std::size_t from, std::size_t to, Tests& tests) {
  std::string_view list;  // the tag of the list being read, if any
  for (std::size_t i = from; i < to; ++i) {
    const auto tagged = gtestTag(lines[i]);
    if (!tagged) {
      list = {};
      continue;
    }
    const auto [tag, rest] = *tagged;
    if (gtestTagged(lines[i], tag)) {
      list = rest.ends_with("listed below:") ? tag : std::string_view();
      continue;
    }
    if (!list.empty() && tag == list) continue;
    list = {};
    if (const auto outcome = gtestVerdict(tag))
      addTest(tests, rest.substr(0, rest.find_first_of(" ,")), *outcome);
  }
}

std::optional<TestCounts> parseGtest(const Lines& lines, Tests& tests) {
  const auto at = findLast(lines, isGtestRan);
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
  nameGtestTests(lines, runStart(lines, *at, isGtestRan), *at, tests);
  return makeCounts(*passed, static_cast<long long>(ran) - *passed - skipped,
                    static_cast<long long>(skipped) + disabled);
}

// ---------------------------------------------------------------------------
// Dispatch

using ParseFn = std::optional<TestCounts> (*)(const Lines&, Tests&);

struct Parser {
  std::string_view name;
  ParseFn parse;
};

// Detection order: a format whose output can embed another's comes first.
// ctest re-prints its tests' own output (GoogleTest, pytest, ...) under
// --output-on-failure; go and cargo summaries are unmistakable and may carry
// anything a test printed; vitest before jest keeps jest's looser "Tests:"
// line from claiming a vitest log that quotes it; unittest's "Ran N tests in"
// is its own; pytest's "N passed in 0.1s" is the loosest shape, so it goes last.
constexpr std::array kParsers{
    Parser{"ctest", parseCtest}, Parser{"go", parseGo},         Parser{"cargo", parseCargo},
    Parser{"gtest", parseGtest}, Parser{"vitest", parseVitest}, Parser{"jest", parseJest},
    Parser{"mocha", parseMocha}, Parser{"node", parseNode},     Parser{"unittest", parseUnittest},
    Parser{"pytest", parsePytest},
};

}  // namespace

namespace {

int severity(TestOutcome outcome) {
  switch (outcome) {
    case TestOutcome::Failed:
      return 2;
    case TestOutcome::Passed:
      return 1;
    case TestOutcome::Skipped:
      return 0;
  }
  return 0;
}

}  // namespace

void addTest(std::map<std::string, TestOutcome>& tests, std::string_view name, TestOutcome outcome) {
  if (name.size() > 4 * kMaxNameBytes) name = name.substr(0, 4 * kMaxNameBytes);  // cut below anyway
  // A JUnit report's bytes reach here as they are: a name is kept as UTF-8.
  std::string key = isValidUtf8(name) ? std::string(name) : makeValidUtf8(name);
  key.resize(utf8Prefix(key, kMaxNameBytes).size());
  if (key.empty()) return;
  // Names read from JSON strings or XML attributes may hold line breaks; a name is one line.
  std::replace(key.begin(), key.end(), '\n', ' ');
  std::replace(key.begin(), key.end(), '\r', ' ');
  const auto it = tests.find(key);
  if (it == tests.end()) {
    if (tests.size() < kMaxNames) tests.emplace(std::move(key), outcome);
  } else if (severity(outcome) > severity(it->second)) {
    it->second = outcome;
  }
}

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
      Tests tests;
      if (auto counts = parser.parse(lines, tests)) {
        TestParse parsed{*counts, std::string(parser.name), std::move(tests), {}};
        if (parser.name == "ctest") parsed.readByCase = ctestReadByCase(lines);
        return parsed;
      }
    }
  } catch (const std::exception&) {
    // Only allocation can throw here; a result we cannot compute is "unparsed".
  }
  // Also reached for "exit_code" (the documented fallback), "junit" (read from
  // its report file, not from output) and any unknown format name.
  return std::nullopt;
}

}  // namespace hydra::core::scoring
