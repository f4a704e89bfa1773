#pragma once

// What the containment tests need: a repository laid out like one in the
// middle of a race, the hostile agents of tests/fixtures/hostile run for
// real (under bubblewrap or not), and ways to see what they left behind, on
// disk and in the process table.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/git/git.h"
#include "core/git/worktree.h"
#include "core/process/process.h"
#include "core/process/reaper.h"
#include "core/sandbox/policy.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::testing {

// The user's checkout on main (two commits, the second tagged v1, refs packed),
// with hydra.toml, a record under .hydra/, and two agent worktrees made by
// WorktreeManager under .hydra-workspaces/: `agent` (the one the hostile
// script runs in) and `sibling`.
class RaceRepo {
 public:
  RaceRepo();

  const std::filesystem::path& root() const { return repo_.root(); }
  const Worktree& agent() const { return agent_; }
  const Worktree& sibling() const { return sibling_; }
  std::filesystem::path gitMetadata(const Worktree& worktree) const;
  std::string git(const std::string& args) const { return repo_.git(args); }
  // Everything the user owns, byte for byte: the checkout with its .git,
  // .hydra/ and the sibling's worktree; not the agent's own worktree and
  // metadata, which it may write.
  std::map<std::string, std::string> userImage() const;

 private:
  git::LibGit2 libgit2_;
  TempRepo repo_;
  Worktree agent_;
  Worktree sibling_;
};

// Every entry below `root`, by relative path: its type, permission bits and
// content (a symlink's target). Entries inside `except` are left out.
std::map<std::string, std::string> treeImage(const std::filesystem::path& root,
                                             const std::vector<std::filesystem::path>& except);

// The entries of two images that differ, one line each, for failure messages.
std::string imageDifferences(const std::map<std::string, std::string>& before,
                             const std::map<std::string, std::string>& after);

std::filesystem::path hostileFixture(const std::string& name);

enum class Confinement { Bubblewrap, None };

struct FixtureOptions {
  Confinement confinement = Confinement::Bubblewrap;
  // Unconfined: the run's token goes into its environment, and the reaper
  // watches it while it runs. It is not told to kill: that is the test's part.
  std::shared_ptr<RunReaper> reaper;
  bool cancelOnReady = false;  // cancel the run when it prints "ready"
  std::chrono::milliseconds timeout{120000};
  // Applied to the spec once the policy has been (unconfined: PWD back to the checkout ...).
  std::function<void(ProcessSpec&)> adjust;
  // Confined: added to the policy's writable paths.
  std::vector<std::filesystem::path> writable;
};

struct FixtureRun {
  std::vector<std::string> out;
  std::vector<std::string> err;
  std::optional<ProcessResult> result;
  pid_t pid = -1;
  std::string transcript() const;  // stdout and stderr, for failure messages
};

// Runs the hostile agent `script` in repo.agent(), the way hydra runs an
// agent: HYDRA_WORKTREE, HYDRA_AGENT_ID and HYDRA_RACE_ID set, the policy of
// the worktree (sandbox::policyForWorktree) applied.
FixtureRun runFixture(const std::string& script, const RaceRepo& repo, FixtureOptions options);

// The descendants of this process that still run, once the exited ones
// hydra adopted are reaped.
std::vector<pid_t> livingDescendants();
// Waits (a generous bound, for a busy machine) until no descendant runs;
// returns those still running then.
std::vector<pid_t> waitForNoDescendants();

std::optional<pid_t> readPidFile(const std::filesystem::path& file);
// Running: present and not a zombie.
bool pidRunning(pid_t pid);

}  // namespace hydra::core::testing
