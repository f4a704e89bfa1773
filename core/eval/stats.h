#pragma once

// The statistics of an evaluation: the unbiased pass@k estimator, the Wilson
// score interval around a success rate, and the forgetest-style score of one
// sample on a 0..1 scale. Pure functions, no I/O.

#include <optional>

namespace hydra::core::eval {

// pass@k from n samples of which c passed: the chance that at least one of k
// samples drawn without replacement passes, 1 - C(n-c, k) / C(n, k) (Chen et
// al. 2021, "Evaluating Large Language Models Trained on Code"). Computed as a
// product, so n in the thousands neither overflows nor loses precision.
// 0 when c == 0; exactly 1 when n - c < k. nullopt when it is undefined rather
// than guessed: n < 1, k < 1, k > n, c < 0 or c > n.
std::optional<double> passAtK(int n, int c, int k);

// A closed range of proportions, low <= high, both in 0..1.
struct Interval {
  double low = 0;
  double high = 1;

  friend bool operator==(const Interval&, const Interval&) = default;
};

// z for a two-sided 95% interval: the 0.975 quantile of the standard normal.
inline constexpr double kZ95 = 1.959963984540054;

// The Wilson score interval at 95% around successes / n: unlike the normal
// approximation it stays within 0..1 and is not empty at 0 or n successes.
// n == 0 gives {0, 1} (nothing is known). Throws std::invalid_argument when
// n < 0 or successes is outside 0..n.
Interval wilson95(int successes, int n);

// One sample's score as forgetest computes it, 0..1: 0 when it does not
// build; otherwise 0.4 for building, plus 0.5 times the share of tests passed
// (nothing when no test ran), plus 0.1 lessened by a tenth per lint warning
// (nothing from ten warnings on). Negative counts are taken as 0.
double forgetestScore(bool builds, int testsPassed, int testsFailed, int lintWarnings);

}  // namespace hydra::core::eval
