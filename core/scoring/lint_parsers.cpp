// Counting errors and warnings in the output of real linters.
//
// Lines are taken apart by hand rather than with <regex>: libstdc++'s regex
// recurses per character and can exhaust the stack on one long line (a
// minified file echoed in a compiler's source snippet), and a parser of
// untrusted output must never crash. docs/scoring.md lists what each format
// counts and why.

#include <algorithm>
#include <array>
#include <boost/json/stream_parser.hpp>
#include <boost/json/value.hpp>
#include <charconv>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/scoring/parsers.h"
#include "core/util/text.h"

namespace hydra::core::scoring {
namespace {

using Lines = std::vector<std::string_view>;
using namespace std::string_view_literals;

// ---------------------------------------------------------------------------
// Text helpers

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isUpper(char c) { return c >= 'A' && c <= 'Z'; }

std::string_view trimLeft(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  s = trimLeft(s);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool isBlank(std::string_view s) { return trim(s).empty(); }

// Reads the decimal number at the front of `s` and removes it; nullopt (and
// `s` untouched) when `s` does not start with a digit. Saturates rather than
// overflowing on absurd numbers.
std::optional<int> takeNumber(std::string_view& s) {
  std::size_t digits = 0;
  while (digits < s.size() && isDigit(s[digits])) ++digits;
  if (digits == 0) return std::nullopt;
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + digits, value);
  if (ec == std::errc::result_out_of_range) value = std::numeric_limits<int>::max();
  (void)end;
  s.remove_prefix(digits);
  return value;
}

// Colours are on when a tool thinks it writes to a terminal, or is told to.
// Removes CSI sequences (ESC [ ... final byte), OSC sequences such as
// hyperlinks (ESC ] ... BEL or ESC \) and other two-byte escapes.
std::string stripAnsi(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    if (in[i] != '\x1b') {
      out.push_back(in[i++]);
      continue;
    }
    if (i + 1 >= in.size()) break;
    const char kind = in[i + 1];
    i += 2;
    if (kind == '[') {
      while (i < in.size() && !(in[i] >= '@' && in[i] <= '~')) ++i;
      if (i < in.size()) ++i;  // the final byte
    } else if (kind == ']') {
      while (i < in.size()) {
        if (in[i] == '\a') {
          ++i;
          break;
        }
        if (in[i] == '\x1b' && i + 1 < in.size() && in[i + 1] == '\\') {
          i += 2;
          break;
        }
        ++i;
      }
    }
  }
  return out;
}

// Splits on '\n'. A carriage return inside a line is a terminal overwrite
// (progress bars): what follows the last one is what a reader saw.
Lines splitLines(std::string_view text) {
  Lines lines;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (const std::size_t cr = line.rfind('\r'); cr != std::string_view::npos)
      line.remove_prefix(cr + 1);
    lines.push_back(line);
  }
  return lines;
}

bool allLines(const Lines& lines, bool (*acceptable)(std::string_view)) {
  return std::all_of(lines.begin(), lines.end(),
                     [&](std::string_view line) { return isBlank(line) || acceptable(line); });
}

bool nothingElse(std::string_view) { return false; }

// ---------------------------------------------------------------------------
// `path:line[:column]: rest`, the location prefix shared by compilers,
// flake8, ruff and go vet.

struct Located {
  std::string_view path;
  std::string_view location;  // path:line[:column]
  std::string_view rest;      // after ": "
  bool hasColumn = false;
};

std::optional<Located> splitLocation(std::string_view line) {
  // A path never starts with white space; source snippets and indented
  // notes do.
  if (line.empty() || isSpace(line.front())) return std::nullopt;
  for (std::size_t colon = line.find(':'); colon != std::string_view::npos;
       colon = line.find(':', colon + 1)) {
    if (colon == 0) continue;
    std::string_view after = line.substr(colon + 1);
    if (!takeNumber(after)) continue;
    bool hasColumn = false;
    if (after.size() >= 2 && after[0] == ':' && isDigit(after[1])) {
      after.remove_prefix(1);
      takeNumber(after);
      hasColumn = true;
    }
    // The location ends with ": " (or ':' at the end of the line).
    if (after.empty() || after[0] != ':') continue;
    if (after.size() > 1 && after[1] != ' ' && after[1] != '\t') continue;
    const std::size_t end = line.size() - after.size();
    return Located{line.substr(0, colon), line.substr(0, end), trimLeft(after.substr(1)),
                   hasColumn};
  }
  return std::nullopt;
}

