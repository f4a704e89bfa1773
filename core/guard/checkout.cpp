#include "core/guard/checkout.h"

#include "core/git/git.h"

namespace hydra::core::guard {

namespace fs = std::filesystem;

namespace {

std::string describeFile(const CheckoutFile& file) {
  if (file.status == GIT_STATUS_CURRENT) return "unchanged";
  std::string text;
  auto add = [&](unsigned flag, const char* name) {
    if ((file.status & flag) == 0) return;
    if (!text.empty()) text += ", ";
    text += name;
  };
  add(GIT_STATUS_INDEX_NEW, "added to the index");
  add(GIT_STATUS_INDEX_MODIFIED, "modified in the index");
  add(GIT_STATUS_INDEX_DELETED, "deleted from the index");
  add(GIT_STATUS_INDEX_RENAMED, "renamed in the index");
  add(GIT_STATUS_INDEX_TYPECHANGE, "type changed in the index");
  add(GIT_STATUS_WT_NEW, "untracked");
  add(GIT_STATUS_WT_MODIFIED, "modified");
  add(GIT_STATUS_WT_DELETED, "deleted");
  add(GIT_STATUS_WT_TYPECHANGE, "type changed");
  add(GIT_STATUS_WT_RENAMED, "renamed");
  add(GIT_STATUS_CONFLICTED, "conflicted");
  return text.empty() ? "changed" : text;
}

// The blob id of the working file, as `git hash-object` would say; empty if
// it cannot be read (gone, a directory).
std::string contentIdOf(const fs::path& file) {
  git_oid id;
  if (git_odb_hashfile(&id, file.c_str(), GIT_OBJECT_BLOB) < 0) {
    git_error_clear();
    return {};
  }
  return git::toHex(id);
}

std::string indexDigestOf(git_repository* repo) {
  git_index* raw = nullptr;
  git::check(git_repository_index(&raw, repo), "open the index");
  git::IndexPtr index(raw);
  std::string entries;
  const std::size_t count = git_index_entrycount(index.get());
  for (std::size_t i = 0; i < count; ++i) {
    const git_index_entry* entry = git_index_get_byindex(index.get(), i);
    entries += entry->path;
    entries += '\0';
    entries += std::to_string(entry->mode) + " " + git::toHex(entry->id) + " " +
               std::to_string(git_index_entry_stage(entry)) + "\n";
  }
  git_oid digest;
  git::check(git_odb_hash(&digest, entries.data(), entries.size(), GIT_OBJECT_BLOB),
             "hash the index entries");
  return git::toHex(digest);
}

}  // namespace

CheckoutSnapshot snapshotCheckout(const fs::path& repository) {
  auto repo = git::openRepository(repository);
  const fs::path root = git::workdir(repo.get());
  CheckoutSnapshot snapshot;

  git_reference* rawHead = nullptr;
  git::check(git_reference_lookup(&rawHead, repo.get(), "HEAD"), "read HEAD");
  git::ReferencePtr head(rawHead);
  if (git_reference_type(head.get()) == GIT_REFERENCE_SYMBOLIC) {
    snapshot.head.symbolic = git_reference_symbolic_target(head.get());
  } else {
    snapshot.head.oid = git::toHex(*git_reference_target(head.get()));
  }
  git_oid commit;
  const int rc = git_reference_name_to_id(&commit, repo.get(), "HEAD");
  if (rc == GIT_ENOTFOUND) {
    git_error_clear();  // an unborn branch
  } else {
    git::check(rc, "resolve HEAD");
    snapshot.headCommit = git::toHex(commit);
  }

  snapshot.indexDigest = indexDigestOf(repo.get());

  git_status_options options = GIT_STATUS_OPTIONS_INIT;
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  // No GIT_STATUS_OPT_UPDATE_INDEX: the user's index is not ours to write.
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                  GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  git_status_list* rawList = nullptr;
  git::check(git_status_list_new(&rawList, repo.get(), &options), "read the status");
  git::StatusListPtr list(rawList);
  const std::size_t count = git_status_list_entrycount(list.get());
  for (std::size_t i = 0; i < count; ++i) {
    const git_status_entry* entry = git_status_byindex(list.get(), i);
    const git_diff_delta* delta =
        entry->index_to_workdir != nullptr ? entry->index_to_workdir : entry->head_to_index;
    if (delta == nullptr) continue;
    const char* path =
        delta->new_file.path != nullptr ? delta->new_file.path : delta->old_file.path;
    CheckoutFile file;
    file.status = static_cast<unsigned>(entry->status);
    file.contentId = contentIdOf(root / path);
    snapshot.files[path] = file;
  }
  return snapshot;
}

std::vector<CheckoutChange> compareCheckout(const CheckoutSnapshot& before,
                                            const CheckoutSnapshot& after) {
  std::vector<CheckoutChange> changes;
  if (!(before.head == after.head) || before.headCommit != after.headCommit) {
    auto show = [](const CheckoutSnapshot& s) {
      std::string text = s.head.describe();
      if (!s.head.symbolic.empty()) {
        text +=
            " at " + (s.headCommit.empty() ? std::string("no commit") : s.headCommit.substr(0, 7));
      }
      return text;
    };
    changes.push_back(
        {CheckoutChange::Kind::Head, "", "HEAD moved from " + show(before) + " to " + show(after)});
  }
  if (before.indexDigest != after.indexDigest) {
    changes.push_back({CheckoutChange::Kind::Index, "", "the index (staged changes) changed"});
  }
  const CheckoutFile clean;  // a file status does not list
  for (const auto& [path, file] : before.files) {
    const auto now = after.files.find(path);
    const CheckoutFile& current = now == after.files.end() ? clean : now->second;
    if (current == file) continue;
    changes.push_back({CheckoutChange::Kind::File, path,
                       path + ": was " + describeFile(file) + ", now " + describeFile(current) +
                           (current.status == file.status ? " with other content" : "")});
  }
  for (const auto& [path, file] : after.files) {
    if (before.files.count(path) > 0) continue;
    changes.push_back(
        {CheckoutChange::Kind::File, path, path + ": was unchanged, now " + describeFile(file)});
  }
  return changes;
}

}  // namespace hydra::core::guard
