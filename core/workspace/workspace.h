#pragma once

// One repository as hydra works on it: the layer under every front end (the
// role clangd's ClangdServer plays under ClangdLSPServer). `hydra serve` only
// binds JSON-RPC to it; the terminal commands only call it and print.
//
// A Workspace owns hydra.toml (re-read when it changes on disk, without a
// second engine: running races keep the settings they started with), the one
// thread pool for blocking work, the EventBus every view subscribes to, the
// record store and its recorder, and the cap on agents running at once across
// everything it runs. Its operations answer typed results (results.h) and
// refuse with a WorkspaceError (errors.h).
//
// Threads: start, cancel and interrupt run on the io thread, like the races
// themselves. The queries (agents, status, scores, diff, log, merge, cleanup,
// ...) block on git and files: call them from a worker thread (the server uses
// pool()) or from a terminal command. They see races running in this process
// as they are now, and every other race as its record on disk says.

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/checks/baseline_cache.h"
#include "core/config/config.h"
#include "core/events/bus.h"
#include "core/git/worktree.h"
#include "core/collab/collaboration.h"
#include "core/race/race.h"
#include "core/records/recorder.h"
#include "core/records/store.h"
#include "core/run/agent_slots.h"
#include "core/workspace/errors.h"
#include "core/workspace/results.h"

namespace hydra::core {

struct WorkspaceOptions {
  // The workspace's one pool: git, records, checks' bookkeeping, blocking queries.
  std::size_t threads = 2;
  // Between SIGTERM and SIGKILL when an agent is cancelled or times out.
  std::chrono::milliseconds killGrace{2000};
};

struct RaceRequest {
  std::string task;
  std::vector<std::string> agents;     // agent names; a name may repeat
  std::optional<std::string> baseRef;  // default: HEAD
  // What a mode built on races adds (an evaluation's samples): the record's
  // kind, variables for the agents, their timeout, and the checks to score with.
  RunKind kind = RunKind::Race;
  std::map<std::string, std::string> env = {};
  std::optional<int> timeoutSeconds = std::nullopt;
  std::optional<ScoringConfig> scoring = std::nullopt;
  // Where its agents and checks run, instead of [executor] kind.
  std::optional<ExecutorKind> executor = std::nullopt;
};

// A command run in a fresh checkout of an agent's commit with files added
// first (an evaluation's verification with its hidden files).
struct VerifyRequest {
  std::string raceId;
  std::string agentId;
  std::string command;
  std::filesystem::path filesFrom;  // where `files` are
  std::vector<std::string> files;   // relative paths, copied to the same path in the checkout
  int timeoutSeconds = 600;
};

// A collaboration (hydra collab): what is not given comes from [collaboration].
struct CollabRequest {
  std::string task;
  std::optional<std::string> builder;   // agent names
  std::optional<std::string> reviewer;
  std::optional<int> maxIterations;     // >= 1
  std::optional<double> untilScore;     // 0..100
  std::optional<std::string> baseRef;   // default: HEAD
  std::optional<ExecutorKind> executor;  // default: [executor] kind
};

// hydra.toml as last read: the settings, or what is wrong with the file.
struct ConfigState {
  std::shared_ptr<const Config> config;
  std::optional<ConfigError> error;
};

class Workspace {
 public:
  // The repository containing `folder` (git's discovery upwards, then its
  // working tree). Throws WorkspaceError (NotARepository).
  Workspace(boost::asio::io_context& io, const std::filesystem::path& folder, WorkspaceOptions options = {});
  // Interrupts what still runs (its agents are killed), then writes every
  // record. Blocking; call it with the io_context no longer running.
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  const std::filesystem::path& root() const { return root_; }
  EventBus& bus() { return bus_; }
  boost::asio::thread_pool& pool() { return pool_; }

  // --- configuration (any thread) ----------------------------------------------
  // hydra.toml, read again when the file changed since the last call.
  ConfigState configState();
  // The settings; throws WorkspaceError (ConfigError) when hydra.toml is broken.
  std::shared_ptr<const Config> config();

  // --- lifecycle ----------------------------------------------------------------
  // After a crash: races left running by a hydra that is gone become
  // interrupted (their agents' process groups are killed), and worktrees that
  // a dead hydra left and no race record names (its checks, its baselines,
  // worktrees of deleted races) are removed, as are pool entries it left half
  // moved, and a merge it left half done is finished. What a live hydra
  // (this one or another) made is never touched.
  // For commands that start or clean up work; queries never call it (they
  // show a dead hydra's race as interrupted without writing). Blocking.
  // Returns the races it marked.
  std::vector<RaceRecord> recover();
  // Blocks until every event published so far is on disk.
  void flush();
  // Runs `fn` on the io thread once every event published so far is on disk.
  void whenRecorded(std::function<void()> fn);

