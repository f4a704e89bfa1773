#pragma once

// Turns a command into the same command confined by bubblewrap to a
// SandboxPolicy. The layout, in the order bwrap applies it:
//
//   --ro-bind / /  --dev /dev  --proc /proc       the system, read-only
//   --perms 1777 --tmpfs /tmp                     a private /tmp (policy.privateTmp)
//   then, parents before children:
//     --ro-bind P P       the repository, policy.readOnly
//     --tmpfs P           policy.hidden (made read-only at the end)
//     --bind P P          the worktree, gitMetadata, policy.writable
//     --ro-bind W/.git    the worktree's link to its metadata, so that it
//                         cannot be deleted or pointed elsewhere
//   --remount-ro P        each hidden path
//   --unshare-pid --die-with-parent   the run's own PID namespace: when its
//                         first process ends, or hydra dies, everything in it dies
//   --new-session         no controlling terminal (no TIOCSTI into the user's shell)
//   --cap-drop ALL        mandatory as root: otherwise `mount -o remount,rw /` undoes it all
//   --chdir WORKTREE -- PROGRAM ARGS...
//
//   --unshare-net         policy.ownNetwork: a network namespace of its own
//
// The network stays shared (agents need their model, often on 127.0.0.1)
// unless policy.ownNetwork (network = "none" or "allowlist").
// Not confined: CPU, memory, and whatever a reachable socket (/run/...) does
// on the agent's behalf.
//
// --die-with-parent means "when the thread that started bwrap exits": start
// confined processes from a thread that lives as long as the run (the
// io_context's), not from a short-lived worker.

#include <filesystem>

#include "core/process/process.h"
#include "core/sandbox/policy.h"

namespace hydra::core::sandbox {

// `spec` confined by `bwrap` (the binary, e.g. SandboxDecision::bwrap) to
// `policy`: program = bwrap, args = the layout above, then `--`, the program
// (resolved against spec.cwd/PATH now, as Process would) and its args; the
// environment as applyPolicyEnvironment() makes it; timeout and kill grace
// unchanged. Creates the writable paths that do not exist yet. Throws
// SandboxError for a policy that would not confine: a relative path, a
// missing worktree, a writable path that contains the repository or lies in
// it outside the worktree, a program that the private /tmp would hide.
ProcessSpec confine(ProcessSpec spec, const SandboxPolicy& policy,
                    const std::filesystem::path& bwrap);

}  // namespace hydra::core::sandbox
