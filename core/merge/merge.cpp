#include "core/merge/merge.h"

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <system_error>

#include "core/git/git.h"
#include "core/util/atomic_file.h"
#include "core/util/owner.h"

namespace hydra::core::merge {

namespace fs = std::filesystem;
namespace json = boost::json;
using Reason = MergeRefused::Reason;

namespace {

using OdbPtr = std::unique_ptr<git_odb, git::FreeWith<git_odb_free>>;
using ConflictIteratorPtr =
    std::unique_ptr<git_index_conflict_iterator, git::FreeWith<git_index_conflict_iterator_free>>;
using PathSet = std::set<std::string>;

// ---- what may stop a merge before it starts -------------------------------

std::string_view operationInProgress(int state) {
  switch (state) {
    case GIT_REPOSITORY_STATE_MERGE:
      return "merge";
    case GIT_REPOSITORY_STATE_REVERT:
    case GIT_REPOSITORY_STATE_REVERT_SEQUENCE:
      return "revert";
    case GIT_REPOSITORY_STATE_CHERRYPICK:
    case GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE:
      return "cherry-pick";
    case GIT_REPOSITORY_STATE_BISECT:
      return "bisect";
    case GIT_REPOSITORY_STATE_REBASE:
    case GIT_REPOSITORY_STATE_REBASE_INTERACTIVE:
    case GIT_REPOSITORY_STATE_REBASE_MERGE:
      return "rebase";
    case GIT_REPOSITORY_STATE_APPLY_MAILBOX:
    case GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE:
      return "am";
    default:
      return "git operation";
  }
}

void refuseWhileBusy(git_repository* repo, const fs::path& root) {
  const int state = git_repository_state(repo);
  if (state == GIT_REPOSITORY_STATE_NONE) return;
  throw MergeRefused(Reason::MergeInProgress, "a " + std::string(operationInProgress(state)) +
                                                  " is in progress in " + root.string() +
                                                  ": finish or abort it before merging");
}

std::string requireBranch(git_repository* repo) {
  std::optional<std::string> branch = git::currentBranch(repo);
  if (!branch) {
    throw MergeRefused(Reason::DetachedHead,
                       "HEAD is detached: check out the branch to merge into first");
  }
  return *branch;
}

// The reference of the branch HEAD points at, which must have a commit.
git::ReferencePtr requireBornHead(git_repository* repo, const std::string& branch) {
  git_reference* raw = nullptr;
  const int rc = git_repository_head(&raw, repo);
  if (rc == GIT_EUNBORNBRANCH) {
    git_error_clear();
    throw MergeRefused(Reason::UnbornHead, "branch '" + branch +
                                               "' has no commit yet: there is nothing to merge "
                                               "into");
  }
  git::check(rc, "read HEAD");
  return git::ReferencePtr(raw);
}

git::AnnotatedCommitPtr resolveSource(git_repository* repo, const std::string& name) {
  git_reference* rawRef = nullptr;
  git::check(git_reference_dwim(&rawRef, repo, name.c_str()), "find branch '" + name + "'");
  const git::ReferencePtr ref(rawRef);
  git_annotated_commit* raw = nullptr;
  git::check(git_annotated_commit_from_ref(&raw, repo, ref.get()),
             "read the commit of '" + name + "'");
  return git::AnnotatedCommitPtr(raw);
}

// `commit` of the branch `name`: its tip or one of the tip's ancestors, never
// a commit from elsewhere.
git::AnnotatedCommitPtr resolveCommitOf(git_repository* repo, const std::string& name, const std::string& commit) {
  git_reference* rawRef = nullptr;
  git::check(git_reference_dwim(&rawRef, repo, name.c_str()), "find branch '" + name + "'");
  const git::ReferencePtr ref(rawRef);
  git_reference* rawResolved = nullptr;
  git::check(git_reference_resolve(&rawResolved, ref.get()), "read branch '" + name + "'");
  const git::ReferencePtr resolved(rawResolved);
  const git_oid* tip = git_reference_target(resolved.get());
  git_oid wanted;
  if (git_oid_fromstr(&wanted, commit.c_str()) != 0) {
    throw std::runtime_error("'" + commit + "' is not a commit id");
  }
  if (git_oid_cmp(tip, &wanted) != 0 && git_graph_descendant_of(repo, tip, &wanted) != 1) {
    throw std::runtime_error("commit " + commit.substr(0, 12) + " is not on branch " + name);
  }
  git_annotated_commit* raw = nullptr;
  git::check(git_annotated_commit_lookup(&raw, repo, &wanted), "read commit " + commit.substr(0, 12));
  return git::AnnotatedCommitPtr(raw);
}

// ---- paths -----------------------------------------------------------------

std::vector<std::string> sorted(const PathSet& paths) { return {paths.begin(), paths.end()}; }

// Both sides of every delta: a merge writes the new path and removes the old.
PathSet pathsOf(git_diff* diff) {
  PathSet paths;
  for (std::size_t i = 0; i < git_diff_num_deltas(diff); ++i) {
    const git_diff_delta* delta = git_diff_get_delta(diff, i);
    if (delta->old_file.path != nullptr) paths.insert(delta->old_file.path);
    if (delta->new_file.path != nullptr) paths.insert(delta->new_file.path);
  }
  return paths;
}

PathSet changedBetween(git_repository* repo, git_tree* from, git_tree* to) {
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  git_diff* raw = nullptr;
  git::check(git_diff_tree_to_tree(&raw, repo, from, to, &options),
             "list the files the merge changes");
  const git::DiffPtr diff(raw);
  return pathsOf(diff.get());
}

PathSet changedBetween(git_repository* repo, git_tree* from, git_index* to) {
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  git_diff* raw = nullptr;
  git::check(git_diff_tree_to_index(&raw, repo, from, to, &options),
             "list the files the merge changes");
  const git::DiffPtr diff(raw);
  return pathsOf(diff.get());
}

// Whether writing `paths` would disturb `path`: the same file, a file inside
// a directory the merge turns into a file, or a file where the merge needs a
// directory.
bool collides(const PathSet& paths, const std::string& path) {
  if (paths.contains(path)) return true;
  for (std::size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    if (paths.contains(path.substr(0, slash))) return true;
  }
  const std::string asDirectory = path + "/";
  const auto next = paths.lower_bound(asDirectory);
  return next != paths.end() && next->starts_with(asDirectory);
}

// The paths among (or colliding with) `paths` that hold uncommitted work:
// staged or unstaged changes, conflicts, or untracked files. Ignored files
// are expendable, as they are to git.
std::vector<std::string> dirtyAmong(git_repository* repo, const PathSet& paths) {
  git_status_options options = GIT_STATUS_OPTIONS_INIT;
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
  git_status_list* raw = nullptr;
  git::check(git_status_list_new(&raw, repo, &options), "read the status of the working tree");
  const git::StatusListPtr status(raw);

  PathSet dirty;
  for (std::size_t i = 0; i < git_status_list_entrycount(status.get()); ++i) {
    const git_status_entry* entry = git_status_byindex(status.get(), i);
    if (entry->status == GIT_STATUS_CURRENT) continue;
    for (const git_diff_delta* delta : {entry->head_to_index, entry->index_to_workdir}) {
      if (delta == nullptr) continue;
      for (const char* path : {delta->old_file.path, delta->new_file.path}) {
        if (path != nullptr && collides(paths, path)) dirty.insert(path);
      }
    }
  }
  return sorted(dirty);
}

void refuseIfDirty(git_repository* repo, const PathSet& paths) {
  std::vector<std::string> dirty = dirtyAmong(repo, paths);
  if (dirty.empty()) return;
  std::string list;
  for (const std::string& path : dirty) list += (list.empty() ? "" : ", ") + path;
  throw MergeRefused(Reason::DirtyWorkingTree,
                     "uncommitted changes would be overwritten by the merge: " + list +
                         " (commit or stash them first)",
                     std::move(dirty));
}

// ---- writing ---------------------------------------------------------------

git::TreePtr treeOf(git_commit* commit) {
  git_tree* raw = nullptr;
  git::check(git_commit_tree(&raw, commit),
             "read the tree of commit " + git::toHex(*git_commit_id(commit)));
  return git::TreePtr(raw);
}

// Checks `tree` out over exactly `paths`, refusing (GIT_ECONFLICT) rather than
// overwriting anything modified since HEAD. Limiting the checkout keeps every
// other file, and its index entry, as the user left it.
void checkOut(git_repository* repo, git_tree* tree, const PathSet& paths) {
  // An empty path list would mean "every path".
  if (paths.empty()) return;
  std::vector<char*> list;
  list.reserve(paths.size());
  for (const std::string& path : paths) list.push_back(const_cast<char*>(path.c_str()));
  git_checkout_options options = GIT_CHECKOUT_OPTIONS_INIT;
  options.checkout_strategy = GIT_CHECKOUT_SAFE | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
  options.paths = git_strarray{list.data(), list.size()};
  git::check(git_checkout_tree(repo, reinterpret_cast<const git_object*>(tree), &options),
             "check out the merged files");
}

// Moves the branch only if it still points where it did when the merge was
// planned (libgit2 compares and swaps).
void moveBranch(git_reference* branch, const git_oid& to, const std::string& logMessage) {
  git_reference* raw = nullptr;
  git::check(git_reference_set_target(&raw, branch, &to, logMessage.c_str()),
             "move " + std::string(git_reference_name(branch)) + " to " + git::toHex(to));
  git_reference_free(raw);
}

git::SignaturePtr signatureFor(git_repository* repo) {
  git_signature* raw = nullptr;
  const int rc = git_signature_default(&raw, repo);
  if (rc == GIT_ENOTFOUND) {
    git_error_clear();
    return git::makeSignature("hydra", "hydra@localhost");
  }
  git::check(rc, "read user.name and user.email");
  return git::SignaturePtr(raw);
}

// Another handle on the repository whose object database keeps every object
// it writes in memory: merging there leaves the repository on disk as it was.
git::RepositoryPtr openWithoutWrites(const fs::path& path) {
  git::RepositoryPtr repo = git::openRepository(path);
  git_odb* rawOdb = nullptr;
  git::check(git_repository_odb(&rawOdb, repo.get()), "open the object database");
  const OdbPtr odb(rawOdb);
  git_odb_backend* memory = nullptr;
  git::check(git_mempack_new(&memory), "make an in-memory object store");
  // Highest priority: written objects go there, reads still find everything.
  const int rc = git_odb_add_backend(odb.get(), memory, 999);
  if (rc < 0) memory->free(memory);
  git::check(rc, "add the in-memory object store");
  return repo;
}

git::IndexPtr mergeCommits(git_repository* repo, const git_oid& ours, const git_oid& theirs) {
  const git::CommitPtr our = git::lookupCommit(repo, ours);
  const git::CommitPtr their = git::lookupCommit(repo, theirs);
  git_merge_options options = GIT_MERGE_OPTIONS_INIT;
  git_index* raw = nullptr;
  git::check(git_merge_commits(&raw, repo, our.get(), their.get(), &options),
             "merge " + git::toHex(theirs) + " into " + git::toHex(ours));
  return git::IndexPtr(raw);
}

PathSet conflictsIn(git_index* index) {
  PathSet paths;
  if (!git_index_has_conflicts(index)) return paths;
  git_index_conflict_iterator* raw = nullptr;
  git::check(git_index_conflict_iterator_new(&raw, index), "list the conflicts");
  const ConflictIteratorPtr conflicts(raw);
  const git_index_entry* ancestor = nullptr;
  const git_index_entry* ours = nullptr;
  const git_index_entry* theirs = nullptr;
  int rc = 0;
  while ((rc = git_index_conflict_next(&ancestor, &ours, &theirs, conflicts.get())) == 0) {
    // Every side's path: with renames they differ, and each is affected.
    for (const git_index_entry* entry : {ancestor, ours, theirs}) {
      if (entry != nullptr) paths.insert(entry->path);
    }
  }
  if (rc != GIT_ITEROVER) git::check(rc, "list the conflicts");
  return paths;
}

// ---- the two ways to merge -------------------------------------------------

// What the analysis found out about the two branches, and the handles the
// merge proper needs.
struct Plan {
  const fs::path& path;
  git_repository* repo;
  git_reference* head;  // the branch being merged into
  git_oid headId;       // its commit
  git_oid sourceId;     // the commit being merged
  const MergeRequest& request;
};

// ---- the journal (see mergeBranch in merge.h) --------------------------------

fs::path journalPath(git_repository* repo) { return fs::path(git_repository_path(repo)) / "hydra-merge.json"; }

// Written before the first file of the merge is: from here on a kill leaves
// something finishInterruptedMerge() completes.
void writeJournal(const Plan& plan, const git_oid& to, const PathSet& paths, MergeOutcome outcome) {
  json::array listed;
  for (const std::string& path : paths) listed.emplace_back(path);
  const json::object journal{{"owner", toWord(ProcessOwner::self())},
                             {"branch", git_reference_name(plan.head)},
                             {"from", git::toHex(plan.headId)},
                             {"to", git::toHex(to)},
                             {"outcome", toString(outcome)},
                             {"note", plan.request.journalNote},
                             {"paths", std::move(listed)}};
  writeFileAtomic(journalPath(plan.repo), json::serialize(journal));
}

void endJournal(const Plan& plan) {
  if (plan.request.keepJournal) return;
  std::error_code ignored;
  fs::remove(journalPath(plan.repo), ignored);
}

MergeResult fastForward(const Plan& plan, MergeResult result) {
  result.outcome = MergeOutcome::FastForward;
  const git::CommitPtr from = git::lookupCommit(plan.repo, plan.headId);
  const git::CommitPtr to = git::lookupCommit(plan.repo, plan.sourceId);
  const git::TreePtr target = treeOf(to.get());
  const PathSet files = changedBetween(plan.repo, treeOf(from.get()).get(), target.get());
  result.files = sorted(files);
  refuseIfDirty(plan.repo, files);
  if (plan.request.dryRun) return result;

  writeJournal(plan, plan.sourceId, files, result.outcome);
  checkOut(plan.repo, target.get(), files);
  moveBranch(plan.head, plan.sourceId, "merge " + plan.request.sourceBranch + ": Fast-forward");
  endJournal(plan);
  result.commit = git::toHex(plan.sourceId);
  return result;
}

git_oid commitMerge(const Plan& plan, git_tree* tree) {
  const git::CommitPtr ours = git::lookupCommit(plan.repo, plan.headId);
  const git::CommitPtr theirs = git::lookupCommit(plan.repo, plan.sourceId);
  const git_commit* parents[] = {ours.get(), theirs.get()};
  const git::SignaturePtr signature = signatureFor(plan.repo);
  const std::string message =
      plan.request.message.empty() ? "Merge " + plan.request.sourceBranch : plan.request.message;
  git_oid id;
  // No ref to update yet: the branch moves only after the checkout worked.
  git::check(git_commit_create(&id, plan.repo, nullptr, signature.get(), signature.get(), nullptr,
                               message.c_str(), tree, 2, parents),
             "create the merge commit");
  return id;
}

MergeResult mergeWithCommit(const Plan& plan, MergeResult result) {
  // Computed in a handle that writes nothing to disk, so that a conflict or a
  // dry run leaves the repository exactly as it was.
  {
    const git::RepositoryPtr scratch = openWithoutWrites(plan.path);
    const git::IndexPtr merged = mergeCommits(scratch.get(), plan.headId, plan.sourceId);
    const git::CommitPtr head = git::lookupCommit(scratch.get(), plan.headId);
    const PathSet conflicts = conflictsIn(merged.get());
    PathSet files = changedBetween(scratch.get(), treeOf(head.get()).get(), merged.get());
    files.insert(conflicts.begin(), conflicts.end());
    result.files = sorted(files);
    result.conflicts = sorted(conflicts);
    if (!conflicts.empty()) {
      result.outcome = MergeOutcome::Conflict;
      return result;
    }
    result.outcome = MergeOutcome::Merged;
    refuseIfDirty(plan.repo, files);
    if (plan.request.dryRun) return result;
  }

  // Clean: merge again where objects are written for real (the same inputs
  // give the same result), then commit, check out and move the branch.
  const git::IndexPtr merged = mergeCommits(plan.repo, plan.headId, plan.sourceId);
  git_oid treeId;
  git::check(git_index_write_tree_to(&treeId, merged.get(), plan.repo), "write the merged tree");
  git_tree* rawTree = nullptr;
  git::check(git_tree_lookup(&rawTree, plan.repo, &treeId), "read the merged tree");
  const git::TreePtr tree(rawTree);

  const git_oid commit = commitMerge(plan, tree.get());
  PathSet files(result.files.begin(), result.files.end());
  writeJournal(plan, commit, files, result.outcome);
  checkOut(plan.repo, tree.get(), files);
  moveBranch(plan.head, commit, "merge " + plan.request.sourceBranch + ": Merge made by hydra");
  endJournal(plan);
  result.commit = git::toHex(commit);
  return result;
}

// ---- finishing what a killed merge left ----------------------------------------

bool notBefore(const struct stat& st, const struct timespec& since) {
  return st.st_mtim.tv_sec > since.tv_sec || (st.st_mtim.tv_sec == since.tv_sec && st.st_mtim.tv_nsec >= since.tv_nsec);
}

bool sameBlob(git_tree* tree, const std::string& path, const git_oid& id) {
  git_tree_entry* raw = nullptr;
  if (git_tree_entry_bypath(&raw, tree, path.c_str()) != 0) {
    git_error_clear();
    return false;
  }
  const bool same = git_oid_equal(git_tree_entry_id(raw), &id) != 0;
  git_tree_entry_free(raw);
  return same;
}

// Whether `path` is as the merge found it, as the merge makes it, missing, or
// written since the journal was: nothing of the user's is lost by checking
// it out from the merge.
bool onlyTheMergeTouched(git_repository* repo, const fs::path& root, const std::string& path, git_tree* from,
                         git_tree* to, const struct timespec& journalTime) {
  const fs::path file = root / path;
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) return errno == ENOENT || errno == ENOTDIR;
  if (notBefore(st, journalTime)) return true;
  if (!S_ISREG(st.st_mode)) return false;
  git_oid id;
  if (git_repository_hashfile(&id, repo, file.c_str(), GIT_OBJECT_BLOB, path.c_str()) != 0) {
    git_error_clear();
    return false;
  }
  return sameBlob(from, path, id) || sameBlob(to, path, id);
}

git_oid parseOid(const json::object& journal, const char* field) {
  git_oid id;
  if (git_oid_fromstr(&id, std::string(journal.at(field).as_string()).c_str()) != 0) {
    throw std::runtime_error(std::string("the merge journal's ") + field + " is not a commit id");
  }
  return id;
}

}  // namespace

