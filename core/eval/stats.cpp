#include "core/eval/stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hydra::core::eval {

std::optional<double> passAtK(int n, int c, int k) {
  if (n < 1 || k < 1 || k > n || c < 0 || c > n) return std::nullopt;
  if (c == 0) return 0.0;
  if (n - c < k) return 1.0;
  // C(n-c, k) / C(n, k) = prod_{i = n-c+1}^{n} (1 - k / i): every factor is in
  // (0, 1), so the product cannot overflow; long double keeps the rounding of
  // c factors below what a double shows (pass@1 comes out as c / n).
  long double failAll = 1.0L;
  for (int i = n - c + 1; i <= n; ++i) failAll *= 1.0L - static_cast<long double>(k) / static_cast<long double>(i);
  return static_cast<double>(1.0L - failAll);
}

Interval wilson95(int successes, int n) {
  if (n < 0 || successes < 0 || successes > n) {
    throw std::invalid_argument("wilson95: " + std::to_string(successes) + " successes of " + std::to_string(n));
  }
  if (n == 0) return Interval{0.0, 1.0};
  const double total = n;
  const double p = successes / total;
  const double z2 = kZ95 * kZ95;
  const double denominator = 1.0 + z2 / total;
  const double centre = (p + z2 / (2.0 * total)) / denominator;
  const double half = kZ95 * std::sqrt(p * (1.0 - p) / total + z2 / (4.0 * total * total)) / denominator;
  return Interval{std::clamp(centre - half, 0.0, 1.0), std::clamp(centre + half, 0.0, 1.0)};
}

double forgetestScore(bool builds, int testsPassed, int testsFailed, int lintWarnings) {
  if (!builds) return 0.0;
  const int passed = std::max(testsPassed, 0);
  const int failed = std::max(testsFailed, 0);
  const int warnings = std::max(lintWarnings, 0);
  const double tests = passed + failed > 0 ? static_cast<double>(passed) / (passed + failed) : 0.0;
  const double lint = std::max(0.0, 1.0 - 0.1 * warnings);
  return 0.4 + 0.5 * tests + 0.1 * lint;
}

}  // namespace hydra::core::eval
