#pragma once

// A pidfd names one process for as long as it is open: a signal sent through
// it can never reach another process that reused the pid.

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

namespace hydra::core {

// pidfd_open(2) of `pid`; -1 with errno set when it fails (ENOSYS on kernels before 5.3).
inline int openPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace hydra::core
