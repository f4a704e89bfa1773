#pragma once

// What an agent leaves behind becomes its result, once it and everything it
// started have ended (the run reaps first, then commits): its worktree is
// checked to still be the directory hydra made, its .git link put back if the
// agent broke it, what it left running said in its warnings; then its work is
// measured against [general] max_result_files / max_result_bytes and, within
// them, committed with its objects in the race's quarantine
// (core/git/object_quarantine.h).
//
// Blocking (directory walks, libgit2): the pool.

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>

#include "core/events/events.h"
#include "core/git/result_size.h"
#include "core/git/worktree.h"
#include "core/process/reaper.h"
#include "core/util/safe_fs.h"

namespace hydra::core {

// What became of a worktree's directory since `opened` was opened (at
// launch): nullopt while `path` still leads to it; else what the agent did,
// for its escapes (lstat, not open: a worktree it merely made unreadable is
// still its worktree).
std::optional<std::string> worktreeReplaced(const std::filesystem::path& path, const SafeDir& opened);

// Checks a finished agent's worktree at `path` before its work is committed.
// False when the path no longer leads to `opened` (said in
// finished.escapes; a symbolic link in its place is removed, never what it
// names): nothing is committed from there. A .git link the agent deleted or
// rewrote is put back, through `opened`, to name `gitMetadata` again (also
// said in its escapes): otherwise the commit would go into another
// repository. Without `opened` nothing is checked.
bool settleWorktree(const std::filesystem::path& path, const SafeDir* opened,
                    const std::optional<std::filesystem::path>& gitMetadata, AgentFinished& finished);

// How many processes the agent left running were ended with it, in its
// warnings: `report` is the reaper's, `counted` what the sandbox (or the
// executor) counted. Confined (`countedInside`), the sandbox counted
// everything left in its namespace, the reaper's among them; unconfined
// the two are apart.
void noteLeftRunning(AgentFinished& finished, const ReapReport& report, std::size_t counted, bool countedInside);

struct ResultCommit {
  WorktreeManager& worktrees;
  const Worktree& checkout;
  std::string raceId;   // whose object quarantine takes the commit's objects
  std::string message;  // the commit's
  ResultLimits limits;
  // Set to stop between files (a cancel): the run's work is not committed.
  const std::atomic<bool>* cancelled = nullptr;
};

// Commits what the agent left in its checkout, into `finished`: its commit
// (the branch's head, what it had before when nothing was committed);
// tooLarge (and Failed) when over a limit, nothing of it stored; Cancelled
// when stopped; Failed, "committing its work failed: ...", when git failed.
// A status other than Completed is kept, as is an error already said.
void commitResult(const ResultCommit& commit, AgentFinished& finished);

}  // namespace hydra::core
