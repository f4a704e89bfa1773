#include "core/scoring/formulas.h"

#include <algorithm>
#include <array>
#include <cmath>

// Every formula here is the scoring engine specification's; docs/scoring.md
// states each one and every decision taken where the specification is silent.

namespace hydra::core::scoring {
namespace {

constexpr double kMaxScore = 100.0;
// The most a tests run with any failing test can score.
constexpr double kMaxFailingScore = 99.9;

// Scores never leave [0, 100], and a NaN (from inputs nobody should pass)
// becomes 0 rather than poisoning a composite or a ranking.
double clampScore(double score) {
  if (std::isnan(score)) return 0.0;
  return std::clamp(score, 0.0, kMaxScore);
}

// The fallback of the specification when a tool's output cannot be read.
double exitCodeScore(bool exitedZero) { return exitedZero ? kMaxScore : 0.0; }

// Counts come from parsing untrusted output; a negative one means nothing.
TestCounts sanitized(const TestCounts& counts) {
  return {std::max(counts.passed, 0), std::max(counts.failed, 0), std::max(counts.skipped, 0)};
}

LintCounts sanitized(const LintCounts& counts) {
  return {std::max(counts.errors, 0), std::max(counts.warnings, 0)};
}

// Weights come from hydra.toml; one that is not a finite, non-negative number
// cannot take part in a weighted mean.
double usableWeight(double weight) { return std::isfinite(weight) && weight > 0.0 ? weight : 0.0; }

}  // namespace

double buildScore(bool passed) { return passed ? kMaxScore : 0.0; }

double testsScore(const std::optional<TestCounts>& agent, const std::optional<TestCounts>& baseline,
                  bool agentExitedZero, bool lostTests) {
  if (!agent) return exitCodeScore(agentExitedZero);
  const TestCounts counts = sanitized(*agent);
  const std::optional<TestCounts> base =
      baseline ? std::optional<TestCounts>(sanitized(*baseline)) : std::nullopt;

  if (counts.total() == 0) {
    // A suite that ran nothing where the base commit ran tests has lost them:
    // it must not score as if everything passed.
    if (base && base->total() > 0) return 0.0;
    // No tests before, none now: there is nothing to count, so the command's
    // own verdict is all there is.
    return exitCodeScore(agentExitedZero);
  }
  // Counts that show no failure from a command that failed are missing
  // something (a package that did not build, a crash after the summary, a
  // coverage gate): the exit code wins.
  if (counts.failed == 0 && !agentExitedZero) return 0.0;

  const double agentTotal = counts.total();
  const double passRate = counts.passed / agentTotal;
  double bonus = 0.0;
  double regressionPenalty = 0.0;
  if (base) {
    // Added tests never outweigh lost ones: a test removed or newly failing
    // (by name), or fewer passing than at the base (by count), earns no bonus.
    lostTests = lostTests || counts.passed < base->passed;
    if (counts.total() > base->total() && !lostTests) {
      const double newTests = counts.total() - base->total();
      bonus = (newTests / agentTotal) * 10.0;
    }
    // base->passed > counts.passed >= 0 here, so the division is safe; a
    // baseline with no passing test can never be regressed.
    if (counts.passed < base->passed) {
      regressionPenalty = (static_cast<double>(base->passed - counts.passed) / base->passed) * 50.0;
    }
  }
  // A run with a failing test never reads as perfect, whatever it added.
  const double score = clampScore(passRate * 100.0 + bonus - regressionPenalty);
  return counts.failed > 0 ? std::min(score, kMaxFailingScore) : score;
}

double lintScore(const std::optional<LintCounts>& agent, const std::optional<LintCounts>& baseline,
                 bool agentExitedZero) {
  if (!agent) return exitCodeScore(agentExitedZero);
  const LintCounts counts = sanitized(*agent);
  // Every supported linter exits non-zero only when it reports something. A
  // clean report from a failed command means the linter did not really run
  // (not installed, crashed, bad configuration): trust the exit code.
  if (counts.errors == 0 && counts.warnings == 0 && !agentExitedZero) return 0.0;

  // Without a baseline every problem counts as new: the same yardstick for
  // every agent of the race.
  const LintCounts base = baseline ? sanitized(*baseline) : LintCounts{};
  // In double: counts parsed from huge outputs must not overflow an int.
  const double agentErrors = counts.errors;
  const double agentWarnings = counts.warnings;
  const double baseErrors = base.errors;
  const double baseWarnings = base.warnings;

  const double newErrors = std::max(0.0, agentErrors - baseErrors);
  const double newWarnings = std::max(0.0, agentWarnings - baseWarnings);
  const double resolvedIssues =
      std::max(0.0, (baseErrors + baseWarnings) - (agentErrors + agentWarnings));

  const double errorPenalty = newErrors * 10.0;
  const double warningPenalty = newWarnings * 2.0;
  const double resolutionBonus = resolvedIssues * 1.0;
  return clampScore(kMaxScore - errorPenalty - warningPenalty + resolutionBonus);
}

double diffSizeScore(const DiffStats& diff) {
  const double totalChurn =
      static_cast<double>(std::max(diff.linesAdded, 0)) + std::max(diff.linesRemoved, 0);
  const double filesTouched = std::max(diff.filesChanged, 0);

  double churnScore = 0.0;
  if (totalChurn <= 100) {
    churnScore = 100.0;
  } else if (totalChurn <= 500) {
    churnScore = 100.0 - ((totalChurn - 100.0) / 400.0) * 40.0;  // 100 -> 60
  } else {
    churnScore = std::max(20.0, 60.0 - ((totalChurn - 500.0) / 1000.0) * 40.0);
  }

  double fileScore = 0.0;
  if (filesTouched <= 5) {
    fileScore = 100.0;
  } else if (filesTouched <= 15) {
    fileScore = 100.0 - ((filesTouched - 5.0) / 10.0) * 30.0;  // 100 -> 70
  } else {
    fileScore = std::max(30.0, 70.0 - ((filesTouched - 15.0) / 20.0) * 40.0);
  }

  return clampScore(churnScore * 0.6 + fileScore * 0.4);
}

double speedScore(double fastestSeconds, double durationSeconds) {
  if (std::isnan(durationSeconds)) return 0.0;   // no usable timing, nothing to rank
  if (durationSeconds <= 0.0) return kMaxScore;  // nothing can be faster
  // A fastest that is not positive (a zero-length run) makes every real run
  // infinitely slower: 0 / duration = 0. A NaN fastest also lands on 0.
  return clampScore(fastestSeconds / durationSeconds * 100.0);
}

double composite(const Breakdown& breakdown, const ScoringWeights& weights) {
  struct Term {
    const std::optional<double>& score;
    double weight;
  };
  const std::array terms{
      Term{breakdown.build, weights.build}, Term{breakdown.tests, weights.tests},
      Term{breakdown.lint, weights.lint},   Term{breakdown.diffSize, weights.diffSize},
      Term{breakdown.speed, weights.speed},
  };

  // Absent dimensions are left out of both sums, which is the specification's
  // renormalisation: the remaining weights are scaled to add up to 100%.
  double weightedSum = 0.0;
  double totalWeight = 0.0;
  for (const Term& term : terms) {
    if (!term.score) continue;
    const double weight = usableWeight(term.weight);
    weightedSum += clampScore(*term.score) * weight;
    totalWeight += weight;
  }
  if (totalWeight <= 0.0) return 0.0;
  return clampScore(weightedSum / totalWeight);
}

}  // namespace hydra::core::scoring
