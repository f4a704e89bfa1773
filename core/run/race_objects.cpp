#include "core/run/race_objects.h"

#include <spdlog/spdlog.h>

namespace hydra::core {

void sealRaceObjects(const WorktreeManager& worktrees, const std::string& raceId) {
  try {
    if (const auto quarantine = ObjectQuarantine::find(worktrees.commonDir(), raceId)) quarantine->seal();
  } catch (const std::exception& e) {
    spdlog::warn("race {}: could not seal its objects' quarantine: {}", raceId, e.what());
  }
}

}  // namespace hydra::core
