#include "core/process/process_table.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <ctime>
#include <deque>
#include <memory>
#include <set>

namespace hydra::core {

namespace {

// Reads a whole /proc file (they report a size of 0, so stat() cannot size
// the buffer). nullopt when it cannot be opened or read.
std::optional<std::string> readProcFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string content;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return content;
}

template <typename T>
bool parseNumber(std::string_view text, T& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

// "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
// cmajflt utime stime cutime cstime priority nice num_threads itrealvalue
// starttime ...". comm may hold spaces and parentheses, so the fields are
// counted from the last ')'.
std::optional<ProcessInfo> parseStat(pid_t pid, std::string_view stat) {
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields;
  std::string_view rest = stat.substr(close + 1);
  while (!rest.empty()) {
    const std::size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const std::size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end);
  }
  // fields[0] is the state (field 3 of the file); starttime is field 22.
  constexpr std::size_t kStartTime = 22 - 3;
  constexpr std::size_t kUserTime = 14 - 3;  // utime, stime, cutime, cstime follow one another
  constexpr std::size_t kResident = 24 - 3;
  if (fields.size() <= kStartTime || fields[0].size() != 1) return std::nullopt;
  ProcessInfo info;
  info.pid = pid;
  info.state = fields[0][0];
  if (!parseNumber(fields[1], info.ppid) || !parseNumber(fields[2], info.pgid) ||
      !parseNumber(fields[3], info.sid) || !parseNumber(fields[kStartTime], info.startTime)) {
    return std::nullopt;
  }
  for (std::size_t i = kUserTime; i < kUserTime + 4; ++i) {
    std::uint64_t ticks = 0;
    if (parseNumber(fields[i], ticks)) info.cpuTicks += ticks;
  }
  if (fields.size() > kResident) {
    std::int64_t pages = 0;
    if (parseNumber(fields[kResident], pages) && pages > 0) info.residentPages = static_cast<std::uint64_t>(pages);
  }
  return info;
}

}  // namespace

std::optional<ProcessInfo> readProcessInfo(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  const auto stat = readProcFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  return parseStat(pid, *stat);
}

std::vector<ProcessInfo> readProcessTable() {
  std::vector<ProcessInfo> table;
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), &::closedir);
  if (!proc) return table;
  while (const dirent* entry = ::readdir(proc.get())) {
    pid_t pid = 0;
    if (!parseNumber(std::string_view(entry->d_name), pid) || pid <= 0) continue;
    // It may have exited since readdir listed it.
    if (auto info = readProcessInfo(pid)) table.push_back(*info);
  }
  return table;
}

std::optional<std::string> readEnvironmentVariable(pid_t pid, std::string_view name) {
  const auto environ = readProcFile("/proc/" + std::to_string(pid) + "/environ");
  if (!environ) return std::nullopt;
  std::string_view rest(*environ);
  while (!rest.empty()) {
    const std::size_t end = rest.find('\0');
    const std::string_view entry = rest.substr(0, end);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
        entry[name.size()] == '=') {
      return std::string(entry.substr(name.size() + 1));
    }
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return std::nullopt;
}

std::uint64_t processClockNow() {
  // /proc's start times count clock ticks of the boot-time clock.
  timespec now{};
  ::clock_gettime(CLOCK_BOOTTIME, &now);
  const auto ticksPerSecond = static_cast<std::uint64_t>(::sysconf(_SC_CLK_TCK));
  return static_cast<std::uint64_t>(now.tv_sec) * ticksPerSecond +
         static_cast<std::uint64_t>(now.tv_nsec) * ticksPerSecond / 1000000000ULL;
}

ProcessTree::ProcessTree(std::vector<ProcessInfo> table) : table_(std::move(table)) {
  for (std::size_t i = 0; i < table_.size(); ++i) {
    index_[table_[i].pid] = i;
    children_[table_[i].ppid].push_back(table_[i].pid);
  }
}

const ProcessInfo* ProcessTree::find(pid_t pid) const {
  const auto it = index_.find(pid);
  return it == index_.end() ? nullptr : &table_[it->second];
}

const std::vector<pid_t>& ProcessTree::childrenOf(pid_t pid) const {
  static const std::vector<pid_t> kNone;
  const auto it = children_.find(pid);
  return it == children_.end() ? kNone : it->second;
}

std::vector<pid_t> ProcessTree::descendantsOf(pid_t pid) const {
  std::vector<pid_t> found;
  std::set<pid_t> seen{pid};
  std::deque<pid_t> queue(childrenOf(pid).begin(), childrenOf(pid).end());
  while (!queue.empty()) {
    const pid_t next = queue.front();
    queue.pop_front();
    // A snapshot read over some time may, in theory, show a cycle through a
    // reused pid; never list a process twice.
    if (!seen.insert(next).second) continue;
    found.push_back(next);
    for (pid_t child : childrenOf(next)) queue.push_back(child);
  }
  return found;
}

}  // namespace hydra::core