std::string_view toString(MergeOutcome outcome) {
  switch (outcome) {
    case MergeOutcome::FastForward:
      return "fastForward";
    case MergeOutcome::Merged:
      return "merged";
    case MergeOutcome::Conflict:
      return "conflict";
    case MergeOutcome::UpToDate:
      return "upToDate";
  }
  return "unknown";
}

std::string_view toString(MergeRefused::Reason reason) {
  switch (reason) {
    case Reason::MergeInProgress:
      return "mergeInProgress";
    case Reason::DetachedHead:
      return "detachedHead";
    case Reason::DirtyWorkingTree:
      return "dirtyWorkingTree";
    case Reason::UnbornHead:
      return "unbornHead";
  }
  return "unknown";
}

MergeResult mergeBranch(const fs::path& repoPath, const MergeRequest& request) {
  const git::RepositoryPtr repo = git::openRepository(repoPath);
  const fs::path root = git::workdir(repo.get());

  // The checks of libgit2's merge example, in its order.
  refuseWhileBusy(repo.get(), root);
  MergeResult result;
  result.targetBranch = requireBranch(repo.get());
  const git::ReferencePtr head = requireBornHead(repo.get(), result.targetBranch);
  const git::AnnotatedCommitPtr source = request.sourceCommit
                                             ? resolveCommitOf(repo.get(), request.sourceBranch, *request.sourceCommit)
                                             : resolveSource(repo.get(), request.sourceBranch);

  git_merge_analysis_t analysis = GIT_MERGE_ANALYSIS_NONE;
  git_merge_preference_t preference = GIT_MERGE_PREFERENCE_NONE;
  const git_annotated_commit* heads[] = {source.get()};
  git::check(git_merge_analysis_for_ref(&analysis, &preference, repo.get(), head.get(), heads, 1),
             "analyse the merge of '" + request.sourceBranch + "'");

  if ((analysis & GIT_MERGE_ANALYSIS_UP_TO_DATE) != 0) {
    result.outcome = MergeOutcome::UpToDate;
    return result;
  }

  const Plan plan{repoPath,
                  repo.get(),
                  head.get(),
                  *git_reference_target(head.get()),
                  *git_annotated_commit_id(source.get()),
                  request};
  const bool fastForwardWanted = (preference & GIT_MERGE_PREFERENCE_NO_FASTFORWARD) == 0;
  if ((analysis & GIT_MERGE_ANALYSIS_FASTFORWARD) != 0 && fastForwardWanted) {
    return fastForward(plan, std::move(result));
  }
  return mergeWithCommit(plan, std::move(result));
}

