#include "core/process/process.h"
#include "core/process/process_table.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>

#include "core/process/pidfd.h"
#include "core/util/utf8.h"

extern char** environ;

namespace hydra::core {

namespace fs = std::filesystem;
using std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// How often a Process re-checks a group it is waiting on. Only used while
// something is being torn down; a child that just exits never ticks.
constexpr auto kTick = 20ms;
// How long after SIGKILL a member may still show as running before we stop
// waiting for it (a process stuck in uninterruptible sleep, or one we may not
// signal).
constexpr auto kGiveUpAfterKill = 5s;
// The least time we give a reader to drain a pipe once every writer in the
// group is gone.
constexpr auto kMinDrain = 500ms;

// ---- the child side, between fork and exec ---------------------------------
// Everything here runs in the forked copy of a multithreaded program, so it
// may only call async-signal-safe functions: no allocation, no locks.

// Signal dispositions set to "ignore" and the signal mask survive exec. hydra
// may ignore SIGPIPE for its own sake; agents and the tools they run must get
// the default behaviour (`git log | head` relies on it).
void resetSignals() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_IGN) continue;
    struct sigaction defaults {};
    defaults.sa_handler = SIG_DFL;
    sigemptyset(&defaults.sa_mask);
    sigaction(sig, &defaults, nullptr);
  }
}

