#include "core/run/agent_run.h"

#include <spdlog/spdlog.h>

#include "core/guard/worktree_link.h"
#include "core/util/utf8.h"
#include "core/sandbox/net_jail.h"
#include "core/sandbox/network.h"
#include "core/sandbox/sandboxed.h"

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

// How much of an agent's stderr its record keeps: the end, where CLIs say why they stopped.
constexpr std::size_t kStderrTailLines = 20;
constexpr std::size_t kStderrTailBytes = 4096;
// How often the processes of a run are looked for while it runs.
constexpr std::chrono::milliseconds kReaperScan{250};

void addUsage(Usage& total, const Usage& part) {
  auto add = [](auto& into, const auto& from) {
    if (from) into = into.value_or(0) + *from;
  };
  add(total.inputTokens, part.inputTokens);
  add(total.outputTokens, part.outputTokens);
  add(total.cachedInputTokens, part.cachedInputTokens);
  add(total.costUsd, part.costUsd);
}

std::string lastNonEmpty(const std::deque<std::string>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->find_first_not_of(" \t\r") != std::string::npos) return *it;
  }
  return {};
}

std::string joinLines(const std::deque<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) {
    if (!out.empty()) out += '\n';
    out += l;
  }
  return out;
}

// Closes the descriptors given that are open (>= 0).
void closeFds(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

}  // namespace

std::optional<fs::path> linkTarget(const fs::path& worktree) {
  std::ifstream in(worktree / ".git", std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
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
                               std::string(ctx_.executorOrLocal().kind()) + " executor");
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

  if (auto session = adapter_->session(SessionSetup{spec_.checkout.path, spec_.prompt, spec_.agent.acpPermissions, {}})) {
    session_ = session.get();
    parser_ = std::move(session);
    process.stdinPipe = true;
  } else {
    parser_ = adapter_->parser();
  }
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
               ctx_.executorOrLocal().kind());
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
  ProcessSpec process;
  process.program = "/bin/sh";
  process.args = {"-c", spec_.setupCommand};
  process.cwd = spec_.checkout.path;
  process.env = environment({});
  supervise(process, "its setup");
  if (!confineOrEnd(process, AgentStatus::SetupFailed, "the sandbox of its setup_command")) return;
  spdlog::info("race {}: {}: setup_command in {}", spec_.raceId, spec_.agentId, spec_.checkout.path.string());
  auto self = shared_from_this();
  setup_ = ctx_.executorOrLocal().start(
      ctx_.io, std::move(process),
      [self](OutputStream stream, std::string line) {
        if (self->finished_) return;
        line = self->ctx_.redactor->redactLine(line, stream == OutputStream::Stdout ? self->stdoutState_
                                                                                    : self->stderrState_);
        if (stream == OutputStream::Stderr && !line.empty()) self->setupLastStderr_ = line;
        self->setupTail_.push_back(line);
        if (self->setupTail_.size() > kStderrTailLines) self->setupTail_.pop_front();
        self->ctx_.publish(AgentOutput{self->spec_.raceId, self->spec_.agentId, stream, "[setup] " + line, {}});
      },
      [self](const ProcessResult& result) { self->onSetupExit(result); },
      JobLabel{spec_.raceId, spec_.agentId, "setup"});
  if (reaper_ && setup_->pid() > 0) {
    reaper_->attach(setup_->pid());
    reaper_->watch(ctx_.io.get_executor(), kReaperScan);
  }
}

