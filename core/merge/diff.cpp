#include "core/merge/diff.h"

#include <git2.h>

#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "core/git/git.h"

namespace hydra::core::merge {

namespace fs = std::filesystem;

namespace {

constexpr git_off_t kMaxTextBlobBytes = 16 << 20;

git::TreePtr treeOfCommit(git_repository* repo, const std::string& spec) {
  const git_oid id = git::resolveCommit(repo, spec);
  git::CommitPtr commit = git::lookupCommit(repo, id);
  git_tree* raw = nullptr;
  git::check(git_commit_tree(&raw, commit.get()), "read the tree of commit " + git::toHex(id));
  return git::TreePtr(raw);
}

// The tree-to-tree diff between two commits, renames found, together with
// the repository handle it reads blobs through (declared first, so it
// outlives the diff).
class CommitDiff {
 public:
  CommitDiff(const fs::path& repoPath, const std::string& baseCommit,
             const std::string& agentCommit)
      : repo_(git::openRepository(repoPath)) {
    const git::TreePtr base = treeOfCommit(repo_.get(), baseCommit);
    const git::TreePtr agent = treeOfCommit(repo_.get(), agentCommit);

    // No GIT_DIFF_INCLUDE_TYPECHANGE: a type change stays a deletion plus an
    // addition, which is how git prints and counts it.
    git_diff_options options = GIT_DIFF_OPTIONS_INIT;
    // A blob larger than this is counted as binary without being read: a
    // patch loads both sides whole, and an agent's 2 GB file must not become
    // 2 GB of hydra's memory (docs/reliability.md, Heavy agents).
    options.max_size = kMaxTextBlobBytes;
    git_diff* raw = nullptr;
    git::check(git_diff_tree_to_tree(&raw, repo_.get(), base.get(), agent.get(), &options),
               "diff " + baseCommit + " to " + agentCommit);
    diff_.reset(raw);

    // Explicit flags: left at zero, libgit2 would follow the user's
    // diff.renames setting, and the review would change with it.
    git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
    find.flags = GIT_DIFF_FIND_RENAMES;
    // Comparing an addition with a deletion for similarity loads both blobs
    // whole; with a large one among them only identical contents count as a
    // rename, found by id (docs/reliability.md, Heavy agents).
    if (anyLargeRenameCandidate()) find.flags |= GIT_DIFF_FIND_EXACT_MATCH_ONLY;
    git::check(git_diff_find_similar(diff_.get(), &find), "find renames");
  }

  git_repository* repo() const { return repo_.get(); }
  std::size_t size() const { return git_diff_num_deltas(diff_.get()); }
  const git_diff_delta& delta(std::size_t i) const { return *git_diff_get_delta(diff_.get(), i); }