// Every descriptor above stderr is marked close-on-exec: a pipe end of one
// agent leaked into another would keep the first one's output from ever
// reaching EOF. Close-on-exec rather than close: the error pipe must stay
// open until exec.
void markInheritedFdsCloseOnExec(int fdLimit) {
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  for (int fd = 3; fd < fdLimit; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // kernels before 5.11
}

// What the child needs, all of it prepared by the parent before fork.
struct ChildLaunch {
  const char* executable;
  char* const* argv;
  const char* const* envp;
  const char* cwd;  // nullptr: inherit
  int stdinFd;      // /dev/null
  int stdoutFd;     // the write ends of hydra's pipes
  int stderrFd;
  int errorPipe;    // close-on-exec: gets errno when the child cannot exec
  int fdLimit;      // computed in the parent: sysconf is not async-signal-safe
  const int* cgroups;  // cgroup.procs files to join
  std::size_t cgroupCount;
  const ChildRlimits* rlimits;
  int leftoversFd;  // becomes descriptor 3; -1: none
};

// Joins the run's cgroups and sets its rlimits, before anything of it runs.
bool limitChild(const ChildLaunch& launch) {
  for (std::size_t i = 0; i < launch.cgroupCount; ++i) {
    if (::write(launch.cgroups[i], "0", 1) != 1) return false;
  }
  for (int i = 0; i < launch.rlimits->count; ++i) {
    const ChildRlimits::One& one = launch.rlimits->limits[i];
    const struct rlimit value {one.soft, one.hard};
    if (::setrlimit(one.resource, &value) != 0) return false;
  }
  return true;
}

// The child, from fork to exec. (Boost.Process's launchers call
// notify_fork() on an Asio context in the child, which allocates: in a
// multithreaded program that can hang on an allocator lock another thread
// held at the fork.)
[[noreturn]] void execChild(const ChildLaunch& launch) {
  // Its own group, so that timeouts and cancellation reach everything it starts.
  if (::setpgid(0, 0) == 0 && limitChild(launch)) {
    resetSignals();
    if (::dup2(launch.stdinFd, STDIN_FILENO) >= 0 && ::dup2(launch.stdoutFd, STDOUT_FILENO) >= 0 &&
        ::dup2(launch.stderrFd, STDERR_FILENO) >= 0 && (launch.cwd == nullptr || ::chdir(launch.cwd) == 0)) {
      markInheritedFdsCloseOnExec(launch.fdLimit);
      if (launch.leftoversFd >= 0) {
        // dup2 leaves close-on-exec off on the copy; a descriptor already 3 keeps it on.
        if (launch.leftoversFd == 3) {
          ::fcntl(3, F_SETFD, 0);
        } else if (::dup2(launch.leftoversFd, 3) < 0) {
          ::_exit(127);
        }
      }
      // execve never writes through its arrays; its signature predates const.
      ::execve(launch.executable, launch.argv, const_cast<char* const*>(launch.envp));
    }
  }
  const int error = errno;
  while (::write(launch.errorPipe, &error, sizeof error) == -1 && errno == EINTR) {
  }
  ::_exit(127);
}

// Closes the descriptors given that are open (>= 0).
void closeAll(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

// ---- the parent side --------------------------------------------------------

bool isExecutableFile(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string defaultSearchPath() {
  char buffer[512];
  const std::size_t n = ::confstr(_CS_PATH, buffer, sizeof buffer);
  return n > 0 && n <= sizeof buffer ? std::string(buffer) : std::string("/usr/bin:/bin");
}

// The PATH the child will see, which is also where execvp would look.
std::string searchPathFor(const ProcessSpec& spec) {
  if (auto it = spec.env.find("PATH"); it != spec.env.end()) return it->second;
  if (const char* path = std::getenv("PATH")) return path;
  return defaultSearchPath();
}

struct Resolution {
  fs::path executable;  // absolute: the child changes directory before exec
  std::string error;
};

Resolution resolveProgram(const ProcessSpec& spec) {
  if (spec.program.empty()) return {{}, "no program given"};
  std::error_code ec;
  const fs::path base = spec.cwd.empty() ? fs::current_path(ec) : fs::absolute(spec.cwd, ec);
  if (spec.program.find('/') != std::string::npos) {
    fs::path path = base / spec.program;  // an absolute program replaces `base`
    if (!isExecutableFile(path)) return {{}, "'" + path.string() + "' is not an executable file"};
    return {path, {}};
  }
  const std::string searchPath = searchPathFor(spec);
  auto found = findExecutable(spec.program, searchPath);
  if (!found) {
    return {{},
            "program '" + spec.program + "' not found on PATH (searched \"" + searchPath + "\")"};
  }
  return {found->is_absolute() ? *found : base / *found, {}};
}

// hydra's own environment with `overrides` applied, as execve wants it. The
// strings own the storage that `pointers` refers to.
struct ChildEnvironment {
  std::vector<std::string> entries;
  std::vector<const char*> pointers;
};

ChildEnvironment buildEnvironment(const std::map<std::string, std::string>& overrides,
                                  const std::vector<std::string>& removed) {
  std::map<std::string, std::string> merged;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view kv(*entry);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    merged.emplace(kv.substr(0, eq), kv.substr(eq + 1));  // the first wins, as with getenv
  }
  for (const auto& name : removed) merged.erase(name);
  for (const auto& [name, value] : overrides) merged[name] = value;

  ChildEnvironment env;
  env.entries.reserve(merged.size());
  for (const auto& [name, value] : merged) env.entries.push_back(name + "=" + value);
  for (const auto& entry : env.entries) env.pointers.push_back(entry.c_str());
  env.pointers.push_back(nullptr);
  return env;
}

std::optional<std::string> invalidVariableName(const std::map<std::string, std::string>& env) {
  for (const auto& [name, value] : env) {
    if (name.empty() || name.find('=') != std::string::npos) return name;
  }
  return std::nullopt;
}

int childFdLimit() {
  const long max = ::sysconf(_SC_OPEN_MAX);
  return max > 0 ? static_cast<int>(std::min(max, 65536L)) : 1024;
}

// A child whose exec failed exits at once, but through exit(), which runs the
// parent's atexit handlers in the forked copy and could hang there. It has
// failed anyway: kill it and reap it.
void reapFailedChild(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) == -1 && errno == EINTR) {
  }
}

// Sends SIGTERM (with a SIGCONT: a stopped member would keep SIGTERM pending
// forever) or SIGKILL to a whole group.
// The processes of group `pgid` other than its leader that still run.
int livingGroupMembers(pid_t pgid) {
  int count = 0;
  for (const ProcessInfo& process : readProcessTable()) {
    if (process.pgid == pgid && process.pid != pgid && !process.gone()) ++count;
  }
  return count;
}

// The processes below a sandbox's root `pid` that run its command's work:
// all its living descendants but the sandbox's own (bubblewrap's init in the
// namespace and the shell that reports leftovers) and the command itself.
int sandboxedMembers(pid_t pid) {
  const ProcessTree tree(readProcessTable());
  int count = 0;
  for (pid_t member : tree.descendantsOf(pid)) {
    const ProcessInfo* info = tree.find(member);
    if (info && !info->gone()) ++count;
  }
  return std::max(0, count - 3);
}

