#include "core/util/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace hydra::core {

namespace fs = std::filesystem;

FileLock::FileLock(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw std::system_error(ec, "create " + path.parent_path().string());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "open lock " + path.string());
  // One open file description per lock: two FileLocks in one process exclude
  // each other like two processes do.
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd_);
    throw std::system_error(error, std::generic_category(), "lock " + path.string());
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

}  // namespace hydra::core
