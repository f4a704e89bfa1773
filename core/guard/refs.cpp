#include "core/guard/refs.h"

#include <algorithm>

#include "core/git/git.h"

namespace hydra::core::guard {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRestoreMessage = "hydra: put back after an agent changed it during a race";

using ReferenceIteratorPtr =
    std::unique_ptr<git_reference_iterator, git::FreeWith<git_reference_iterator_free>>;

RefTarget targetOf(git_reference* ref) {
  RefTarget target;
  if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
    target.symbolic = git_reference_symbolic_target(ref);
  } else if (const git_oid* id = git_reference_target(ref)) {
    target.oid = git::toHex(*id);
  }
  return target;
}

std::string shortId(const std::string& hex) { return hex.substr(0, 7); }

}  // namespace

std::string RefTarget::describe() const {
  return symbolic.empty() ? shortId(oid) : "-> " + symbolic;
}

std::string_view toString(RefChange::Kind kind) {
  switch (kind) {
    case RefChange::Kind::Created:
      return "created";
    case RefChange::Kind::Deleted:
      return "deleted";
    case RefChange::Kind::Moved:
      return "moved";
  }
  return "moved";
}

std::string RefChange::describe() const {
  switch (kind) {
    case Kind::Created:
      return name + " created (" + after->describe() + ")";
    case Kind::Deleted:
      return name + " deleted (was " + before->describe() + ")";
    case Kind::Moved:
      break;
  }
  return name + " moved from " + before->describe() + " to " + after->describe();
}

RefSnapshot snapshotRefs(const fs::path& repository) {
  auto repo = git::openRepository(repository);
  RefSnapshot snapshot;
  git_reference_iterator* rawIterator = nullptr;
  git::check(git_reference_iterator_new(&rawIterator, repo.get()), "list the references");
  ReferenceIteratorPtr iterator(rawIterator);
  for (;;) {
    git_reference* raw = nullptr;
    const int rc = git_reference_next(&raw, iterator.get());
    if (rc == GIT_ITEROVER) break;
    git::check(rc, "read a reference");
    git::ReferencePtr ref(raw);
    snapshot.refs[git_reference_name(ref.get())] = targetOf(ref.get());
  }
  git_reference* rawHead = nullptr;
  git::check(git_reference_lookup(&rawHead, repo.get(), "HEAD"), "read HEAD");
  git::ReferencePtr head(rawHead);
  snapshot.refs["HEAD"] = targetOf(head.get());
  return snapshot;
}

std::vector<RefChange> compareRefs(const RefSnapshot& before, const RefSnapshot& after,
                                   const std::set<std::string>& allowed) {
  std::vector<RefChange> changes;
  for (const auto& [name, target] : before.refs) {
    if (allowed.count(name) > 0) continue;
    const auto now = after.refs.find(name);
    if (now == after.refs.end()) {
      changes.push_back({name, RefChange::Kind::Deleted, target, std::nullopt});
    } else if (!(now->second == target)) {
      changes.push_back({name, RefChange::Kind::Moved, target, now->second});
    }
  }
  for (const auto& [name, target] : after.refs) {
    if (allowed.count(name) > 0 || before.refs.count(name) > 0) continue;
    changes.push_back({name, RefChange::Kind::Created, std::nullopt, target});
  }
  std::sort(changes.begin(), changes.end(),
            [](const RefChange& a, const RefChange& b) { return a.name < b.name; });
  return changes;
}

RestoreReport restoreRefs(const fs::path& repository, const std::vector<RefChange>& changes) {
  auto repo = git::openRepository(repository);
  RestoreReport report;
  auto attempt = [&](const RefChange& change, auto&& action) {
    try {
      action();
      report.restored.push_back(change);
    } catch (const git::GitError& e) {
      report.failed.emplace_back(change, e.what());
    }
  };
  for (const RefChange& change : changes) {
    if (change.kind != RefChange::Kind::Created) continue;
    attempt(change, [&] {
      git_reference* raw = nullptr;
      const int rc = git_reference_lookup(&raw, repo.get(), change.name.c_str());
      if (rc == GIT_ENOTFOUND) return;  // gone already
      git::check(rc, "look up " + change.name);
      git::ReferencePtr ref(raw);
      git::check(git_reference_delete(ref.get()), "delete " + change.name);
    });
  }
  for (const RefChange& change : changes) {
    if (change.kind == RefChange::Kind::Created) continue;
    attempt(change, [&] {
      auto create = [&] {
        git_reference* raw = nullptr;
        int rc;
        if (!change.before->symbolic.empty()) {
          rc = git_reference_symbolic_create(&raw, repo.get(), change.name.c_str(),
                                             change.before->symbolic.c_str(), 1, kRestoreMessage);
        } else {
          const git_oid id = git::oidFromHex(change.before->oid);
          rc = git_reference_create(&raw, repo.get(), change.name.c_str(), &id, 1, kRestoreMessage);
        }
        git::ReferencePtr restored(raw);
        return rc;
      };
      if (create() >= 0) return;
      const std::string firstError = git_error_last() ? git_error_last()->message : "";
      git_error_clear();
      // A ref file the agent garbled cannot be overwritten (libgit2 reads the
      // old value first) and does not list (so it shows as deleted). Only
      // such an unreadable ref is removed before trying once more.
      git_reference* raw = nullptr;
      const int lookup = git_reference_lookup(&raw, repo.get(), change.name.c_str());
      git::ReferencePtr current(raw);
      git_error_clear();
      if (lookup >= 0 || lookup == GIT_ENOTFOUND) {
        throw git::GitError(GIT_ERROR, GIT_ERROR_REFERENCE,
                            "put back " + change.name + ": " + firstError);
      }
      git_reference_remove(repo.get(), change.name.c_str());
      git_error_clear();
      const int rc = create();
      git::check(rc, "put back " + change.name);
    });
  }
  return report;
}

}  // namespace hydra::core::guard
