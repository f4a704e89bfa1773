#include "core/run/result_commit.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/guard/worktree_link.h"

namespace hydra::core {

namespace fs = std::filesystem;

std::optional<std::string> worktreeReplaced(const fs::path& path, const SafeDir& opened) {
  const std::string what = "replaced its worktree " + path.string();
  const std::string consequence = "; its work is not committed";
  struct stat now {};
  if (::lstat(path.c_str(), &now) != 0) {
    return "moved its worktree " + path.string() + " away (" + std::strerror(errno) + ")" + consequence;
  }
  if (S_ISLNK(now.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(path, ec);
    return what + " with a symbolic link" + (ec ? std::string() : " to " + target.string()) +
           " (hydra did not follow it)" + consequence;
  }
  if (!S_ISDIR(now.st_mode)) return what + " with something that is not a directory" + consequence;
  try {
    if (FileIdentity{now.st_dev, now.st_ino} == opened.identity()) return std::nullopt;
  } catch (const std::exception& e) {
    return "left its worktree " + path.string() + " unreadable (" + e.what() + ")" + consequence;
  }
  return what + " with another directory" + consequence;
}

bool settleWorktree(const fs::path& path, const SafeDir* opened, const std::optional<fs::path>& gitMetadata,
                    AgentFinished& finished) {
  if (!opened) return true;
  // A worktree moved away, with a link (to the user's checkout, say) or
  // another directory in its place: nothing hydra does from here on may go
  // there, and its work is not committed from there.
  if (auto swapped = worktreeReplaced(path, *opened)) {
    // A link in its place goes (never what it names), so that no later step
    // (a next round, the cleanup) takes the link for the worktree.
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(path, ec)) && fs::remove(path, ec)) *swapped += " (the link was removed)";
    finished.escapes.push_back(*swapped);
    spdlog::warn("race {}: {}: {}", finished.raceId, finished.agentId, *swapped);
    return false;
  }
  // A deleted or rewritten .git link would make hydra commit its work into
  // another repository (the user's checkout): put back before the commit,
  // through the directory opened at launch, never through a link.
  if (gitMetadata && !guard::worktreeLinkIntact(*opened, *gitMetadata)) {
    try {
      guard::restoreWorktreeLink(*opened, *gitMetadata);
      finished.escapes.push_back("deleted or rewrote its worktree's .git link (put back)");
    } catch (const std::exception& e) {
      finished.escapes.push_back(std::string("deleted or rewrote its worktree's .git link (could not be put back: ") +
                                 e.what() + ")");
    }
  }
  return true;
}

void noteLeftRunning(AgentFinished& finished, const ReapReport& report, std::size_t counted, bool countedInside) {
  const std::size_t ended = countedInside ? std::max(report.killed.size(), counted) : report.killed.size() + counted;
  if (ended > 0) {
    std::string what =
        std::to_string(ended) + (ended == 1 ? " process" : " processes") + " it left running ended with it";
    spdlog::info("race {}: {}: {}", finished.raceId, finished.agentId, what);
    finished.warnings.push_back(what);
  }
  if (!report.survivors.empty()) {
    spdlog::error("race {}: {}: {} of its processes survived SIGKILL", finished.raceId, finished.agentId,
                  report.survivors.size());
  }
}

void commitResult(const ResultCommit& commit, AgentFinished& finished) {
  std::string commitError;
  try {
    // Counted first, from directory entries alone: a result over a limit
    // never reaches the object store, not even in part.
    const ResultSize size = measureResult(commit.checkout.path, commit.limits, commit.cancelled);
    if (size.overLimit) {
      finished.tooLarge = size.describe(commit.limits);
      if (finished.status == AgentStatus::Completed) finished.status = AgentStatus::Failed;
      if (!finished.error) finished.error = *finished.tooLarge;
      spdlog::warn("race {}: {}: {}", finished.raceId, finished.agentId, *finished.tooLarge);
    } else {
      // The race's objects go to its quarantine: `hydra cleanup` drops what
      // no merge took (core/git/object_quarantine.h).
      const ObjectQuarantine quarantine = commit.worktrees.quarantine(commit.raceId);
      commit.worktrees.commitAll(commit.checkout, commit.message, commit.cancelled, &size, &quarantine);
    }
    finished.commit = commit.worktrees.headCommit(commit.checkout);
  } catch (const ResultCancelled& e) {
    if (finished.status == AgentStatus::Completed) finished.status = AgentStatus::Cancelled;
    if (!finished.error) finished.error = e.what();
    try {
      finished.commit = commit.worktrees.headCommit(commit.checkout);  // what it had before
    } catch (const std::exception&) {
    }
  } catch (const std::exception& e) {
    commitError = e.what();
  }
  if (!commitError.empty()) {
    spdlog::error("race {}: committing {}'s work failed: {}", finished.raceId, finished.agentId, commitError);
    // Its work is not on its branch: whatever the agent did, the result is lost.
    if (finished.status == AgentStatus::Completed) finished.status = AgentStatus::Failed;
    if (!finished.error) finished.error = "committing its work failed: " + commitError;
  }
}

}  // namespace hydra::core
