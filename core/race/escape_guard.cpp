#include "core/race/escape_guard.h"

#include <spdlog/spdlog.h>

#include "core/git/git.h"

namespace hydra::core {

bool isHydraRef(const std::string& name) { return name.rfind("refs/heads/hydra/", 0) == 0; }

namespace {

// Every guard alive, for OwnRepositoryChange. Locked before any guard's own mutex.
struct GuardRegistry {
  std::mutex mutex;
  std::set<EscapeGuard*> guards;

  static GuardRegistry& instance() {
    static auto* registry = new GuardRegistry;  // never destroyed
    return *registry;
  }
};

std::filesystem::path canonicalOrSelf(const std::filesystem::path& path) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? path.lexically_normal() : canonical;
}

}  // namespace

EscapeGuard::EscapeGuard(std::filesystem::path repository, bool watchCheckout,
                         const std::function<bool(const std::string&)>& finished)
    : repository_(std::move(repository)), snapshot_(guard::snapshotRefs(repository_)) {
  if (watchCheckout) {
    checkout_ = guard::snapshotCheckout(repository_);
    auto repo = git::openRepository(repository_);
    gitDir_ = guard::snapshotGitDir(git::commonDir(repo.get()));
  }
  if (finished) records_ = guard::snapshotRecords(repository_, finished);
  auto& registry = GuardRegistry::instance();
  std::lock_guard lock(registry.mutex);
  registry.guards.insert(this);
}

EscapeGuard::~EscapeGuard() {
  auto& registry = GuardRegistry::instance();
  std::lock_guard lock(registry.mutex);
  registry.guards.erase(this);
}

void EscapeGuard::beforeOwnChange() {
  std::lock_guard lock(mutex_);
  compareLocked();
  compareGitDirLocked();
  compareRecordsLocked();
  compareCheckoutLocked();
}

void EscapeGuard::afterOwnChange() {
  std::lock_guard lock(mutex_);
  try {
    snapshot_ = guard::snapshotRefs(repository_);
    if (checkout_) checkout_ = guard::snapshotCheckout(repository_);
    if (gitDir_) gitDir_ = guard::snapshotGitDir(gitDir_->commonDir);
  } catch (const std::exception& e) {
    spdlog::error("cannot read {} after hydra changed it: {}", repository_.string(), e.what());
  }
}

OwnRepositoryChange::OwnRepositoryChange(std::filesystem::path repository)
    : repository_(canonicalOrSelf(repository)) {
  auto& registry = GuardRegistry::instance();
  std::lock_guard lock(registry.mutex);
  for (EscapeGuard* guard : registry.guards) {
    if (canonicalOrSelf(guard->repository_) == repository_) guard->beforeOwnChange();
  }
}

OwnRepositoryChange::~OwnRepositoryChange() {
  auto& registry = GuardRegistry::instance();
  std::lock_guard lock(registry.mutex);
  for (EscapeGuard* guard : registry.guards) {
    if (canonicalOrSelf(guard->repository_) == repository_) guard->afterOwnChange();
  }
}

void EscapeGuard::watchBaseObjects(const std::string& baseCommit) {
  auto objects = guard::snapshotBaseObjects(repository_, baseCommit);
  std::lock_guard lock(mutex_);
  baseObjects_ = std::move(objects);
}

void EscapeGuard::started(const std::string& agentId) {
  std::lock_guard lock(mutex_);
  running_.insert(agentId);
}

EscapeGuard::Findings EscapeGuard::finished(const std::string& agentId) {
  std::lock_guard lock(mutex_);
  compareLocked();
  compareGitDirLocked();
  compareRecordsLocked();
  compareCheckoutLocked();
  running_.erase(agentId);
  auto it = charged_.find(agentId);
  if (it == charged_.end()) return {};
  Findings out = std::move(it->second);
  charged_.erase(it);
  return out;
}

void EscapeGuard::chargeRunningLocked(std::vector<std::string> Findings::*list, const std::vector<std::string>& said) {
  for (const auto& agent : running_) {
    auto& charged = charged_[agent].*list;
    charged.insert(charged.end(), said.begin(), said.end());
  }
}

void EscapeGuard::compareRecordsLocked() {
  if (!records_) return;
  std::vector<std::string> said;
  try {
    said = guard::compareRecords(*records_);
  } catch (const std::exception& e) {
    spdlog::error("cannot read hydra's records in {}: {}", repository_.string(), e.what());
    return;
  }
  chargeRunningLocked(&Findings::escapes, said);
  for (const auto& s : said) spdlog::warn("{}: hydra's records changed during a race: {}", repository_.string(), s);
}

void EscapeGuard::compareGitDirLocked() {
  std::vector<std::string> said;
  try {
    if (gitDir_) said = guard::restoreGitDir(*gitDir_);
    if (baseObjects_) {
      auto objects = guard::restoreGitDir(*baseObjects_);
      said.insert(said.end(), objects.begin(), objects.end());
    }
  } catch (const std::exception& e) {
    spdlog::error("cannot read the git directory of {}: {}", repository_.string(), e.what());
    return;
  }
  chargeRunningLocked(&Findings::escapes, said);
  for (const auto& s : said) spdlog::warn("{}: the git directory changed during a race: {}", repository_.string(), s);
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
  chargeRunningLocked(&Findings::warnings, said);
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
  chargeRunningLocked(&Findings::escapes, said);
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
