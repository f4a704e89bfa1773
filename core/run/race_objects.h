#pragma once

// The end of a race's writes into git: its object quarantine
// (core/git/object_quarantine.h) is sealed, whichever mode ran it.

#include <string>

#include "core/git/worktree.h"

namespace hydra::core {

// Seals race `raceId`'s quarantine, if it has one: no agent of it commits
// any more, so what is touched there from now on is someone else's git
// relying on it (drop() keeps that). A failure is said in the log: an
// unsealed quarantine is dropped as safely, copying more. Blocking (a few
// milliseconds: the seal waits for the clock to tick).
void sealRaceObjects(const WorktreeManager& worktrees, const std::string& raceId);

}  // namespace hydra::core
