#pragma once

// An exclusive lock that holds across processes: flock(2) on a file. Several
// hydra processes (two editors' `hydra serve`, a terminal's `hydra race`)
// work on one repository; the short steps that change what they share (a
// worktree registered or unregistered, a pool entry claimed or returned, a
// prune deciding what is dead) run under it. Never hold one across a slow
// step (a checkout, an agent run, a check): every other hydra waits for it.
//
// The kernel drops the lock when the process dies, however it dies, so a
// killed hydra never leaves the others locked out.

#include <filesystem>

namespace hydra::core {

class FileLock {
 public:
  // Blocks until this process holds `path` exclusively. The file (and its
  // directory) is created when missing and left in place. Throws
  // std::system_error naming the path.
  explicit FileLock(const std::filesystem::path& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace hydra::core
