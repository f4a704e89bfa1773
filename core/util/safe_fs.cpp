#include "core/util/safe_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <vector>

#include "core/util/atomic_file.h"

namespace hydra::core {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> openat2Enabled{true};

constexpr int kDirectoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

[[noreturn]] void throwErrno(int error, const std::string& what, const fs::path& path) {
  throw std::system_error(error, std::generic_category(), what + " " + path.string());
}

// Closes a descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

void requireName(std::string_view name, const fs::path& dir) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    throw std::invalid_argument("not a name in " + dir.string() + ": \"" + std::string(name) + "\"");
  }
}

// Why opening `path` as a directory failed with `error`, as a SwappedPathError
// when a link or a non-directory stood where hydra expected its directory.
[[noreturn]] void throwOpenError(int error, const fs::path& path) {
  // O_DIRECTORY | O_NOFOLLOW on a link says ENOTDIR: tell a link apart.
  struct stat st {};
  if (error == ENOTDIR && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) error = ELOOP;
  if (error == ELOOP || error == EXDEV) {
    throw SwappedPathError(ELOOP, path,
                           "refusing to follow a symbolic link at or above " + path.string() +
                               ": hydra expected its own directory there (was it swapped for a link?)");
  }
  if (error == ENOTDIR) {
    throw SwappedPathError(ENOTDIR, path,
                           "refusing " + path.string() + ": hydra expected its own directory there, and a part of " +
                               "the path is not a directory (was it swapped?)");
  }
  throwErrno(error, "cannot open the directory", path);
}

// openat2 beneath `rootFd`, refusing every link; -errno on failure, -ENOSYS
// where the kernel (or a seccomp filter) has no openat2.
int openWithOpenat2(int rootFd, const std::string& relative) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(kDirectoryFlags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (;;) {
    const long fd = ::syscall(SYS_openat2, rootFd, relative.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno == EINTR || errno == EAGAIN) continue;
    // EPERM: a seccomp filter that denies unknown system calls so.
    if (errno == ENOSYS || errno == EPERM || errno == E2BIG) return -ENOSYS;
    return -errno;
  }
}

// One component at a time, each with O_NOFOLLOW | O_DIRECTORY.
int openByWalk(int rootFd, const fs::path& relative) {
  int current = ::fcntl(rootFd, F_DUPFD_CLOEXEC, 0);
  if (current < 0) return -errno;
  for (const fs::path& part : relative) {
    const std::string name = part.string();
    if (name.empty() || name == ".") continue;
    const int next = ::openat(current, name.c_str(), kDirectoryFlags);
    const int error = errno;
    ::close(current);
    if (next < 0) return -error;
    current = next;
  }
  return current;
}

void removeEntry(int dirfd, const std::string& name, const fs::path& shown);

// Removes everything in the open directory `fd`.
void removeContents(int fd, const fs::path& shown) {
  // fdopendir takes the descriptor: give it its own.
  const int listFd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (listFd < 0) throwErrno(errno, "cannot list", shown);
  DIR* dir = ::fdopendir(listFd);
  if (dir == nullptr) {
    const int error = errno;
    ::close(listFd);
    throwErrno(error, "cannot list", shown);
  }
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  const int error = errno;
  ::closedir(dir);
  if (error != 0) throwErrno(error, "cannot list", shown);
  for (const std::string& name : names) removeEntry(fd, name, shown / name);
}

void removeEntry(int dirfd, const std::string& name, const fs::path& shown) {
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return;
    throwErrno(errno, "cannot stat", shown);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) throwErrno(errno, "cannot remove", shown);
    return;
  }
  const int child = ::openat(dirfd, name.c_str(), kDirectoryFlags);
  if (child < 0) {
    // Swapped for a link between the stat and the open: the link goes, not what it names.
    if (errno == ELOOP || errno == ENOTDIR) {
      if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) throwErrno(errno, "cannot remove", shown);
      return;
    }
    throwErrno(errno, "cannot open", shown);
  }
  FdCloser closer{child};
  // A folder an agent made read-only still goes, as `rm -rf` would take it.
  if ((st.st_mode & S_IRWXU) != S_IRWXU) ::fchmod(child, (st.st_mode & 07777) | S_IRWXU);
  removeContents(child, shown);
  if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) throwErrno(errno, "cannot remove", shown);
}

}  // namespace

