#include "core/process/run_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/util/owner.h"

namespace fs = std::filesystem;

namespace hydra::core {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kOwnerPrefix = "hydra.";

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool writeText(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::vector<std::string> words(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

struct Mount {
  fs::path point;
  std::string type;
  std::vector<std::string> options;
};

std::vector<Mount> cgroupMounts() {
  std::vector<Mount> mounts;
  std::istringstream in(readText("/proc/self/mounts"));
  std::string line;
  while (std::getline(in, line)) {
    const auto fields = words(line, ' ');
    if (fields.size() < 4 || (fields[2] != "cgroup" && fields[2] != "cgroup2")) continue;
    mounts.push_back({fields[1], fields[2], words(fields[3], ',')});
  }
  return mounts;
}

// hydra's own cgroup in the hierarchy of `controller` ("" for v2's), from
// /proc/self/cgroup ("4:memory:/a/b", "0::/a").
std::optional<std::string> ownCgroup(std::string_view controller) {
  std::istringstream in(readText("/proc/self/cgroup"));
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const auto controllers = words(std::string_view(line).substr(first + 1, second - first - 1), ',');
    const bool match = controller.empty() ? controllers.empty() && line.compare(0, first, "0") == 0
                                          : std::find(controllers.begin(), controllers.end(), controller) !=
                                                controllers.end();
    if (match) return line.substr(second + 1);
  }
  return std::nullopt;
}

// Where hydra's own cgroup is in the hierarchy mounted at `point`.
fs::path inOwnCgroup(const fs::path& point, const std::string& own) {
  return (point / fs::path(own).relative_path()).lexically_normal();
}

std::string ownerDirectoryName() {
  const ProcessOwner self = ProcessOwner::self();
  return std::string(kOwnerPrefix) + std::to_string(self.pid) + "." + std::to_string(self.startTime);
}

std::optional<ProcessOwner> ownerOfDirectory(const std::string& name) {
  if (name.rfind(kOwnerPrefix, 0) != 0) return std::nullopt;
  const auto parts = words(std::string_view(name).substr(kOwnerPrefix.size()), '.');
  if (parts.size() != 2) return std::nullopt;
  ProcessOwner owner;
  auto parse = [](const std::string& text, auto& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
  };
  if (!parse(parts[0], owner.pid) || !parse(parts[1], owner.startTime) || owner.pid <= 0) return std::nullopt;
  return owner;
}

// One hierarchy a run's cgroup has a directory in.
struct Hierarchy {
  fs::path parent;          // hydra's own cgroup there: the owner directories go in it
  std::string controller;   // "memory", "pids", "cpuacct"; "" for v2
  bool required = true;
};

struct Layout {
  int version = 0;
  std::vector<Hierarchy> hierarchies;
  std::string reason;  // why none, when hierarchies is empty
};

// Whether a directory can be made in `parent` (made and removed).
std::optional<std::string> cannotMakeIn(const fs::path& parent) {
  const fs::path probe = parent / (ownerDirectoryName() + ".probe");
  if (::mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) {
    return "cannot make a cgroup in " + parent.string() + ": " + std::strerror(errno);
  }
  ::rmdir(probe.c_str());
  return std::nullopt;
}

Layout findLayout() {
  const std::vector<Mount> mounts = cgroupMounts();
  std::string why;
  for (const Mount& m : mounts) {
    if (m.type != "cgroup2") continue;
    const auto own = ownCgroup("");
    if (!own) continue;
    const fs::path parent = inOwnCgroup(m.point, *own);
    const auto delegated = words(readText(parent / "cgroup.subtree_control"), ' ');
    auto has = [&delegated](std::string_view c) {
      return std::any_of(delegated.begin(), delegated.end(), [c](const std::string& w) {
        return w == c || w == std::string(c) + "\n";
      });
    };
    if (!has("memory") || !has("pids")) {
      why = "cgroup v2: hydra's cgroup " + parent.string() + " does not give memory and pids to its children";
      break;
    }
    if (auto cannot = cannotMakeIn(parent)) {
      why = "cgroup v2: " + *cannot;
      break;
    }
    Layout v2;
    v2.version = 2;
    v2.hierarchies.push_back({parent, "", true});
    return v2;
  }
  Layout v1;
  v1.version = 1;
  for (std::string_view controller : {"memory", "pids", "cpuacct"}) {
    const bool required = controller != "cpuacct";
    const auto mount = std::find_if(mounts.begin(), mounts.end(), [controller](const Mount& m) {
      return m.type == "cgroup" && std::find(m.options.begin(), m.options.end(), controller) != m.options.end();
    });
    const auto own = ownCgroup(controller);
    std::optional<std::string> cannot;
    if (mount == mounts.end() || !own) {
      cannot = "no cgroup v1 " + std::string(controller) + " hierarchy";
    } else {
      cannot = cannotMakeIn(inOwnCgroup(mount->point, *own));
    }
    if (cannot) {
      if (!required) continue;
      v1.hierarchies.clear();
      v1.reason = (why.empty() ? "no cgroup v2 controllers; " : why + "; ") + *cannot;
      return v1;
    }
    v1.hierarchies.push_back({inOwnCgroup(mount->point, *own), std::string(controller), required});
  }
  return v1;
}

const Layout& layout() {
  static const Layout found = findLayout();
  return found;
}

// SIGKILLs every process in the cgroup directory `dir` (they are a run's:
// hydra put its first one there) and removes it; false if it stays.
bool emptyAndRemove(const fs::path& dir) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY) return false;
    std::istringstream procs(readText(dir / "cgroup.procs"));
    pid_t pid = 0;
    while (procs >> pid) {
      if (pid > 0) ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

std::atomic<unsigned> runCount{0};

}  // namespace

std::uint64_t cgroupCounter(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto fields = words(line, ' ');
    if (fields.size() == 2 && fields[0] == key) {
      std::uint64_t value = 0;
      std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), value);
      return value;
    }
  }
  return 0;
}

