#include "core/process/reaper.h"

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>

#include "core/process/pidfd.h"

namespace hydra::core {

using std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// How long, after SIGKILL, a process may still show as running before kill()
// reports it as a survivor (uninterruptible sleep).
constexpr auto kGiveUpAfterKill = 5s;
constexpr auto kPoll = 10ms;

std::string randomToken() {
  std::random_device entropy;
  std::uniform_int_distribution<unsigned> byte(0, 255);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (int i = 0; i < 16; ++i) {
    const unsigned b = byte(entropy);
    token += kHex[b >> 4];
    token += kHex[b & 0xF];
  }
  return token;
}

// Signals `process` if it is still the process that was seen (same pid and
// start time). Through a pidfd, opened before the check, so that the pid
// cannot be reused between the check and the signal.
bool signalProcess(const ProcessInfo& process, int sig) {
  const int pidfd = openPidfd(process.pid);
  if (pidfd < 0 && errno != ENOSYS) return false;  // gone
  const auto now = readProcessInfo(process.pid);
  bool sent = false;
  if (now && now->startTime == process.startTime) {
#ifdef SYS_pidfd_send_signal
    if (pidfd >= 0) sent = ::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0;
#endif
    // Kernels before 5.3: a tiny window remains between the check and kill().
    if (pidfd < 0) sent = ::kill(process.pid, sig) == 0;
  }
  if (pidfd >= 0) ::close(pidfd);
  return sent;
}

// Reaps `process` if it is an exited child of hydra (adopted as a
// subreaper) that no Process waits for. Callers hold the spawn lock.
void reapIfAdopted(const ProcessInfo& process) {
  if (!process.gone() || process.ppid != ::getpid()) return;
  if (ProcessRegistry::instance().contains(process.pid)) return;  // its Process reaps it
  const auto now = readProcessInfo(process.pid);
  if (!now || now->startTime != process.startTime) return;
  while (::waitpid(process.pid, nullptr, WNOHANG) == -1 && errno == EINTR) {
  }
}

// Kills whatever `collect` returns, as RunReaper::kill() describes.
// `collect` runs with the spawn lock held and `lock` taken around it.
ReapReport killCollected(const std::function<std::vector<ProcessInfo>()>& collect,
                         std::chrono::milliseconds grace, pid_t leaveToItsProcess,
                         const std::function<std::unique_lock<std::mutex>()>& lock) {
  ReapReport report;
  std::set<std::pair<pid_t, std::uint64_t>> termed;
  std::set<pid_t> killed;
  // One pass: collect the processes, reap the exited ones hydra adopted,
  // return those still running.
  auto living = [&]() {
    auto guard = lock();
    auto spawning = ProcessRegistry::instance().holdSpawns();
    std::vector<ProcessInfo> running;
    for (const ProcessInfo& process : collect()) {
      if (process.gone()) {
        if (process.pid != leaveToItsProcess) reapIfAdopted(process);
      } else {
        running.push_back(process);
      }
    }
    return running;
  };
  auto note = [&](const ProcessInfo& process) {
    if (killed.insert(process.pid).second) report.killed.push_back(process.pid);
  };

  // SIGTERM, and SIGCONT so that a stopped process gets to act on it.
  const auto termDeadline = steady_clock::now() + grace;
  for (;;) {
    const auto running = living();
    if (running.empty()) return report;
    for (const ProcessInfo& process : running) {
      if (!termed.insert({process.pid, process.startTime}).second) continue;
      if (signalProcess(process, SIGTERM)) note(process);
      signalProcess(process, SIGCONT);
    }
    if (steady_clock::now() >= termDeadline) break;
    std::this_thread::sleep_for(kPoll);
  }

  // What is left is stopped first, so that it cannot fork while it is being
  // killed; only when no new process appears is everything SIGKILLed.
  std::optional<steady_clock::time_point> killDeadline;
  std::vector<ProcessInfo> running = living();
  while (!running.empty()) {
    for (const ProcessInfo& process : running) signalProcess(process, SIGSTOP);
    const auto after = living();
    // The same processes (their state changes as they stop): nothing new was forked.
    auto identities = [](const std::vector<ProcessInfo>& processes) {
      std::set<std::pair<pid_t, std::uint64_t>> ids;
      for (const ProcessInfo& process : processes) ids.insert({process.pid, process.startTime});
      return ids;
    };
    if (identities(after) == identities(running)) {
      for (const ProcessInfo& process : after) {
        if (signalProcess(process, SIGKILL)) note(process);
      }
      if (!killDeadline) killDeadline = steady_clock::now() + kGiveUpAfterKill;
      std::this_thread::sleep_for(kPoll);
    }
    running = living();
    if (killDeadline && steady_clock::now() >= *killDeadline) break;
  }
  for (const ProcessInfo& process : running) report.survivors.push_back(process.pid);
  return report;
}

}  // namespace