enum class Severity { error, warning, other };

// "error: ...", "fatal error: ...", "error[E0425]: ...", "warning: ...".
// Notes, remarks and help lines are Severity::other: they explain a
// diagnostic already counted.
Severity severityAtFront(std::string_view rest, bool allowCode) {
  auto keyword = [&](std::string_view word) {
    if (!rest.starts_with(word)) return false;
    std::string_view after = rest.substr(word.size());
    if (allowCode && !after.empty() && after.front() == '[') {
      const std::size_t close = after.find(']');
      if (close == std::string_view::npos) return false;
      after.remove_prefix(close + 1);
    }
    return after.starts_with(": ") || after == ":";
  };
  if (keyword("fatal error") || keyword("error")) return Severity::error;
  if (keyword("warning")) return Severity::warning;
  return Severity::other;
}

// Counts each distinct diagnostic once: the same header included by several
// translation units, or a crate checked for both its library and its tests,
// reports one problem several times.
class Tally {
 public:
  void add(Severity severity, std::string_view key) {
    if (severity == Severity::other) return;
    if (!seen_.emplace(severity == Severity::error ? 'E' : 'W', std::string(key)).second) return;
    (severity == Severity::error ? counts_.errors : counts_.warnings) += 1;
    counted_ = true;
  }
  void addCount(Severity severity, int howMany) {
    if (howMany <= 0 || severity == Severity::other) return;
    int& slot = severity == Severity::error ? counts_.errors : counts_.warnings;
    slot = howMany > std::numeric_limits<int>::max() - slot ? std::numeric_limits<int>::max()
                                                            : slot + howMany;
    counted_ = true;
  }
  const LintCounts& counts() const { return counts_; }
  bool counted() const { return counted_; }

 private:
  std::set<std::pair<char, std::string>> seen_;
  LintCounts counts_;
  bool counted_ = false;
};

// ---------------------------------------------------------------------------
// What one parser made of an output.

struct Reading {
  LintCounts counts;
  bool read = false;        // its diagnostics or its summary were found
  bool identified = false;  // something only this tool prints: enough to choose it unasked
  bool clean = false;       // no diagnostics, and nothing but blank lines or the tool's own chatter
};

struct Input {
  std::string_view text;  // colours removed
  const Lines& lines;
};

Reading fromTally(const Tally& tally, bool identified, bool clean) {
  return Reading{tally.counts(), tally.counted(), identified, !tally.counted() && clean};
}

// ---------------------------------------------------------------------------
// gcc, clang and clang-tidy: `file:line:col: warning: message [flag]`.

// One compiler diagnostic line: a location, or a tool name such as `cc1`,
// `collect2` or `/usr/bin/ld`, then its severity. The lines around it carry
// no severity of their own: "In file included from a.c:2:", "a.c: In
// function 'f':", indented source snippets, notes.
std::optional<std::pair<Severity, std::string_view>> compilerDiagnostic(std::string_view line) {
  if (const auto located = splitLocation(line)) {
    const Severity severity = severityAtFront(located->rest, /*allowCode=*/false);
    if (severity != Severity::other) return std::pair{severity, line};
    return std::nullopt;
  }
  const std::size_t colon = line.find(": ");
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const std::string_view origin = line.substr(0, colon);
  if (std::any_of(origin.begin(), origin.end(), isSpace)) return std::nullopt;
  const Severity severity = severityAtFront(line.substr(colon + 2), /*allowCode=*/false);
  if (severity == Severity::other) return std::nullopt;
  return std::pair{severity, line};
}

Tally tallyCompiler(const Lines& lines) {
  Tally tally;
  for (std::string_view line : lines) {
    if (const auto diagnostic = compilerDiagnostic(line))
      tally.add(diagnostic->first, trim(diagnostic->second));
  }
  return tally;
}

Reading readGcc(const Input& in) {
  const Tally tally = tallyCompiler(in.lines);
  return fromTally(tally, tally.counted(), allLines(in.lines, nothingElse));
}

// clang-tidy's own lines: "3 warnings generated.", "3 warnings and 1 error
// generated.", "Suppressed 2 warnings (2 in non-user code).", "Use
// -header-filter=.* to display ...". They repeat counts that include
// suppressed diagnostics, so they are never added up.
bool isClangTidyChatter(std::string_view line) {
  const std::string_view trimmed = trim(line);
  return trimmed.ends_with(" generated.") || trimmed.starts_with("Suppressed ") ||
         trimmed.starts_with("Use -header-filter");
}

