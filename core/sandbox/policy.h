#pragma once

// What an agent (or a check that runs agent-written code) may touch: its own
// worktree and that worktree's git metadata, the state directories its CLI
// needs, a private /tmp. Everything else is read-only, and the places where
// the other agents and hydra itself keep their work are hidden.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/process/process.h"

namespace hydra::core::sandbox {

struct SandboxPolicy {
  // Writable; the working directory and PWD of the run.
  std::filesystem::path worktree;
  // Writable: the worktree's own metadata in the main repository
  // (.git/worktrees/NAME: its HEAD and index), so that `git status` can
  // refresh the index. Nothing else in the main .git is writable: `git add`
  // and `git commit` fail unless gitCommitPaths() are added.
  std::optional<std::filesystem::path> gitMetadata;
  // The main repository's working directory, the user's checkout: read-only.
  // It is bound again after the private /tmp, in case it lives under /tmp.
  std::filesystem::path repository;
  // Also writable, created when missing: the CLI's state directories
  // (adapters declare them), [agents.NAME] writable_paths.
  std::vector<std::filesystem::path> writable;
  // Bound read-only again after the private /tmp replaced /tmp: tool installs
  // that live under /tmp. Paths that do not exist are left out.
  std::vector<std::filesystem::path> readOnly;
  // Replaced by an empty read-only directory: the sibling worktrees, hydra's
  // records. The worktree and gitMetadata stay visible inside them.
  std::vector<std::filesystem::path> hidden;
  // A fresh, empty, private /tmp (mode 1777) instead of the host's.
  bool privateTmp = true;
  // A network namespace of its own, loopback only (network = "none" or
  // "allowlist", core/sandbox/network.h): bwrap --unshare-net.
  bool ownNetwork = false;
};

// The policy of an agent working in `worktree`, a linked worktree made by
// WorktreeManager: gitMetadata and repository found with libgit2; the
// worktrees' folder (the worktree's parent, when inside the repository) and
// the repository's .hydra hidden. Throws GitError when `worktree` is not a
// linked worktree of a non-bare repository.
SandboxPolicy policyForWorktree(const std::filesystem::path& worktree);

// What a run needs writable, beyond its policy, for `git add` and `git commit` inside the
// worktree on `branch` (e.g. "hydra/claude-20261121-120411"): the object
// store and the folder of the branch's ref and reflog, created when missing.
// These are shared by every worktree of the repository: an agent could then
// move a sibling's branch (the ref guard, core/guard, catches that) or delete
// objects. hydra commits what an agent leaves by itself, so this is opt-in.
std::vector<std::filesystem::path> gitCommitPaths(const std::filesystem::path& commonDir,
                                                  const std::string& branch);

// Makes `spec` run in the worktree, with an environment that points at the
// worktree and nowhere else in the user's checkout: cwd and PWD are the
// worktree; git's repository-selecting variables (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE, ...) are removed; so is every variable whose value is a
// path inside the repository but outside the worktree (OLDPWD, INIT_CWD,
// ...), and colon-separated lists (PATH) lose just those entries. Applies
// to hydra's own environment as the child would inherit it and to spec.env.
void applyPolicyEnvironment(ProcessSpec& spec, const SandboxPolicy& policy);

// `spec` as it runs without a sandbox: applyPolicyEnvironment() only.
ProcessSpec unconfined(ProcessSpec spec, const SandboxPolicy& policy);

}  // namespace hydra::core::sandbox