std::optional<InterruptedMerge> finishInterruptedMerge(const fs::path& repoPath) {
  const git::RepositoryPtr repo = git::openRepository(repoPath);
  const fs::path journalFile = journalPath(repo.get());
  struct stat journalStat {};
  if (::stat(journalFile.c_str(), &journalStat) != 0) return std::nullopt;
  json::object journal;
  try {
    std::ifstream in(journalFile, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    journal = json::parse(text).as_object();
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot read " + journalFile.string() + ": " + e.what());
  }
  const std::optional<ProcessOwner> owner = parseOwnerWord(journal.at("owner").as_string());
  if (owner && ownerLife(*owner) != OwnerLife::Dead) return std::nullopt;

  InterruptedMerge out;
  const std::string branch(journal.at("branch").as_string());
  out.targetBranch = branch.starts_with("refs/heads/") ? branch.substr(11) : branch;
  out.outcomeOfMerge = std::string(journal.at("outcome").as_string());
  out.commit = std::string(journal.at("to").as_string());
  out.note = std::string(journal.at("note").as_string());
  const git_oid from = parseOid(journal, "from");
  const git_oid to = parseOid(journal, "to");
  const auto done = [&](InterruptedMerge::Outcome outcome) {
    std::error_code ignored;
    fs::remove(journalFile, ignored);
    out.outcome = outcome;
    return out;
  };

  git_reference* rawRef = nullptr;
  if (git_reference_lookup(&rawRef, repo.get(), branch.c_str()) != 0) {
    git_error_clear();
    return done(InterruptedMerge::Outcome::Abandoned);
  }
  const git::ReferencePtr ref(rawRef);
  const git_oid* at = git_reference_target(ref.get());
  if (at != nullptr && git_oid_equal(at, &to)) return done(InterruptedMerge::Outcome::AlreadyDone);
  const std::optional<std::string> current = git::currentBranch(repo.get());
  if (at == nullptr || !git_oid_equal(at, &from) || current != out.targetBranch) {
    return done(InterruptedMerge::Outcome::Abandoned);
  }

  // The index lock a checkout killed while writing the index left: taken
  // since the journal was written, by the hydra that is gone.
  const fs::path indexLock = fs::path(git_repository_path(repo.get())) / "index.lock";
  struct stat lockStat {};
  if (::stat(indexLock.c_str(), &lockStat) == 0 && notBefore(lockStat, journalStat.st_mtim)) {
    std::error_code ignored;
    fs::remove(indexLock, ignored);
  }

  const git::TreePtr fromTree = treeOf(git::lookupCommit(repo.get(), from).get());
  const git::TreePtr toTree = treeOf(git::lookupCommit(repo.get(), to).get());
  const fs::path root = git::workdir(repo.get());
  PathSet paths;
  for (const auto& p : journal.at("paths").as_array()) paths.insert(std::string(p.as_string()));
  for (const std::string& path : paths) {
    if (!onlyTheMergeTouched(repo.get(), root, path, fromTree.get(), toTree.get(), journalStat.st_mtim)) {
      out.blocking.push_back(path);
    }
  }
  if (!out.blocking.empty()) {
    out.outcome = InterruptedMerge::Outcome::Blocked;
    return out;
  }
  if (!paths.empty()) {
    std::vector<char*> list;
    for (const std::string& path : paths) list.push_back(const_cast<char*>(path.c_str()));
    git_checkout_options options = GIT_CHECKOUT_OPTIONS_INIT;
    options.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
    options.paths = git_strarray{list.data(), list.size()};
    git::check(git_checkout_tree(repo.get(), reinterpret_cast<const git_object*>(toTree.get()), &options),
               "check out the files of the interrupted merge");
  }
  moveBranch(ref.get(), to, "merge: finished by hydra after it was interrupted");
  return done(InterruptedMerge::Outcome::Completed);
}

void clearMergeJournal(const fs::path& repoPath) {
  const git::RepositoryPtr repo = git::openRepository(repoPath);
  std::error_code ignored;
  fs::remove(journalPath(repo.get()), ignored);
}

}  // namespace hydra::core::merge
