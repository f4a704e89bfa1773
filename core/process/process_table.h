#pragma once

// What /proc says about the processes of this machine (or of this PID
// namespace): enough to find every descendant of a process, tell a process
// from a later one that reuses its pid, and read a variable of its
// environment. Everything here is a snapshot: a process may exit, or a pid be
// reused, right after it was read.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hydra::core {

struct ProcessInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t sid = 0;
  char state = '?';  // R, S, D, T, Z, X, ... as in /proc/PID/stat
  // Clock ticks after boot at which the process started. Together with the pid
  // it names one process: a reused pid has a later start time.
  std::uint64_t startTime = 0;
  // What it takes, for per-run limits: clock ticks of CPU it and its waited-for
  // children used (utime + stime + cutime + cstime), and its resident pages.
  std::uint64_t cpuTicks = 0;
  std::uint64_t residentPages = 0;

  // Exited but not reaped yet (or being torn down): it runs nothing any more.
  bool gone() const { return state == 'Z' || state == 'X'; }
  // The same process in the same state; what it takes is no part of that.
  bool operator==(const ProcessInfo& o) const {
    return pid == o.pid && ppid == o.ppid && pgid == o.pgid && sid == o.sid && state == o.state &&
           startTime == o.startTime;
  }
};

// One process, from /proc/PID/stat; nullopt when there is no such process.
std::optional<ProcessInfo> readProcessInfo(pid_t pid);

// Every process /proc lists, in no particular order.
std::vector<ProcessInfo> readProcessTable();

// The value of `name` in the environment the process was started with
// (/proc/PID/environ); nullopt when it is unset or cannot be read (no
// permission, a zombie, a kernel thread).
std::optional<std::string> readEnvironmentVariable(pid_t pid, std::string_view name);

// The current time in the clock of ProcessInfo::startTime.
std::uint64_t processClockNow();

// A process table indexed for walking the tree of parents and children.
class ProcessTree {
 public:
  explicit ProcessTree(std::vector<ProcessInfo> table);

  const ProcessInfo* find(pid_t pid) const;
  const std::vector<pid_t>& childrenOf(pid_t pid) const;
  // Every process below `pid` (not `pid` itself), parents before children.
  std::vector<pid_t> descendantsOf(pid_t pid) const;
  const std::vector<ProcessInfo>& all() const { return table_; }

 private:
  std::vector<ProcessInfo> table_;
  std::map<pid_t, std::size_t> index_;
  std::map<pid_t, std::vector<pid_t>> children_;
};

}  // namespace hydra::core
