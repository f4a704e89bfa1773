#pragma once

// The boundary between hydra and one coding-agent CLI: how to invoke it
// non-interactively, and how to read what it prints.

#include <filesystem>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/adapter/event.h"
#include "core/config/config.h"

namespace hydra::core {

struct Invocation {
  std::string program;  // the binary, as configured (looked up on PATH when relative)
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // added to the environment
};

// Turns an agent's output, line by line, into events. One per agent run.
class StreamParser {
 public:
  virtual ~StreamParser() = default;
  // One line of stdout, without its newline. Unparsable lines become Raw events.
  virtual std::vector<AgentEvent> parseLine(std::string_view line) = 0;
  // The stream ended: anything held back, and a Summary if the CLI gives none.
  virtual std::vector<AgentEvent> finish() { return {}; }
};

// What an agent spoken to over stdio needs to know about its run.
struct SessionSetup {
  std::filesystem::path worktree;  // its working directory, and the only place fs/* may touch
  std::string task;
  // How its permission requests are answered: "worktree" (allow what stays
  // inside the worktree, reject the rest), "allow" or "reject".
  std::string permissions = "worktree";
  // The session mode to switch to (session/set_mode) before the prompt; empty:
  // the agent's own default.
  std::string mode;
};

// A conversation with the agent over its stdin and stdout (the Agent Client
// Protocol), where a StreamParser only reads. hydra writes what start() gives
// once the agent runs, and what takeOutgoing() gives after each line it reads;
// once done(), the agent's work is over and hydra ends it.
class AgentSession : public StreamParser {
 public:
  virtual std::vector<std::string> start() = 0;
  virtual std::vector<std::string> takeOutgoing() = 0;
  // The agent answered the task (or can no longer): hydra closes its stdin
  // and ends it; its summary has been given.
  virtual bool done() const = 0;
  // What to write before hydra stops it (session/cancel).
  virtual std::vector<std::string> cancel() = 0;
};

class Adapter {
 public:
  virtual ~Adapter() = default;
  // The name hydra.toml's `adapter` and `hydra race --agents` use. Registered
  // once, here: config, the agents list and the editors all read it from the registry.
  virtual std::string_view name() const = 0;
  // The binary it runs when [agents.NAME] gives none; empty when there is no
  // usual one (the command adapter: the table must name a program).
  virtual std::string_view defaultBinary() const = 0;
  // The real non-interactive command line for `task` (config.args replaces the
  // defaults, config.extraArgs is appended).
  virtual Invocation invocation(const AgentConfig& config, std::string_view task) const = 0;
  // The command line that continues the CLI's session `sessionId` (from an
  // earlier run's AgentFinished::sessionId) with `task`: claude --resume,
  // codex exec resume, opencode --session. nullopt when the CLI cannot, or
  // when config.args replaces the defaults (hydra cannot tell where the
  // session would go): the task must then carry the whole context.
  virtual std::optional<Invocation> resumeInvocation(const AgentConfig& config, std::string_view sessionId,
                                                     std::string_view task) const {
    (void)config;
    (void)sessionId;
    (void)task;
    return std::nullopt;
  }
  virtual std::unique_ptr<StreamParser> parser() const = 0;
  // A CLI that prints plain text has no final message of its own: the end of
  // what it printed on stdout stands for one (AgentFinished::finalMessage;
  // what a reviewer run as a command has to say).
  virtual bool finalMessageIsOutput() const { return false; }
  // For an agent spoken to over stdio: its session, used instead of parser().
  virtual std::unique_ptr<AgentSession> session(const SessionSetup& setup) const {
    (void)setup;
    return nullptr;
  }
  // Whether session() gives one: the agent needs its stdin written to, which
  // only the local executor offers.
  virtual bool speaksOverStdin() const { return false; }
  // Arguments that make the binary print its version and exit; none when it
  // has no such option.
  virtual std::vector<std::string> versionArgs() const { return {"--version"}; }
  // Where the CLI keeps its own state (settings, sessions, caches, logs),
  // given the environment it runs with (`home`: its HOME): writable inside
  // the sandbox, where everything else outside its worktree is read-only.
  virtual std::vector<std::filesystem::path> stateDirectories(
      const std::map<std::string, std::string>& env, const std::filesystem::path& home) const {
    (void)env;
    (void)home;
    return {};
  }
  // Fills in what the run's environment must hold and depends on it (e.g. a
  // path found on its PATH); `env` is what the agent gets on top of hydra's
  // own. Throws std::runtime_error, with what to do, when the run cannot start.
  virtual void completeEnvironment(std::map<std::string, std::string>& env) const { (void)env; }
  // The hosts its CLI talks to with its usual settings (its model's API,
  // login): what network = "allowlist" allows when allowed_hosts is not
  // given. A base URL pointed elsewhere must be listed by the user.
  virtual std::vector<std::string_view> defaultAllowedHosts() const { return {}; }
};

// `env[name]` when set and not empty, else `fallback`.
std::filesystem::path envPath(const std::map<std::string, std::string>& env, const std::string& name,
                              const std::filesystem::path& fallback);

// The adapter named `name` (one of adapterNames()), or nullptr.
const Adapter* findAdapter(std::string_view name);
std::vector<std::string_view> adapterNames();

}  // namespace hydra::core