// clang-tidy names its check in brackets: [bugprone-foo], [clang-diagnostic-x].
// gcc and clang name a flag there instead: [-Wunused-variable].
bool endsWithCheckName(std::string_view line) {
  line = trim(line);
  if (!line.ends_with(']')) return false;
  const std::size_t open = line.rfind('[');
  if (open == std::string_view::npos) return false;
  const std::string_view name = line.substr(open + 1, line.size() - open - 2);
  return !name.empty() && name.front() != '-' && std::none_of(name.begin(), name.end(), isSpace);
}

Reading readClangTidy(const Input& in) {
  const Tally tally = tallyCompiler(in.lines);
  bool signature = false;
  for (std::string_view line : in.lines) {
    if (isClangTidyChatter(line) && !trim(line).ends_with(" generated.")) signature = true;
    if (compilerDiagnostic(line) && endsWithCheckName(line)) signature = true;
  }
  return fromTally(tally, signature, allLines(in.lines, isClangTidyChatter));
}

// ---------------------------------------------------------------------------
// cargo clippy: rustc's blocks,
//
//   warning: unused variable: `x`
//    --> src/lib.rs:4:9
//     | ...
//
// A header counts only when its ` --> file:line:col` follows: that leaves out
// cargo's summaries ("warning: `x` (lib) generated 3 warnings", "error: could
// not compile `x` ...", "error: aborting due to ..."), which restate counts.

Severity rustHeader(std::string_view line) { return severityAtFront(line, /*allowCode=*/true); }

std::optional<std::string_view> rustArrow(std::string_view line) {
  const std::string_view trimmed = trimLeft(line);
  if (!trimmed.starts_with("--> ")) return std::nullopt;
  return trim(trimmed.substr(4));
}

// Cargo's right-aligned status lines: "    Checking x v0.1.0", "   Finished `dev` ...".
bool isCargoStatus(std::string_view line) {
  static constexpr std::array kVerbs{
      "Checking"sv, "Compiling"sv,   "Finished"sv,   "Blocking"sv, "Updating"sv,    "Locking"sv,
      "Adding"sv,   "Downloading"sv, "Downloaded"sv, "Fresh"sv,    "Documenting"sv, "Building"sv};
  if (line.empty() || !isSpace(line.front())) return false;
  const std::string_view rest = trimLeft(line);
  return std::any_of(kVerbs.begin(), kVerbs.end(), [&](std::string_view verb) {
    return rest.starts_with(verb) && rest.size() > verb.size() && rest[verb.size()] == ' ';
  });
}

Reading readClippy(const Input& in) {
  Tally tally;
  bool blockSeen = false;
  const Lines& lines = in.lines;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Severity header = rustHeader(lines[i]);
    if (header != Severity::other) {
      for (std::size_t j = i + 1; j < lines.size() && !isBlank(lines[j]); ++j) {
        if (rustHeader(lines[j]) != Severity::other) break;
        if (const auto location = rustArrow(lines[j])) {
          tally.add(header, std::string(trim(lines[i])) + '\n' + std::string(*location));
          blockSeen = true;
          break;
        }
      }
      continue;
    }
    // `--message-format short`: "src/lib.rs:4:9: warning: unused variable: `x`".
    if (const auto located = splitLocation(lines[i]))
      tally.add(severityAtFront(located->rest, /*allowCode=*/true), trim(lines[i]));
  }
  // The short format looks like a compiler's; cargo's status lines tell it apart.
  const bool cargoSeen = std::any_of(lines.begin(), lines.end(), isCargoStatus);
  return fromTally(tally, blockSeen || (tally.counted() && cargoSeen),
                   allLines(lines, isCargoStatus));
}

// ---------------------------------------------------------------------------
// eslint's default "stylish" output:
//
//   /path/file.js
//     3:9  error    'x' is assigned a value but never used  no-unused-vars
//
//   ✖ 5 problems (2 errors, 3 warnings)

