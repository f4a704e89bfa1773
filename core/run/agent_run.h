#pragma once

// An agent run: one agent, one checkout, one prompt. The unit every mode is
// made of (a race runs several side by side; a collaboration runs a builder
// and a reviewer in turns; an evaluation runs many samples).
//
// A run waits for a slot of the workspace (AgentSlots), runs its
// setup_command (SetupStep), starts the agent's CLI as its adapter says,
// supervised (its own process group, killed on timeout or cancel), in the
// checkout, with the environment pointing at the checkout and nowhere else.
// It hands the agent's output to an AgentOutputReader (redaction, the
// adapter's parser, what the output said) and publishes what happens on the
// EventBus (AgentStarted, AgentOutput, AgentFinished). When the agent and
// what it started have ended it commits whatever it left in the checkout
// (when asked to; core/run/result_commit.h) and reports the result.
//
// io thread only; the commit runs on the workspace's pool.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/adapter/adapter.h"
#include "core/config/config.h"
#include "core/events/events.h"
#include "core/executor/executor.h"
#include "core/git/result_size.h"
#include "core/git/worktree.h"
#include "core/util/proc_stat.h"
#include "core/process/process.h"
#include "core/process/reaper.h"
#include "core/process/resource_limits.h"
#include "core/process/run_cgroup.h"
#include "core/run/agent_output.h"
#include "core/run/agent_slots.h"
#include "core/run/setup_step.h"
#include "core/sandbox/mode.h"
#include "core/sandbox/network_proxy.h"
#include "core/util/ports.h"
#include "core/util/redact.h"
#include "core/util/safe_fs.h"

namespace hydra::core {

struct AgentRunSpec {
  std::string raceId;   // what the run belongs to: its events carry it
  std::string agentId;  // unique within the race
  AgentConfig agent;    // resolved: adapter, binary, args, env, timeout
  std::string prompt;
  Worktree checkout;
  std::chrono::seconds timeout{600};
  // What its processes may take together (resourceLimitsFor()); over one, it is ended and fails.
  ResourceLimits limits;
  // Set for the agent on top of its adapter's and its configuration's
  // variables (HYDRA_TASK, HYDRA_RACE_ID, ... and whatever the mode adds).
  std::map<std::string, std::string> env;
  // Where a binary given as a relative path is found (the repository root).
  std::filesystem::path binaryBase;
  // Between SIGTERM and SIGKILL when the run is cancelled or times out.
  std::chrono::milliseconds killGrace{2000};
  // Commit what the agent leaves in the checkout, with this message; nullopt
  // leaves the checkout as it is (a reviewer's changes are not kept).
  std::optional<std::string> commitMessage;
  // [general] max_result_files / max_result_bytes: measured before the
  // commit; a result over either is not committed and the run ends Failed
  // with AgentFinished::tooLarge set.
  ResultLimits resultLimits;
  // What the run is for in a collaboration (empty in a race); carried by its events.
  RunPhase phase;
  // Continue this earlier session of the agent's CLI when its adapter can
  // (Adapter::resumeInvocation); AgentStarted::resumed says whether it did.
  std::optional<std::string> resumeSession;
  // [general] setup_command: run with sh -c in the checkout before the agent,
  // confined and supervised like it, with its environment (HYDRA_PORT, ...)
  // and its timeout; its output goes to the agent's log, marked "[setup] ".
  // If it fails the agent never starts and the run ends as SetupFailed.
  std::string setupCommand;
};

// How a unit hands its events on: the mode that runs it brings its record up
// to date and publishes them on the workspace's EventBus.
using Publish = std::function<void(RaceEventBody)>;

// Everything the units around a run need to reach.
struct RunContext {
  boost::asio::io_context& io;
  boost::asio::thread_pool& pool;
  Publish publish;
  AgentSlots& slots;
  WorktreeManager& worktrees;
  std::shared_ptr<const Redactor> redactor;
  // Whether the agents' output may be read now (false while the record store
  // is behind); empty means always.
  std::function<bool()> readGate = {};
  // How agents and checks run: confined by bubblewrap, or not (null: not).
  // Either way their environment points at their checkout and nowhere else.
  std::shared_ptr<const sandbox::SandboxDecision> sandbox = {};
  // Called on the io thread just before an agent's process starts.
  std::function<void(const std::string& agentId)> onLaunch = {};
  // Called on the pool once an agent and everything it started have ended,
  // before its work is committed: what it changed outside its worktree
  // (AgentFinished::escapes), and what changed in the user's checkout while
  // it ran (added to its warnings). Empty: nothing is checked.
  struct Findings {
    std::vector<std::string> escapes;
    std::vector<std::string> warnings;
  };
  std::function<Findings(const std::string& agentId)> escapesOf = {};
  // Where agents and checks run (core/executor/): null means here, as child
  // processes of hydra.
  std::shared_ptr<Executor> executor = {};

  Executor& executorOrLocal() const { return executor ? *executor : *localExecutor(); }
};



class AgentRun : public std::enable_shared_from_this<AgentRun> {
 public:
  // Called once, on the io thread, with the AgentFinished the run published.
  using Done = std::function<void(const AgentFinished&)>;

  // Queues the run for a slot and returns; the run keeps itself alive until done.
  static std::shared_ptr<AgentRun> start(RunContext context, AgentRunSpec spec, Done done);

  AgentRun(const AgentRun&) = delete;
  AgentRun& operator=(const AgentRun&) = delete;
  ~AgentRun();

