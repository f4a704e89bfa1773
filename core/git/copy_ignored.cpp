#include "core/git/copy_ignored.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "core/git/git.h"

namespace hydra::core::git {

namespace fs = std::filesystem;

namespace {

std::system_error osError(const std::string& what) {
  return std::system_error(errno, std::generic_category(), what);
}

// A file descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

// The bytes of `in` appended to `out` through user space: for file systems
// between which the kernel copies nothing itself.
void copyBytes(int in, int out, const fs::path& from, const fs::path& to) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t r = ::read(in, buffer, sizeof buffer);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw osError("read " + from.string());
    if (r == 0) return;
    for (ssize_t done = 0; done < r;) {
      const ssize_t w = ::write(out, buffer + done, static_cast<std::size_t>(r - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw osError("write " + to.string());
      done += w;
    }
  }
}

// One regular file: cloned when the file system shares blocks, else copied.
// Returns whether it was cloned.
bool copyFile(const fs::path& from, const fs::path& to, mode_t mode) {
  Fd in{::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
  if (in.fd < 0) throw osError("open " + from.string());
  Fd out{::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode & 07777)};
  if (out.fd < 0) throw osError("create " + to.string());
  const bool cloned = ::ioctl(out.fd, FICLONE, in.fd) == 0;
  if (!cloned) {
    for (;;) {
      const ssize_t n = ::copy_file_range(in.fd, nullptr, out.fd, nullptr, 1 << 30, 0);
      if (n > 0) continue;
      if (n == 0) break;
      if (errno == EINTR) continue;
      if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
        throw osError("copy " + from.string());
      }
      copyBytes(in.fd, out.fd, from, to);
      break;
    }
  }
  if (::fchmod(out.fd, mode & 07777) < 0 || ::close(out.release()) < 0) throw osError("write " + to.string());
  return cloned;
}

// `from` into the new directory `to`, below it everything but special files.
void copyTree(const fs::path& from, const fs::path& to, CopyReport& report) {
  struct stat st{};
  if (::lstat(from.c_str(), &st) < 0) throw osError("read " + from.string());
  if (::mkdir(to.c_str(), st.st_mode & 07777) < 0) throw osError("create " + to.string());
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(from, ec)) {
    const fs::path source = entry.path();
    const fs::path target = to / source.filename();
    if (::lstat(source.c_str(), &st) < 0) throw osError("read " + source.string());
    if (S_ISDIR(st.st_mode)) {
      copyTree(source, target, report);
    } else if (S_ISLNK(st.st_mode)) {
      const fs::path link = fs::read_symlink(source);
      fs::create_symlink(link, target);
      ++report.files;
    } else if (S_ISREG(st.st_mode)) {
      if (copyFile(source, target, st.st_mode)) ++report.cloned;
      ++report.files;
    }
  }
  if (ec) throw std::system_error(ec, "list " + from.string());
}

}  // namespace

CopyReport copyIgnored(const fs::path& repoRoot, const fs::path& worktree, const std::vector<std::string>& folders) {
  CopyReport report;
  RepositoryPtr repo = openRepository(repoRoot);
  for (const std::string& folder : folders) {
    const fs::path relative = fs::path(folder).lexically_normal();
    const fs::path source = repoRoot / relative;
    std::error_code ec;
    const auto status = fs::symlink_status(source, ec);
    if (ec || !fs::exists(status)) {
      report.problems.push_back(folder + ": not in your checkout (nothing to copy)");
      continue;
    }
    if (fs::is_symlink(status) || !fs::is_directory(status)) {
      report.problems.push_back(folder + ": not a directory of your checkout (links are not followed)");
      continue;
    }
    int ignored = 0;
    // A trailing slash asks about the directory, as .gitignore's "node_modules/" means it.
    if (git_ignore_path_is_ignored(&ignored, repo.get(), (relative.generic_string() + "/").c_str()) < 0) {
      git_error_clear();
      ignored = 0;
    }
    if (!ignored) {
      report.problems.push_back(folder + ": git does not ignore it, so it is part of the checkout; only ignored "
                                         "folders are copied");
      continue;
    }
    const fs::path target = worktree / relative;
    if (fs::exists(fs::symlink_status(target, ec))) {
      report.present.push_back(folder);  // kept there by the pool ([general] keep_ignored)
      continue;
    }
    try {
      fs::create_directories(target.parent_path());
      copyTree(source, target, report);
      report.copied.push_back(folder);
    } catch (const std::exception& e) {
      fs::remove_all(target, ec);
      report.problems.push_back(folder + ": " + e.what());
    }
  }
  return report;
}

}  // namespace hydra::core::git
