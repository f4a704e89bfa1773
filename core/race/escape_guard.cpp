#include "core/race/escape_guard.h"

#include <spdlog/spdlog.h>

namespace hydra::core {

bool isHydraRef(const std::string& name) { return name.rfind("refs/heads/hydra/", 0) == 0; }

EscapeGuard::EscapeGuard(std::filesystem::path repository, bool watchCheckout)
    : repository_(std::move(repository)), snapshot_(guard::snapshotRefs(repository_)) {
  if (watchCheckout) checkout_ = guard::snapshotCheckout(repository_);
}

void EscapeGuard::started(const std::string& agentId) {
  std::lock_guard lock(mutex_);
  running_.insert(agentId);
}

EscapeGuard::Findings EscapeGuard::finished(const std::string& agentId) {
  std::lock_guard lock(mutex_);
  compareLocked();
  compareCheckoutLocked();
  running_.erase(agentId);
  auto it = charged_.find(agentId);
  if (it == charged_.end()) return {};
  Findings out = std::move(it->second);
  charged_.erase(it);
  return out;
}

void EscapeGuard::compareCheckoutLocked() {
  if (!checkout_) return;
  guard::CheckoutSnapshot now;
  try {
    now = guard::snapshotCheckout(repository_);
  } catch (const std::exception& e) {
    spdlog::error("cannot read the checkout of {}: {}", repository_.string(), e.what());
    return;
  }
  std::vector<guard::CheckoutChange> changes = guard::compareCheckout(*checkout_, now);
  if (changes.empty()) return;
  std::string files;
  std::vector<std::string> said;
  for (const auto& change : changes) {
    if (change.kind == guard::CheckoutChange::Kind::File) {
      files += (files.empty() ? "" : ", ") + change.path;
    } else {
      said.push_back("your checkout changed while it ran (hydra cannot tell who changed it): " + change.detail);
    }
  }
  if (!files.empty()) {
    said.push_back("files in your checkout changed while it ran (hydra cannot tell who changed them): " + files);
  }
  for (const auto& agent : running_) {
    auto& list = charged_[agent].warnings;
    list.insert(list.end(), said.begin(), said.end());
  }
  for (const auto& s : said) spdlog::warn("{}: {}", repository_.string(), s);
  // Each change is told once.
  checkout_ = std::move(now);
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
    auto& list = charged_[agent].escapes;
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
