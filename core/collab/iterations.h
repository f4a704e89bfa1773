#pragma once

// A collaboration's iterations as results: how an iteration is named
// ("builder@2"), and how the iterations rank into the collaboration's scores.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"
#include "core/events/events.h"
#include "core/scoring/scores.h"

namespace hydra::core::collab {

// The agent ids of a collaboration's two agents.
inline constexpr std::string_view kBuilder = "builder";
inline constexpr std::string_view kReviewer = "reviewer";

// "builder@N": iteration N's result, where a race would name an agent.
std::string iterationId(int iteration);
// N of "builder@N" (N >= 1, digits only); nullopt for anything else.
std::optional<int> parseIterationId(std::string_view id);

// The collaboration's scores: every scored iteration, ranked like a race's
// agents are (eligible first, then total) but with ties going to the later
// iteration; the winner is the best one when it is eligible and above
// fail_maximum; auto-merge eligibility as for a race.
scoring::RaceScores rankIterations(const std::string& raceId, const std::vector<IterationResult>& iterations,
                                   scoring::Baseline baseline, const ScoringConfig& config);

}  // namespace hydra::core::collab