void signalGroupOf(pid_t pgid, int sig) {
  ::kill(-pgid, sig);
  if (sig == SIGTERM) ::kill(-pgid, SIGCONT);
}

// Whether some process of group `pgid` runs (is not a zombie), read from
// /proc/<pid>/stat: "pid (comm) state ppid pgrp ...". nullopt without /proc.
std::optional<bool> groupHasRunningMember(pid_t pgid) {
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), &::closedir);
  if (!proc) return std::nullopt;
  while (const dirent* entry = ::readdir(proc.get())) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    const std::string statPath = std::string("/proc/") + entry->d_name + "/stat";
    const int fd = ::open(statPath.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // it exited while we looked
    char buffer[1024];
    const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
    ::close(fd);
    if (n <= 0) continue;
    const std::string_view stat(buffer, static_cast<std::size_t>(n));
    // comm may hold spaces and parentheses: the fields resume after the last ')'.
    const std::size_t close = stat.rfind(')');
    if (close == std::string_view::npos) continue;
    char state = 0;
    int ppid = 0;
    int pgrp = 0;
    const std::string rest(stat.substr(close + 1));
    if (std::sscanf(rest.c_str(), " %c %d %d", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') return true;
  }
  return false;
}

}  // namespace



// ---- Process ------------------------------------------------------------------

Process::Process(boost::asio::io_context& io, ProcessSpec spec, LineHandler onLine,
                 ExitHandler onExit)
    : strand_(boost::asio::make_strand(io)),
      spec_(std::move(spec)),
      onLine_(std::move(onLine)),
      onExit_(std::move(onExit)),
      out_(strand_),
      err_(strand_),
      in_(strand_),
      exitWatch_(strand_),
      timeoutTimer_(strand_),
      tickTimer_(strand_) {}

std::shared_ptr<Process> Process::start(boost::asio::io_context& io, ProcessSpec spec,
                                        LineHandler onLine, ExitHandler onExit) {
  std::shared_ptr<Process> process(
      new Process(io, std::move(spec), std::move(onLine), std::move(onExit)));
  process->spawn();
  return process;
}

Process::~Process() {
  if (pid_ <= 0 || reaped_) return;
  // Only reached when the io_context died with the child still unreaped. The
  // unreaped child keeps its group id from being reused, so this is safe.
  ProcessRegistry::instance().remove(pid_);
  ::kill(-pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) == -1 && errno == EINTR) {
  }
}