// "✖ 5 problems (2 errors, 3 warnings)" -> {2, 3}. The glyph is not relied on.
std::optional<LintCounts> eslintSummary(std::string_view line) {
  const std::size_t word = line.find(" problem");
  if (word == std::string_view::npos) return std::nullopt;
  std::string_view before = line.substr(0, word);
  std::size_t start = before.size();
  while (start > 0 && isDigit(before[start - 1])) --start;
  if (start == before.size()) return std::nullopt;

  std::string_view rest = line.substr(word);
  const std::size_t open = rest.find('(');
  if (open == std::string_view::npos) return std::nullopt;
  rest.remove_prefix(open + 1);
  const auto errors = takeNumber(rest);
  if (!errors || !rest.starts_with(" error")) return std::nullopt;
  const std::size_t comma = rest.find(", ");
  if (comma == std::string_view::npos) return std::nullopt;
  rest.remove_prefix(comma + 2);
  const auto warnings = takeNumber(rest);
  if (!warnings || !rest.starts_with(" warning")) return std::nullopt;
  return LintCounts{*errors, *warnings};
}

// "  3:9  error  message  rule" (indented, line:column, then the severity).
Severity eslintProblem(std::string_view line) {
  if (line.empty() || !isSpace(line.front())) return Severity::other;
  std::string_view rest = trimLeft(line);
  if (!takeNumber(rest) || !rest.starts_with(':')) return Severity::other;
  rest.remove_prefix(1);
  if (!takeNumber(rest) || rest.empty() || !isSpace(rest.front())) return Severity::other;
  rest = trimLeft(rest);
  auto word = [&](std::string_view w) {
    return rest.starts_with(w) && (rest.size() == w.size() || isSpace(rest[w.size()]));
  };
  if (word("error")) return Severity::error;
  if (word("warning")) return Severity::warning;
  return Severity::other;
}

Reading readEslint(const Input& in) {
  // Each eslint run prints one summary; a lint command that runs eslint more
  // than once (workspaces) prints several, and they add up.
  LintCounts fromSummaries;
  bool summarySeen = false;
  Tally problems;
  for (std::string_view line : in.lines) {
    if (const auto summary = eslintSummary(line)) {
      fromSummaries.errors += summary->errors;
      fromSummaries.warnings += summary->warnings;
      summarySeen = true;
      continue;
    }
    const Severity severity = eslintProblem(line);
    // Problem lines are not unique (same rule, same place in two files), so
    // they are counted without the de-duplication of compiler diagnostics.
    problems.addCount(severity, 1);
  }
  if (summarySeen) return Reading{fromSummaries, true, true, false};
  return fromTally(problems, problems.counted(), allLines(in.lines, nothingElse));
}

// ---------------------------------------------------------------------------
// eslint -f json: an array of per-file results with errorCount and
// warningCount (fatal parse errors are part of errorCount).

int saturatedInt(std::int64_t value) {
  return static_cast<int>(std::clamp<std::int64_t>(value, 0, std::numeric_limits<int>::max()));
}

std::optional<std::int64_t> integerField(const boost::json::object& object, std::string_view key) {
  const boost::json::value* field = object.if_contains(key);
  if (field == nullptr) return std::nullopt;
  if (field->is_int64()) return field->get_int64();
  if (field->is_uint64()) {
    return static_cast<std::int64_t>(
        std::min<std::uint64_t>(field->get_uint64(), std::numeric_limits<std::int64_t>::max()));
  }
  return std::nullopt;
}

std::optional<LintCounts> eslintJsonCounts(const boost::json::value& root) {
  const boost::json::array* files = root.if_array();
  if (files == nullptr) return std::nullopt;
  std::int64_t errors = 0;
  std::int64_t warnings = 0;
  for (const boost::json::value& entry : *files) {
    const boost::json::object* file = entry.if_object();
    if (file == nullptr) return std::nullopt;
    const auto fileErrors = integerField(*file, "errorCount");
    const auto fileWarnings = integerField(*file, "warningCount");
    if (!fileErrors || !fileWarnings) return std::nullopt;
    errors = std::min(errors + std::max<std::int64_t>(*fileErrors, 0), std::int64_t{1} << 40);
    warnings = std::min(warnings + std::max<std::int64_t>(*fileWarnings, 0), std::int64_t{1} << 40);
  }
  return LintCounts{saturatedInt(errors), saturatedInt(warnings)};
}

bool atLineStart(std::string_view text, std::size_t pos) {
  while (pos > 0 && isSpace(text[pos - 1])) --pos;
  return pos == 0 || text[pos - 1] == '\n';
}

