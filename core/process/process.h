#pragma once

// A supervised child process: agents and checks run through this. The child
// gets its own process group, stdin from /dev/null (or, when asked, a pipe
// hydra writes to: agents spoken to over stdio), and its stdout and stderr
// are read asynchronously into valid UTF-8 lines. Timeouts, cancellation and
// the end of the child all take its whole group down, so nothing an agent
// starts outlives it.

#include <sys/types.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/process/child_rlimits.h"
#include "core/process/execution.h"
#include "core/process/line_splitter.h"
#include "core/process/output_stream.h"

namespace hydra::core {



struct ProcessSpec {
  // Absolute, relative to `cwd` when it contains a '/', or else looked up on
  // PATH (env["PATH"] when given, else hydra's own PATH).
  std::string program;
  std::vector<std::string> args;
  std::filesystem::path cwd;                  // empty = hydra's working directory
  std::map<std::string, std::string> env;     // added to / overriding hydra's own environment
  std::vector<std::string> unsetEnv;          // removed from hydra's environment (before `env`)
  std::chrono::milliseconds timeout{0};       // 0 = none
  std::chrono::milliseconds killGrace{2000};  // SIGTERM to the group, then SIGKILL after this
  // Asked before each read of the child's output: while it says no, reading
  // waits (the child blocks once its pipe is full). Flow control for a
  // consumer that must not fall behind without bound, e.g. the record store.
  std::function<bool()> readGate;
  // Stdin is a pipe that Process::write() feeds, instead of /dev/null. (Makes
  // hydra ignore SIGPIPE, so that a child that stops reading cannot kill it.)
  bool stdinPipe = false;
  // Joined by the child before exec, so that everything it starts is born
  // inside: descriptors of cgroup.procs files (RunCgroup::joinFds(), owned by
  // the caller and open until the child has started).
  std::vector<int> joinCgroups;
  // Set by the child on itself before exec (resource_limits.h).
  ChildRlimits rlimits;
  // Confined runs (core/sandbox/bubblewrap.h): the write end of a pipe the
  // child gets as descriptor 3, on which the sandbox says how many processes
  // its command left running when it exited (the sandbox's end takes them
  // down unseen). Owned by the caller. -1: none.
  int leftoversFd = -1;
};



class Process : public Execution, public std::enable_shared_from_this<Process> {
 public:
  // Called on the io_context for each line, in order per stream, without its
  // terminator and as valid UTF-8.
  using LineHandler = std::function<void(OutputStream, std::string line)>;
  // Called once, on the io_context, after every output line, once the child has
  // exited, its group is gone and both pipes are closed. A failed spawn calls
  // it too (posted, never from inside start()). Not called if the io_context
  // is destroyed first.
  using ExitHandler = std::function<void(const ProcessResult&)>;

  // Starts the child at once (pid() is known on return) and supervises it on
  // `io`. May be called from any thread. Like any Asio I/O object, the Process
  // must not outlive `io`.
  static std::shared_ptr<Process> start(boost::asio::io_context& io, ProcessSpec spec,
                                        LineHandler onLine, ExitHandler onExit);

  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  // If the io_context is torn down while the child still runs, the group is
  // SIGKILLed and the child reaped here: no orphans, no zombies.
  ~Process() override;

  // SIGTERM to the group, SIGKILL after killGrace; result.cancelled = true.
  // Safe from any thread; does nothing once the child has exited.
  void cancel() override;
  // The same, for a child whose work is done (an ACP agent that answered and
  // does not exit by itself): result.cancelled stays false.
  void terminate() override;

  // With spec.stdinPipe: `data` is written to the child's stdin after what
  // was written before, without blocking. Safe from any thread. Dropped once
  // stdin is closed: by closeStdin(), because the child closed its end (it
  // exited, or stopped reading), or because it ended.
  void write(std::string data) override;
  // Closes the child's stdin once what was written before is through (its
  // end of input). Safe from any thread.
  void closeStdin() override;

  pid_t pid() const override { return pid_; }         // -1 when the spawn failed
  pid_t processGroup() const { return pid_; }  // the child leads its own group
  bool running() const { return running_.load(); }

