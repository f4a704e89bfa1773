#pragma once

// The scoring formulas of the scoring engine, as pure functions. Each returns
// a score in [0, 100]. docs/scoring.md states each formula and the edge cases
// the specification leaves open.

#include <optional>

#include "core/config/config.h"

namespace hydra::core::scoring {

struct TestCounts {
  int passed = 0;
  int failed = 0;   // failures and errors
  int skipped = 0;  // not part of the total
  int total() const { return passed + failed; }
  bool operator==(const TestCounts&) const = default;
};

// One test's verdict in one run. Skipped covers everything that did not run
// to a verdict (skips, todos, ignored, disabled, expected failures).
enum class TestOutcome { Passed, Failed, Skipped };

struct LintCounts {
  int errors = 0;
  int warnings = 0;
  bool operator==(const LintCounts&) const = default;
};

// One problem a build or lint check reported at a place in a file.
struct Finding {
  std::string path;  // as the tool printed it: relative to where the check ran, or absolute
  int line = 0;      // 1-based
  int column = 0;    // 1-based; 0 when the tool gave none
  std::string severity;  // "error" or "warning"
  std::string message;
  bool operator==(const Finding&) const = default;
};

struct DiffStats {
  int linesAdded = 0;
  int linesRemoved = 0;
  int filesChanged = 0;  // binary files count as files
  bool operator==(const DiffStats&) const = default;
};

// One score per dimension; nullopt = the dimension is excluded (its command is not configured).
struct Breakdown {
  std::optional<double> build;
  std::optional<double> tests;
  std::optional<double> lint;
  std::optional<double> diffSize;
  std::optional<double> speed;
};

double buildScore(bool passed);

// `agent` and `baseline` are parsed counts. When counts could not be parsed
// (nullopt), the score falls back to the exit code: 100 for success, 0 otherwise.
// `lostTests`: compared by name, a test of the base was removed or now fails.
// Lost tests (or, by count, fewer passing than at the base) earn added tests
// no bonus, and a run with a failing test scores below 100 (docs/scoring.md).
double testsScore(const std::optional<TestCounts>& agent, const std::optional<TestCounts>& baseline,
                  bool agentExitedZero, bool lostTests = false);

double lintScore(const std::optional<LintCounts>& agent, const std::optional<LintCounts>& baseline,
                 bool agentExitedZero);

double diffSizeScore(const DiffStats& diff);

// fastest / duration x 100. A zero or negative duration counts as the fastest.
double speedScore(double fastestSeconds, double durationSeconds);

// Weighted mean over the dimensions present; the weights of absent ones are
// left out and the rest renormalised. 0 when nothing is present.
double composite(const Breakdown& breakdown, const ScoringWeights& weights);

}  // namespace hydra::core::scoring
