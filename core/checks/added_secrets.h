#pragma once

// Secrets an agent wrote into its files. Printed secrets are masked in the
// logs (core/util/redact.h); one written to a file would be committed to the
// agent's branch and shown by every diff. The same scanner reads the lines
// the agent's patch adds, so that such an agent is flagged (it is not merged
// automatically, and a merge by hand asks first).
//
// Bounded: only added lines are read, and at most kMaxScannedPerFile bytes
// of them per file; a secret past that in one file goes unnoticed here (the
// diffs hydra shows are masked whole all the same).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/redact.h"

namespace hydra::core::checks {

inline constexpr std::size_t kMaxScannedPerFile = 256 * 1024;

// Where `patch` (git-style, as merge::unifiedPatch makes it) adds a line that
// `redactor` would mask, as "path:line" with the line number in the agent's
// version: "leak.txt:1". In the order of the patch.
std::vector<std::string> addedSecrets(std::string_view patch, const Redactor& redactor,
                                      std::size_t maxScannedPerFile = kMaxScannedPerFile);

}  // namespace hydra::core::checks
