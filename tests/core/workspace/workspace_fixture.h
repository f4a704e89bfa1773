#pragma once

// A Workspace on a throwaway repository, with agents played by real programs:
// the scripted agent (tests/fixtures/agents/scripted_agent.sh) and
// hydra_test_child (tests/support), which can hang, ignore SIGTERM, leave a
// grandchild behind, crash or print a flood. The io_context is run by the test.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/git/git.h"
#include "core/workspace/workspace.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

inline const fs::path kFixtures = fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "agents";
inline const fs::path kScriptedAgent = kFixtures / "scripted_agent.sh";
inline const fs::path kTestChild = HYDRA_TEST_CHILD;

struct AgentDef {
  std::string name;
  std::string binary;
  std::vector<std::string> args;
  std::optional<int> timeoutSeconds;
  std::string adapter = "command";
  std::string extra;  // more lines of its table
};

// An agent played by the scripted agent, carrying out `steps`.
inline AgentDef scripted(std::string name, std::vector<std::string> steps) {
  return AgentDef{std::move(name), kScriptedAgent.string(), std::move(steps), std::nullopt, "command", ""};
}

// An agent played by hydra_test_child with these flags.
inline AgentDef child(std::string name, std::vector<std::string> flags, std::optional<int> timeoutSeconds = std::nullopt) {
  return AgentDef{std::move(name), kTestChild.string(), std::move(flags), timeoutSeconds, "command", ""};
}

inline std::string tomlString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

inline std::string tomlArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& item : items) out += (out.size() > 1 ? ", " : "") + tomlString(item);
  return out + "]";
}

inline std::string configToml(const std::vector<AgentDef>& agents, int maxConcurrent, const std::string& extra = "") {
  // Unconfined: these tests follow the scripted agents' processes by their
  // host pids and hand them files in the scratch folder. Confinement has
  // its own tests (tests/e2e/sandbox_test.cpp).
  std::string toml = "[general]\nmax_concurrent_agents = " + std::to_string(maxConcurrent) +
                     "\ntimeout_seconds = 120\nsandbox = \"off\"\n";
  for (const auto& a : agents) {
    toml += "\n[agents." + a.name + "]\nadapter = " + tomlString(a.adapter) + "\nbinary = " + tomlString(a.binary) +
            "\nargs = " + tomlArray(a.args) + "\n";
    if (a.timeoutSeconds) toml += "timeout_seconds = " + std::to_string(*a.timeoutSeconds) + "\n";
    toml += a.extra;
  }
  return toml + extra;
}

// True once `pid` no longer runs (a zombie counts as gone).
inline bool processGone(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  // Through rdbuf(): a process ending between open and read fails the read
  // with ESRCH, which an istreambuf_iterator would throw.
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string stat = text.str();
  auto close = stat.rfind(')');
  return close == std::string::npos || (close + 2 < stat.size() && stat[close + 2] == 'Z');
}

// Waits for `pid` to be gone; the limit only catches a process that never dies.
inline bool waitGone(pid_t pid, std::chrono::seconds limit = 15s) {
  auto deadline = Clock::now() + limit;
  while (!processGone(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

inline pid_t readPid(const fs::path& file) { return static_cast<pid_t>(std::stol(readFile(file))); }

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class WorkspaceTestBase : public ::testing::Test {
 protected:
  WorkspaceTestBase() { repo_.isolateLibgit2(); }

  void writeConfig(const std::vector<AgentDef>& agents, int maxConcurrent = 4, const std::string& extra = "") {
    writeFile(repo_.root() / "hydra.toml", configToml(agents, maxConcurrent, extra));
  }

  // Writes hydra.toml and opens the workspace on it.
  Workspace& open(const std::vector<AgentDef>& agents, int maxConcurrent = 4, const std::string& extra = "") {
    writeConfig(agents, maxConcurrent, extra);
    return reopen();
  }

  // A new Workspace on the same repository, as a restarted hydra would have.
  Workspace& reopen() {
    ws_.reset();
    ws_ = std::make_unique<Workspace>(io_, repo_.root());
    return *ws_;
  }

  // Runs the io_context until `done` holds. The limit only catches hangs.
  bool runUntil(const std::function<bool()>& done, std::chrono::seconds limit = 60s) {
    auto deadline = Clock::now() + limit;
    while (!done()) {
      if (Clock::now() > deadline) {
        ADD_FAILURE() << "gave up waiting after " << limit.count() << " s";
        return false;
      }
      io_.run_one_for(20ms);
    }
    return true;
  }

  // Starts a race and waits until it has started (or throws what the workspace refused).
  RaceSummary start(std::vector<std::string> agents, std::string task = "Fix the parser bug",
                    std::optional<std::string> base = std::nullopt) {
    std::optional<RaceSummary> started;
    std::optional<WorkspaceError> refused;
    ws_->startRace(RaceRequest{std::move(task), std::move(agents), std::move(base)},
                   [&](RaceSummary s) { started = std::move(s); }, [&](WorkspaceError e) { refused = std::move(e); });
    runUntil([&] { return started || refused; });
    if (refused) throw *refused;
    return *started;
  }

  bool over(const std::string& raceId) { return ws_->record(raceId).status != RaceStatus::Running; }

  RaceRecord finish(const std::string& raceId) {
    runUntil([&] { return over(raceId); });
    ws_->flush();
    return ws_->record(raceId);
  }

  RaceRecord runRace(std::vector<std::string> agents, std::string task = "Fix the parser bug") {
    return finish(start(std::move(agents), std::move(task)).raceId);
  }

  AgentStatus statusOf(const std::string& raceId, const std::string& agentId) {
    return ws_->record(raceId).findAgent(agentId)->status;
  }

  static const AgentRecord& agentOf(const RaceRecord& race, std::string_view agentId) {
    const AgentRecord* agent = race.findAgent(agentId);
    if (agent == nullptr) throw std::runtime_error("race has no agent " + std::string(agentId));
    return *agent;
  }

  std::string git(const std::string& args) const { return repo_.git(args); }
  fs::path outside(const std::string& name) const {
    fs::create_directories(repo_.outside());
    return repo_.outside() / name;
  }

  git::LibGit2 libgit2_;
  TempRepo repo_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  std::unique_ptr<Workspace> ws_;  // last: it must go before the io_context
};

}  // namespace hydra::core::testing
