#include "core/run/agent_run.h"

#include <spdlog/spdlog.h>

#include "core/run/result_commit.h"
#include "core/sandbox/net_jail.h"
#include "core/sandbox/network.h"
#include "core/sandbox/sandboxed.h"
#include "core/util/read_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <boost/asio/post.hpp>
#include <cctype>
#include <charconv>
#include <fstream>

extern char** environ;

namespace hydra::core {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// How often the processes of a run are looked for while it runs.
constexpr std::chrono::milliseconds kReaperScan{250};

// Closes the descriptors given that are open (>= 0).
void closeFds(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

}  // namespace

std::optional<fs::path> linkTarget(const fs::path& worktree) {
  // The worktree is the agent's: its .git may be anything by now. A FIFO is
  // not waited on, a link to a device not read (readRegularFile), and a file
  // longer than any git writes is not a link.
  std::string text;
  try {
    text = readRegularFile(worktree / ".git", 64 * 1024);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && line.back() == '\r') line.pop_back();
  const std::string prefix = "gitdir: ";
  if (line.rfind(prefix, 0) != 0) return std::nullopt;
  fs::path target = line.substr(prefix.size());
  if (target.is_relative()) target = (worktree / target).lexically_normal();
  return target;
}

std::vector<std::string> assignAgentIds(const std::vector<std::string>& names) {
  std::map<std::string, int> total, seen;
  for (const auto& n : names) total[n]++;
  std::vector<std::string> ids;
  for (const auto& n : names) ids.push_back(total[n] == 1 ? n : n + "-" + std::to_string(++seen[n]));
  return ids;
}

AgentRun::AgentRun(RunContext context, AgentRunSpec spec, Done done)
    : ctx_(std::move(context)), spec_(std::move(spec)), done_(std::move(done)) {
  adapter_ = findAdapter(spec_.agent.adapter);
  if (adapter_) output_ = std::make_unique<AgentOutputReader>(ctx_.redactor, *adapter_);
}

AgentRun::~AgentRun() {
  *alive_ = false;
  closeFds({leftoversRead_});
}

std::shared_ptr<AgentRun> AgentRun::start(RunContext context, AgentRunSpec spec, Done done) {
  std::shared_ptr<AgentRun> run(new AgentRun(std::move(context), std::move(spec), std::move(done)));
  // The slot callback holds the run: a queued run lives until it starts or is withdrawn.
  auto ticket = run->ctx_.slots.acquire([run] {
    run->ticket_.reset();
    run->holdsSlot_ = true;
    run->launch();
  });
  // A free slot starts the run inside acquire(): only a run still waiting keeps its ticket.
  if (!run->holdsSlot_) run->ticket_ = ticket;
  return run;
}

std::optional<pid_t> AgentRun::processGroup() const {
  if (process_ && process_->pid() > 0) return process_->pid();
  return std::nullopt;
}

std::map<std::string, std::string> AgentRun::environment(const std::map<std::string, std::string>& adapterEnv) const {
  std::map<std::string, std::string> env = adapterEnv;
  for (const auto& [k, v] : spec_.agent.env) env[k] = v;
  for (const auto& [k, v] : spec_.env) env[k] = v;
  // CLIs that work in $PWD rather than in their working directory (opencode)
  // must find the checkout there, not hydra's own directory.
  env["PWD"] = spec_.checkout.path.string();
  env["HYDRA_WORKTREE"] = spec_.checkout.path.string();
  env["HYDRA_AGENT_ID"] = spec_.agentId;
  env["HYDRA_RACE_ID"] = spec_.raceId;
  if (port_) env["HYDRA_PORT"] = std::to_string(port_->port());
  return env;
}

ProcessSpec AgentRun::confined(ProcessSpec process) const {
  // The CLI's own state directories and [agents.NAME] writable_paths, found
  // with the environment the agent gets.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string_view::npos) env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  for (const auto& [k, v] : process.env) env[k] = v;
  fs::path home = env.count("HOME") ? fs::path(env.at("HOME")) : fs::path();
  std::vector<fs::path> writable;
  if (!home.empty()) writable = adapter_->stateDirectories(env, home);
  for (const auto& p : spec_.agent.writablePaths) {
    if (p == "~" || p.rfind("~/", 0) == 0) {
      if (!home.empty()) writable.push_back((home / p.substr(std::min<std::size_t>(2, p.size()))).lexically_normal());
    } else {
      writable.push_back(fs::path(p).lexically_normal());
    }
  }
  std::vector<fs::path> visible;
  if (!home.empty()) visible.push_back(home);
  if (process.program.find('/') != std::string::npos) visible.push_back(fs::path(process.program).parent_path());
  if (proxy_) visible.push_back(proxy_->directory());
  if (jailedProgram_) visible.push_back(jailedProgram_->parent_path());
  return sandbox::sandboxed(std::move(process), ctx_.sandbox.get(), spec_.checkout.path, writable, visible,
                            ownNetwork_);
}

bool AgentRun::networkOrEnd(ProcessSpec& process) {
  const auto mode = sandbox::parseNetworkMode(spec_.agent.network).value_or(sandbox::NetworkMode::Open);
  if (mode == sandbox::NetworkMode::Open) return true;
  try {
    if (!ctx_.executorOrLocal().local()) {
      throw std::runtime_error("network = \"" + spec_.agent.network + "\" is only kept on this machine, not by the " +
                               std::string(toString(ctx_.executorOrLocal().kind())) + " executor");
    }
    // Under bubblewrap, bwrap makes the namespace; otherwise hydra does, in
    // net-jail, which refuses to run the agent when it cannot.
    const bool bwrapped = ctx_.sandbox && ctx_.sandbox->confined;
    std::optional<fs::path> socket;
    if (mode == sandbox::NetworkMode::Allowlist) {
      std::vector<sandbox::HostRule> rules;
      for (const auto& entry : spec_.agent.allowedHosts) {
        std::string why;
        auto rule = sandbox::parseHostRule(entry, &why);
        if (!rule) throw std::runtime_error("allowed_hosts entry '" + entry + "': " + why);
        rules.push_back(std::move(*rule));
      }
      std::weak_ptr<AgentRun> weak = weak_from_this();
      proxy_ = sandbox::NetworkProxy::start(ctx_.io, std::move(rules), [weak](const std::string& reason) {
        if (auto self = weak.lock()) self->onNetworkRefused(reason);
      });
      socket = proxy_->socketPath();
      const std::string url = "http://127.0.0.1:" + std::to_string(sandbox::kProxyPort);
      for (const char* name : {"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"}) {
        process.env[name] = url;
      }
      for (const char* name : {"NO_PROXY", "no_proxy"}) process.env[name] = "";
    }
    if (!bwrapped || socket) {
      process = sandbox::inNetJail(std::move(process), sandbox::hydraBinary(), !bwrapped, socket);
      // What net-jail runs must be visible in the sandbox as the agent's program was.
      auto end = std::find(process.args.begin(), process.args.end(), "--");
      if (end != process.args.end() && std::next(end) != process.args.end()) jailedProgram_ = fs::path(*std::next(end));
    }
    ownNetwork_ = bwrapped;
    return true;
  } catch (const std::exception& e) {
    if (proxy_) proxy_->close();
    proxy_.reset();
    releaseSlot();
    reaper_.reset();
    AgentFinished finished = newFinished();
    finished.status = AgentStatus::Failed;
    finished.error = "could not set up its network (network = \"" + spec_.agent.network + "\"): " + e.what();
    finish(std::move(finished));
    return false;
  }
}

void AgentRun::onNetworkRefused(const std::string& reason) {
  if (finished_) return;
  ++networkRefusals_;
  if (networkRefused_.size() < 5 &&
      std::find(networkRefused_.begin(), networkRefused_.end(), reason) == networkRefused_.end()) {
    networkRefused_.push_back(reason);
  }
  const std::string line = "[hydra] network: " + reason;
  spdlog::info("race {}: {}: network: {}", spec_.raceId, spec_.agentId, reason);
  ctx_.publish(AgentOutput{spec_.raceId, spec_.agentId, OutputStream::Stderr, line, {}});
}

void AgentRun::releaseSlot() {
  if (!holdsSlot_) return;
  holdsSlot_ = false;
  ctx_.slots.release();
}

AgentFinished AgentRun::newFinished() const {
  AgentFinished finished;
  finished.raceId = spec_.raceId;
  finished.agentId = spec_.agentId;
  finished.finishedAt = recordNow();
  finished.phase = spec_.phase;
  return finished;
}

void AgentRun::failToStart(const std::string& why) {
  releaseSlot();
  AgentFinished finished = newFinished();
  finished.status = AgentStatus::Failed;
  finished.error = "cannot start: " + why;
  finish(std::move(finished));
}

void AgentRun::launch() {
  if (cancelRequested_) {
    releaseSlot();
    AgentFinished finished = newFinished();
    finished.status = AgentStatus::Cancelled;
    finish(std::move(finished));
    return;
  }
  // Before anything of the agent runs (its setup_command included): the
  // directory its worktree is, to tell later whether the path still leads
  // there. A worktree that is not a directory now (a link an earlier round
  // left) is no place to run in.
  if (!worktreeDir_) {
    try {
      worktreeDir_ = SafeDir::open(spec_.checkout.path);
    } catch (const std::exception& e) {
      failToStart(std::string("its worktree is not hydra's directory: ") + e.what());
      return;
    }
    // The race's object quarantine exists before the agent writes anything:
    // its birth is what tells the objects the agent's own git wrote into the
    // user's store, which the commit moves into it (ObjectQuarantine::claim).
    try {
      ctx_.worktrees.quarantine(spec_.raceId);
    } catch (const std::exception& e) {
      failToStart(std::string("could not make the race's object store: ") + e.what());
      return;
    }
  }
  // A port of its own for dev servers, held until the run ends.
  if (!port_) {
    try {
      port_ = PortLease::acquire();
    } catch (const std::system_error& e) {
      spdlog::warn("race {}: {}: no port for HYDRA_PORT: {}", spec_.raceId, spec_.agentId, e.what());
    }
  }
  if (!spec_.setupCommand.empty() && !setupDone_) {
    runSetup();
    return;
  }
  std::optional<Invocation> resumed;
  if (spec_.resumeSession && isResumableSessionId(*spec_.resumeSession)) {
    resumed = adapter_->resumeInvocation(spec_.agent, *spec_.resumeSession, spec_.prompt);
  }
  resumed_ = resumed.has_value();
  Invocation inv = resumed ? std::move(*resumed) : adapter_->invocation(spec_.agent, spec_.prompt);
  std::string program = inv.program;
  // A binary given as a path is relative to the repository root, where hydra.toml is.
  if (program.find('/') != std::string::npos && !fs::path(program).is_absolute()) {
    program = (spec_.binaryBase / program).lexically_normal().string();
  }

  ProcessSpec process;
  process.program = program;
  process.args = inv.args;
  process.cwd = spec_.checkout.path;
  process.env = environment(inv.env);
  try {
    adapter_->completeEnvironment(process.env);
  } catch (const std::exception& e) {
    failToStart(e.what());
    return;
  }
  supervise(process, "it");

  // Where the checkout's .git link points before the agent can touch it.
  gitMetadata_ = linkTarget(spec_.checkout.path);
  if (!networkOrEnd(process)) return;
  // Confined, the sandbox counts what its command leaves running (ProcessSpec::leftoversFd).
  int leftovers[2] = {-1, -1};
  if (ctx_.executorOrLocal().local() && ::pipe2(leftovers, O_CLOEXEC | O_NONBLOCK) == 0) {
    process.leftoversFd = leftovers[1];
  }
  const std::string unconfinedProgram = process.program;
  if (!confineOrEnd(process, AgentStatus::Failed, "its sandbox")) {
    closeFds({leftovers[0], leftovers[1]});
    return;
  }
  if (process.program == unconfinedProgram) {  // not confined: its process group says
    closeFds({leftovers[0], leftovers[1]});
    process.leftoversFd = leftovers[0] = leftovers[1] = -1;
  }
  leftoversRead_ = leftovers[0];
  limit(process);

  session_ = output_->open(SessionSetup{spec_.checkout.path, spec_.prompt, spec_.agent.acpPermissions, {}});
  if (session_) process.stdinPipe = true;
  startedAt_ = recordNow();
  if (ctx_.onLaunch) ctx_.onLaunch(spec_.agentId);
  auto self = shared_from_this();
  process_ = ctx_.executorOrLocal().start(
      ctx_.io, std::move(process),
      [self](OutputStream stream, std::string line) { self->onLine(stream, std::move(line)); },
      [self](const ProcessResult& result) { self->onExit(result); }, JobLabel{spec_.raceId, spec_.agentId, "agent"});
  closeFds({leftovers[1]});  // the child's now

  if (session_) {
    for (auto& message : session_->start()) process_->write(std::move(message));
  }

  AgentStarted started;
  started.raceId = spec_.raceId;
  started.agentId = spec_.agentId;
  started.agent = spec_.agent.name;
  started.branch = spec_.checkout.branch;
  started.worktree = spec_.checkout.path.string();
  started.startedAt = startedAt_;
  started.phase = spec_.phase;
  started.resumed = resumed_;
  if (reaper_ && process_->pid() > 0) {
    reaper_->attach(process_->pid());
    // Over a limit, the agent is ended as a cancel would end it, with its own words.
    reaper_->limit(spec_.limits, cgroup_, [weak = weak_from_this()](std::string words) {
      auto self = weak.lock();
      if (!self || !self->process_) return;
      spdlog::warn("race {}: {}: killed: {}", self->spec_.raceId, self->spec_.agentId, words);
      self->overLimit_ = std::move(words);
      self->process_->cancel();
    });
    reaper_->watch(ctx_.io.get_executor(), kReaperScan);
  }
  if (process_->pid() > 0) {
    started.pid = process_->pid();
    started.processGroup = process_->pid();
    started.pidStartTime = processStartTime(process_->pid());
  }
  ctx_.publish(std::move(started));
  spdlog::info("race {}: {} started ({} {}, {})", spec_.raceId, spec_.agentId, inv.program, process_->pid(),
               toString(ctx_.executorOrLocal().kind()));
}

void AgentRun::supervise(ProcessSpec& process, std::string_view who) {
  process.timeout = spec_.timeout;
  process.killGrace = spec_.killGrace;
  process.readGate = ctx_.readGate;
  // Elsewhere, the executor's supervisor there does what the reaper does here.
  if (!ctx_.executorOrLocal().local()) return;
  // Whatever it starts is found and ended with it, even what leaves its
  // process group (see core/process/reaper.h).
  try {
    reaper_ = RunReaper::create();
    reaper_->prepare(process);
  } catch (const std::exception& e) {
    spdlog::warn("race {}: {}: processes {} leaves behind cannot be tracked: {}", spec_.raceId, spec_.agentId, who,
                 e.what());
    reaper_.reset();
  }
}

int AgentRun::sandboxLeftovers() {
  if (leftoversRead_ < 0) return 0;
  char buffer[32] = {};
  const ssize_t got = ::read(leftoversRead_, buffer, sizeof buffer - 1);
  closeFds({leftoversRead_});
  leftoversRead_ = -1;
  int count = 0;
  if (got > 0) std::from_chars(buffer, buffer + got, count);
  return std::max(0, count);
}

void AgentRun::limit(ProcessSpec& process) {
  // Elsewhere, limits are the cluster's business (docs/scaling.md).
  if (!ctx_.executorOrLocal().local() || !spec_.limits.any()) return;
  if (limitSupport().mechanism != LimitMechanism::Rlimits) {
    try {
      cgroup_ = RunCgroup::create(spec_.limits);
      process.joinCgroups = cgroup_->joinFds();
    } catch (const std::exception& e) {
      spdlog::warn("race {}: {}: its limits are held by rlimits instead of a cgroup: {}", spec_.raceId,
                   spec_.agentId, e.what());
    }
  }
  process.rlimits = childRlimitsFor(spec_.limits, cgroup_ != nullptr);
}

bool AgentRun::confineOrEnd(ProcessSpec& process, AgentStatus failure, std::string_view sandbox) {
  try {
    process = confined(std::move(process));
    return true;
  } catch (const std::exception& e) {
    releaseSlot();
    reaper_.reset();
    AgentFinished finished = newFinished();
    finished.status = failure;
    finished.error = "could not set up " + std::string(sandbox) + ": " + e.what();
    finish(std::move(finished));
    return false;
  }
}

void AgentRun::runSetup() {
  ProcessSpec process = SetupStep::process(spec_.setupCommand, spec_.checkout.path, environment({}));
  supervise(process, "its setup");
  if (!confineOrEnd(process, AgentStatus::SetupFailed, "the sandbox of its setup_command")) return;
  spdlog::info("race {}: {}: setup_command in {}", spec_.raceId, spec_.agentId, spec_.checkout.path.string());
  auto self = shared_from_this();
  // Its lines are masked as the agent's are, on the same streams.
  setup_ = SetupStep::start(
      SetupStep::Context{ctx_.io, ctx_.pool, ctx_.executorOrLocal(), JobLabel{spec_.raceId, spec_.agentId, "setup"},
                         reaper_, spec_.killGrace},
      std::move(process),
      [self](OutputStream stream, std::string_view line) { return self->output_->redact(stream, line); },
      [self](OutputStream stream, std::string line) {
        if (self->finished_) return;
        self->ctx_.publish(AgentOutput{self->spec_.raceId, self->spec_.agentId, stream, std::move(line), {}});
      },
      [self](const SetupStep::Outcome& outcome) { self->onSetupDone(outcome); });
}

void AgentRun::onSetupDone(const SetupStep::Outcome& outcome) {
  setup_.reset();
  reaper_.reset();
  if (outcome.kind == SetupStep::Outcome::Kind::Succeeded && !cancelRequested_) {
    setupDone_ = true;
    launch();
    return;
  }
  releaseSlot();
  AgentFinished finished = newFinished();
  finished.stderrTail = outcome.tail;
  if (cancelRequested_ || outcome.kind == SetupStep::Outcome::Kind::Cancelled) {
    finished.status = AgentStatus::Cancelled;
  } else {
    finished.status = AgentStatus::SetupFailed;
    finished.error = outcome.error;
  }
  finish(std::move(finished));
}

void AgentRun::onLine(OutputStream stream, std::string line) {
  if (finished_) return;
  AgentOutputReader::Line read = output_->read(stream, line);
  if (stream == OutputStream::Stdout && session_) converse();
  ctx_.publish(AgentOutput{spec_.raceId, spec_.agentId, stream, std::move(read.text), std::move(read.events)});
}

void AgentRun::converse() {
  if (!process_) return;
  for (auto& message : session_->takeOutgoing()) process_->write(std::move(message));
  if (!session_->done() || sessionEnding_) return;
  // Its work is over. Some agents exit once their input ends; the others are
  // ended a moment later, which is not a cancel.
  sessionEnding_ = true;
  process_->closeStdin();
  endTimer_ = std::make_unique<asio::steady_timer>(ctx_.io, std::chrono::seconds(2));
  endTimer_->async_wait([process = process_](const boost::system::error_code& ec) {
    if (!ec) process->terminate();
  });
}

void AgentRun::publishEvents(OutputStream stream, std::vector<AgentEvent> events) {
  if (events.empty()) return;
  ctx_.publish(AgentOutput{spec_.raceId, spec_.agentId, stream, "", std::move(events)});
}

void AgentRun::onExit(const ProcessResult& result) {
  // Nothing of the run stays listening once its agent is gone.
  if (proxy_) proxy_->close();
  // A stream hydra cut off (a timeout, a cancel) ended in error.
  std::optional<std::string> cutOff;
  if (result.timedOut || result.cancelled) {
    cutOff = overLimit_         ? "cut off by hydra: " + *overLimit_
             : result.timedOut ? "cut off by hydra: timed out after " + std::to_string(spec_.timeout.count()) + " s"
                               : std::string("cut off by hydra: cancelled");
  }
  auto tail = output_->finish(cutOff);
  publishEvents(OutputStream::Stdout, std::move(tail));
  // Over a limit since the last scan (an OOM kill that ended it at once):
  // the last look decides its state.
  if (reaper_ && !overLimit_) reaper_->scan();
  // Its first process stopped by RLIMIT_CPU before a scan saw it over.
  if (!overLimit_ && spec_.limits.cpuSeconds && result.signal == SIGXCPU) {
    overLimit_ = overLimitWords(LimitKind::Cpu, spec_.limits);
  }
  process_.reset();
  countedInside_ = leftoversRead_ >= 0;
  leftRunningEnded_ = result.leftRunningEnded + sandboxLeftovers();
  // The slot is held until everything the agent started has ended (reapThenCommit).

  AgentFinished finished = newFinished();
  finished.durationMs = millisBetween(startedAt_, finished.finishedAt);
  finished.exitCode = result.exitCode;
  finished.signal = result.signal;
  output_->fillIn(finished);
  for (const auto& reason : networkRefused_) finished.warnings.push_back("network: " + reason);
  if (networkRefusals_ > networkRefused_.size()) {
    finished.warnings.push_back("network: " + std::to_string(networkRefusals_) + " requests refused in all");
  }

  // The CLI's own words say more than an exit code.
  const std::string said = output_->reason();
  const bool summaryIsError = output_->summaryIsError();
  if (!result.spawnError.empty()) {
    finished.status = AgentStatus::Failed;
    finished.error = result.spawnError;
  } else if (overLimit_) {
    finished.status = AgentStatus::Failed;
    finished.error = "killed: " + *overLimit_;
    finished.overLimit = finished.error;
  } else if (result.cancelled) {
    finished.status = AgentStatus::Cancelled;
  } else if (result.timedOut) {
    finished.status = AgentStatus::TimedOut;
    finished.error = "timed out after " + std::to_string(spec_.timeout.count()) + " s";
  } else if (sessionEnding_ && !summaryIsError) {
    // An ACP agent that answered the task: ended by hydra, however it exited.
    finished.status = AgentStatus::Completed;
  } else if (sessionEnding_) {
    finished.status = AgentStatus::Failed;
    finished.error = said.empty() ? std::string("it stopped without finishing the task") : said;
  } else if (result.exitCode == 0 && !summaryIsError) {
    finished.status = AgentStatus::Completed;
  } else if (result.exitCode == 0) {
    // Some CLIs exit 0 after a model error: their summary says it failed.
    finished.status = AgentStatus::Failed;
    finished.error = said.empty() ? std::string("its summary reports an error") : said;
  } else {
    finished.status = AgentStatus::Failed;
    finished.error = result.exitCode ? "exited with code " + std::to_string(*result.exitCode)
                                     : "killed by signal " + std::to_string(result.signal.value_or(0));
    if (!said.empty()) *finished.error += ": " + said;
  }
  reapThenCommit(std::move(finished));
}

void AgentRun::reapThenCommit(AgentFinished finished) {
  if (!reaper_ && !ctx_.escapesOf && !gitMetadata_ && !worktreeDir_ && leftRunningEnded_ == 0) {
    releaseSlot();
    commitAndFinish(std::move(finished));
    return;
  }
  // Nothing the agent started outlives it: what it left running when it
  // exited (daemons, tools that left its process group) ends now, before its
  // work is committed and scored. Blocking, so on the pool.
  auto self = shared_from_this();
  asio::post(ctx_.pool, [self, finished = std::move(finished)]() mutable {
    ReapReport report;
    if (self->reaper_) report = self->reaper_->kill(self->spec_.killGrace);
    // Nothing of the run is left in its cgroup: it goes (blocking, briefly).
    if (self->reaper_) self->reaper_->limit({}, nullptr, nullptr);
    self->cgroup_.reset();
    // With nothing of it left running, what it did outside its worktree is final.
    if (self->ctx_.escapesOf) {
      RunContext::Findings found = self->ctx_.escapesOf(finished.agentId);
      finished.escapes = std::move(found.escapes);
      finished.warnings.insert(finished.warnings.end(), found.warnings.begin(), found.warnings.end());
    }
    // A worktree moved away or a broken .git link: nothing, or nothing
    // elsewhere, is committed.
    const SafeDir* opened = self->worktreeDir_ ? &*self->worktreeDir_ : nullptr;
    if (!settleWorktree(self->spec_.checkout.path, opened, self->gitMetadata_, finished)) self->worktreeSwapped_ = true;
    asio::post(self->ctx_.io, [self, finished = std::move(finished), report = std::move(report)]() mutable {
      noteLeftRunning(finished, report, static_cast<std::size_t>(self->leftRunningEnded_), self->countedInside_);
      self->reaper_.reset();
      // Only now may the next agent start: what this one did is settled.
      self->releaseSlot();
      self->commitAndFinish(std::move(finished));
    });
  });
}

void AgentRun::commitAndFinish(AgentFinished finished) {
  if (!spec_.commitMessage || worktreeSwapped_) {
    finish(std::move(finished));
    return;
  }
  auto self = shared_from_this();
  asio::post(ctx_.pool, [self, finished = std::move(finished)]() mutable {
    commitResult(ResultCommit{self->ctx_.worktrees, self->spec_.checkout, self->spec_.raceId,
                              *self->spec_.commitMessage, self->spec_.resultLimits, &self->commitCancelled_},
                 finished);
    asio::post(self->ctx_.io, [self, finished = std::move(finished)]() mutable { self->finish(std::move(finished)); });
  });
}

void AgentRun::finish(AgentFinished finished) {
  if (finished_) return;
  finished_ = true;
  if (output_) output_->close();
  port_.reset();
  if (proxy_) proxy_->close();
  proxy_.reset();
  ctx_.publish(finished);
  spdlog::info("race {}: {} {}{}", finished.raceId, finished.agentId, toString(finished.status),
               finished.error ? " (" + *finished.error + ")" : "");
  auto done = std::move(done_);
  if (done) done(finished);
}

bool AgentRun::cancel() {
  // Also when the agent has ended: its work may be being measured or committed now.
  commitCancelled_ = true;
  if (finished_ || cancelRequested_) return false;
  cancelRequested_ = true;
  if (ticket_) {
    // Still waiting for a slot: it never starts.
    ctx_.slots.withdraw(*ticket_);
    ticket_.reset();
    auto self = shared_from_this();
    asio::post(ctx_.io, [self] { self->launch(); });
    return true;
  }
  if (process_ && session_) {
    // An ACP agent is told first; the kill follows at once all the same.
    for (auto& message : session_->cancel()) process_->write(std::move(message));
  }
  if (process_) process_->cancel();  // onExit follows, and ends what is left
  if (setup_) setup_->cancel();      // onSetupDone follows
  if (reaper_) {
    // Tools that left the agent's process group are told to stop now too.
    asio::post(ctx_.pool, [reaper = reaper_, grace = spec_.killGrace] { reaper->kill(grace); });
  }
  return true;
}

bool isResumableSessionId(std::string_view id) {
  if (id.empty() || id.size() > 128 || !std::isalnum(static_cast<unsigned char>(id.front()))) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':';
  });
}

}  // namespace hydra::core
