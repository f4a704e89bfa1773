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

}  // namespace hydra::core