  // --- races (io thread) --------------------------------------------------------
  // Checks and plans the race on the pool, then starts it on the io thread and
  // calls `started` with its record (ids, branches and worktrees are fixed
  // there); a refused request calls `refused` instead and leaves nothing behind.
  void startRace(RaceRequest request, std::function<void(RaceSummary)> started,
                 std::function<void(WorkspaceError)> refused);
  // The same for a collaboration: checked and planned on the pool, started on
  // the io thread. Refused like a race (unknown or unavailable agents, a bad
  // base), and when no builder or reviewer is given or configured.
  void startCollab(CollabRequest request, std::function<void(RaceSummary)> started,
                   std::function<void(WorkspaceError)> refused);
  // Runs `request` (io thread): the checkout is made on the pool, the command
  // runs confined as checks do, the checkout is removed; `done` gets the
  // command's result (its `error` says what kept it from running).
  void startVerify(VerifyRequest request, std::function<void(scoring::CheckResult)> done);
  // Cancels a race this workspace runs, or one of its agents. False when there
  // is nothing to cancel. Use requireCancellable() first (blocking) to tell an
  // unknown id or another process's race.
  bool cancel(std::string_view raceId, std::optional<std::string_view> agentId = std::nullopt);
  // hydra or its client is going away: every race ends as interrupted and its
  // agents and checks are killed; `done` runs on the io thread once they are
  // gone (or the kill grace has passed twice) and their records are written.
  void interruptAll(std::function<void()> done);
  // Races this workspace is running (or scoring) now.
  std::size_t runningRaces() const;
  // Agents holding one of the workspace's slots now (their processes run).
  std::size_t runningAgents() const { return slots_.running(); }

  // --- queries (blocking, any thread) ---------------------------------------------
  // Every agent name a race accepts: hydra.toml's agents, then each built-in
  // adapter's own name (from the adapter registry). Empty when hydra.toml is broken.
  std::vector<std::string> agentNames();
  // The same names, with whether each is installed and its version.
  std::vector<AgentInfo> agents();
  // How this workspace's agents would run now; its summary, for people:
  // "confined by bubblewrap (/usr/bin/bwrap)", "unconfined: [general] sandbox
  // = \"off\"", "unconfined: bubblewrap is not installed (...)". Runs the
  // probe once per hydra. Throws WorkspaceError for a broken hydra.toml.
  SandboxStatus sandboxStatus();
  // Without an id: the running races first, then the `newest` most recent others.
  std::vector<RaceSummary> status(const std::optional<std::string>& raceId, std::size_t newest = 20);
  RacePage races(std::size_t offset, std::size_t limit);
  RaceRecord record(const std::string& raceId);
  // The race a person means by `word`, as git takes a commit: "latest" (the
  // newest race), a whole id, or the start of exactly one race's id
  // ("20261128-0915"). Throws UnknownRace when no race fits, or when several
  // do (ambiguousRace names them).
  std::string resolveRaceId(const std::string& word);
  // The first write of the race's record, logs or scores that failed (a full
  // disk, a read-only .hydra): "recording <what> failed: cannot write <path>:
  // <reason>". nullopt when everything of it is on disk. A race whose record
  // could not be written in full stays live in this process (record(),
  // scores()) so that its results can still be shown.
  std::optional<std::string> recordFailure(const std::string& raceId) const;
  // Throws UnknownRace for no such race, and RaceRunning (raceOwnedElsewhere)
  // for a race that another live hydra process runs: only its own hydra
  // cancels a race. A race of this workspace, or one that has ended, passes.
  void requireCancellable(const std::string& raceId);
  // Throws UnknownAgent when the race has no such agent.
  AgentRecord agentRecord(const std::string& raceId, const std::string& agentId);
  scoring::RaceScores scores(const std::string& raceId);
  // nullopt when the race has not been scored.
  std::optional<scoring::RaceScores> scoresIfAny(const std::string& raceId);
  DiffResult diff(const std::string& raceId, const std::string& agentId);
  FileContents file(const std::string& raceId, const std::string& agentId, const std::string& path);
  std::string patch(const std::string& raceId, const std::string& agentId, const std::optional<std::string>& path);
  LogText log(const std::string& raceId, const std::string& agentId, OutputStream stream, std::uint64_t offset,
              std::uint64_t limit);
  AgentEventsResult agentEvents(const std::string& raceId, const std::string& agentId, std::uint64_t offset,
                                std::uint64_t limit);
  // The agent (default: the winner) merged into the branch HEAD is on.
  // An agent that is not the winner, failed a check or is flagged is merged
  // only with `force` (a dry run says why instead); one that cannot win never.
  MergeReport merge(const std::string& raceId, const std::optional<std::string>& agentId, bool dryRun, bool keep,
                    bool force = false);
  // Worktrees of finished races go to the warm pool while it has room
  // ([general] pool_size), the rest are removed; `emptyPool` removes the
  // pooled ones too.
  CleanupReport cleanup(const std::optional<std::string>& raceId, bool keepBranches, bool emptyPool = false);
  // nullopt while hydra.toml is broken (where the pool lives is unknown).
  std::optional<PoolStatus> worktreePool();