void Process::spawn() {
  result_.startedAt = std::chrono::system_clock::now();
  const Resolution program = resolveProgram(spec_);
  if (!program.error.empty()) return failSpawn(program.error);
  std::error_code ec;
  if (!spec_.cwd.empty() && !fs::is_directory(spec_.cwd, ec)) {
    return failSpawn("working directory '" + spec_.cwd.string() + "' is not a directory");
  }
  if (auto bad = invalidVariableName(spec_.env)) {
    return failSpawn("invalid environment variable name '" + *bad + "'");
  }
  for (const std::string& name : spec_.unsetEnv) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return failSpawn("invalid environment variable name '" + name + "'");
    }
  }

  ChildEnvironment env = buildEnvironment(spec_.env, spec_.unsetEnv);
  const std::string executable = program.executable.string();
  std::vector<std::string> argStrings{executable};
  argStrings.insert(argStrings.end(), spec_.args.begin(), spec_.args.end());
  std::vector<char*> argv;
  for (auto& a : argStrings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string cwd = spec_.cwd.string();

  if (spec_.stdinPipe) {
    // Writing to a child that is gone must be an error hydra handles, not a
    // signal that ends it. (The child gets SIGPIPE's default back: resetSignals.)
    static std::once_flag ignoreSigpipe;
    std::call_once(ignoreSigpipe, [] { ::signal(SIGPIPE, SIG_IGN); });
  }
  int out[2] = {-1, -1}, err[2] = {-1, -1}, report[2] = {-1, -1}, in[2] = {-1, -1};
  const int devNull = spec_.stdinPipe ? -1 : ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const bool stdinReady = spec_.stdinPipe ? ::pipe2(in, O_CLOEXEC) == 0 : devNull >= 0;
  if (!stdinReady || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      ::pipe2(report, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    closeAll({devNull, in[0], in[1], out[0], out[1], err[0], err[1], report[0], report[1]});
    return failSpawn("cannot start '" + executable + "': " + why);
  }
  const ChildLaunch launch{executable.c_str(), argv.data(), env.pointers.data(),
                           cwd.empty() ? nullptr : cwd.c_str(), spec_.stdinPipe ? in[0] : devNull,
                           out[1], err[1], report[1], childFdLimit(), spec_.joinCgroups.data(),
                           spec_.joinCgroups.size(), &spec_.rlimits, spec_.leftoversFd};
  // Until add() below, the child is one of hydra's children that no registry
  // knows: the reaper must not take it for a stray.
  auto spawning = ProcessRegistry::instance().holdSpawns();
  const pid_t pid = ::fork();
  if (pid == 0) execChild(launch);
  const int forkError = errno;
  closeAll({devNull, in[0], out[1], err[1], report[1]});
  if (pid < 0) {
    spawning.unlock();
    closeAll({in[1], out[0], err[0], report[0]});
    return failSpawn("cannot start '" + executable + "': " + std::strerror(forkError));
  }
  // The child's exec closes the report pipe; before that, it may tell why it failed.
  int childError = 0;
  ssize_t got;
  while ((got = ::read(report[0], &childError, sizeof childError)) == -1 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof childError)) {
    reapFailedChild(pid);
    spawning.unlock();
    closeAll({in[1], out[0], err[0]});
    return failSpawn("cannot start '" + executable + "': " + std::strerror(childError));
  }
  boost::system::error_code assigned;
  out_.pipe.assign(out[0], assigned);
  if (assigned) ::close(out[0]);
  if (!assigned) {
    err_.pipe.assign(err[0], assigned);
    if (assigned) out_.pipe.close();
  }
  if (!assigned && in[1] >= 0) {
    in_.assign(in[1], assigned);
    if (assigned) {
      ::close(in[1]);
      out_.pipe.close();
      err_.pipe.close();
      err[0] = -1;  // owned by err_.pipe, closed with it
    }
  } else if (assigned) {
    closeAll({in[1]});
  }
  if (assigned) {
    closeAll({err[0]});
    ::kill(-pid, SIGKILL);
    reapFailedChild(pid);
    spawning.unlock();
    return failSpawn("cannot read the output of '" + executable + "': " + assigned.message());
  }
  pid_ = pid;
  running_ = true;
  ProcessRegistry::instance().add(pid_);
  spawning.unlock();
  // The timeout counts from the spawn. Setting an idle timer is safe from any
  // thread; waiting on it is left to the strand.
  if (spec_.timeout.count() > 0) timeoutTimer_.expires_after(spec_.timeout);
  // start() may run on any thread; everything from here on runs on the strand.
  boost::asio::post(strand_, [self = shared_from_this()] { self->supervise(); });
}

void Process::supervise() {
  watchExit();
  readMore(OutputStream::Stdout);
  readMore(OutputStream::Stderr);
  if (spec_.timeout.count() > 0) {
    timeoutTimer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->childExited_ || self->termSentAt_) return;
      self->result_.timedOut = true;
      self->beginTermination();
    });
  }
}

void Process::failSpawn(std::string message) {
  spdlog::debug("process: {}", message);
  result_.spawnError = std::move(message);
  result_.endedAt = std::chrono::system_clock::now();
  finished_ = true;
  closePipes();
  boost::asio::post(strand_, [self = shared_from_this()] {
    auto onExit = std::move(self->onExit_);
    self->onExit_ = nullptr;
    self->onLine_ = nullptr;
    if (onExit) onExit(self->result_);
  });
}

// The child's exit is seen through a pidfd that becomes readable when it ends.
// We then read its status with WNOWAIT and leave it a zombie until the end:
// while it is unreaped its pid, and so its group id, cannot be reused, and
// signalling the group stays safe.
void Process::watchExit() {
  const int pidfd = openPidfd(pid_);
  boost::system::error_code ec;
  if (pidfd >= 0) exitWatch_.assign(pidfd, ec);
  if (pidfd < 0 || ec) {
    if (pidfd >= 0) ::close(pidfd);
    pollForExit_ = true;  // no pidfds on this kernel: advance() polls on ticks
    scheduleTick();
    return;
  }
  awaitExit();
}

