#include "core/race/escape_guard.h"

#include <spdlog/spdlog.h>

namespace hydra::core {

bool isHydraRef(const std::string& name) { return name.rfind("refs/heads/hydra/", 0) == 0; }

EscapeGuard::EscapeGuard(std::filesystem::path repository)
    : repository_(std::move(repository)), snapshot_(guard::snapshotRefs(repository_)) {}

void EscapeGuard::started(const std::string& agentId) {
  std::lock_guard lock(mutex_);
  running_.insert(agentId);
}

std::vector<std::string> EscapeGuard::finished(const std::string& agentId) {
  std::lock_guard lock(mutex_);
  compareLocked();
  running_.erase(agentId);
  auto it = charged_.find(agentId);
  if (it == charged_.end()) return {};
  std::vector<std::string> out = std::move(it->second);
  charged_.erase(it);
  return out;
}

void EscapeGuard::compareLocked() {
  guard::RefSnapshot now;
  try {
    now = guard::snapshotRefs(repository_);
  } catch (const std::exception& e) {
    spdlog::error("cannot read the refs of {}: {}", repository_.string(), e.what());
    return;
  }
  // hydra's own branches move as agents' work is committed; a new race adds its own.
  std::set<std::string> allowed;
  for (const auto& [name, target] : now.refs) {
    if (isHydraRef(name)) allowed.insert(name);
  }
  for (const auto& [name, target] : snapshot_.refs) {
    if (isHydraRef(name)) allowed.insert(name);
  }
  std::vector<guard::RefChange> changes = guard::compareRefs(snapshot_, now, allowed);
  if (changes.empty()) return;

  guard::RestoreReport restored = guard::restoreRefs(repository_, changes);
  std::vector<std::string> said;
  for (const auto& change : restored.restored) said.push_back(change.describe() + " (put back)");
  for (const auto& [change, why] : restored.failed) said.push_back(change.describe() + " (could not be put back: " + why + ")");
  for (const auto& agent : running_) {
    auto& list = charged_[agent];
    list.insert(list.end(), said.begin(), said.end());
  }
  for (const auto& s : said) spdlog::warn("{}: a ref changed during a race: {}", repository_.string(), s);
  // What could not be put back stays as it is now: it is not charged again.
  for (const auto& [change, why] : restored.failed) {
    if (change.after) {
      snapshot_.refs[change.name] = *change.after;
    } else {
      snapshot_.refs.erase(change.name);
    }
  }
}

}  // namespace hydra::core
