#include "core/sandbox/bubblewrap.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string_view>
#include <system_error>
#include <tuple>

#include "core/git/worktree.h"
#include "core/sandbox/mode.h"
#include "core/sandbox/paths.h"

namespace hydra::core::sandbox {

namespace fs = std::filesystem;

namespace {

// One mount of the layout. Applied parents first: a bind inside another one
// must come after it, or the outer one would cover it.
struct Mount {
  enum Kind { Tmpfs, ReadOnly, Writable };  // at one path, the last one wins
  fs::path path;
  Kind kind;

  bool operator<(const Mount& other) const {
    return std::tie(path, kind) < std::tie(other.path, other.kind);
  }
};

void requireAbsolute(const fs::path& path, const char* what) {
  if (!path.is_absolute()) {
    throw SandboxError(std::string(what) + " '" + path.string() + "' is not an absolute path");
  }
}

fs::path existingDirectory(const fs::path& path, const char* what) {
  requireAbsolute(path, what);
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    throw SandboxError(std::string(what) + " '" + path.string() + "' is not a directory");
  }
  return fs::canonical(path);
}

// The program as execve will need it inside the sandbox, resolved the way
// Process resolves it: against spec.cwd when it holds a '/', else on PATH.
fs::path resolveProgram(const ProcessSpec& spec) {
  if (spec.program.empty()) throw SandboxError("no program given");
  if (spec.program.find('/') != std::string::npos) {
    const fs::path base = spec.cwd.empty() ? fs::current_path() : fs::absolute(spec.cwd);
    const fs::path path = (base / spec.program).lexically_normal();
    if (!findExecutable(path.string(), "")) {
      throw SandboxError("'" + path.string() + "' is not an executable file");
    }
    return path;
  }
  std::string searchPath;
  if (auto it = spec.env.find("PATH"); it != spec.env.end()) {
    searchPath = it->second;
  } else if (const char* path = std::getenv("PATH")) {
    searchPath = path;
  }
  const auto found = findExecutable(spec.program, searchPath);
  if (!found) {
    throw SandboxError("program '" + spec.program + "' not found on PATH (searched \"" +
                       searchPath + "\")");
  }
  return fs::absolute(*found);
}

}  // namespace

// Between bubblewrap and the command when the caller asks how many
// processes the command left running (ProcessSpec::leftoversFd): when the
// command exits, the namespace's end would take them down unseen, so the
// shell counts them first (every process in the namespace but its init and
// itself; a zombie, already ended and waiting for init to reap it, and one
// gone meanwhile do not count), says so on descriptor 3, and ends as the
// command did. Only builtins run while it counts: nothing it starts is
// counted. The command does not get descriptor 3.
constexpr std::string_view kLeftoversShim =
    "\"$@\" 3>&-; s=$?; n=0; for p in /proc/[0-9]*; do z=gone; "
    "while read -r k v _; do if [ \"$k\" = State: ]; then [ \"$v\" = Z ] || z=live; break; fi; "
    "done 2>/dev/null < \"$p/status\"; [ $z = live ] && n=$((n + 1)); done; echo $((n - 2)) >&3; exec 3>&-; "
    "if [ \"$s\" -gt 128 ]; then trap - $((s - 128)); kill -$((s - 128)) $$; fi; exit \"$s\"";