void AgentRun::onSetupExit(const ProcessResult& result) {
  setup_.reset();
  // What the setup left running ends with it (a server it started does not
  // stay for the agent: the agent starts its own, on HYDRA_PORT).
  auto self = shared_from_this();
  asio::post(ctx_.pool, [self, result] {
    if (self->reaper_) self->reaper_->kill(self->spec_.killGrace);
    asio::post(self->ctx_.io, [self, result] {
      self->reaper_.reset();
      const bool ok = result.spawnError.empty() && !result.timedOut && !result.cancelled && result.exitCode == 0;
      if (ok && !self->cancelRequested_) {
        self->setupDone_ = true;
        self->launch();
        return;
      }
      self->releaseSlot();
      AgentFinished finished = self->newFinished();
      finished.stderrTail = joinLines(self->setupTail_);
      if (self->cancelRequested_ || result.cancelled) {
        finished.status = AgentStatus::Cancelled;
      } else {
        finished.status = AgentStatus::SetupFailed;
        std::string why = !result.spawnError.empty() ? result.spawnError
                          : result.timedOut ? "timed out after " + std::to_string(self->spec_.timeout.count()) + " s"
                          : result.exitCode ? "exited with code " + std::to_string(*result.exitCode)
                                            : "killed by signal " + std::to_string(result.signal.value_or(0));
        // Its last word on stderr, where a failing command says why; the order
        // of its stdout and stderr lines is not kept across the two pipes.
        const std::string said =
            self->setupLastStderr_.empty() ? lastNonEmpty(self->setupTail_) : self->setupLastStderr_;
        finished.error = "setup_command " + why + (said.empty() || result.timedOut ? "" : ": " + said);
      }
      self->finish(std::move(finished));
    });
  });
}

void AgentRun::onLine(OutputStream stream, std::string line) {
  if (finished_) return;
  // Secrets never leave this function unmasked: not to a subscriber, not to the disk.
  line = ctx_.redactor->redactLine(line, stream == OutputStream::Stdout ? stdoutState_ : stderrState_);
  std::vector<AgentEvent> events;
  if (stream == OutputStream::Stdout) {
    events = parser_->parseLine(line);
    if (session_) converse();
    if (adapter_->finalMessageIsOutput()) keepOutputTail(line);
  } else {
    stderrTailBytes_ += line.size();
    stderrTail_.push_back(line);
    while (stderrTail_.size() > kStderrTailLines || (stderrTailBytes_ > kStderrTailBytes && stderrTail_.size() > 1)) {
      stderrTailBytes_ -= stderrTail_.front().size();
      stderrTail_.pop_front();
    }
  }
  for (const auto& e : events) note(e);
  ctx_.publish(AgentOutput{spec_.raceId, spec_.agentId, stream, std::move(line), std::move(events)});
}

