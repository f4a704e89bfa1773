#pragma once

// Thin C++ layer over libgit2: owning pointers for its objects, one way to turn
// a return code into an exception, and the few lookups every other part needs.
// libgit2 objects are not thread-safe: give each thread its own repository handle.

#include <git2.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hydra::core::git {

// A failed libgit2 call, or a git-level problem found by hydra (a name that is
// already taken, a bare repository). `code` is a git_error_code (GIT_ENOTFOUND,
// GIT_EEXISTS, ...), `klass` a git_error_t (GIT_ERROR_REFERENCE, ...).
class GitError : public std::runtime_error {
 public:
  GitError(int code, int klass, const std::string& message)
      : std::runtime_error(message), code_(code), klass_(klass) {}

  int code() const noexcept { return code_; }
  int klass() const noexcept { return klass_; }

 private:
  int code_;
  int klass_;
};

// Throws GitError when `rc` is negative. The message is "<what>: <libgit2's
// message>", read from git_error_last() right away, before any other libgit2
// call on this thread can replace it.
void check(int rc, std::string_view what);

// Keeps libgit2 initialised for as long as it lives. main() holds one; tests
// hold one per fixture. libgit2 counts nested inits, so several may coexist.
class LibGit2 {
 public:
  LibGit2();
  ~LibGit2();
  LibGit2(const LibGit2&) = delete;
  LibGit2& operator=(const LibGit2&) = delete;
};

// unique_ptr deleter calling libgit2's own free function.
template <auto Free>
struct FreeWith {
  template <typename T>
  void operator()(T* p) const noexcept {
    Free(p);
  }
};

using RepositoryPtr = std::unique_ptr<git_repository, FreeWith<git_repository_free>>;
using ReferencePtr = std::unique_ptr<git_reference, FreeWith<git_reference_free>>;
using ObjectPtr = std::unique_ptr<git_object, FreeWith<git_object_free>>;
using CommitPtr = std::unique_ptr<git_commit, FreeWith<git_commit_free>>;
using TreePtr = std::unique_ptr<git_tree, FreeWith<git_tree_free>>;
using BlobPtr = std::unique_ptr<git_blob, FreeWith<git_blob_free>>;
using OdbPtr = std::unique_ptr<git_odb, FreeWith<git_odb_free>>;
using OdbStreamPtr = std::unique_ptr<git_odb_stream, FreeWith<git_odb_stream_free>>;
using IndexPtr = std::unique_ptr<git_index, FreeWith<git_index_free>>;
using SignaturePtr = std::unique_ptr<git_signature, FreeWith<git_signature_free>>;
using WorktreePtr = std::unique_ptr<git_worktree, FreeWith<git_worktree_free>>;
using DiffPtr = std::unique_ptr<git_diff, FreeWith<git_diff_free>>;
using PatchPtr = std::unique_ptr<git_patch, FreeWith<git_patch_free>>;
using StatusListPtr = std::unique_ptr<git_status_list, FreeWith<git_status_list_free>>;
using ConfigPtr = std::unique_ptr<git_config, FreeWith<git_config_free>>;
using RevwalkPtr = std::unique_ptr<git_revwalk, FreeWith<git_revwalk_free>>;
using AnnotatedCommitPtr =
    std::unique_ptr<git_annotated_commit, FreeWith<git_annotated_commit_free>>;
using BranchIteratorPtr = std::unique_ptr<git_branch_iterator, FreeWith<git_branch_iterator_free>>;

// A git_buf that disposes of its memory.
struct Buf {
  git_buf value = GIT_BUF_INIT;
  Buf() = default;
  ~Buf() { git_buf_dispose(&value); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  std::string str() const { return value.ptr ? std::string(value.ptr, value.size) : std::string(); }
};

// A git_strarray that disposes of its strings.
struct StrArray {
  git_strarray value{};
  StrArray() = default;
  ~StrArray() { git_strarray_dispose(&value); }
  StrArray(const StrArray&) = delete;
  StrArray& operator=(const StrArray&) = delete;
};

// Opens the repository whose working directory (or .git directory) is exactly `path`.
RepositoryPtr openRepository(const std::filesystem::path& path);

// Opens the repository containing `start`, searching upwards like `git` does.
RepositoryPtr discoverRepository(const std::filesystem::path& start);

// The working directory without a trailing separator. Throws GitError for a bare repository.
std::filesystem::path workdir(git_repository* repo);

// The directory shared by all worktrees of the repository (the main `.git`),
// without a trailing separator.
std::filesystem::path commonDir(git_repository* repo);

// Resolves anything `git rev-parse` accepts and that names a commit: "HEAD",
// a branch, a tag (annotated tags are peeled), a full or abbreviated sha,
// "main~2". Throws GitError (GIT_ENOTFOUND for an unknown name) otherwise.
git_oid resolveCommit(git_repository* repo, std::string_view spec);

CommitPtr lookupCommit(git_repository* repo, const git_oid& id);

std::string toHex(const git_oid& id);

// Parses a full 40-digit hex id. Throws GitError for anything else.
git_oid oidFromHex(std::string_view hex);

// The branch HEAD points at ("main", "feature/x"), also when it has no commit
// yet; nullopt when HEAD is detached.
std::optional<std::string> currentBranch(git_repository* repo);

// A signature with the current time.
SignaturePtr makeSignature(const std::string& name, const std::string& email);

}  // namespace hydra::core::git