void Process::awaitExit() {
  exitWatch_.async_wait(boost::asio::posix::descriptor_base::wait_read,
                        [self = shared_from_this()](const boost::system::error_code& ec) {
                          if (ec == boost::asio::error::operation_aborted || self->finished_)
                            return;
                          if (ec) self->pollForExit_ = true;
                          self->pollChildExit();
                          if (!self->childExited_ && !self->pollForExit_) {
                            self->awaitExit();  // woke early: wait again
                            return;
                          }
                          self->advance();
                        });
}

void Process::pollChildExit() {
  if (childExited_ || pid_ <= 0) return;
  siginfo_t info{};
  int rc;
  do {
    rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (rc == -1 && errno == EINTR);
  if (rc == 0 && info.si_pid == 0) return;  // still running

  childExited_ = true;
  running_ = false;
  result_.endedAt = std::chrono::system_clock::now();
  timeoutTimer_.cancel();
  if (rc != 0) {
    // Something else in hydra reaped our child (SIGCHLD ignored, or a
    // waitpid(-1)); its status is lost.
    spdlog::error("process {}: exit status lost: {}", pid_, std::strerror(errno));
    reaped_ = true;
    result_.exitCode = -1;
    return;
  }
  if (info.si_code == CLD_EXITED) {
    result_.exitCode = info.si_status;
  } else {
    result_.signal = info.si_status;  // CLD_KILLED or CLD_DUMPED
  }
}

void Process::readMore(OutputStream stream) {
  PipeReader& r = reader(stream);
  if (spec_.readGate && !pipesAbandoned_ && !spec_.readGate()) {
    r.gate.expires_after(std::chrono::milliseconds(5));
    r.gate.async_wait([self = shared_from_this(), stream](const boost::system::error_code& ec) {
      if (!ec && !self->finished_) self->readMore(stream);
    });
    return;
  }
  r.pipe.async_read_some(
      boost::asio::buffer(r.buffer),
      [self = shared_from_this(), stream](const boost::system::error_code& ec, std::size_t n) {
        self->onRead(stream, ec, n);
      });
}

void Process::onRead(OutputStream stream, const boost::system::error_code& ec, std::size_t n) {
  PipeReader& r = reader(stream);
  if (n > 0) deliver(stream, r.splitter.feed(std::string_view(r.buffer.data(), n)));
  if (!ec) {
    readMore(stream);
    return;
  }
  // EOF, or closePipes() gave up on a pipe held open outside the group.
  deliver(stream, r.splitter.finish());
  r.eof = true;
  boost::system::error_code ignored;
  r.pipe.close(ignored);
  advance();
}

void Process::deliver(OutputStream stream, std::vector<std::string> lines) {
  for (std::string& line : lines) {
    if (!isValidUtf8(line)) line = makeValidUtf8(line);
    if (onLine_) onLine_(stream, std::move(line));
  }
}

void Process::cancel() {
  boost::asio::post(strand_, [self = shared_from_this()] { self->onCancel(); });
}

void Process::terminate() {
  boost::asio::post(strand_, [self = shared_from_this()] {
    if (self->finished_ || self->childExited_ || self->pid_ <= 0) return;
    self->beginTermination();
  });
}

void Process::onCancel() {
  if (finished_ || childExited_ || pid_ <= 0 || termSentAt_) return;
  result_.cancelled = true;
  beginTermination();
}

// SIGTERM now; advance() sends SIGKILL once killGrace has passed.
void Process::beginTermination() {
  if (termSentAt_ || finished_) return;
  // What the group's signal ends besides the child is named in the result
  // (ProcessResult::leftRunningEnded): the child's leftovers once it has
  // exited, what it still ran when timed out or cancelled.
  if (pid_ > 0 && !reaped_) {
    result_.leftRunningEnded += spec_.leftoversFd < 0 ? livingGroupMembers(pid_)
                                : childExited_      ? 0  // the sandbox said, on leftoversFd
                                                    : sandboxedMembers(pid_);
  }
  signalGroup(SIGTERM);
  termSentAt_ = steady_clock::now();
  scheduleTick();
}

void Process::signalGroup(int sig) {
  // Safe while the child is unreaped (see watchExit), and it is until finish().
  if (pid_ <= 0 || reaped_) return;
  signalGroupOf(pid_, sig);
}

// The one place that decides what happens next. Called after every event (exit
// seen, pipe closed, tick) and does whatever is now due:
//   1. escalate SIGTERM to SIGKILL after killGrace;
//   2. once the child has exited, take down whatever it left running in its group;
//   3. once the group is gone, wait (a bounded time) for both pipes to close;
//   4. then finish.
void Process::advance() {
  if (finished_) return;
  const auto now = steady_clock::now();
  if (pollForExit_) pollChildExit();
  if (termSentAt_ && !killSentAt_ && now - *termSentAt_ >= spec_.killGrace) {
    signalGroup(SIGKILL);
    killSentAt_ = now;
  }
  if (!childExited_) {
    if (termSentAt_ || pollForExit_) scheduleTick();
    return;
  }

  if (processGroupAlive(pid_)) {
    beginTermination();
    if (!killSentAt_ || now - *killSentAt_ < kGiveUpAfterKill) {
      scheduleTick();
      return;
    }
    spdlog::warn("process group {} survives SIGKILL; no longer waiting for it", pid_);
  }

  if (!out_.eof || !err_.eof) {
    // Every writer in the group is gone, so EOF is normally a read away. A pipe
    // that stays open is held by a process that left the group (setsid): give
    // the reader time to drain, then stop waiting for it.
    if (pipesAbandoned_) return;  // closed already: the readers are reporting EOF
    if (!drainStartedAt_) drainStartedAt_ = now;
    if (now - *drainStartedAt_ < std::max<steady_clock::duration>(spec_.killGrace, kMinDrain)) {
      scheduleTick();
      return;
    }
    spdlog::warn("process {}: output still open after its group ended; closing it", pid_);
    pipesAbandoned_ = true;
    closePipes();  // the readers then see EOF and call advance() again
    return;
  }
  finish();
}

void Process::scheduleTick() {
  if (tickArmed_ || finished_) return;
  tickArmed_ = true;
  tickTimer_.expires_after(kTick);
  tickTimer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    self->tickArmed_ = false;
    if (!ec) self->advance();
  });
}

