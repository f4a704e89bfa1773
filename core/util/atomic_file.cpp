#include "core/util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <random>
#include <string>
#include <system_error>
#include <utility>

namespace hydra::core {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTempMarker = ".tmp-";

[[noreturn]] void throwErrno(int error, std::string_view what, const fs::path& path) {
  throw std::system_error(error, std::generic_category(), std::string(what) + " " + path.string());
}

// Writes every byte of `parts`, continuing after partial writes and EINTR.
// Returns 0 or the errno of the failure.
int writeAll(int fd, iovec* parts, int count) {
  while (count > 0) {
    ssize_t n = ::writev(fd, parts, count);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    auto left = static_cast<size_t>(n);
    while (count > 0 && left >= parts->iov_len) {
      left -= parts->iov_len;
      ++parts;
      --count;
    }
    if (count > 0) {
      parts->iov_base = static_cast<char*>(parts->iov_base) + left;
      parts->iov_len -= left;
    }
  }
  return 0;
}

int writeAll(int fd, std::string_view data) {
  // writev takes a non-const base; it only reads from it.
  iovec part{const_cast<char*>(data.data()), data.size()};
  return writeAll(fd, &part, data.empty() ? 0 : 1);
}

int closeChecked(int fd) {
  // Linux releases the descriptor even when close fails, so it is never retried.
  return ::close(fd) == 0 ? 0 : errno;
}

std::string tempName(std::string_view target) {
  static std::atomic<unsigned> counter{0};
  static const unsigned salt = std::random_device{}();
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, "%d-%u-%08x", static_cast<int>(::getpid()),
                counter.fetch_add(1), salt);
  return "." + std::string(target) + std::string(kTempMarker) + suffix;
}

// The temporary file of one writeFileAtomic call, in the directory `dirfd`:
// closed and unlinked on every path out unless commit() moved it over the
// target. Its name is made with O_EXCL|O_NOFOLLOW, so a symbolic link planted
// under that name is never written through.
class TempFile {
 public:
  TempFile(int dirfd, std::string_view name, const fs::path& shown) : dirfd_(dirfd) {
    // O_EXCL makes the name ours alone; a clash (left by a killed writer whose
    // pid was reused, or planted) just draws another name.
    for (int attempt = 0; attempt < 16; ++attempt) {
      name_ = tempName(name);
      fd_ = ::openat(dirfd_, name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd_ >= 0) return;
      if (errno != EEXIST) throwErrno(errno, "cannot create a temporary file for", shown);
    }
    throwErrno(EEXIST, "cannot create a temporary file for", shown);
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlinkat(dirfd_, name_.c_str(), 0);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  // Closes the descriptor, reporting close errors (NFS reports write errors there).
  int close() {
    int error = closeChecked(fd_);
    fd_ = -1;
    return error;
  }
  // Moves the file over `target` (a symbolic link there is replaced, not
  // followed); from here on the destructor leaves it alone.
  int commit(std::string_view target) {
    if (::renameat(dirfd_, name_.c_str(), dirfd_, std::string(target).c_str()) != 0) return errno;
    committed_ = true;
    return 0;
  }

 private:
  int dirfd_;
  std::string name_;
  int fd_ = -1;
  bool committed_ = false;
};

int syncDirectory(int dirfd) {
  int error = ::fsync(dirfd) == 0 ? 0 : errno;
  // Some file systems cannot sync a directory at all; that is not a failure of ours.
  return error == EINVAL ? 0 : error;
}

}  // namespace

void writeFileAtomicAt(int dirfd, std::string_view name, std::string_view data, const fs::path& shown) {
  TempFile temp(dirfd, name, shown);

  struct stat existing {};
  const std::string target(name);
  if (::fstatat(dirfd, target.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(existing.st_mode)) {
    if (::fchmod(temp.fd(), existing.st_mode & 07777) != 0) {
      throwErrno(errno, "cannot set permissions for", shown);
    }
  }
  if (int error = writeAll(temp.fd(), data)) throwErrno(error, "cannot write", shown);
  if (::fsync(temp.fd()) != 0) throwErrno(errno, "cannot sync", shown);
  if (int error = temp.close()) throwErrno(error, "cannot close", shown);
  if (int error = temp.commit(name)) throwErrno(error, "cannot replace", shown);
  if (int error = syncDirectory(dirfd)) throwErrno(error, "cannot sync the directory of", shown);
}

void writeFileAtomic(const fs::path& path, std::string_view data) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  const int dirfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) throwErrno(errno, "cannot open the directory of", path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{dirfd};
  writeFileAtomicAt(dirfd, path.filename().string(), data, path);
}

bool isAtomicTempName(std::string_view filename) {
  return filename.size() > 1 && filename.front() == '.' &&
         filename.find(kTempMarker) != std::string_view::npos;
}

AppendFile::AppendFile(const fs::path& path) : path_(path) {
  // O_NOFOLLOW: a link planted where a log goes is refused, not appended through.
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd_ < 0) throwErrno(errno, "cannot open", path);
}

AppendFile::~AppendFile() { close(); }

AppendFile::AppendFile(AppendFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

AppendFile& AppendFile::operator=(AppendFile&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void AppendFile::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void AppendFile::append(std::string_view text) {
  if (fd_ < 0) throwErrno(EBADF, "cannot append to", path_);
  char newline = '\n';
  // One writev for the text and its newline, so that in the common case the
  // kernel appends the whole line at once and other appenders cannot split it.
  iovec parts[2];
  int count = 0;
  if (!text.empty()) parts[count++] = {const_cast<char*>(text.data()), text.size()};
  if (text.empty() || text.back() != '\n') parts[count++] = {&newline, 1};
  struct stat before {};
  const bool sized = ::fstat(fd_, &before) == 0;
  if (int error = writeAll(fd_, parts, count)) {
    // A full disk can take part of a line: cut it off again, so that the file
    // still holds whole lines only (a JSON Lines file stays readable).
    if (sized && ::ftruncate(fd_, before.st_size) != 0) {
      // Nothing more to do: the error below is what the caller learns.
    }
    throwErrno(error, "cannot append to", path_);
  }
}

void AppendFile::sync() {
  if (fd_ < 0) throwErrno(EBADF, "cannot sync", path_);
  if (::fdatasync(fd_) != 0) throwErrno(errno, "cannot sync", path_);
}

std::uint64_t AppendFile::size() const {
  struct stat info {};
  if (fd_ < 0 || ::fstat(fd_, &info) != 0)
    throwErrno(fd_ < 0 ? EBADF : errno, "cannot stat", path_);
  return static_cast<std::uint64_t>(info.st_size);
}

}  // namespace hydra::core
