#pragma once

#include <ostream>

#include "core/records/record.h"
#include "core/scoring/scores.h"
#include "server/cli/common.h"

namespace hydra::cli {

// The results table of a scored race, in the scoring engine's format:
//   #1  careful     97.1 / 100    [BUILD: ✓] [TESTS: 100] [LINT: 100] [DIFF: 100] [SPEED: 94]
// then the winner and the command that merges it.
void printResults(std::ostream& out, const core::RaceRecord& race, const core::scoring::RaceScores& scores,
                  const Style& style);

// A collaboration's iterations: score, breakdown, the builder's status and
// the review's first line of each, the best marked, and how to merge any.
void printIterations(std::ostream& out, const core::RaceRecord& race, const std::optional<std::string>& winner,
                     const Style& style);

// Why a collaboration stopped (its stopReason), in plain words for a sentence
// after "stopped because": "the reviewer failed", never "reviewerFailed".
std::string collabStopText(const std::string& reason);
// An agent's or race's state word as a terminal shows it: "timed out",
// "setup failed", "not needed" for the wire's timedOut, setupFailed, notNeeded.
std::string plainState(const std::string& state);

// green > 80, yellow 50-80, red < 50
std::string colorScore(const Style& style, double score, const std::string& text);

}  // namespace hydra::cli
