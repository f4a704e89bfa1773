#pragma once

// A mode's run, as the workspace holds it: a race (core/race/race.h) or a
// collaboration (core/collab/collaboration.h). Each is built of the same
// units (agent runs, result scoring) and publishes through the same events;
// the workspace only needs to stop them and to know when they are quiet.
// io thread only.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hydra::core {

class Strategy {
 public:
  virtual ~Strategy() = default;

  virtual const std::string& id() const = 0;
  // The whole run, or one agent of it. False when there is nothing left to cancel.
  virtual bool cancel(std::optional<std::string_view> agentId = std::nullopt) = 0;
  // hydra or its client is going away: every agent and check is killed and
  // the run ends as interrupted, now.
  virtual void interrupt() = 0;
  // No process of this run (agent or check) is alive.
  virtual bool quiet() const = 0;
  // The process groups of its agents and checks that run now.
  virtual std::vector<pid_t> processGroups() const = 0;
};

}  // namespace hydra::core
