#include "core/git/result_size.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "core/git/git.h"

namespace hydra::core {

namespace {

using git::check;
using git::GitError;

struct CloseDir {
  void operator()(DIR* d) const noexcept { ::closedir(d); }
};
using DirPtr = std::unique_ptr<DIR, CloseDir>;

std::string sizeText(std::int64_t bytes) {
  char text[32];
  if (bytes < (std::int64_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  } else if (bytes < (std::int64_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  }
  return text;
}

class Walk {
 public:
  Walk(git_repository* repo, git_index* index, const ResultLimits& limits, const std::atomic<bool>* cancel)
      : repo_(repo), index_(index), limits_(limits), cancel_(cancel), seen_(git_index_entrycount(index), 0) {
    result.exact = true;
    struct stat st {};
    if (const char* file = git_index_path(index); file != nullptr && ::stat(file, &st) == 0) {
      indexTime_ = st.st_mtim;
    } else {
      indexTime_ = {0, 0};  // no index file yet: every entry counts as racy
    }
  }

  ResultSize result;

  // Walks the open directory `fd` (taken over), `prefix` its path in the
  // worktree ("" or "a/b/"). False once a limit is passed.
  bool directory(int fd, const std::string& prefix) {
    DirPtr dir(::fdopendir(fd));
    if (!dir) {
      ::close(fd);
      throw GitError(GIT_ERROR, GIT_ERROR_OS, "read the folder " + show(prefix) + ": " + std::strerror(errno));
    }
    while (const dirent* entry = ::readdir(dir.get())) {
      if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed)) throw ResultCancelled();
      const std::string_view name = entry->d_name;
      if (name == ".git" && !prefix.empty()) result.exact = false;  // a repository inside: add -A's to judge
      if (name == "." || name == ".." || name == ".git") continue;
      const std::string path = prefix + std::string(name);
      struct stat st {};
      if (::fstatat(::dirfd(dir.get()), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno == ENOENT) continue;  // gone since it was listed
        throw GitError(GIT_ERROR, GIT_ERROR_OS, "stat " + path + ": " + std::strerror(errno));
      }
      if (S_ISDIR(st.st_mode)) {
        if (const git_index_entry* tracked = git_index_get_bypath(index_, path.c_str(), 0);
            tracked != nullptr && tracked->mode == GIT_FILEMODE_COMMIT) {
          result.exact = false;  // a submodule
          continue;
        }
        if (ignored(path + "/") && !tracksBelow(path + "/")) continue;
        const int sub = ::openat(::dirfd(dir.get()), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) throw GitError(GIT_ERROR, GIT_ERROR_OS, "open the folder " + path + ": " + std::strerror(errno));
        if (!directory(sub, path + "/")) return false;
        continue;
      }
      if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;  // git stages neither fifos nor sockets
      const Change change = changed(path, st);
      if (change == Change::None) continue;
      result.toStage.push_back(path);
      if (change == Change::Racy) continue;
      ++result.files;
      result.bytes += st.st_size;
      if (S_ISREG(st.st_mode) && st.st_size >= kStreamedFileBytes) result.largeFiles.push_back(path);
      if (result.files > limits_.maxFiles || result.bytes > limits_.maxBytes) {
        result.overLimit = true;
        return false;
      }
    }
    return true;
  }

  // The tracked files the walk did not find: gone from the worktree, unless
  // a sparse checkout leaves them out on purpose (skip-worktree).
  void findGone() {
    const std::size_t count = git_index_entrycount(index_);
    for (std::size_t i = 0; i < count; ++i) {
      const git_index_entry* entry = git_index_get_byindex(index_, i);
      if (entry == nullptr) continue;
      if (git_index_entry_stage(entry) != 0) {
        result.exact = false;  // a conflict: add -A's to settle
        continue;
      }
      if (seen_[i] || (entry->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) != 0) continue;
      if (entry->mode == GIT_FILEMODE_COMMIT) continue;  // judged above
      result.gone.emplace_back(entry->path);
    }
  }

 private:
  enum class Change { None, Racy, Changed };

  git_repository* repo_;
  git_index* index_;
  const ResultLimits& limits_;
  const std::atomic<bool>* cancel_;
  std::vector<char> seen_;  // by index position: the tracked files the walk found
  struct timespec indexTime_ {};

  static std::string show(const std::string& prefix) { return prefix.empty() ? "." : prefix; }

  bool ignored(const std::string& path) const {
    int yes = 0;
    check(git_ignore_path_is_ignored(&yes, repo_, path.c_str()), "check whether " + path + " is ignored");
    return yes != 0;
  }

  // Whether the index has an entry below the folder `prefix` ("a/b/"): git
  // keeps staging tracked files inside an ignored folder.
  bool tracksBelow(const std::string& prefix) const {
    std::size_t at = 0;
    if (git_index_find_prefix(&at, index_, prefix.c_str()) == 0) return true;
    git_error_clear();
    return false;
  }

  // New (no index entry, not ignored) or changed (size or mtime differ), or
  // racily clean: its stat data matches an entry written in the same clock
  // tick as the index (or later), so a change within that tick would not show.
  Change changed(const std::string& path, const struct stat& st) {
    std::size_t at = 0;
    if (git_index_find(&at, index_, path.c_str()) != 0) {
      git_error_clear();
      return ignored(path) ? Change::None : Change::Changed;
    }
    seen_[at] = 1;
    const git_index_entry* entry = git_index_get_byindex(index_, at);
    const bool differs = entry->file_size != static_cast<std::uint32_t>(st.st_size) ||
                         entry->mtime.seconds != static_cast<std::int32_t>(st.st_mtim.tv_sec) ||
                         entry->mtime.nanoseconds != static_cast<std::uint32_t>(st.st_mtim.tv_nsec) ||
                         (entry->mode == GIT_FILEMODE_LINK) != S_ISLNK(st.st_mode) ||
                         (entry->mode == GIT_FILEMODE_BLOB_EXECUTABLE) != (S_ISREG(st.st_mode) && (st.st_mode & 0100) != 0);
    if (differs) return Change::Changed;
    const bool racy = entry->mtime.seconds > indexTime_.tv_sec ||
                      (entry->mtime.seconds == indexTime_.tv_sec &&
                       static_cast<long>(entry->mtime.nanoseconds) >= indexTime_.tv_nsec);
    return racy ? Change::Racy : Change::None;
  }
};

}  // namespace

std::string ResultSize::describe(const ResultLimits& limits) const {
  const bool tooMany = files > limits.maxFiles;
  const std::string over = tooMany ? "more than " + std::to_string(limits.maxFiles) + " files (max_result_files = " +
                                         std::to_string(limits.maxFiles) + ")"
                                   : "more than " + sizeText(limits.maxBytes) + " (max_result_bytes = " +
                                         std::to_string(limits.maxBytes) + ")";
  return "result too large: " + over + "; counted " + std::to_string(files) + (files == 1 ? " file, " : " files, ") +
         sizeText(bytes) + " before stopping";
}

ResultSize measureResult(const std::filesystem::path& worktree, const ResultLimits& limits,
                         const std::atomic<bool>* cancel) {
  git::RepositoryPtr repo = git::openRepository(worktree);
  git_index* rawIndex = nullptr;
  check(git_repository_index(&rawIndex, repo.get()), "open the index of " + worktree.string());
  git::IndexPtr index(rawIndex);
  const int fd = ::open(worktree.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw GitError(GIT_ERROR, GIT_ERROR_OS, "open " + worktree.string() + ": " + std::strerror(errno));
  Walk walk(repo.get(), index.get(), limits, cancel);
  if (walk.directory(fd, "")) walk.findGone();
  return walk.result;
}

}  // namespace hydra::core
