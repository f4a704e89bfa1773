#pragma once

// A race: the same task given to several agents at once, each in its own
// worktree on its own branch. RaceEngine plans races, creates their worktrees,
// runs at most [general] max_concurrent_agents agents at a time across every
// race, streams what they do on the EventBus, keeps the records, and commits
// whatever each agent leaves behind so that every result is a commit.
//
// Everything here runs on the io_context's thread, except worktree and commit
// work, which goes to the engine's own thread pool and posts its results back.

#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "core/adapter/adapter.h"
#include "core/config/config.h"
#include "core/events/bus.h"
#include "core/git/worktree.h"
#include "core/process/process.h"
#include "core/race/record.h"
#include "core/race/store.h"
#include "core/scoring/evaluator.h"

namespace hydra::core {

struct RaceRequest {
  std::string task;
  std::vector<std::string> agents;     // agent names; a name may repeat
  std::optional<std::string> baseRef;  // default: HEAD
};

// A request hydra refuses: an unknown agent, an empty task, a base that does not exist.
class RaceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RaceEngine {
 public:
  RaceEngine(boost::asio::io_context& io, std::filesystem::path repoRoot, Config config, EventBus& bus);
  ~RaceEngine();
  RaceEngine(const RaceEngine&) = delete;
  RaceEngine& operator=(const RaceEngine&) = delete;

  // Marks races left running by a hydra that no longer exists as interrupted,
  // kills their agents' process groups, and removes worktrees whose race record
  // is gone. Returns the races it marked.
  std::vector<RaceRecord> recover();

  // Plans the race and returns at once with its record: agent ids, branches
  // and worktree paths are fixed here. Worktrees are created and agents run in
  // the background. Throws RaceError.
  RaceRecord start(const RaceRequest& request);

  // Cancels a whole race, or one agent of it. False if there is nothing to cancel.
  bool cancel(std::string_view raceId, std::optional<std::string_view> agentId = std::nullopt);

  // A race's scores, once it has been scored.
  std::optional<scoring::RaceScores> scores(std::string_view raceId) const;

  // A live race's record, or a finished one's from the store.
  std::optional<RaceRecord> find(std::string_view raceId) const;
  bool running(std::string_view raceId) const;
  std::size_t runningRaces() const { return races_.size(); }
  std::size_t runningAgents() const { return runningAgents_; }

  // The client or the user is gone: every agent's process group is killed now
  // (SIGTERM, SIGKILL after `grace`), and every live race is marked interrupted.
  void interruptAll(std::chrono::milliseconds grace);

  const Config& config() const { return config_; }
  const std::filesystem::path& repoRoot() const { return repoRoot_; }
  RaceStore& store() { return store_; }
  WorktreeManager& worktrees() { return worktrees_; }

 private:
  struct AgentRun {
    std::string agentId;
    AgentConfig config;
    const Adapter* adapter = nullptr;
    Worktree worktree;
    std::unique_ptr<StreamParser> parser;
    std::unique_ptr<AgentLog> log;
    std::shared_ptr<Process> process;
    Usage usage;
    bool sawUsage = false;
    std::optional<Usage> summaryUsage;
    bool cancelRequested = false;
    bool finished = false;
  };
  struct Race {
    explicit Race(boost::asio::io_context& io) : work(io.get_executor()) {}
    // Keeps the io_context running while worktrees are made and results committed on the pool.
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work;
    RaceRecord record;
    std::map<std::string, AgentRun> agents;  // by agentId
    bool worktreesReady = false;
    bool cancelRequested = false;
    bool scoring = false;
  };

  void createWorktrees(const std::string& raceId);
  void worktreesCreated(const std::string& raceId, std::vector<Worktree> created, std::string error);
  void pump();
  void launch(Race& race, AgentRun& run);
  void onLine(const std::string& raceId, const std::string& agentId, OutputStream stream, std::string line);
  void onExit(const std::string& raceId, const std::string& agentId, const ProcessResult& result);
  void commitResult(const std::string& raceId, const std::string& agentId, AgentStatus status,
                    std::optional<std::string> error);
  void agentDone(Race& race, AgentRun& run, AgentStatus status, std::optional<std::string> error);
  void maybeFinishRace(const std::string& raceId);
  void raceOver(const std::string& raceId, RaceStatus status);
  void autoMerge(const std::string& raceId, const std::string& agentId, RaceStatus status);
  void save(Race& race);
  void publishOutputEvents(const Race& race, const AgentRun& run, std::vector<AgentEvent> events);
  AgentConfig resolveAgent(const std::string& name) const;
  std::map<std::string, std::string> agentEnvironment(const Race& race, const AgentRun& run,
                                                      const std::map<std::string, std::string>& adapterEnv) const;

  boost::asio::io_context& io_;
  std::filesystem::path repoRoot_;
  Config config_;
  EventBus& bus_;
  RaceStore store_;
  WorktreeManager worktrees_;
  scoring::Evaluator evaluator_;
  boost::asio::thread_pool pool_{2};
  std::map<std::string, Race, std::less<>> races_;  // live races by id
  std::deque<std::pair<std::string, std::string>> queue_;  // (raceId, agentId) waiting for a slot
  std::size_t runningAgents_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// The agent ids for a list of agent names: a name used once keeps its name,
// a repeated one becomes name-1, name-2, ...
std::vector<std::string> assignAgentIds(const std::vector<std::string>& names);

}  // namespace hydra::core