// ---- the subreaper ------------------------------------------------------------

void becomeChildSubreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    throw std::system_error(errno, std::generic_category(), "cannot become a child subreaper");
  }
}

bool isChildSubreaper() {
  int value = 0;
  return ::prctl(PR_GET_CHILD_SUBREAPER, &value, 0, 0, 0) == 0 && value != 0;
}

// ---- the runs under way ---------------------------------------------------------

// Every RunReaper alive, and the one lock that guards their state: rule 5
// needs to know what every other run claims.
struct ReaperRegistry {
  std::mutex mutex;
  std::set<RunReaper*> runs;

  static ReaperRegistry& instance() {
    static auto* registry = new ReaperRegistry;  // never destroyed, like ProcessRegistry
    return *registry;
  }
};

RunReaper::RunReaper() : token_(randomToken()), startedAt_(processClockNow()) {}

std::shared_ptr<RunReaper> RunReaper::create() {
  if (!isChildSubreaper()) becomeChildSubreaper();
  std::shared_ptr<RunReaper> reaper(new RunReaper);
  auto& registry = ReaperRegistry::instance();
  std::lock_guard lock(registry.mutex);
  registry.runs.insert(reaper.get());
  return reaper;
}

RunReaper::~RunReaper() {
  auto& registry = ReaperRegistry::instance();
  std::lock_guard lock(registry.mutex);
  registry.runs.erase(this);
}

void RunReaper::prepare(ProcessSpec& spec) const {
  spec.env[std::string(kRunTokenVariable)] = token_;
}

void RunReaper::attach(pid_t root) {
  std::lock_guard lock(ReaperRegistry::instance().mutex);
  rootPid_ = root;
  root_ = readProcessInfo(root);
}

bool RunReaper::claimsLocked(const ProcessTree& tree, const ProcessInfo& process,
                             const std::optional<std::string>& token) const {
  if (root_) {
    // The root's pid and group id name this run only while the root, or a
    // member of its group, still holds that pid: a process that reused it
    // has another start time.
    const ProcessInfo* holder = tree.find(rootPid_);
    const bool stillOurs = holder == nullptr || holder->startTime == root_->startTime;
    if (stillOurs && (process.pid == rootPid_ || process.pgid == rootPid_)) return true;
  }
  if (seen_.count({process.pid, process.startTime}) > 0) return true;
  return token && *token == token_;
}

std::vector<ProcessInfo> RunReaper::attributeLocked(const ProcessTree& tree) {
  const pid_t self = ::getpid();
  auto& processes = ProcessRegistry::instance();
  const auto& runs = ReaperRegistry::instance().runs;

  std::set<pid_t> members;
  std::map<pid_t, std::optional<std::string>> tokens;
  for (pid_t pid : tree.descendantsOf(self)) {
    const ProcessInfo& process = *tree.find(pid);
    // Another Process's child leads a tree of its own.
    if (process.ppid == self && pid != rootPid_ && processes.contains(pid)) continue;
    auto& token = tokens[pid] = readEnvironmentVariable(pid, kRunTokenVariable);
    if (claimsLocked(tree, process, token)) members.insert(pid);
  }
  // Rule 5: an adopted orphan no run claims, started while this run was under way.
  if (!ended_) {
    for (pid_t pid : tree.childrenOf(self)) {
      const ProcessInfo& process = *tree.find(pid);
      if (members.count(pid) > 0 || processes.contains(pid)) continue;
      if (process.startTime < startedAt_) continue;
      bool claimed = false;
      for (const RunReaper* run : runs) {
        claimed = claimed || (run != this && run->claimsLocked(tree, process, tokens[pid]));
      }
      if (!claimed) members.insert(pid);
    }
  }
  // Rule 4: everything below a member.
  std::vector<ProcessInfo> found;
  std::set<pid_t> listed;
  for (pid_t member : members) {
    if (listed.insert(member).second) found.push_back(*tree.find(member));
    for (pid_t below : tree.descendantsOf(member)) {
      if (listed.insert(below).second) found.push_back(*tree.find(below));
    }
  }
  for (const ProcessInfo& process : found) seen_.insert({process.pid, process.startTime});
  return found;
}

