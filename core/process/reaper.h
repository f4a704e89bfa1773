#pragma once

// Nothing a run starts outlives it, even unconfined. A Process kills its own
// process group, but an agent's tools may leave it (setsid, setpgid) and exit
// their parent, orphaning what they started. hydra therefore makes itself a
// child subreaper: orphaned descendants are re-parented to hydra instead of
// init, so they stay in hydra's tree, where a RunReaper can find them.
//
// A RunReaper attributes processes to one run by, in this order:
//   1. the run's root and its process group, while the root is known;
//   2. the descendants it saw below the root while the run went on (watch());
//   3. the run's token, which the root is given in its environment
//      (HYDRA_RUN_TOKEN) and every descendant inherits unless it clears it;
//   4. every descendant of a process attributed to the run;
//   5. an orphan adopted by hydra that none of the above attributes to any
//      run is given to every run that was under way when it started: it was
//      started by one of them, and there is no way to tell which.
// Only descendants of hydra are ever attributed: hydra never signals a
// process it did not start. Processes are signalled through pidfds after
// their start time is checked, so a reused pid is never hit. Rule 5 relies
// on every child hydra starts itself going through Process (which registers
// it): a child started any other way (popen, std::system) while a run is
// under way would look like an orphan of that run.
//
// hydra should also call killAllDescendants() on its way out, after
// ProcessRegistry::killAll().


#include <sys/types.h>

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/process/process.h"
#include "core/process/process_table.h"
#include "core/process/resource_limits.h"
#include "core/process/run_cgroup.h"

namespace hydra::core {

// The variable through which a run's processes carry its token.
inline constexpr std::string_view kRunTokenVariable = "HYDRA_RUN_TOKEN";

// Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER); idempotent.
// Throws std::system_error if the kernel refuses.
void becomeChildSubreaper();
bool isChildSubreaper();

// What a kill did: the pids it signalled, and those still running after
// SIGKILL (stuck in uninterruptible sleep): normally none.
struct ReapReport {
  std::vector<pid_t> killed;
  std::vector<pid_t> survivors;
};

class RunReaper : public std::enable_shared_from_this<RunReaper> {
 public:
  // A new run: a fresh random token, its start time taken now. Makes hydra a
  // child subreaper if it is not one yet (see becomeChildSubreaper()).
  static std::shared_ptr<RunReaper> create();
  ~RunReaper();
  RunReaper(const RunReaper&) = delete;
  RunReaper& operator=(const RunReaper&) = delete;

  const std::string& token() const { return token_; }
  // Puts the token into the environment of the run's root process.
  void prepare(ProcessSpec& spec) const;
  // The run's root process (Process::pid()), once started.
  void attach(pid_t root);

  // Records the run's processes now (what is below the root, what carries
  // the token) and reaps those of them that hydra has adopted and that have
  // exited. Thread-safe.
  void scan();
  // scan() every `interval` on `executor` until kill() is called or the
  // RunReaper is no longer referenced elsewhere. The timer belongs to the
  // waiting handler, not to the RunReaper: either may outlive the other's
  // io_context.
  void watch(const boost::asio::any_io_executor& executor, std::chrono::milliseconds interval);

  // From now on every scan() also checks the run against `limits`: through
  // `cgroup`'s counters when the run is in one (null: none), and by what the
  // run's processes take together for what no cgroup counts. The first time
  // it is over one, calls `over` with the words ("over its 256 MiB memory
  // limit"), once, on the thread that scanned; the caller ends the run. Set
  // before watch().
  void limit(ResourceLimits limits, std::shared_ptr<const RunCgroup> cgroup, std::function<void(std::string)> over);

  // The run's processes that are still running (not the root once it has
  // exited), by pid. Thread-safe.
  std::vector<pid_t> members();

  // Ends every process of the run: SIGTERM (with SIGCONT) to all, then after
  // `grace` whatever is left is stopped (SIGSTOP, so that nothing can fork
  // any more) and SIGKILLed; those hydra adopted are reaped. The root itself
  // is signalled if it still runs, but left to its Process to reap. Blocking;
  // stops watch(). Thread-safe.
  ReapReport kill(std::chrono::milliseconds grace);

 private:
  RunReaper();
  // Every process hydra currently attributes to this run (see the header
  // comment), living or exited-but-unreaped, and remembers them.
  std::vector<ProcessInfo> attributeLocked(const ProcessTree& tree);
  // Whether this run claims `process` by rules 1 to 3 (`token`: the one it carries).
  bool claimsLocked(const ProcessTree& tree, const ProcessInfo& process,
                    const std::optional<std::string>& token) const;
  static void arm(std::shared_ptr<boost::asio::steady_timer> timer,
                  std::chrono::milliseconds interval, std::weak_ptr<RunReaper> weak);

  std::string token_;
  std::uint64_t startedAt_;          // in the clock of ProcessInfo::startTime
  std::optional<ProcessInfo> root_;  // the root as first seen
  pid_t rootPid_ = 0;
  std::set<std::pair<pid_t, std::uint64_t>> seen_;  // (pid, start time) of every member seen
  bool ended_ = false;  // kill() was called: it claims nothing for rule 5 any more
  std::atomic<bool> watching_{false};
  // The words when the run is over one of its limits (see limit()).
  std::optional<std::string> overLimitLocked(const std::vector<ProcessInfo>& run) const;

  ResourceLimits limits_;
  std::shared_ptr<const RunCgroup> cgroup_;
  std::function<void(std::string)> over_;  // cleared once called
};

// Every descendant of hydra, at hydra's exit: SIGTERM, SIGKILL after `grace`,
// reaping what hydra adopted. Registered Process children are signalled but
// left to their Process. Blocking.
ReapReport killAllDescendants(std::chrono::milliseconds grace);

// Reaps the exited orphans hydra adopted as a subreaper that no run reaped
// (a subreaper that never waits for them collects zombies). Never touches a
// registered Process's child. Returns how many it reaped.
std::size_t reapAdoptedZombies();

}  // namespace hydra::core
