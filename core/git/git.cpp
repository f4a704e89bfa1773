#include "core/git/git.h"

#include <string>

namespace hydra::core::git {

namespace fs = std::filesystem;

namespace {

std::string inQuotes(std::string_view s) { return "'" + std::string(s) + "'"; }

// libgit2 reports directories with a trailing '/'; paths compare and join
// more predictably without it.
fs::path withoutTrailingSlash(const char* dir) {
  std::string s(dir);
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return fs::path(s);
}

}  // namespace

void check(int rc, std::string_view what) {
  if (rc >= 0) return;
  // Copy the message now: the next libgit2 call on this thread may overwrite it.
  const git_error* last = git_error_last();
  std::string message(what);
  int klass = GIT_ERROR_NONE;
  if (last != nullptr && last->message != nullptr) {
    message += ": ";
    message += last->message;
    klass = last->klass;
  } else {
    message += ": libgit2 error " + std::to_string(rc);
  }
  git_error_clear();
  throw GitError(rc, klass, message);
}

LibGit2::LibGit2() { check(git_libgit2_init(), "initialise libgit2"); }

LibGit2::~LibGit2() { git_libgit2_shutdown(); }

RepositoryPtr openRepository(const fs::path& path) {
  git_repository* raw = nullptr;
  check(git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
        "open repository " + inQuotes(path.string()));
  return RepositoryPtr(raw);
}

RepositoryPtr discoverRepository(const fs::path& start) {
  git_repository* raw = nullptr;
  check(git_repository_open_ext(&raw, start.c_str(), 0, nullptr),
        "find a repository at or above " + inQuotes(start.string()));
  return RepositoryPtr(raw);
}

fs::path workdir(git_repository* repo) {
  const char* dir = git_repository_workdir(repo);
  if (dir == nullptr) {
    throw GitError(GIT_EBAREREPO, GIT_ERROR_REPOSITORY,
                   "repository " + inQuotes(git_repository_path(repo)) +
                       " is bare: it has no working directory");
  }
  return withoutTrailingSlash(dir);
}

fs::path commonDir(git_repository* repo) {
  return withoutTrailingSlash(git_repository_commondir(repo));
}

git_oid resolveCommit(git_repository* repo, std::string_view spec) {
  const std::string what = "resolve " + inQuotes(spec) + " to a commit";
  if (spec.empty()) throw GitError(GIT_EINVALIDSPEC, GIT_ERROR_INVALID, what + ": empty revision");
  git_object* rawObject = nullptr;
  check(git_revparse_single(&rawObject, repo, std::string(spec).c_str()), what);
  ObjectPtr object(rawObject);
  git_object* rawCommit = nullptr;
  check(git_object_peel(&rawCommit, object.get(), GIT_OBJECT_COMMIT), what);
  ObjectPtr commit(rawCommit);
  return *git_object_id(commit.get());
}

CommitPtr lookupCommit(git_repository* repo, const git_oid& id) {
  git_commit* raw = nullptr;
  check(git_commit_lookup(&raw, repo, &id), "look up commit " + toHex(id));
  return CommitPtr(raw);
}

std::string toHex(const git_oid& id) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &id);
  return std::string(hex);
}

git_oid oidFromHex(std::string_view hex) {
  git_oid id;
  if (hex.size() != GIT_OID_HEXSZ) {
    throw GitError(GIT_EINVALIDSPEC, GIT_ERROR_INVALID,
                   "parse object id " + inQuotes(hex) + ": expected 40 hex digits");
  }
  check(git_oid_fromstrn(&id, hex.data(), hex.size()), "parse object id " + inQuotes(hex));
  return id;
}

std::optional<std::string> currentBranch(git_repository* repo) {
  // Look HEAD up without resolving it, so an unborn branch still has a name.
  git_reference* raw = nullptr;
  check(git_reference_lookup(&raw, repo, "HEAD"), "read HEAD");
  ReferencePtr head(raw);
  if (git_reference_type(head.get()) != GIT_REFERENCE_SYMBOLIC) return std::nullopt;
  std::string_view target = git_reference_symbolic_target(head.get());
  constexpr std::string_view kHeads = "refs/heads/";
  if (target.starts_with(kHeads)) target.remove_prefix(kHeads.size());
  return std::string(target);
}

SignaturePtr makeSignature(const std::string& name, const std::string& email) {
  git_signature* raw = nullptr;
  check(git_signature_now(&raw, name.c_str(), email.c_str()),
        "make signature " + name + " <" + email + ">");
  return SignaturePtr(raw);
}

}  // namespace hydra::core::git