  // Delta indices in the order git prints them. libgit2 sorts the two halves
  // of a type change addition first; git has the deletion first, the only
  // order in which the patch applies.
  std::vector<std::size_t> printOrder() const {
    std::vector<std::size_t> order(size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (std::size_t i = 0; i + 1 < order.size(); ++i) {
      const git_diff_delta& first = delta(i);
      const git_diff_delta& second = delta(i + 1);
      if (first.status == GIT_DELTA_ADDED && second.status == GIT_DELTA_DELETED &&
          std::string_view(first.new_file.path) == second.old_file.path) {
        std::swap(order[i], order[i + 1]);
        ++i;
      }
    }
    return order;
  }

  // The patch of delta `i`. Making it loads both blobs, which is also what
  // decides whether the delta is binary.
  git::PatchPtr patch(std::size_t i) const {
    git_patch* raw = nullptr;
    git::check(git_patch_from_diff(&raw, diff_.get(), i),
               "make the patch of " + std::string(delta(i).new_file.path));
    return git::PatchPtr(raw);
  }

 private:
  git::RepositoryPtr repo_;
  git::DiffPtr diff_;

  // Whether an added or deleted blob is over kMaxTextBlobBytes, read from
  // object headers only. False when there are not both additions and
  // deletions: then there is nothing to pair.
  bool anyLargeRenameCandidate() const {
    bool added = false, deleted = false;
    for (std::size_t i = 0; i < size(); ++i) {
      added = added || delta(i).status == GIT_DELTA_ADDED;
      deleted = deleted || delta(i).status == GIT_DELTA_DELETED;
    }
    if (!added || !deleted) return false;
    git_odb* raw = nullptr;
    git::check(git_repository_odb(&raw, repo_.get()), "open the object store");
    const git::OdbPtr odb(raw);
    for (std::size_t i = 0; i < size(); ++i) {
      const git_diff_delta& d = delta(i);
      const git_diff_file* file = d.status == GIT_DELTA_ADDED     ? &d.new_file
                                  : d.status == GIT_DELTA_DELETED ? &d.old_file
                                                                  : nullptr;
      if (file == nullptr || file->mode == GIT_FILEMODE_COMMIT) continue;
      std::size_t length = 0;
      git_object_t type = GIT_OBJECT_INVALID;
      if (git_odb_read_header(&length, &type, odb.get(), &file->id) < 0) {
        git_error_clear();
        continue;  // unreadable: git_diff_find_similar skips it too
      }
      if (length > static_cast<std::size_t>(kMaxTextBlobBytes)) return true;
    }
    return false;
  }
};

bool isBinary(git_patch* patch) {
  return (git_patch_get_delta(patch)->flags & GIT_DIFF_FLAG_BINARY) != 0;
}

std::string_view statusName(git_delta_t status) {
  switch (status) {
    case GIT_DELTA_ADDED:
      return "added";
    case GIT_DELTA_DELETED:
      return "deleted";
    case GIT_DELTA_MODIFIED:
      return "modified";
    case GIT_DELTA_RENAMED:
      return "renamed";
    case GIT_DELTA_TYPECHANGE:
      return "typechange";
    default:
      // Copies are not searched for, and a tree-to-tree diff has no
      // untracked, ignored, unreadable or conflicted entries.
      throw std::logic_error("unexpected delta status " + std::to_string(status) +
                             " in a diff between two commits");
  }
}

FileChange describe(const CommitDiff& diff, std::size_t i) {
  const git_diff_delta& delta = diff.delta(i);
  FileChange change;
  change.status = statusName(delta.status);
  change.path = delta.status == GIT_DELTA_DELETED ? delta.old_file.path : delta.new_file.path;
  if (delta.status == GIT_DELTA_RENAMED) change.oldPath = delta.old_file.path;

  const git::PatchPtr patch = diff.patch(i);
  change.binary = isBinary(patch.get());
  if (!change.binary) {
    std::size_t additions = 0;
    std::size_t deletions = 0;
    git::check(git_patch_line_stats(nullptr, &additions, &deletions, patch.get()),
               "count the changed lines of " + change.path);
    change.additions = static_cast<int>(additions);
    change.deletions = static_cast<int>(deletions);
  }
  return change;
}

// A deletion followed by an addition of the same path is a change of type
// (file, symlink, submodule).
bool isTypeChangePair(const FileChange& deletion, const FileChange& addition) {
  return deletion.path == addition.path && deletion.status == "deleted" &&
         addition.status == "added";
}

std::string patchText(const CommitDiff& diff, std::size_t i) {
  const git::PatchPtr patch = diff.patch(i);
  git::Buf text;
  git::check(git_patch_to_buf(&text.value, patch.get()),
             "format the patch of " + std::string(diff.delta(i).new_file.path));
  return text.str();
}

bool touches(const git_diff_delta& delta, const std::string& path) {
  return path == delta.old_file.path || path == delta.new_file.path;
}

// Rejects anything that is not a plain path inside the repository. The
// lookup below could only ever find paths in the diff anyway; this makes the
// refusal explicit and independent of that.
void requirePlainRelativePath(const std::string& path) {
  const auto reject = [&](const std::string& why) {
    throw std::invalid_argument("path '" + path + "' " + why);
  };
  if (path.empty()) reject("is empty");
  if (path.front() == '/') reject("is absolute: paths are relative to the repository");
  if (path.find('\0') != std::string::npos) reject("contains a NUL byte");
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string_view component(path.data() + start, end - start);
    if (component.empty() || component == "." || component == "..") {
      reject("has an empty, '.' or '..' component");
    }
    start = end + 1;
  }
}

std::string contents(git_repository* repo, const git_diff_file& file) {
  // A submodule has no blob: show what git shows for it.
  if (file.mode == GIT_FILEMODE_COMMIT) return "Subproject commit " + git::toHex(file.id) + "\n";
  git_blob* raw = nullptr;
  git::check(git_blob_lookup(&raw, repo, &file.id), "read " + std::string(file.path));
  const git::BlobPtr blob(raw);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                     static_cast<std::size_t>(git_blob_rawsize(blob.get())));
}

}  // namespace

