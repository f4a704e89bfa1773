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
      : repo_(repo), index_(index), limits_(limits), cancel_(cancel) {}

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
      if (name == "." || name == ".." || name == ".git") continue;
      const std::string path = prefix + std::string(name);
      struct stat st {};
      if (::fstatat(::dirfd(dir.get()), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno == ENOENT) continue;  // gone since it was listed
        throw GitError(GIT_ERROR, GIT_ERROR_OS, "stat " + path + ": " + std::strerror(errno));
      }
      if (S_ISDIR(st.st_mode)) {
        if (ignored(path + "/") && !tracksBelow(path + "/")) continue;
        const int sub = ::openat(::dirfd(dir.get()), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) throw GitError(GIT_ERROR, GIT_ERROR_OS, "open the folder " + path + ": " + std::strerror(errno));
        if (!directory(sub, path + "/")) return false;
        continue;
      }
      if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;  // git stages neither fifos nor sockets
      if (!changed(path, st)) continue;
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

 private:
  git_repository* repo_;
  git_index* index_;
  const ResultLimits& limits_;
  const std::atomic<bool>* cancel_;

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

  // New (no index entry, not ignored) or changed (size or mtime differ).
  bool changed(const std::string& path, const struct stat& st) const {
    const git_index_entry* entry = git_index_get_bypath(index_, path.c_str(), 0);
    if (entry == nullptr) return !ignored(path);
    return entry->file_size != static_cast<std::uint32_t>(st.st_size) ||
           entry->mtime.seconds != static_cast<std::int32_t>(st.st_mtim.tv_sec) ||
           entry->mtime.nanoseconds != static_cast<std::uint32_t>(st.st_mtim.tv_nsec);
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
  walk.directory(fd, "");
  return walk.result;
}

}  // namespace hydra::core
