#pragma once

// Short text for one line: a task in a commit subject or a progress title,
// a review's gist. What goes there ends up in JSON and in terminals, so it is
// always valid UTF-8, and a cut never splits a character.

#include <cstddef>
#include <string>
#include <string_view>

namespace hydra::core {

// `text` in at most `max` bytes: a longer one is cut at a character boundary
// and ends in "..." (counted in `max`). Ill-formed UTF-8 becomes U+FFFD first.
std::string clipped(std::string_view text, std::size_t max);

// The first line of `text` (up to its first '\n', without a '\r' before it), clipped() to `max` bytes.
std::string firstLine(std::string_view text, std::size_t max);

// `text` on one line: every run of whitespace and control characters (line
// breaks, tabs, ESC, ...) becomes one space, none is left at either end; then
// clipped() to `max` bytes. What hydra shows of a tool call, a log line or a
// manifest's words in a TOML comment.
std::string oneLine(std::string_view text, std::size_t max = std::string::npos);

// The longest start of `text` in at most `max` bytes that does not end inside
// a UTF-8 character: a cut with no mark (for a key or a message that must stay
// short without saying so).
std::string_view utf8Prefix(std::string_view text, std::size_t max);

}  // namespace hydra::core
