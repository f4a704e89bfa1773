#pragma once

// Reviewing and merging a finished race's results: which agent, which diff,
// and the merge of its branch into the user's branch.

#include <filesystem>
#include <optional>
#include <string>

#include "core/config/config.h"
#include "core/merge/diff.h"
#include "core/merge/merge.h"
#include "core/race/record.h"
#include "core/scoring/scores.h"

namespace hydra::core {

// A race or agent that does not exist, or is not in a state to be reviewed.
class ReviewError : public std::runtime_error {
 public:
  enum class Kind { UnknownRace, UnknownAgent, NoResult, NotScored, RaceRunning };
  ReviewError(Kind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// The agent's record in `race`, with a result commit. Throws ReviewError.
const AgentRecord& resultOf(const RaceRecord& race, const std::string& agentId);

// `agentId` if given, else the race's winner. Throws ReviewError.
std::string chooseAgent(const RaceRecord& race, const std::optional<scoring::RaceScores>& scores,
                        const std::optional<std::string>& agentId);

struct RaceMerge {
  merge::MergeResult result;
  std::string agentId;
  std::string branch;
  bool cleanedUp = false;  // the race's worktrees and branches were removed
};

// Merges the agent's branch into the branch HEAD points at. After a real merge
// (fast-forward or merge commit) the race's worktrees and branches are removed
// unless `keep`. Throws ReviewError, merge::MergeRefused, git::GitError.
RaceMerge mergeRaceAgent(const std::filesystem::path& repoRoot, const Config& config, const RaceRecord& race,
                         const std::string& agentId, bool dryRun, bool keep);

}  // namespace hydra::core