CgroupProbe probeCgroups() {
  const Layout& found = layout();
  CgroupProbe probe;
  if (found.hierarchies.empty()) {
    probe.reason = found.reason;
    return probe;
  }
  probe.usable = true;
  probe.version = found.version;
  for (const Hierarchy& h : found.hierarchies) {
    probe.where += (probe.where.empty() ? "" : ", ") + h.parent.string();
  }
  return probe;
}

std::unique_ptr<RunCgroup> RunCgroup::create(const ResourceLimits& limits) {
  const Layout& found = layout();
  if (found.hierarchies.empty()) throw std::runtime_error(found.reason);
  static std::once_flag swept;
  std::call_once(swept, [] {
    if (int removed = removeDeadOwnersCgroups()) {
      spdlog::info("removed {} cgroups left by hydra processes that are gone", removed);
    }
  });
  std::unique_ptr<RunCgroup> cgroup(new RunCgroup());
  cgroup->limits_ = limits;
  const std::string name = "run." + std::to_string(++runCount);
  auto fail = [&cgroup](const fs::path& path, const std::string& what) {
    const std::string why = std::strerror(errno);
    cgroup->removeDirectories();
    throw std::runtime_error("cannot " + what + " " + path.string() + ": " + why);
  };
  for (const Hierarchy& h : found.hierarchies) {
    const fs::path owner = h.parent / ownerDirectoryName();
    if (::mkdir(owner.c_str(), 0755) != 0 && errno != EEXIST) fail(owner, "make");
    const fs::path dir = owner / name;
    if (::mkdir(dir.c_str(), 0755) != 0) fail(dir, "make");
    cgroup->dirs_.push_back(dir);
    const bool v2 = h.controller.empty();
    if (v2 || h.controller == "memory") {
      if (limits.memoryMiB) {
        const std::string bytes = std::to_string(*limits.memoryMiB * 1024 * 1024);
        if (!writeText(dir / (v2 ? "memory.max" : "memory.limit_in_bytes"), bytes)) fail(dir, "set the memory limit of");
        // Swap would only slow the run down on its way to the same end.
        writeText(dir / (v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes"), v2 ? "0" : bytes);
      }
      cgroup->memoryEvents_ = dir / (v2 ? "memory.events" : "memory.oom_control");
    }
    if (v2 || h.controller == "pids") {
      const std::string most = limits.processes ? std::to_string(*limits.processes) : "max";
      if (!writeText(dir / "pids.max", most)) fail(dir, "set the process limit of");
      cgroup->pidsEvents_ = dir / "pids.events";
    }
    if (v2 && fs::exists(dir / "cpu.stat")) {
      cgroup->cpuUsageFile_ = dir / "cpu.stat";
      cgroup->cpuInMicroseconds_ = true;
    } else if (h.controller == "cpuacct") {
      cgroup->cpuUsageFile_ = dir / "cpuacct.usage";
    }
    const int fd = ::open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(dir / "cgroup.procs", "open");
    cgroup->joinFds_.push_back(fd);
  }
  return cgroup;
}

RunCgroup::~RunCgroup() { removeDirectories(); }

void RunCgroup::removeDirectories() {
  for (int fd : joinFds_) ::close(fd);
  joinFds_.clear();
  for (const fs::path& dir : dirs_) {
    if (!emptyAndRemove(dir)) spdlog::warn("cannot remove the cgroup {}: {}", dir.string(), std::strerror(errno));
    ::rmdir(dir.parent_path().c_str());  // the owner's, once no other run of this hydra uses it
  }
  dirs_.clear();
}

std::optional<LimitKind> RunCgroup::over() const {
  if (limits_.memoryMiB && !memoryEvents_.empty() && cgroupCounter(readText(memoryEvents_), "oom_kill") > 0) {
    return LimitKind::Memory;
  }
  if (limits_.processes && !pidsEvents_.empty() && cgroupCounter(readText(pidsEvents_), "max") > 0) {
    return LimitKind::Processes;
  }
  if (limits_.cpuSeconds && !cpuUsageFile_.empty()) {
    const std::string text = readText(cpuUsageFile_);
    std::uint64_t used = 0;
    if (cpuInMicroseconds_) {
      used = cgroupCounter(text, "usage_usec") * 1000;
    } else {
      std::from_chars(text.data(), text.data() + text.size(), used);
    }
    if (used > static_cast<std::uint64_t>(*limits_.cpuSeconds) * 1'000'000'000) return LimitKind::Cpu;
  }
  return std::nullopt;
}

int removeDeadOwnersCgroups() {
  int removed = 0;
  for (const Hierarchy& h : layout().hierarchies) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(h.parent, ec)) {
      const auto owner = ownerOfDirectory(entry.path().filename().string());
      if (!owner || !entry.is_directory(ec) || ownerLife(*owner) != OwnerLife::Dead) continue;
      for (const auto& run : fs::directory_iterator(entry.path(), ec)) {
        if (run.is_directory(ec) && emptyAndRemove(run.path())) ++removed;
      }
      ::rmdir(entry.path().c_str());
    }
  }
  return removed;
}

}  // namespace hydra::core