ProcessSpec confine(ProcessSpec spec, const SandboxPolicy& given, const fs::path& bwrap) {
  requireAbsolute(bwrap, "bubblewrap binary");
  // Every path canonical: bwrap binds what a path resolves to, and the
  // checks below compare paths component by component.
  SandboxPolicy policy;
  policy.privateTmp = given.privateTmp;
  policy.ownNetwork = given.ownNetwork;
  policy.worktree = existingDirectory(given.worktree, "worktree");
  if (given.repository.empty()) throw SandboxError("no repository given");
  policy.repository = existingDirectory(given.repository, "repository");
  std::optional<fs::path> commonDir;
  if (given.gitMetadata) {
    policy.gitMetadata = existingDirectory(*given.gitMetadata, "git metadata directory");
    commonDir = policy.gitMetadata->parent_path().parent_path();  // <common>/worktrees/NAME
  }
  if (isWithin(policy.repository, policy.worktree)) {
    throw SandboxError("the worktree '" + policy.worktree.string() +
                       "' is or contains the user's checkout '" + policy.repository.string() + "'");
  }
  for (const fs::path& path : given.writable) {
    requireAbsolute(path, "writable path");
    std::error_code ec;
    fs::create_directories(path, ec);
    if (ec) {
      throw SandboxError("cannot create writable path '" + path.string() + "': " + ec.message());
    }
    const fs::path canonical = fs::canonical(path);
    if (isWithin(policy.repository, canonical)) {
      throw SandboxError("writable path '" + path.string() +
                         "' would make the user's checkout writable");
    }
    if (isWithin(canonical, policy.repository) && !isWithin(canonical, policy.worktree) &&
        !(commonDir && isWithin(canonical, *commonDir))) {
      throw SandboxError("writable path '" + path.string() +
                         "' lies in the user's checkout, outside the worktree");
    }
    policy.writable.push_back(canonical);
  }
  for (const fs::path& path : given.readOnly) {
    requireAbsolute(path, "read-only path");
    if (fs::exists(path)) policy.readOnly.push_back(fs::canonical(path));
  }
  for (const fs::path& path : given.hidden) {
    requireAbsolute(path, "hidden path");
    if (fs::is_directory(path)) policy.hidden.push_back(fs::canonical(path));
  }

  std::set<Mount> mounts;
  mounts.insert({policy.repository, Mount::ReadOnly});
  for (const fs::path& path : policy.readOnly) mounts.insert({path, Mount::ReadOnly});
  for (const fs::path& path : policy.hidden) mounts.insert({path, Mount::Tmpfs});
  mounts.insert({policy.worktree, Mount::Writable});
  if (policy.gitMetadata) {
    mounts.insert({*policy.gitMetadata, Mount::Writable});
    // git writes HEAD, the index and logs there for the agent; it never needs
    // to write what says where the repository is (`commondir`, `gitdir`) or
    // the worktree's own settings (`config.worktree`, read by the user's git
    // in that worktree when extensions.worktreeConfig is set: a
    // core.fsmonitor there would run outside any sandbox). The settings file
    // is made, empty, when missing, so that the agent cannot create it.
    const fs::path settings = *policy.gitMetadata / "config.worktree";
    const auto status = fs::symlink_status(settings);
    if (!fs::exists(status)) {
      std::ofstream created(settings, std::ios::app);
      if (!created) throw SandboxError("cannot create '" + settings.string() + "'");
    } else if (!fs::is_regular_file(status)) {
      throw SandboxError("'" + settings.string() + "' is not a regular file: something replaced it");
    }
    // Nor hydra's own record of the worktree: which agent, base, branch and
    // owner it is, or, pooled, which tree it holds.
    for (const char* name : {"config.worktree", "commondir", "gitdir", kWorktreeRecordFile}) {
      const fs::path file = *policy.gitMetadata / name;
      if (fs::is_regular_file(fs::symlink_status(file))) mounts.insert({file, Mount::ReadOnly});
    }
  }
  for (const fs::path& path : policy.writable) mounts.insert({path, Mount::Writable});
  // The worktree's .git file names its metadata directory: read-only, so the
  // agent can neither delete it nor point it at another repository.
  const fs::path gitLink = policy.worktree / ".git";
  if (fs::is_regular_file(fs::symlink_status(gitLink))) mounts.insert({gitLink, Mount::ReadOnly});

  const fs::path program = resolveProgram(spec);
  if (policy.privateTmp && isWithin(program, "/tmp")) {
    const bool visible = std::any_of(mounts.begin(), mounts.end(), [&](const Mount& m) {
      return m.kind != Mount::Tmpfs && isWithin(program, m.path);
    });
    if (!visible) {
      throw SandboxError("'" + program.string() +
                         "' lives under /tmp, which the sandbox replaces with a private one: add "
                         "its install directory to the policy's read-only paths");
    }
  }

  applyPolicyEnvironment(spec, policy);

  std::vector<std::string> args = {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"};
  if (policy.privateTmp) args.insert(args.end(), {"--perms", "1777", "--tmpfs", "/tmp"});
  for (const Mount& mount : mounts) {
    const std::string path = mount.path.string();
    switch (mount.kind) {
      case Mount::Tmpfs:
        args.insert(args.end(), {"--tmpfs", path});
        break;
      case Mount::ReadOnly:
        args.insert(args.end(), {"--ro-bind", path, path});
        break;
      case Mount::Writable:
        args.insert(args.end(), {"--bind", path, path});
        break;
    }
  }
  for (const fs::path& path : policy.hidden)
    args.insert(args.end(), {"--remount-ro", path.string()});
  if (policy.ownNetwork) args.push_back("--unshare-net");
  args.insert(args.end(), {"--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop",
                           "ALL", "--chdir", policy.worktree.string(), "--"});
  if (spec.leftoversFd >= 0) args.insert(args.end(), {"/bin/sh", "-c", std::string(kLeftoversShim), "hydra-sandbox"});
  args.push_back(program.string());
  args.insert(args.end(), spec.args.begin(), spec.args.end());

  spec.program = bwrap.string();
  spec.args = std::move(args);
  return spec;
}

}  // namespace hydra::core::sandbox
