#include "core/guard/worktree_link.h"

#include <sys/stat.h>

namespace hydra::core::guard {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLinkName = ".git";

std::string linkContent(const fs::path& gitMetadata) {
  return "gitdir: " + gitMetadata.string() + "\n";
}

}  // namespace

bool worktreeLinkIntact(const SafeDir& worktree, const fs::path& gitMetadata) {
  std::string text;
  try {
    const auto st = worktree.status(kLinkName);
    if (!st || !S_ISREG(st->st_mode)) return false;
    text = worktree.readFile(kLinkName, 64 * 1024);
  } catch (const std::exception&) {
    return false;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const std::string prefix = "gitdir: ";
  if (text.rfind(prefix, 0) != 0) return false;
  const fs::path target = text.substr(prefix.size());
  std::error_code ec;
  return fs::equivalent(target, gitMetadata, ec) && !ec;
}

bool worktreeLinkIntact(const fs::path& worktree, const fs::path& gitMetadata) {
  try {
    return worktreeLinkIntact(SafeDir::open(worktree), gitMetadata);
  } catch (const std::exception&) {
    return false;
  }
}

void restoreWorktreeLink(const SafeDir& worktree, const fs::path& gitMetadata) {
  // A directory (a repository of the agent's own) in its place goes; a file
  // or a link is replaced in one step.
  const auto st = worktree.status(kLinkName);
  if (st && S_ISDIR(st->st_mode)) worktree.remove(kLinkName);
  worktree.writeFile(kLinkName, linkContent(gitMetadata));
}

void restoreWorktreeLink(const fs::path& worktree, const fs::path& gitMetadata) {
  restoreWorktreeLink(SafeDir::open(worktree), gitMetadata);
}

}  // namespace hydra::core::guard
