#pragma once

// What an agent's processes may take, from hydra.toml's settings
// (ResourceLimitSettings, as parsed) to what a run enforces
// (core/process/resource_limits.h).

#include "core/config/config.h"
#include "core/process/resource_limits.h"

namespace hydra::core {

// An agent's limits: each of [agents.NAME]'s keys that is set, else
// [general]'s, else the default; 0 turns a limit off.
ResourceLimits resourceLimitsFor(const ResourceLimitSettings& general, const ResourceLimitSettings& agent);

}  // namespace hydra::core