DiffSummary diffCommits(const fs::path& repo, const std::string& baseCommit,
                        const std::string& agentCommit) {
  const CommitDiff diff(repo, baseCommit, agentCommit);
  DiffSummary summary;
  for (const std::size_t i : diff.printOrder()) {
    FileChange change = describe(diff, i);
    summary.additions += change.additions;
    summary.deletions += change.deletions;
    if (!summary.files.empty() && isTypeChangePair(summary.files.back(), change)) {
      FileChange& pair = summary.files.back();
      pair.status = "typechange";
      pair.additions += change.additions;
      pair.deletions += change.deletions;
      pair.binary = pair.binary || change.binary;
      continue;
    }
    summary.files.push_back(std::move(change));
  }
  return summary;
}

std::string unifiedPatch(const fs::path& repo, const std::string& baseCommit,
                         const std::string& agentCommit, const std::optional<std::string>& path) {
  const CommitDiff diff(repo, baseCommit, agentCommit);
  std::string text;
  for (const std::size_t i : diff.printOrder()) {
    if (!path || touches(diff.delta(i), *path)) text += patchText(diff, i);
  }
  return text;
}

FileVersions fileVersions(const fs::path& repo, const std::string& baseCommit,
                          const std::string& agentCommit, const std::string& path) {
  requirePlainRelativePath(path);
  const CommitDiff diff(repo, baseCommit, agentCommit);

  // Which deltas describe `path`: the one that leaves something there in the
  // agent's commit, a deletion of it (alone, or the first half of a type
  // change), or a rename away from it.
  std::optional<std::size_t> arrives;
  std::optional<std::size_t> deleted;
  std::optional<std::size_t> renamedAway;
  for (std::size_t i = 0; i < diff.size(); ++i) {
    const git_diff_delta& delta = diff.delta(i);
    if (delta.status == GIT_DELTA_DELETED) {
      if (path == delta.old_file.path) deleted = i;
    } else if (path == delta.new_file.path) {
      arrives = i;
    } else if (delta.status == GIT_DELTA_RENAMED && path == delta.old_file.path) {
      renamedAway = i;
    }
  }
  if (!arrives && !deleted) arrives = renamedAway;
  if (!arrives && !deleted) {
    throw std::invalid_argument("path '" + path + "' is not among the changes from " + baseCommit +
                                " to " + agentCommit);
  }

  FileVersions versions;
  if (arrives) {
    const git_diff_delta& delta = diff.delta(*arrives);
    versions.agent = contents(diff.repo(), delta.new_file);
    if (delta.status != GIT_DELTA_ADDED) versions.base = contents(diff.repo(), delta.old_file);
    versions.binary = isBinary(diff.patch(*arrives).get());
  }
  if (deleted && !versions.base) {
    versions.base = contents(diff.repo(), diff.delta(*deleted).old_file);
    versions.binary = versions.binary || isBinary(diff.patch(*deleted).get());
  }
  return versions;
}

}  // namespace hydra::core::merge