  // Ends the run: a queued run never starts, a running agent's process group
  // is sent SIGTERM, then SIGKILL after the kill grace. The run finishes as
  // cancelled. False when it had already finished.
  bool cancel();

  const AgentRunSpec& spec() const { return spec_; }
  bool finished() const { return finished_; }
  bool running() const { return process_ != nullptr; }
  // It continued an earlier session of its CLI (AgentRunSpec::resumeSession).
  bool resumed() const { return resumed_; }
  // The agent's process group, while it runs.
  std::optional<pid_t> processGroup() const;

 private:
  AgentRun(RunContext context, AgentRunSpec spec, Done done);

  void launch();
  // Ends the run before its agent started: Failed, "cannot start: <why>".
  void failToStart(const std::string& why);
  // Runs spec_.setupCommand, then launch() again (or ends the run).
  void runSetup();
  void onSetupDone(const SetupStep::Outcome& outcome);
  // The run's timeout, kill grace and read gate on `process`, and a new reaper for what it starts.
  void supervise(ProcessSpec& process, std::string_view who);
  // `process` confined; false, with the run ended as `failure`, when `sandbox` cannot be set up.
  bool confineOrEnd(ProcessSpec& process, AgentStatus failure, std::string_view sandbox);
  // Puts the run under its limits: a cgroup of its own where hydra can make
  // one, else rlimits (core/process/resource_limits.h).
  void limit(ProcessSpec& process);
  // How many processes its sandbox said its command left running (0 unconfined).
  int sandboxLeftovers();
  void releaseSlot();
  // `process` confined as the workspace's sandbox decision says.
  ProcessSpec confined(ProcessSpec process) const;
  // The agent's [agents.NAME] network policy on `process` (its namespace,
  // its proxy); false, with the run ended, when it cannot be had.
  bool networkOrEnd(ProcessSpec& process);
  // A request the proxy refused: in the agent's output and its warnings.
  void onNetworkRefused(const std::string& reason);
  AgentFinished newFinished() const;
  void onLine(OutputStream stream, std::string line);
  void onExit(const ProcessResult& result);
  void reapThenCommit(AgentFinished finished);
  void commitAndFinish(AgentFinished finished);
  void finish(AgentFinished finished);
  void publishEvents(OutputStream stream, std::vector<AgentEvent> events);
  // An ACP agent: writes what its session has to say, and ends it once its work is over.
  void converse();
  std::map<std::string, std::string> environment(const std::map<std::string, std::string>& adapterEnv) const;

  RunContext ctx_;
  AgentRunSpec spec_;
  Done done_;
  const Adapter* adapter_ = nullptr;

  std::optional<AgentSlots::Ticket> ticket_;
  bool holdsSlot_ = false;
  std::shared_ptr<Execution> process_;
  std::shared_ptr<SetupStep> setup_;  // the setup command, while it runs
  std::shared_ptr<RunCgroup> cgroup_;  // the run's, while it runs
  int leftoversRead_ = -1;              // the read end of ProcessSpec::leftoversFd
  bool countedInside_ = false;          // leftRunningEnded_ came from the sandbox's own count
  std::optional<std::string> overLimit_;  // "over its 256 MiB memory limit": ended for it
  int leftRunningEnded_ = 0;  // ended beside it where it ran (a cluster job's runner)
  bool setupDone_ = false;
  std::shared_ptr<RunReaper> reaper_;
  std::optional<PortLease> port_;  // HYDRA_PORT, from launch to finish
  // network = "none" or "allowlist" under bubblewrap: bwrap --unshare-net.
  bool ownNetwork_ = false;
  // network = "allowlist": the proxy, from launch until the agent exits.
  std::shared_ptr<sandbox::NetworkProxy> proxy_;
  // The agent's own program, when net-jail starts it.
  std::optional<std::filesystem::path> jailedProgram_;
  std::size_t networkRefusals_ = 0;
  std::vector<std::string> networkRefused_;  // the first few distinct reasons, for its warnings
  std::optional<std::filesystem::path> gitMetadata_;  // what the checkout's .git link named at launch
  // The checkout's directory, opened at launch: the link repair goes
  // through it, and the path must still lead to it after the run.
  std::optional<SafeDir> worktreeDir_;
  bool worktreeSwapped_ = false;  // its path no longer leads there: nothing is committed
  // Its output, its setup_command's and its agent's, and what it said.
  std::unique_ptr<AgentOutputReader> output_;
  Timestamp startedAt_;

  // An ACP agent: the session output_ reads with, and when its work was over.
  AgentSession* session_ = nullptr;
  bool sessionEnding_ = false;
  std::unique_ptr<boost::asio::steady_timer> endTimer_;

  bool cancelRequested_ = false;
  // Set by cancel(); read by the pool thread measuring and committing the
  // work, which stops between files.
  std::atomic<bool> commitCancelled_{false};
  bool finished_ = false;
  bool resumed_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Where a linked worktree's .git file points ("gitdir: <metadata>"); nullopt
// when it is not such a file.
std::optional<std::filesystem::path> linkTarget(const std::filesystem::path& worktree);

// Whether a session id an agent's CLI reported may go back on its command
// line (AgentRunSpec::resumeSession): it comes from the agent's own output, so
// only a plain id (letters, digits, '-', '_', '.', ':', at most 128, starting
// with a letter or digit) is, never anything that could read as an option.
bool isResumableSessionId(std::string_view id);

// The agent ids for a list of agent names: a name used once keeps its name,
// a repeated one becomes name-1, name-2, ...
std::vector<std::string> assignAgentIds(const std::vector<std::string>& names);

}  // namespace hydra::core