void AgentRun::keepOutputTail(std::string_view line) {
  outputTail_.append(line);
  outputTail_ += '\n';
  if (outputTail_.size() <= kMaxOutputTail) return;
  // Whole lines only, so the text never starts inside a character.
  std::size_t cut = outputTail_.find('\n', outputTail_.size() - kMaxOutputTail);
  outputTail_.erase(0, cut == std::string::npos ? outputTail_.size() : cut + 1);
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

void AgentRun::note(const AgentEvent& e) {
  if (e.kind == EventKind::Usage && e.usage) {
    sawUsage_ = true;
    addUsage(usage_, *e.usage);
  } else if (e.kind == EventKind::Error && !e.text.empty()) {
    lastError_ = e.text;
  } else if (e.kind == EventKind::Summary) {
    if (e.usage) summaryUsage_ = e.usage;
    if (!e.text.empty()) finalMessage_ = e.text;
    if (!e.sessionId.empty()) sessionId_ = e.sessionId;
    summaryIsError_ = summaryIsError_ || e.isError;
    deniedToolCalls_ += e.deniedToolCalls;
    warnings_.insert(warnings_.end(), e.warnings.begin(), e.warnings.end());
  }
}

std::string AgentRun::cliReason(const std::string& lastStderr) const {
  // In the order a person would look: the error the CLI reported in its
  // stream, what its error summary said, then its last word on stderr.
  if (!lastError_.empty()) return lastError_;
  if (summaryIsError_) {
    if (!warnings_.empty()) return warnings_.back();
    if (!finalMessage_.empty()) return finalMessage_;
  }
  return lastStderr;
}

void AgentRun::publishEvents(OutputStream stream, std::vector<AgentEvent> events) {
  if (events.empty()) return;
  ctx_.publish(AgentOutput{spec_.raceId, spec_.agentId, stream, "", std::move(events)});
}

void AgentRun::onExit(const ProcessResult& result) {
  // Nothing of the run stays listening once its agent is gone.
  if (proxy_) proxy_->close();
  auto tail = parser_->finish();
  // A stream hydra cut off (a timeout, a cancel) ended in error, whatever
  // the adapter could make of what came before.
  if (result.timedOut || result.cancelled) {
    for (auto& e : tail) {
      if (e.kind != EventKind::Summary) continue;
      e.isError = true;
      e.warnings.push_back(overLimit_         ? "cut off by hydra: " + *overLimit_
                           : result.timedOut ? "cut off by hydra: timed out after " +
                                                   std::to_string(spec_.timeout.count()) + " s"
                                             : std::string("cut off by hydra: cancelled"));
    }
  }
  for (const auto& e : tail) note(e);
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
  if (summaryUsage_) {
    finished.usage = summaryUsage_;
  } else if (sawUsage_) {
    finished.usage = usage_;
  }
  finished.warnings = warnings_;
  for (const auto& reason : networkRefused_) finished.warnings.push_back("network: " + reason);
  if (networkRefusals_ > networkRefused_.size()) {
    finished.warnings.push_back("network: " + std::to_string(networkRefusals_) + " requests refused in all");
  }
  finished.stderrTail = joinLines(stderrTail_);
  finished.deniedToolCalls = deniedToolCalls_;
  finished.finalMessage = finalMessage_;
  if (finished.finalMessage.empty() && !outputTail_.empty()) {
    std::size_t a = outputTail_.find_first_not_of(" \t\r\n");
    if (a != std::string::npos) {
      finished.finalMessage = makeValidUtf8(outputTail_.substr(a, outputTail_.find_last_not_of(" \t\r\n") - a + 1));
    }
  }
  if (!sessionId_.empty()) finished.sessionId = sessionId_;

  // The CLI's own words say more than an exit code.
  std::string said = cliReason(lastNonEmpty(stderrTail_));
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
  } else if (sessionEnding_ && !summaryIsError_) {
    // An ACP agent that answered the task: ended by hydra, however it exited.
    finished.status = AgentStatus::Completed;
  } else if (sessionEnding_) {
    finished.status = AgentStatus::Failed;
    finished.error = said.empty() ? std::string("it stopped without finishing the task") : said;
  } else if (result.exitCode == 0 && !summaryIsError_) {
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
    // A worktree moved away, with a link (to the user's checkout, say) or
    // another directory in its place: nothing hydra does from here on may
    // go there, and its work is not committed from there.
    if (self->worktreeDir_) {
      if (auto swapped = self->worktreeSwapped()) {
        self->worktreeSwapped_ = true;
        // A link in its place goes (never what it names), so that no later
        // step (a next round, the cleanup) takes the link for the worktree.
        const fs::path& path = self->spec_.checkout.path;
        std::error_code ec;
        if (fs::is_symlink(fs::symlink_status(path, ec)) && fs::remove(path, ec)) *swapped += " (the link was removed)";
        finished.escapes.push_back(*swapped);
        spdlog::warn("race {}: {}: {}", finished.raceId, finished.agentId, *swapped);
      }
    }
    // A deleted or rewritten .git link would make hydra commit its work into
    // another repository (the user's checkout): put back before the commit,
    // through the directory opened at launch, never through a link.
    if (self->gitMetadata_ && self->worktreeDir_ && !self->worktreeSwapped_ &&
        !guard::worktreeLinkIntact(*self->worktreeDir_, *self->gitMetadata_)) {
      try {
        guard::restoreWorktreeLink(*self->worktreeDir_, *self->gitMetadata_);
        finished.escapes.push_back("deleted or rewrote its worktree's .git link (put back)");
      } catch (const std::exception& e) {
        finished.escapes.push_back(std::string("deleted or rewrote its worktree's .git link (could not be put back: ") +
                                   e.what() + ")");
      }
    }
    asio::post(self->ctx_.io, [self, finished = std::move(finished), report = std::move(report)]() mutable {
      // Confined, the sandbox counted everything the agent left in its
      // namespace; what the reaper catches while that namespace is being torn
      // down is among them, not more. Unconfined, the two are apart: its
      // process group, and what left the group.
      const std::size_t counted = static_cast<std::size_t>(self->leftRunningEnded_);
      const std::size_t ended =
          self->countedInside_ ? std::max(report.killed.size(), counted) : report.killed.size() + counted;
      if (ended > 0) {
        std::string what = std::to_string(ended) + (ended == 1 ? " process" : " processes") +
                           " it left running ended with it";
        spdlog::info("race {}: {}: {}", finished.raceId, finished.agentId, what);
        finished.warnings.push_back(what);
      }
      if (!report.survivors.empty()) {
        spdlog::error("race {}: {}: {} of its processes survived SIGKILL", finished.raceId, finished.agentId,
                      report.survivors.size());
      }
      self->reaper_.reset();
      // Only now may the next agent start: what this one did is settled.
      self->releaseSlot();
      self->commitAndFinish(std::move(finished));
    });
  });
}