  // How much of a log one log() call returns at most.
  static constexpr std::uint64_t kMaxLogRead = 1024 * 1024;
  static constexpr std::uint64_t kMaxEventsRead = 5000;

 private:
  struct Live {
    RaceRecord record;
    bool scoring = false;
    std::optional<scoring::RaceScores> scores;
  };
  struct Plan;

  void emit(RaceEventBody event);
  // `collab`: plan a collaboration of request.agents = {builder, reviewer}.
  Plan plan(const RaceRequest& request, const CollabRequest* collab = nullptr);
  void launch(Plan plan, std::function<void(RaceSummary)> started);
  // [general] pool_size and keep_ignored, or no pool when hydra.toml is broken.
  PoolPolicy poolPolicy();
  // Drops the object quarantines of `finished` (being cleaned up) and of
  // races whose records are gone; a failure is said in the log.
  void dropQuarantines(const WorktreeManager& worktrees, const std::vector<RaceRecord>& finished);
  // What masks secrets in the diffs hydra shows: the configured agents'
  // secret values and every pattern of core/util/redact.h.
  std::shared_ptr<const Redactor> diffRedactor();
  std::optional<Live> live(const std::string& raceId) const;
  // Every race, newest first: the records on disk and the live ones.
  std::vector<RaceRecord> allRaces();
  bool busy(const std::string& raceId) const;
  RaceSummary summarize(const RaceRecord& race, bool scoring, const std::optional<scoring::RaceScores>& scores) const;
  // The agent's record with its result; in a collaboration, "builder@N" (and
  // "builder": the latest iteration) as a record of the builder with that
  // iteration's commit. Throws UnknownAgent or NoResult.
  AgentRecord withResult(const RaceRecord& race, const std::string& agentId);
  std::string logSubject(const RaceRecord& race, const std::string& agentId);
  // `manual`: hydra merge (the journal stays until the race records the
  // merge), not a race's auto-merge.
  MergeReport mergeAgent(const RaceRecord& race, const std::string& agentId, bool dryRun, bool keep,
                         bool manual = false);
  // Finishes a merge that a hydra killed in the middle left half done
  // (merge::finishInterruptedMerge) and records it in its race.
  void finishInterruptedMerge();
  AutoMergeOutcome autoMerge(const std::string& raceId, const std::string& agentId);
  std::vector<std::string> knownAgentNames(const Config& config) const;
  void checkQuiet(std::shared_ptr<std::function<void()>> done, std::chrono::steady_clock::time_point deadline);
  // The worktrees under `workspaceDir` ([general] workspace_dir). Throws
  // WorkspaceError (RaceRefused) for a directory outside the repository.
  WorktreeManager& worktreesFor(const std::filesystem::path& workspaceDir);
  // The manager of general.workspaceDir, told general.sparsePaths.
  WorktreeManager& worktreesFor(const GeneralConfig& general);

  boost::asio::io_context& io_;
  WorkspaceOptions options_;
  std::filesystem::path root_;
  boost::asio::thread_pool pool_;
  EventBus bus_;
  RaceStore store_;
  BaselineCache baselines_;
  AgentSlots slots_;

  std::mutex worktreesMutex_;
  std::map<std::filesystem::path, std::unique_ptr<WorktreeManager>> worktrees_;

  // [general] max_concurrent_agents of the last hydra.toml read: what the
  // slots read on the io thread, which must not read files.
  std::atomic<int> maxAgents_{GeneralConfig{}.maxConcurrentAgents};
  mutable std::mutex configMutex_;
  ConfigState config_;
  std::optional<std::filesystem::file_time_type> configTime_;
  std::optional<std::uintmax_t> configSize_;
  bool configRead_ = false;

  // io thread: the races this workspace runs, and those interrupted whose processes may still be dying.
  std::map<std::string, std::shared_ptr<Strategy>, std::less<>> races_;
  std::vector<std::shared_ptr<Strategy>> dying_;

  // Any thread: what the live races look like now, until their end is on disk.
  mutable std::mutex liveMutex_;
  std::map<std::string, Live, std::less<>> live_;

  // Last: it writes through the store on the pool, and is flushed before either goes.
  std::unique_ptr<RaceRecorder> recorder_;
};

}  // namespace hydra::core