void Process::closePipes() {
  boost::system::error_code ignored;
  out_.pipe.close(ignored);
  err_.pipe.close(ignored);
  closeInput();
}

void Process::write(std::string data) {
  boost::asio::post(strand_, [self = shared_from_this(), data = std::move(data)]() mutable {
    if (!self->in_.is_open() || self->closeWhenWritten_ || data.empty()) return;
    self->pending_.push_back(std::move(data));
    if (!self->writing_) self->writeNext();
  });
}

void Process::closeStdin() {
  boost::asio::post(strand_, [self = shared_from_this()] {
    self->closeWhenWritten_ = true;
    if (!self->writing_) self->closeInput();
  });
}

void Process::writeNext() {
  if (pending_.empty()) {
    writing_ = false;
    if (closeWhenWritten_) closeInput();
    return;
  }
  writing_ = true;
  boost::asio::async_write(in_, boost::asio::buffer(pending_.front()),
                           [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                             if (ec) {
                               // The child closed its stdin, or it is gone: nothing more reaches it.
                               spdlog::debug("process {}: stdin closed: {}", self->pid_, ec.message());
                               self->closeInput();
                               return;
                             }
                             self->pending_.pop_front();
                             self->writeNext();
                           });
}

void Process::closeInput() {
  pending_.clear();
  writing_ = false;
  boost::system::error_code ignored;
  in_.close(ignored);
}

void Process::finish() {
  finished_ = true;
  running_ = false;
  closeInput();
  timeoutTimer_.cancel();
  tickTimer_.cancel();
  out_.gate.cancel();
  err_.gate.cancel();
  boost::system::error_code ignored;
  exitWatch_.close(ignored);
  // Unregister before reaping: once reaped, the group id may be reused and
  // killAll must not signal a stranger.
  ProcessRegistry::instance().remove(pid_);
  if (!reaped_) {
    while (::waitpid(pid_, nullptr, 0) == -1 && errno == EINTR) {
    }
    reaped_ = true;
  }
  auto onExit = std::move(onExit_);
  onExit_ = nullptr;
  onLine_ = nullptr;
  if (onExit) onExit(result_);
}