std::optional<std::string> AgentRun::worktreeSwapped() const {
  const fs::path& path = spec_.checkout.path;
  const std::string what = "replaced its worktree " + path.string();
  const std::string consequence = "; its work is not committed";
  // lstat, not open: a worktree it merely made unreadable is still its worktree.
  struct stat now {};
  if (::lstat(path.c_str(), &now) != 0) {
    return "moved its worktree " + path.string() + " away (" + std::strerror(errno) + ")" + consequence;
  }
  if (S_ISLNK(now.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(path, ec);
    return what + " with a symbolic link" + (ec ? std::string() : " to " + target.string()) +
           " (hydra did not follow it)" + consequence;
  }
  if (!S_ISDIR(now.st_mode)) return what + " with something that is not a directory" + consequence;
  try {
    if (FileIdentity{now.st_dev, now.st_ino} == worktreeDir_->identity()) return std::nullopt;
  } catch (const std::exception& e) {
    return "left its worktree " + path.string() + " unreadable (" + e.what() + ")" + consequence;
  }
  return what + " with another directory" + consequence;
}

void AgentRun::commitAndFinish(AgentFinished finished) {
  if (!spec_.commitMessage || worktreeSwapped_) {
    finish(std::move(finished));
    return;
  }
  auto self = shared_from_this();
  asio::post(ctx_.pool, [self, finished = std::move(finished)]() mutable {
    std::string commitError;
    try {
      // Counted first, from directory entries alone: a result over a limit
      // never reaches the object store, not even in part.
      const ResultSize size =
          measureResult(self->spec_.checkout.path, self->spec_.resultLimits, &self->commitCancelled_);
      if (size.overLimit) {
        finished.tooLarge = size.describe(self->spec_.resultLimits);
        if (finished.status == AgentStatus::Completed) finished.status = AgentStatus::Failed;
        if (!finished.error) finished.error = *finished.tooLarge;
      } else {
        // The race's objects go to its quarantine: `hydra cleanup` drops
        // what no merge took (core/git/object_quarantine.h).
        const ObjectQuarantine quarantine = self->ctx_.worktrees.quarantine(self->spec_.raceId);
        self->ctx_.worktrees.commitAll(self->spec_.checkout, *self->spec_.commitMessage, &self->commitCancelled_,
                                       &size, &quarantine);
      }
      finished.commit = self->ctx_.worktrees.headCommit(self->spec_.checkout);
    } catch (const ResultCancelled& e) {
      if (finished.status == AgentStatus::Completed) finished.status = AgentStatus::Cancelled;
      if (!finished.error) finished.error = e.what();
      try {
        finished.commit = self->ctx_.worktrees.headCommit(self->spec_.checkout);  // what it had before
      } catch (const std::exception&) {
      }
    } catch (const std::exception& e) {
      commitError = e.what();
    }
    asio::post(self->ctx_.io, [self, finished = std::move(finished), commitError]() mutable {
      if (finished.tooLarge) {
        spdlog::warn("race {}: {}: {}", finished.raceId, finished.agentId, *finished.tooLarge);
      }
      if (!commitError.empty()) {
        spdlog::error("race {}: committing {}'s work failed: {}", finished.raceId, finished.agentId, commitError);
        // Its work is not on its branch: whatever the agent did, the result is lost.
        if (finished.status == AgentStatus::Completed) finished.status = AgentStatus::Failed;
        if (!finished.error) finished.error = "committing its work failed: " + commitError;
      }
      self->finish(std::move(finished));
    });
  });
}

void AgentRun::finish(AgentFinished finished) {
  if (finished_) return;
  finished_ = true;
  parser_.reset();
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
  if (setup_) setup_->cancel();      // onSetupExit follows
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
