#include "core/sandbox/policy.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "core/git/git.h"
#include "core/sandbox/paths.h"

extern char** environ;

namespace hydra::core::sandbox {

namespace fs = std::filesystem;

namespace {

// Variables that make git work on another repository than the one around
// the working directory, or change its configuration behind its back.
constexpr std::string_view kGitVariables[] = {
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CONFIG",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
};

// The environment the child would get from Process: hydra's own, minus
// spec.unsetEnv, plus spec.env.
std::map<std::string, std::string> effectiveEnvironment(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view kv(*entry);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  for (const std::string& name : spec.unsetEnv) env.erase(name);
  for (const auto& [name, value] : spec.env) env[name] = value;
  return env;
}

void unset(ProcessSpec& spec, const std::string& name) {
  spec.env.erase(name);
  if (std::find(spec.unsetEnv.begin(), spec.unsetEnv.end(), name) == spec.unsetEnv.end()) {
    spec.unsetEnv.push_back(name);
  }
}

}  // namespace

SandboxPolicy policyForWorktree(const fs::path& worktree) {
  auto repo = git::openRepository(worktree);
  if (git_repository_is_worktree(repo.get()) != 1) {
    throw git::GitError(GIT_EINVALID, GIT_ERROR_WORKTREE,
                        "'" + worktree.string() + "' is not a linked worktree");
  }
  SandboxPolicy policy;
  policy.worktree = git::workdir(repo.get());
  std::string metadata = git_repository_path(repo.get());
  while (metadata.size() > 1 && metadata.back() == '/') metadata.pop_back();
  policy.gitMetadata = fs::path(metadata);
  auto main = git::openRepository(git::commonDir(repo.get()));
  policy.repository = git::workdir(main.get());

  const fs::path workspaces = policy.worktree.parent_path();
  if (workspaces != policy.repository && isWithin(workspaces, policy.repository)) {
    policy.hidden.push_back(workspaces);
  }
  policy.hidden.push_back(policy.repository / ".hydra");
  return policy;
}

std::vector<fs::path> gitCommitPaths(const fs::path& commonDir, const std::string& branch) {
  const fs::path ref = fs::path("refs/heads") / branch;
  std::vector<fs::path> paths = {commonDir / "objects", commonDir / ref.parent_path(),
                                 commonDir / "logs" / ref.parent_path()};
  // After `git pack-refs` the ref folders may be gone; a bind needs them.
  for (const fs::path& path : paths) fs::create_directories(path);
  return paths;
}

void applyPolicyEnvironment(ProcessSpec& spec, const SandboxPolicy& policy) {
  spec.cwd = policy.worktree;
  for (std::string_view name : kGitVariables) unset(spec, std::string(name));

  // The user's checkout as given and as it resolves: a variable may use either.
  const std::set<fs::path> checkouts = {policy.repository.lexically_normal(),
                                        resolved(policy.repository)};
  const std::set<fs::path> worktrees = {policy.worktree.lexically_normal(),
                                        resolved(policy.worktree)};
  auto intoCheckout = [&](std::string_view value) {
    if (value.empty() || value.front() != '/') return false;
    const fs::path path(value);
    bool inCheckout = false;
    bool inWorktree = false;
    for (const fs::path& c : checkouts) inCheckout = inCheckout || isWithin(path, c);
    for (const fs::path& w : worktrees) inWorktree = inWorktree || isWithin(path, w);
    return inCheckout && !inWorktree;
  };

  for (const auto& [name, value] : effectiveEnvironment(spec)) {
    if (name == "PWD") continue;
    if (intoCheckout(value)) {
      unset(spec, name);
      continue;
    }
    if (value.find(':') == std::string::npos) continue;
    // A list of paths (PATH, PYTHONPATH, ...): drop just the entries in the checkout.
    std::vector<std::string_view> kept;
    bool dropped = false;
    std::string_view rest(value);
    for (;;) {
      const std::size_t colon = rest.find(':');
      const std::string_view entry = rest.substr(0, colon);
      if (intoCheckout(entry)) {
        dropped = true;
      } else {
        kept.push_back(entry);
      }
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
    if (!dropped) continue;
    if (kept.empty()) {
      unset(spec, name);
      continue;
    }
    std::string joined(kept.front());
    for (std::size_t i = 1; i < kept.size(); ++i) (joined += ':') += kept[i];
    spec.env[name] = joined;
  }
  spec.env["PWD"] = policy.worktree.string();
}

ProcessSpec unconfined(ProcessSpec spec, const SandboxPolicy& policy) {
  applyPolicyEnvironment(spec, policy);
  return spec;
}

}  // namespace hydra::core::sandbox