 private:
  struct PipeReader {
    explicit PipeReader(const boost::asio::any_io_executor& executor) : pipe(executor), gate(executor) {}
    boost::asio::readable_pipe pipe;
    boost::asio::steady_timer gate;  // retries a read the read gate held back
    LineSplitter splitter;
    std::array<char, 64 * 1024> buffer{};
    bool eof = false;
  };

  Process(boost::asio::io_context& io, ProcessSpec spec, LineHandler onLine, ExitHandler onExit);

  void spawn();
  void supervise();
  void failSpawn(std::string message);
  void watchExit();
  void awaitExit();
  void readMore(OutputStream stream);
  void onRead(OutputStream stream, const boost::system::error_code& ec, std::size_t n);
  void deliver(OutputStream stream, std::vector<std::string> lines);
  void pollChildExit();
  void onCancel();
  void beginTermination();
  void signalGroup(int sig);
  void advance();
  void scheduleTick();
  void closePipes();
  void finish();
  PipeReader& reader(OutputStream stream) { return stream == OutputStream::Stdout ? out_ : err_; }
  void writeNext();
  void closeInput();

  // Every handler of this Process runs through the strand, so the io_context
  // may be run by several threads.
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  ProcessSpec spec_;
  LineHandler onLine_;
  ExitHandler onExit_;
  ProcessResult result_;

  pid_t pid_ = -1;
  std::atomic<bool> running_{false};
  PipeReader out_;
  PipeReader err_;
  boost::asio::writable_pipe in_;     // open while the child's stdin is ours to write
  std::deque<std::string> pending_;   // what write() queued, in order
  bool writing_ = false;
  bool closeWhenWritten_ = false;
  boost::asio::posix::stream_descriptor exitWatch_;  // the child's pidfd
  bool pollForExit_ = false;  // no pidfd on this kernel: poll on ticks instead
  boost::asio::steady_timer timeoutTimer_;
  boost::asio::steady_timer tickTimer_;
  bool tickArmed_ = false;

  bool childExited_ = false;  // observed, but deliberately not reaped yet (see watchExit())
  bool reaped_ = false;
  bool finished_ = false;
  std::optional<std::chrono::steady_clock::time_point> termSentAt_;
  std::optional<std::chrono::steady_clock::time_point> killSentAt_;
  std::optional<std::chrono::steady_clock::time_point> drainStartedAt_;
  bool pipesAbandoned_ = false;
};

// Every live Process registers its group here, so the server can, at exit,
// kill everything it started.
class ProcessRegistry {
 public:
  static ProcessRegistry& instance();

  void add(pid_t pgid);
  void remove(pid_t pgid);
  bool contains(pid_t pgid) const;
  // Held by Process from before it forks a child until the child is
  // registered. Whoever decides which of hydra's children are strays (orphans
  // adopted as a subreaper, see reaper.h) holds it too, so that a child that
  // is not registered yet is never taken for one.
  std::unique_lock<std::mutex> holdSpawns();
  // Registered groups that still have a running (non-zombie) member.
  std::vector<pid_t> liveGroups() const;
  // SIGTERM to every live group at once, SIGKILL to those still alive after
  // `grace`. Blocking. True when every group is gone.
  bool killAll(std::chrono::milliseconds grace);

 private:
  void signalAll(int sig);

  mutable std::mutex mutex_;
  std::set<pid_t> groups_;
  std::mutex spawnMutex_;
};

// Kills a whole process group: SIGTERM, waits up to `grace` for it to be gone,
// then SIGKILL. Blocking. True when the group is gone (zombies count as gone).
bool killProcessGroup(pid_t pgid, std::chrono::milliseconds grace);
// The same for several groups at once, sharing one grace period.
bool killProcessGroups(const std::vector<pid_t>& pgids, std::chrono::milliseconds grace);
// True while some member of the group is running, i.e. exists and is not a
// zombie waiting to be reaped.
bool processGroupAlive(pid_t pgid);
// The program as execve needs it: `program` itself when it contains a '/' (if
// executable), else the first executable regular file named `program` in the
// directories of `pathEnv` (empty entries are skipped).
std::optional<std::filesystem::path> findExecutable(const std::string& program,
                                                    const std::string& pathEnv);

}  // namespace hydra::core
