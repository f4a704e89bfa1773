#pragma once

// What every mode's units use to start agent-written code (an agent's CLI, a
// build, test or lint check) in a checkout: the policy for that checkout, and
// the command confined to it or, unconfined, with its environment pointing at
// it and nowhere else.

#include <filesystem>
#include <vector>

#include "core/process/process.h"
#include "core/sandbox/mode.h"

namespace hydra::core::sandbox {

// `spec` to run in `checkout` (a linked worktree) as `decision` says; null
// means no decision was made (a unit driven on its own): `spec` as it is. `writable`: more paths the run may write (a CLI's state
// directories, [agents.NAME] writable_paths); `visible`: paths it must see
// although they live under /tmp (its HOME, its binary's folder). Relative
// paths in either are ignored. Confined, the TMPDIR the run gets (its own or
// hydra's) is writable too. `ownNetwork`: SandboxPolicy::ownNetwork, confined
// only (unconfined, the caller runs it in net-jail, net_jail.h). A program that cannot be found is left
// unconfined, so that Process reports it the usual way. Throws SandboxError
// or git::GitError.
ProcessSpec sandboxed(ProcessSpec spec, const SandboxDecision* decision, const std::filesystem::path& checkout,
                      const std::vector<std::filesystem::path>& writable = {},
                      const std::vector<std::filesystem::path>& visible = {}, bool ownNetwork = false);

}  // namespace hydra::core::sandbox