// The report may sit among other lines (`npm run lint` echoes the script
// first), so each '[' that starts a line is tried until one parses. The
// tries are capped: each may read to the end of the output, and an output
// made of many lines opening brackets must not take quadratic time.
Reading readEslintJson(const Input& in) {
  constexpr int kMaxTries = 64;
  const std::string_view text = in.text;
  int tries = 0;
  for (std::size_t pos = text.find('['); pos != std::string_view::npos && tries < kMaxTries;
       pos = text.find('[', pos + 1)) {
    if (!atLineStart(text, pos)) continue;
    ++tries;
    boost::json::stream_parser parser;
    boost::system::error_code ec;
    // write_some stops at the end of the first complete JSON value and
    // ignores whatever follows it.
    parser.write_some(text.data() + pos, text.size() - pos, ec);
    if (!ec && !parser.done()) parser.finish(ec);
    if (ec || !parser.done()) continue;
    if (const auto counts = eslintJsonCounts(parser.release())) {
      const bool identified = text.find("\"errorCount\"") != std::string_view::npos;
      return Reading{*counts, true, identified, false};
    }
  }
  return Reading{};
}

// ---------------------------------------------------------------------------
// flake8 and ruff: `path:line:col: CODE message`.
//
// Both tools call every finding an error; hydra splits them so that the
// findings that mean the code is broken weigh like compiler errors. Errors:
// E9 (syntax and I/O errors, E999), F63 (comparisons and asserts that are
// always true or false), F7 (statements where they cannot be: `return`
// outside a function, `break` outside a loop), F82 (undefined names), and
// ruff's syntax errors. It is the selection (`--select=E9,F63,F7,F82`) that
// widely used CI templates run to stop a build; everything else is a warning.

bool isPythonErrorCode(std::string_view code) {
  return code.starts_with("E9") || code.starts_with("F63") || code.starts_with("F7") ||
         code.starts_with("F82");
}

// "F401", "PLW0120", "UP035": capitals, then digits, then a space or the end.
std::optional<std::string_view> ruleCode(std::string_view rest) {
  std::size_t i = 0;
  while (i < rest.size() && isUpper(rest[i])) ++i;
  if (i == 0) return std::nullopt;
  const std::size_t letters = i;
  while (i < rest.size() && isDigit(rest[i])) ++i;
  if (i == letters) return std::nullopt;
  if (i < rest.size() && !isSpace(rest[i])) return std::nullopt;
  return rest.substr(0, i);
}

bool isPythonSyntaxError(std::string_view rest) {
  return rest.starts_with("SyntaxError:") || rest.starts_with("invalid-syntax:");
}

Severity pythonSeverity(std::string_view rest) {
  if (isPythonSyntaxError(rest)) return Severity::error;
  const auto code = ruleCode(rest);
  if (!code) return Severity::other;
  return isPythonErrorCode(*code) ? Severity::error : Severity::warning;
}

// "Found 3 errors.", "Found 1 error.", "Found 4 errors (3 fixed, 1 remaining)."
// Nothing else: mypy's "Found 3 errors in 2 files (checked 5 source files)"
// is not ruff's.
std::optional<int> ruffFound(std::string_view line) {
  std::string_view rest = trim(line);
  if (!rest.starts_with("Found ")) return std::nullopt;
  rest.remove_prefix(6);
  const auto found = takeNumber(rest);
  if (!found) return std::nullopt;
  if (rest.starts_with(" errors")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with(" error")) {
    rest.remove_prefix(6);
  } else {
    return std::nullopt;
  }
  if (rest == ".") return found;
  if (!rest.starts_with(" (") || !rest.ends_with(" remaining).")) return std::nullopt;
  const std::size_t comma = rest.rfind(", ");
  if (comma == std::string_view::npos) return std::nullopt;
  rest.remove_prefix(comma + 2);
  return takeNumber(rest);
}

struct PythonTally {
  Tally tally;
  bool concise = false;      // `path:line:col: CODE message` lines
  bool fullHeader = false;   // ruff's newer default: "F401 [*] message" then " --> path:line:col"
  bool fixMarker = false;    // ruff's "[*]" after a code
  std::optional<int> found;  // ruff's "Found N errors."
  bool allPassed = false;    // ruff's "All checks passed!"
};

PythonTally tallyPython(const Lines& lines) {
  PythonTally out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (const auto located = splitLocation(line); located && located->hasColumn) {
      const Severity severity = pythonSeverity(located->rest);
      if (severity != Severity::other) {
        out.tally.add(severity, line);
        out.concise = true;
        if (const auto code = ruleCode(located->rest))
          out.fixMarker |= located->rest.substr(code->size()).starts_with(" [*]");
        continue;
      }
    }
    if (!line.empty() && !isSpace(line.front()) && i + 1 < lines.size()) {
      const Severity severity = pythonSeverity(line);
      const auto location = rustArrow(lines[i + 1]);
      if (severity != Severity::other && location) {
        out.tally.add(severity, std::string(line) + '\n' + std::string(*location));
        out.fullHeader = true;
        continue;
      }
    }
    if (const auto found = ruffFound(line)) out.found = found;
    if (trim(line) == "All checks passed!") out.allPassed = true;
  }
  return out;
}

