#include "core/collab/iterations.h"

#include <algorithm>
#include <charconv>

namespace hydra::core::collab {

std::string iterationId(int iteration) { return std::string(kBuilder) + "@" + std::to_string(iteration); }

std::optional<int> parseIterationId(std::string_view id) {
  const std::string prefix = std::string(kBuilder) + "@";
  if (id.size() <= prefix.size() || id.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = id.substr(prefix.size());
  if (digits.size() > 6 || digits.front() == '0') return std::nullopt;
  int n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() || n < 1) return std::nullopt;
  return n;
}

scoring::RaceScores rankIterations(const std::string& raceId, const std::vector<IterationResult>& iterations,
                                   scoring::Baseline baseline, const ScoringConfig& config) {
  struct Entry {
    int iteration;
    scoring::AgentScore score;
  };
  std::vector<Entry> entries;
  for (const auto& it : iterations) {
    if (it.score) entries.push_back({it.iteration, *it.score});
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.score.eligible() != b.score.eligible()) return a.score.eligible();
    if (a.score.total != b.score.total) return a.score.total > b.score.total;
    return a.iteration > b.iteration;
  });
  scoring::RaceScores scores;
  scores.raceId = raceId;
  scores.baseline = std::move(baseline);
  scores.autoMergeEnabled = config.autoMerge;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].score.rank = static_cast<int>(i + 1);
    scores.rankings.push_back(std::move(entries[i].score));
  }
  if (!scores.rankings.empty() && scores.rankings.front().eligible() &&
      scores.rankings.front().total >= config.thresholds.failMaximum) {
    const scoring::AgentScore& best = scores.rankings.front();
    scores.winner = best.agentId;
    scores.autoMergeEligible = best.total >= config.thresholds.autoMergeMinimum && best.flags.empty();
  } else {
    scores.allFailed = true;
  }
  return scores;
}

}  // namespace hydra::core::collab
