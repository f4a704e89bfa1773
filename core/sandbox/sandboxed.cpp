#include "core/sandbox/sandboxed.h"

#include <cstdlib>

#include "core/sandbox/bubblewrap.h"
#include "core/sandbox/policy.h"

namespace hydra::core::sandbox {

namespace fs = std::filesystem;

ProcessSpec sandboxed(ProcessSpec spec, const SandboxDecision* decision, const fs::path& checkout,
                      const std::vector<fs::path>& writable, const std::vector<fs::path>& visible, bool ownNetwork) {
  if (!decision) return spec;
  SandboxPolicy policy = policyForWorktree(checkout);
  for (const auto& p : writable) {
    if (p.is_absolute()) policy.writable.push_back(p);
  }
  for (const auto& p : visible) {
    if (p.is_absolute()) policy.readOnly.push_back(p);
  }
  if (!decision->confined) return unconfined(std::move(spec), policy);
  policy.ownNetwork = ownNetwork;

  // The temporary directory the run is told to use is its to write.
  const char* hydraTmp = std::getenv("TMPDIR");
  auto tmp = spec.env.find("TMPDIR");
  fs::path tmpdir = tmp != spec.env.end() ? fs::path(tmp->second) : fs::path(hydraTmp ? hydraTmp : "");
  if (tmpdir.is_absolute() && tmpdir.lexically_normal() != "/tmp") policy.writable.push_back(tmpdir.lexically_normal());

  std::string pathEnv;
  if (auto it = spec.env.find("PATH"); it != spec.env.end()) {
    pathEnv = it->second;
  } else if (const char* path = std::getenv("PATH")) {
    pathEnv = path;
  }
  fs::path program = spec.program;
  if (spec.program.find('/') != std::string::npos && program.is_relative()) program = spec.cwd / program;
  if (!findExecutable(program.string(), pathEnv)) return unconfined(std::move(spec), policy);
  return confine(std::move(spec), policy, decision->bwrap);
}

}  // namespace hydra::core::sandbox