// ruff's and flake8's lines that carry no diagnostic of their own.
bool isPythonLinterChatter(std::string_view line) {
  const std::string_view trimmed = trim(line);
  // flake8 --count's total of a clean run. A larger total alone (with -qq)
  // cannot be split into errors and warnings: such output is not read.
  return trimmed == "All checks passed!" || ruffFound(trimmed) || trimmed == "0";
}

Reading readRuff(const Input& in) {
  PythonTally python = tallyPython(in.lines);
  // Output formats without one line per finding (--statistics, grouped)
  // still end with "Found N errors.": all that is known is the number, and
  // it is counted as warnings.
  if (!python.tally.counted() && python.found && *python.found > 0)
    python.tally.addCount(Severity::warning, *python.found);
  const bool identified = python.fullHeader || python.fixMarker || python.found || python.allPassed;
  Reading reading = fromTally(python.tally, identified, allLines(in.lines, isPythonLinterChatter));
  if (python.allPassed || python.found) reading.read = true;
  return reading;
}

Reading readFlake8(const Input& in) {
  const PythonTally python = tallyPython(in.lines);
  return fromTally(python.tally, python.concise, allLines(in.lines, isPythonLinterChatter));
}

// ---------------------------------------------------------------------------
// pyflakes (on its own, not through flake8): `path:line:col: message`, no
// codes; a syntax error adds the source line and a caret under it.
//
//   ./inventory.py:3:1: 'os' imported but unused
//   ./broken.py:2:12: invalid syntax
//   def broken(:
//              ^
//
// pyflakes exits 1 whenever it reports anything, so what it found is what
// counts, compared with the base like any linter's. Errors are the messages of
// the codes flake8 counts as errors (above): undefined names and names used
// before assignment (F82), statements out of place (F7), asserts and
// comparisons that are always true or false (F63), and syntax errors.

bool isCaretLine(std::string_view line) {
  const std::string_view trimmed = trim(line);
  return !trimmed.empty() && trimmed.find_first_not_of('^') == std::string_view::npos;
}

bool isPyflakesErrorMessage(std::string_view message) {
  static constexpr std::array<std::string_view, 11> kErrors{
      "undefined name ",       "referenced before assignment", "outside function", "outside loop",
      "not properly in loop",  "must be last",                 "two starred expressions",
      "star-unpacking",        "is always true",               "compare constant literals",
      "problem decoding source"};
  return std::any_of(kErrors.begin(), kErrors.end(),
                     [&](std::string_view error) { return message.find(error) != std::string_view::npos; });
}

// "C0114: ...", "F401 ...": another Python linter's line, which has a code.
bool startsWithCode(std::string_view rest) {
  std::size_t i = 0;
  while (i < rest.size() && isUpper(rest[i])) ++i;
  return i > 0 && i < rest.size() && isDigit(rest[i]);
}

// The severity of lines[i] when it is a pyflakes message: a Python file's
// location with a column, then a message that has no code and no severity word
// (mypy's `x.py:3: error: ...` is not pyflakes').
std::optional<Severity> pyflakesMessage(const Lines& lines, std::size_t i) {
  const auto located = splitLocation(lines[i]);
  if (!located || !located->hasColumn || !located->path.ends_with(".py") || located->rest.empty())
    return std::nullopt;
  if (startsWithCode(located->rest) || severityAtFront(located->rest, /*allowCode=*/true) != Severity::other)
    return std::nullopt;
  const bool syntaxError = i + 2 < lines.size() && isCaretLine(lines[i + 2]);
  return syntaxError || isPyflakesErrorMessage(located->rest) ? Severity::error : Severity::warning;
}

