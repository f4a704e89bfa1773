#pragma once

// File operations that never follow a symbolic link out of where hydra
// expects to be. An unconfined agent can replace any directory it can write
// (its worktree, a folder in it, .hydra/, parts of the git directory) with a
// link to somewhere else, say the user's checkout; a plain path-based write
// or remove by hydra would then land there (a worktree swapped for a link to
// the checkout once had hydra replace the user's .git directory with a
// one-line file).
//
// So hydra's own writes, renames and removes in such places go through an
// open directory (SafeDir): reached beneath a root without following any
// link on the way (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or a
// walk of openat(O_NOFOLLOW | O_DIRECTORY) where the kernel has no openat2),
// then `*at` calls on single names that never follow a link either: a link
// where hydra expects its file is replaced or removed, never written through.
// What is found swapped is refused with a SwappedPathError naming the path.

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace hydra::core {

// A path hydra expected to be its own directory was a symbolic link (or not
// a directory): something swapped it. code() is ELOOP or ENOTDIR.
class SwappedPathError : public std::system_error {
 public:
  SwappedPathError(int error, std::filesystem::path path, const std::string& what)
      : std::system_error(error, std::generic_category(), what), path_(std::move(path)) {}
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Where a directory entry is: its device and inode.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

// An open directory (O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC). Its operations
// take one name each, never a path with '/', and never follow a link there.
// Move-only.
class SafeDir {
 public:
  // Opens `relative` beneath `root` (which is opened as given: hydra trusts
  // it) without following a symbolic link anywhere on the way. `..` is
  // refused, as is an absolute `relative`; an empty one opens `root`.
  // Throws SwappedPathError when a component is a link or not a directory,
  // std::system_error (ENOENT, EACCES, ...) otherwise; both name the path.
  static SafeDir openBeneath(const std::filesystem::path& root, const std::filesystem::path& relative);
  // Opens `path`, whose last component must not be a link (the ones before
  // it are trusted). Throws as openBeneath.
  static SafeDir open(const std::filesystem::path& path);

  SafeDir(SafeDir&& other) noexcept;
  SafeDir& operator=(SafeDir&& other) noexcept;
  SafeDir(const SafeDir&) = delete;
  SafeDir& operator=(const SafeDir&) = delete;
  ~SafeDir();

  int fd() const { return fd_; }
  // The path it was opened by, for messages.
  const std::filesystem::path& path() const { return path_; }
  FileIdentity identity() const;

  // The child directory `name`; throws as openBeneath.
  SafeDir openDirectory(std::string_view name) const;
  // lstat of `name`: nullopt when there is nothing by that name.
  std::optional<struct stat> status(std::string_view name) const;
  // The content of the regular file `name`, at most `limit` bytes. A link, a
  // FIFO or a device there is refused (std::system_error), never opened for
  // reading or waited on.
  std::string readFile(std::string_view name, std::size_t limit = 1 << 20) const;
  // Replaces `name` atomically with `data` (see writeFileAtomicAt); a link
  // there is replaced. A directory there must be removed first.
  void writeFile(std::string_view name, std::string_view data) const;
  // Removes `name`: a file or a link by unlinking it (a link's target is
  // left alone), a directory with everything in it, never following a link
  // inside. Nothing there is not an error.
  void remove(std::string_view name) const;
  // Renames `from` to `to`, both in this directory.
  void rename(std::string_view from, std::string_view to) const;

 private:
  SafeDir(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::filesystem::path path_;
};

namespace safe_fs_detail {
// Whether openBeneath tries openat2 first (tests turn it off to run the
// component-by-component walk that older kernels get).
void useOpenat2(bool enabled);
}  // namespace safe_fs_detail

}  // namespace hydra::core