namespace safe_fs_detail {
void useOpenat2(bool enabled) { openat2Enabled = enabled; }
}  // namespace safe_fs_detail

SafeDir SafeDir::openBeneath(const fs::path& root, const fs::path& relative) {
  const fs::path shown = relative.empty() ? root : root / relative;
  if (relative.is_absolute()) {
    throw std::invalid_argument("not a path beneath " + root.string() + ": " + relative.string());
  }
  for (const fs::path& part : relative) {
    if (part == "..") {
      throw SwappedPathError(EXDEV, shown, "refusing " + shown.string() + ": hydra does not leave " + root.string() +
                                               " by '..'");
    }
  }
  const int rootFd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootFd < 0) throwErrno(errno, "cannot open the directory", root);
  FdCloser rootCloser{rootFd};
  const std::string rel = relative.empty() ? std::string(".") : relative.string();
  int fd = openat2Enabled ? openWithOpenat2(rootFd, rel) : -ENOSYS;
  if (fd == -ENOSYS) fd = openByWalk(rootFd, relative);
  if (fd < 0) throwOpenError(-fd, shown);
  return SafeDir(fd, shown);
}

SafeDir SafeDir::open(const fs::path& path) {
  const fs::path clean = path.lexically_normal();
  fs::path parent = clean.parent_path();
  std::string name = clean.filename().string();
  if (name.empty()) {  // "dir/" or "/"
    parent = clean.parent_path().parent_path();
    name = clean.parent_path().filename().string();
  }
  if (name.empty() || name == "." || name == "..") {
    const int fd = ::open(clean.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throwOpenError(errno, path);
    return SafeDir(fd, path);
  }
  return openBeneath(parent.empty() ? fs::path(".") : parent, name);
}

SafeDir::SafeDir(SafeDir&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }

SafeDir& SafeDir::operator=(SafeDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

SafeDir::~SafeDir() {
  if (fd_ >= 0) ::close(fd_);
}

FileIdentity SafeDir::identity() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throwErrno(errno, "cannot stat", path_);
  return {st.st_dev, st.st_ino};
}

SafeDir SafeDir::openDirectory(std::string_view name) const {
  requireName(name, path_);
  const fs::path shown = path_ / std::string(name);
  const int fd = ::openat(fd_, std::string(name).c_str(), kDirectoryFlags);
  if (fd < 0) throwOpenError(errno, shown);
  return SafeDir(fd, shown);
}

std::optional<struct stat> SafeDir::status(std::string_view name) const {
  requireName(name, path_);
  struct stat st {};
  if (::fstatat(fd_, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return st;
  if (errno == ENOENT) return std::nullopt;
  throwErrno(errno, "cannot stat", path_ / std::string(name));
}

std::string SafeDir::readFile(std::string_view name, std::size_t limit) const {
  requireName(name, path_);
  const fs::path shown = path_ / std::string(name);
  // O_NONBLOCK: a FIFO planted under the name must not hold hydra up.
  const int fd = ::openat(fd_, std::string(name).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) throw SwappedPathError(ELOOP, shown, "refusing to read the symbolic link " + shown.string());
    throwErrno(errno, "cannot read", shown);
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throwErrno(errno, "cannot stat", shown);
  if (!S_ISREG(st.st_mode)) throwErrno(EINVAL, "not a regular file:", shown);
  std::string content;
  char buffer[8192];
  while (content.size() < limit) {
    const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, limit - content.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      throwErrno(errno, "cannot read", shown);
    }
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
  }
  return content;
}

void SafeDir::writeFile(std::string_view name, std::string_view data) const {
  requireName(name, path_);
  writeFileAtomicAt(fd_, name, data, path_ / std::string(name));
}

void SafeDir::remove(std::string_view name) const {
  requireName(name, path_);
  removeEntry(fd_, std::string(name), path_ / std::string(name));
}

void SafeDir::rename(std::string_view from, std::string_view to) const {
  requireName(from, path_);
  requireName(to, path_);
  if (::renameat(fd_, std::string(from).c_str(), fd_, std::string(to).c_str()) != 0) {
    throwErrno(errno, "cannot rename " + (path_ / std::string(from)).string() + " to", path_ / std::string(to));
  }
}

}  // namespace hydra::core
