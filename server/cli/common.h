#pragma once

// What every terminal command shares: finding the repository, loading its
// hydra.toml, and printing for people or machines.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <boost/json/value.hpp>

#include "core/config/config.h"
#include "core/workspace/errors.h"

namespace hydra::cli {

// A failure to report as "hydra: <message>" with exit code `code`.
class CommandError : public std::runtime_error {
 public:
  explicit CommandError(std::string message, int code = 1) : std::runtime_error(std::move(message)), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// The working tree root of the git repository containing `start`.
std::filesystem::path findRepositoryRoot(const std::filesystem::path& start);

// hydra.toml of `root`; a broken file becomes a CommandError naming file, line and column.
core::Config loadRepositoryConfig(const std::filesystem::path& root);

// What the workspace refused, as the terminal says it: exit code 2 for what
// the user must fix (a wrong id, a broken hydra.toml), 1 for a refusal of the
// repository's state.
CommandError commandError(const core::WorkspaceError& error);

bool stdoutIsTerminal();
// Whether someone can answer a question: standard input is a terminal.
bool stdinIsTerminal();

// ANSI colours, only on a terminal.
struct Style {
  bool enabled = false;
  std::string green(std::string_view s) const { return wrap("32", s); }
  std::string yellow(std::string_view s) const { return wrap("33", s); }
  std::string red(std::string_view s) const { return wrap("31", s); }
  std::string dim(std::string_view s) const { return wrap("2", s); }
  std::string bold(std::string_view s) const { return wrap("1", s); }

 private:
  std::string wrap(const char* code, std::string_view s) const {
    if (!enabled) return std::string(s);
    return "\033[" + std::string(code) + "m" + std::string(s) + "\033[0m";
  }
};

// Text from an agent (its output, errors, file names, review) on one line of
// the terminal: control sequences shown escaped (core::terminalSafe), then
// core::oneLine: runs of line breaks, tabs and spaces as one space, cut to at
// most `max` bytes with "..." (never inside a character).
std::string oneLine(std::string_view text, std::size_t max = std::string::npos);

// `--json` output: `value` serialized on one line. JSON escapes the C0
// controls (ESC as \u001b) but keeps the C1 controls U+0080..U+009F as raw
// UTF-8, which a terminal may take for CSI or OSC when the output is read
// there rather than by a program: they are written \u0080..\u009f too. The
// value a program parses is the same.
std::string jsonLine(const boost::json::value& value);

// A score with one decimal, 97.1. A score is never shown higher than it is:
// 99.96 is "99.9", never "100.0" (docs/scoring.md).
std::string fixed1(double v);
// A part of a score as a whole number, 71; 99.7 is "99": only 100 reads "100",
// so 2 failing tests of 704 never look like none.
std::string wholeScore(double v);
// `s` followed by spaces up to `n` characters (not bytes: ✓ and ✗ are three bytes each).
std::string padRight(std::string s, std::size_t n);

// 1.2s, 45s, 3m05s, 1h02m
std::string formatDuration(std::chrono::milliseconds d);
// "0 B", "812 KiB", "1.4 GiB".
std::string formatBytes(std::uintmax_t bytes);

}  // namespace hydra::cli