// ---- ProcessRegistry ------------------------------------------------------------

ProcessRegistry& ProcessRegistry::instance() {
  // Never destroyed: a Process destroyed during static destruction still
  // unregisters safely.
  static auto* registry = new ProcessRegistry;
  return *registry;
}

void ProcessRegistry::add(pid_t pgid) {
  std::lock_guard lock(mutex_);
  groups_.insert(pgid);
}

void ProcessRegistry::remove(pid_t pgid) {
  std::lock_guard lock(mutex_);
  groups_.erase(pgid);
}

bool ProcessRegistry::contains(pid_t pgid) const {
  std::lock_guard lock(mutex_);
  return groups_.count(pgid) > 0;
}

std::unique_lock<std::mutex> ProcessRegistry::holdSpawns() { return std::unique_lock(spawnMutex_); }

std::vector<pid_t> ProcessRegistry::liveGroups() const {
  std::vector<pid_t> registered;
  {
    std::lock_guard lock(mutex_);
    registered.assign(groups_.begin(), groups_.end());
  }
  std::erase_if(registered, [](pid_t pgid) { return !processGroupAlive(pgid); });
  return registered;
}

// ---- killing groups ---------------------------------------------------------------

namespace {

// Waits until no group in `pgids` is alive or `deadline` passes; leaves the
// survivors in `pgids`.
void waitForGroups(std::vector<pid_t>& pgids, steady_clock::time_point deadline) {
  for (;;) {
    std::erase_if(pgids, [](pid_t pgid) { return !processGroupAlive(pgid); });
    if (pgids.empty() || steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(10ms);
  }
}

}  // namespace

bool ProcessRegistry::killAll(std::chrono::milliseconds grace) {
  signalAll(SIGTERM);
  std::vector<pid_t> alive = liveGroups();
  waitForGroups(alive, steady_clock::now() + grace);
  if (alive.empty()) return true;
  signalAll(SIGKILL);
  // SIGKILL cannot be refused, but dying takes a moment to show in /proc.
  alive = liveGroups();
  waitForGroups(alive, steady_clock::now() + 2s);
  return alive.empty();
}

// The signals go out under the lock. A Process unregisters before it reaps its
// child, so every group signalled here still has its leader, unreaped, and its
// id cannot have been reused by an unrelated group.
void ProcessRegistry::signalAll(int sig) {
  std::lock_guard lock(mutex_);
  for (pid_t pgid : groups_) signalGroupOf(pgid, sig);
}

bool killProcessGroups(const std::vector<pid_t>& pgids, std::chrono::milliseconds grace) {
  std::vector<pid_t> alive;
  for (pid_t pgid : pgids) {
    if (pgid > 0 && processGroupAlive(pgid)) alive.push_back(pgid);
  }
  for (pid_t pgid : alive) signalGroupOf(pgid, SIGTERM);
  waitForGroups(alive, steady_clock::now() + grace);
  for (pid_t pgid : alive) signalGroupOf(pgid, SIGKILL);
  // SIGKILL cannot be refused, but dying takes a moment to show in /proc.
  waitForGroups(alive, steady_clock::now() + 2s);
  return alive.empty();
}

bool killProcessGroup(pid_t pgid, std::chrono::milliseconds grace) {
  return killProcessGroups({pgid}, grace);
}

bool processGroupAlive(pid_t pgid) {
  if (pgid <= 0) return false;
  if (::kill(-pgid, 0) != 0 && errno == ESRCH) return false;
  // kill() also succeeds for a group whose members are all zombies not yet
  // reaped (like our own children, which Process reaps late on purpose);
  // /proc tells them apart. Without /proc, assume the worst.
  return groupHasRunningMember(pgid).value_or(true);
}

std::optional<fs::path> findExecutable(const std::string& program, const std::string& pathEnv) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) {
    if (isExecutableFile(program)) return fs::path(program);
    return std::nullopt;
  }
  std::string_view rest(pathEnv);
  while (true) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    // An empty entry means "the current directory" to a shell; hydra's
    // current directory is not the agent's, so such entries are skipped.
    if (!dir.empty()) {
      fs::path candidate = fs::path(dir) / program;
      if (isExecutableFile(candidate)) return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

}  // namespace hydra::core