void RunReaper::scan() {
  std::function<void(std::string)> call;
  std::string words;
  {
    std::lock_guard lock(ReaperRegistry::instance().mutex);
    auto spawning = ProcessRegistry::instance().holdSpawns();
    const ProcessTree tree(readProcessTable());
    const std::vector<ProcessInfo> run = attributeLocked(tree);
    if (over_ && !ended_) {
      if (auto over = overLimitLocked(run)) {
        call = std::exchange(over_, nullptr);
        words = std::move(*over);
      }
    }
    for (const ProcessInfo& process : run) {
      if (process.pid != rootPid_) reapIfAdopted(process);
    }
  }
  // Outside the lock: the caller ends the run, which takes it again.
  if (call) call(std::move(words));
}

std::optional<std::string> RunReaper::overLimitLocked(const std::vector<ProcessInfo>& run) const {
  ResourceLimits watched = limits_;
  if (cgroup_) {
    if (auto kind = cgroup_->over()) return overLimitWords(*kind, limits_);
    // The kernel holds memory and processes for the cgroup; only CPU may be left.
    watched.memoryMiB.reset();
    watched.processes.reset();
    if (cgroup_->measuresCpu()) watched.cpuSeconds.reset();
  }
  return overLimit(watched, usageOf(run));
}

void RunReaper::limit(ResourceLimits limits, std::shared_ptr<const RunCgroup> cgroup,
                      std::function<void(std::string)> over) {
  std::lock_guard lock(ReaperRegistry::instance().mutex);
  limits_ = limits;
  cgroup_ = std::move(cgroup);
  over_ = limits.any() ? std::move(over) : nullptr;
}

void RunReaper::watch(const boost::asio::any_io_executor& executor,
                      std::chrono::milliseconds interval) {
  watching_ = true;
  arm(std::make_shared<boost::asio::steady_timer>(executor), interval, weak_from_this());
}

void RunReaper::arm(std::shared_ptr<boost::asio::steady_timer> timer,
                    std::chrono::milliseconds interval, std::weak_ptr<RunReaper> weak) {
  timer->expires_after(interval);
  auto& waiting = *timer;
  waiting.async_wait([timer = std::move(timer), interval,
                      weak = std::move(weak)](const boost::system::error_code& ec) mutable {
    const auto self = weak.lock();
    if (!self || ec || !self->watching_) return;
    self->scan();
    arm(std::move(timer), interval, std::move(weak));
  });
}

std::vector<pid_t> RunReaper::members() {
  std::lock_guard lock(ReaperRegistry::instance().mutex);
  auto spawning = ProcessRegistry::instance().holdSpawns();
  const ProcessTree tree(readProcessTable());
  std::vector<pid_t> running;
  for (const ProcessInfo& process : attributeLocked(tree)) {
    if (!process.gone()) running.push_back(process.pid);
  }
  return running;
}

ReapReport RunReaper::kill(std::chrono::milliseconds grace) {
  watching_ = false;
  auto& registry = ReaperRegistry::instance();
  auto report =
      killCollected([this] { return attributeLocked(ProcessTree(readProcessTable())); }, grace,
                    rootPid_, [&registry] { return std::unique_lock(registry.mutex); });
  std::lock_guard lock(registry.mutex);
  ended_ = true;
  return report;
}

// ---- at hydra's exit -------------------------------------------------------------

ReapReport killAllDescendants(std::chrono::milliseconds grace) {
  auto collect = [] {
    const ProcessTree tree(readProcessTable());
    std::vector<ProcessInfo> all;
    for (pid_t pid : tree.descendantsOf(::getpid())) all.push_back(*tree.find(pid));
    return all;
  };
  auto& registry = ReaperRegistry::instance();
  return killCollected(collect, grace, 0, [&registry] { return std::unique_lock(registry.mutex); });
}

std::size_t reapAdoptedZombies() {
  std::lock_guard lock(ReaperRegistry::instance().mutex);
  auto spawning = ProcessRegistry::instance().holdSpawns();
  const ProcessTree tree(readProcessTable());
  std::size_t reaped = 0;
  for (pid_t pid : tree.childrenOf(::getpid())) {
    const ProcessInfo& process = *tree.find(pid);
    if (!process.gone() || ProcessRegistry::instance().contains(pid)) continue;
    const auto now = readProcessInfo(pid);
    if (!now || now->startTime != process.startTime) continue;
    if (::waitpid(pid, nullptr, WNOHANG) == pid) ++reaped;
  }
  return reaped;
}

}  // namespace hydra::core
