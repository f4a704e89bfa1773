#pragma once

// [general] copy_ignored: folders the user's checkout holds but git ignores
// (node_modules, .venv, target, ...), copied into a new worktree so its agent
// does not start by installing everything again. Files are cloned (reflink)
// where the file system can, which costs no data blocks; otherwise copied.
// Links are copied as links, never followed; special files are left out.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace hydra::core::git {

struct CopyReport {
  std::vector<std::string> copied;    // the folders copied
  std::vector<std::string> present;   // not copied: the worktree has them already (a reused worktree)
  std::vector<std::string> problems;  // why a folder was not copied, one line each
  std::uintmax_t files = 0;           // files and links written
  std::uintmax_t cloned = 0;          // of which cloned rather than copied
};

// Copies each of `folders` (relative to the repository root) from the user's
// checkout at `repoRoot` into `worktree`. A folder that is missing, is not a
// directory, is a link, or is not ignored by git (so the checkout has it, or
// the agent's commit would take it in) is not copied, and the report says why.
CopyReport copyIgnored(const std::filesystem::path& repoRoot, const std::filesystem::path& worktree,
                       const std::vector<std::string>& folders);

}  // namespace hydra::core::git
