#pragma once

// What a collaboration tells its agents: the reviewer's and the builder's
// prompts from [collaboration]'s templates, and the pieces that fill them
// (the builder's diff, its scores as text), each bounded so a prompt always
// fits on a command line.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "core/scoring/scores.h"

namespace hydra::core::collab {

// The most of a diff, a check's output and a review a prompt carries.
inline constexpr std::size_t kMaxDiffBytes = 48 * 1024;
inline constexpr std::size_t kMaxCheckOutputBytes = 4 * 1024;
inline constexpr std::size_t kMaxReviewBytes = 24 * 1024;

// `text` with every "{name}" of `values` replaced in one pass: a value that
// itself holds "{task}" is not expanded again. Unknown placeholders stay.
std::string expandTemplate(std::string_view text, const std::map<std::string, std::string>& values);

// `text` cut to at most `max` bytes at a line (and UTF-8) boundary, with a
// note of what was left out and where to find all of it.
std::string bounded(std::string_view text, std::size_t max, std::string_view whereAll);

// An iteration's score for people and agents: the total, each part of the
// breakdown, each check's command and verdict, and the end of the output of
// every check that failed.
std::string scoresText(const scoring::AgentScore& score);

// Whether a review approves: it contains `marker` (case-sensitive, as written
// in hydra.toml).
bool approves(std::string_view review, std::string_view marker);

// The first non-blank line of `text`, at most `max` bytes.
std::string firstLine(std::string_view text, std::size_t max = 100);

}  // namespace hydra::core::collab
