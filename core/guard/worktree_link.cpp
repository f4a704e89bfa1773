#include "core/guard/worktree_link.h"

#include <fstream>
#include <sstream>

#include "core/util/atomic_file.h"

namespace hydra::core::guard {

namespace fs = std::filesystem;

namespace {

std::string linkContent(const fs::path& gitMetadata) {
  return "gitdir: " + gitMetadata.string() + "\n";
}

}  // namespace

bool worktreeLinkIntact(const fs::path& worktree, const fs::path& gitMetadata) {
  const fs::path link = worktree / ".git";
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(link, ec))) return false;
  std::ifstream in(link, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  std::string text = content.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const std::string prefix = "gitdir: ";
  if (text.rfind(prefix, 0) != 0) return false;
  const fs::path target = text.substr(prefix.size());
  return fs::equivalent(target, gitMetadata, ec) && !ec;
}

void restoreWorktreeLink(const fs::path& worktree, const fs::path& gitMetadata) {
  const fs::path link = worktree / ".git";
  // A directory (a repository of the agent's own) or a symlink in its place
  // goes; a file is replaced in one step.
  if (!fs::is_regular_file(fs::symlink_status(link))) fs::remove_all(link);
  writeFileAtomic(link, linkContent(gitMetadata));
}

}  // namespace hydra::core::guard