Reading readPyflakes(const Input& in) {
  Tally tally;
  bool other = false;  // a line that is neither a message nor a syntax error's source and caret
  for (std::size_t i = 0; i < in.lines.size(); ++i) {
    if (const auto severity = pyflakesMessage(in.lines, i)) {
      tally.add(*severity, in.lines[i]);
      if (*severity == Severity::error && i + 2 < in.lines.size() && isCaretLine(in.lines[i + 2])) i += 2;
    } else if (!isBlank(in.lines[i])) {
      other = true;
    }
  }
  // Only pyflakes' lines: enough to tell it from flake8 (codes), mypy and
  // compilers (severity words) when no format is named.
  return fromTally(tally, tally.counted() && !other, !other);
}

// ---------------------------------------------------------------------------
// go vet:
//
//   # example.com/pkg
//   ./main.go:8:2: fmt.Printf format %d has arg name of wrong type string
//   vet: broken/broken.go:5:9: undeclared name: missing
//
// Findings are warnings: vet reports suspicious code that compiles. A line
// that starts with "vet: " is a package that does not type-check: an error,
// plus the "(and N more errors)" it mentions.

int moreErrors(std::string_view message) {
  const std::size_t at = message.rfind("(and ");
  if (at == std::string_view::npos) return 0;
  std::string_view rest = message.substr(at + 5);
  const auto more = takeNumber(rest);
  return more && rest.starts_with(" more error") ? *more : 0;
}

bool isGoPackageHeader(std::string_view line) { return line.starts_with("# "); }

Reading readGoVet(const Input& in) {
  Tally tally;
  bool packageHeader = false;
  bool typeCheckError = false;
  for (std::string_view line : in.lines) {
    if (isGoPackageHeader(line)) {
      packageHeader = true;
    } else if (line.starts_with("vet: ")) {
      const std::string_view message = line.substr(5);
      tally.add(Severity::error, line);
      tally.addCount(Severity::error, moreErrors(message));
      typeCheckError = true;
    } else if (const auto located = splitLocation(line);
               located && located->path.ends_with(".go")) {
      tally.add(Severity::warning, line);
    }
  }
  const bool identified = typeCheckError || (packageHeader && tally.counted());
  return fromTally(tally, identified, allLines(in.lines, isGoPackageHeader));
}

// ---------------------------------------------------------------------------

struct Parser {
  std::string_view format;
  Reading (*read)(const Input&);
};

// Also the order in which an unnamed output is tried: the formats with the
// most distinctive marks first, the plain compiler format last.
constexpr std::array kParsers{
    Parser{"eslint_json", readEslintJson}, Parser{"eslint", readEslint},
    Parser{"clippy", readClippy},          Parser{"ruff", readRuff},
    Parser{"flake8", readFlake8},          Parser{"pyflakes", readPyflakes},
    Parser{"go_vet", readGoVet},
    Parser{"clang_tidy", readClangTidy},   Parser{"gcc", readGcc},
};

std::optional<LintParse> parseAs(std::string_view format, const Input& in) {
  const auto parser = std::find_if(kParsers.begin(), kParsers.end(),
                                   [&](const Parser& p) { return p.format == format; });
  // "exit_code" asks for the exit-code fallback; an unknown name cannot be
  // honoured, and guessing would hide the mistake.
  if (parser == kParsers.end()) return std::nullopt;
  const Reading reading = parser->read(in);
  if (reading.read) return LintParse{reading.counts, std::string(format)};
  // A run with nothing to report prints nothing, or only the tool's chatter.
  // Anything else (a crash, "command not found") was not read: nullopt sends
  // the score to the exit code.
  if (reading.clean) return LintParse{LintCounts{}, std::string(format)};
  return std::nullopt;
}

std::optional<LintParse> detect(const Input& in) {
  for (const Parser& parser : kParsers) {
    const Reading reading = parser.read(in);
    if (reading.identified) return LintParse{reading.counts, std::string(parser.format)};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Findings: the diagnostics above that name a place.

// "path:12:5" or "path:12" (the location of splitLocation or a rust arrow).
std::optional<std::tuple<std::string_view, int, int>> placeOf(std::string_view location) {
  // The last one or two numbers; the path may hold colons of its own.
  std::size_t end = location.size();
  auto numberBefore = [&](std::size_t at) -> std::optional<std::pair<int, std::size_t>> {
    std::size_t start = at;
    while (start > 0 && isDigit(location[start - 1])) --start;
    if (start == at || start == 0 || location[start - 1] != ':') return std::nullopt;
    std::string_view digits = location.substr(start, at - start);
    auto n = takeNumber(digits);
    if (!n) return std::nullopt;
    return std::pair{*n, start - 1};
  };
  auto last = numberBefore(end);
  if (!last) return std::nullopt;
  if (auto before = numberBefore(last->second)) {
    if (before->second == 0) return std::nullopt;  // ":3:4": no path
    return std::tuple{location.substr(0, before->second), before->first, last->first};
  }
  if (last->second == 0) return std::nullopt;
  return std::tuple{location.substr(0, last->second), last->first, 0};
}

class Findings {
 public:
  void add(std::string_view path, int line, int column, Severity severity, std::string_view message) {
    if (severity == Severity::other || line <= 0 || path.empty() || out_.size() >= kMaxFindings) return;
    std::string text(trim(message));
    text.resize(utf8Prefix(text, kMaxFindingMessageBytes).size());
    Finding f{std::string(path), line, column, severity == Severity::error ? "error" : "warning", std::move(text)};
    if (!seen_.insert(f.path + ":" + std::to_string(line) + ":" + std::to_string(column) + ":" + f.message).second) return;
    out_.push_back(std::move(f));
  }
  std::vector<Finding> take() { return std::move(out_); }

 private:
  std::set<std::string> seen_;
  std::vector<Finding> out_;
};

// "error: message", "error[E0425]: message", "warning: message" -> message.
std::string_view afterSeverity(std::string_view rest) {
  const std::size_t colon = rest.find(": ");
  return colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 2);
}

std::vector<Finding> findingsIn(const Lines& lines) {
  Findings found;
  std::string_view eslintFile;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    // A rustc block: its header, then its arrow.
    if (const Severity header = rustHeader(line); header != Severity::other) {
      for (std::size_t j = i + 1; j < lines.size() && j <= i + 3 && !isBlank(lines[j]); ++j) {
        if (const auto arrow = rustArrow(lines[j])) {
          if (const auto place = placeOf(*arrow)) {
            found.add(std::get<0>(*place), std::get<1>(*place), std::get<2>(*place), header, afterSeverity(trim(line)));
          }
          break;
        }
      }
      continue;
    }
    if (const auto located = splitLocation(line)) {
      eslintFile = {};
      const auto place = placeOf(located->location);
      if (!place) continue;
      Severity severity = severityAtFront(located->rest, /*allowCode=*/true);
      std::string_view message = afterSeverity(located->rest);
      if (severity == Severity::other) {
        severity = pythonSeverity(located->rest);
        message = located->rest;
      }
      if (severity == Severity::other) severity = pyflakesMessage(lines, i).value_or(Severity::other);
      found.add(std::get<0>(*place), std::get<1>(*place), std::get<2>(*place), severity, message);
      continue;
    }
    // eslint: a file's path alone on its line, then its problems, indented.
    if (const Severity severity = eslintProblem(line); severity != Severity::other && !eslintFile.empty()) {
      std::string_view rest = trimLeft(line);
      const int at = takeNumber(rest).value_or(0);
      rest.remove_prefix(1);  // ':'
      const int column = takeNumber(rest).value_or(0);
      rest = trimLeft(trimLeft(rest).substr(severity == Severity::error ? 5 : 7));
      found.add(eslintFile, at, column, severity, rest);
      continue;
    }
    const std::string_view trimmed = trim(line);
    if (!trimmed.empty() && !isSpace(line.front()) && trimmed.find(' ') == std::string_view::npos &&
        (trimmed.front() == '/' || trimmed.find('.') != std::string_view::npos)) {
      eslintFile = trimmed;
    } else if (!isBlank(line) && !isSpace(line.front())) {
      eslintFile = {};
    }
  }
  return found.take();
}

}  // namespace

std::vector<Finding> parseFindings(std::string_view output) {
  try {
    const std::string text = stripAnsi(output);
    return findingsIn(splitLines(text));
  } catch (const std::exception&) {
    return {};  // only allocation can fail; findings are an extra
  }
}

std::span<const std::string_view> lintFormatNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const Parser& parser : kParsers) out.push_back(parser.format);
    std::sort(out.begin(), out.end());  // listed for people: alphabetically, not in detection order
    out.push_back("exit_code");
    return out;
  }();
  return names;
}

std::optional<LintParse> parseLintOutput(std::string_view output,
                                         std::optional<std::string_view> format) {
  try {
    const std::string text = stripAnsi(output);
    const Lines lines = splitLines(text);
    const Input in{text, lines};
    return format ? parseAs(*format, in) : detect(in);
  } catch (const std::exception&) {
    // Only allocation can fail here; a score must still come out of it.
    return std::nullopt;
  }
}

}  // namespace hydra::core::scoring
