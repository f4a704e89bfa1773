#pragma once

// Wire types of hydra's own methods (hydra/agents, hydra/race, ...) and of the
// notifications a race sends while it runs. Plain structs with the wire's
// camelCase names; docs/protocol.md shows each with an example. Like the rest
// of protocol/, nothing here knows about git, processes or the race engine:
// the server fills these from core's types.
//
// Optional members are left out of the JSON when empty, except where the
// protocol promises a `null` (noted on the member).

#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/lifecycle.h"

namespace hydra::protocol {

namespace json = boost::json;

// --- initialize --------------------------------------------------------------

// InitializeResult.capabilities.hydra
struct HydraCapabilities {
  std::string version;
  std::vector<std::string> agents;   // the agents hydra.toml configures
  std::vector<std::string> methods;  // every hydra/* request the server answers
};

// --- hydra/agents ------------------------------------------------------------

struct AgentInfo {
  std::string name;
  std::string adapter;
  std::string binary;
  bool configured = false;  // has an [agents.NAME] table
  bool available = false;
  std::optional<std::string> version;  // null when unknown
  std::optional<std::string> path;     // where the binary is; absent when unavailable
  std::optional<std::string> problem;  // why it is unavailable
};

struct AgentsResult {
  std::vector<AgentInfo> agents;
};

// --- hydra/race --------------------------------------------------------------

struct RaceParams {
  std::string task;                            // not blank
  std::vector<std::string> agents;             // names; one may repeat; not empty
  std::optional<std::string> base;             // commit or ref; default HEAD
  std::optional<ProgressToken> workDoneToken;  // LSP's WorkDoneProgressParams
};

struct RaceAgent {
  std::string agentId;
  std::string agent;
  std::string branch;
  std::string worktree;
};

struct RaceResult {
  std::string raceId;
  std::vector<RaceAgent> agents;
};

// --- hydra/status, hydra/races -----------------------------------------------

struct StatusParams {
  std::optional<std::string> raceId;
};

struct AgentState {
  std::string agentId;
  std::string agent;
  std::string state;  // queued, running, completed, failed, timedOut, cancelled, interrupted
  std::int64_t elapsedMs = 0;
  std::optional<int> exitCode;
  std::string branch;
  std::string worktree;
  std::optional<std::string> commit;  // the commit holding the agent's result
  std::optional<std::string> error;
};

struct RaceSummary {
  std::string raceId;
  std::string task;
  std::string state;  // running, scoring, completed, cancelled, interrupted, failed
  std::string createdAt;
  std::optional<std::string> finishedAt;
  std::string baseCommit;
  std::vector<AgentState> agents;
};

struct StatusResult {
  std::vector<RaceSummary> races;
};

struct RacesParams {
  std::int64_t offset = 0;  // >= 0
  std::int64_t limit = 50;  // 1..500
};

struct RacesResult {
  std::vector<RaceSummary> races;
  std::int64_t total = 0;
  std::optional<std::int64_t> nextOffset;  // absent on the last page
};

// --- hydra/cancel ------------------------------------------------------------

struct CancelRaceParams {
  std::string raceId;
  std::optional<std::string> agentId;  // absent: the whole race
};

struct CancelRaceResult {
  bool cancelled = false;
};

// --- hydra/scores ------------------------------------------------------------

struct RaceIdParams {
  std::string raceId;
};

struct TestCounts {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
};

struct LintCounts {
  int errors = 0;
  int warnings = 0;
};

// One run of a configured check (build, tests or lint).
struct CheckResult {
  std::string command;
  bool skipped = false;         // not run because the build failed
  std::optional<int> exitCode;  // null when it did not exit normally
  std::optional<int> signal;
  bool timedOut = false;
  std::optional<std::string> error;  // could not run at all
  std::int64_t durationMs = 0;
  std::string output;  // the end of the output; hydra keeps all of it in the race's checks/ logs
  bool outputTruncated = false;
  std::optional<TestCounts> tests;  // null when no counts were read
  std::optional<LintCounts> lint;
  std::string format;  // the parser that read the counts
};

// A member is null when that check is not configured.
struct CheckSet {
  std::optional<CheckResult> build;
  std::optional<CheckResult> tests;
  std::optional<CheckResult> lint;
};

// Each member is 0..100, or null when that dimension is excluded.
struct ScoreBreakdown {
  std::optional<double> build;
  std::optional<double> tests;
  std::optional<double> lint;
  std::optional<double> diffSize;
  std::optional<double> speed;
};

struct DiffStats {
  int linesAdded = 0;
  int linesRemoved = 0;
  int filesChanged = 0;
};

struct Ranking {
  int rank = 0;
  std::string agentId;
  std::string agent;
  std::string status;  // the agent's final state
  double total = 0;
  ScoreBreakdown breakdown;
  CheckSet checks;
  DiffStats diff;
  std::optional<std::int64_t> durationMs;
};

struct Baseline {
  std::string commit;
  CheckSet checks;
  bool fromCache = false;
};

struct ScoresResult {
  std::string raceId;
  std::vector<Ranking> rankings;      // best first
  std::optional<std::string> winner;  // null when nobody ranked
  Baseline baseline;
  bool autoMergeEligible = false;
  bool allFailed = false;
};

// --- hydra/diff --------------------------------------------------------------

struct DiffParams {
  std::string raceId;
  std::string agentId;
  std::optional<std::string> path;  // present: both versions of this one file
};

struct FileChange {
  std::string path;
  std::optional<std::string> oldPath;  // renames only
  std::string status;                  // added, modified, deleted, renamed, typechange
  int additions = 0;
  int deletions = 0;
  bool binary = false;
};

struct DiffResult {
  std::vector<FileChange> files;
  int additions = 0;
  int deletions = 0;
  std::string patch;  // git's unified format
};

// Both versions of one changed file. Contents are UTF-8 text, or base64 when
// `encoding` says so (binary files, text that is not UTF-8).
struct FileContentsResult {
  std::string path;
  std::optional<std::string> base;   // null when the agent added the file
  std::optional<std::string> agent;  // null when the agent deleted it
  bool binary = false;
  std::string encoding = "utf-8";  // "utf-8" or "base64"
};

// --- hydra/merge -------------------------------------------------------------

struct MergeParams {
  std::string raceId;
  std::optional<std::string> agentId;  // default: the race's winner
  bool dryRun = false;
  bool keep = false;  // keep the race's worktrees and branches after merging
};

struct MergeResult {
  std::string outcome;  // fastForward, merged, conflict, upToDate
  std::string agentId;
  std::string branch;        // merged from
  std::string targetBranch;  // merged into
  bool dryRun = false;
  std::vector<std::string> files;      // what the merge changes (or would)
  std::vector<std::string> conflicts;  // outcome conflict only
  std::optional<std::string> commit;   // the new HEAD, when it moved
  bool cleanedUp = false;              // the race's worktrees and branches were removed
};

// --- hydra/log ---------------------------------------------------------------

struct LogParams {
  std::string raceId;
  std::string agentId;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> limit;  // capped by the server
  std::string stream = "stdout";       // stdout or stderr
};

struct LogResult {
  std::string data;  // UTF-8; bytes that are not become U+FFFD
  std::uint64_t offset = 0;
  std::uint64_t totalSize = 0;
  std::uint64_t nextOffset = 0;  // where the next read starts; == totalSize at the end
};

// --- hydra/cleanup -----------------------------------------------------------

struct CleanupParams {
  std::optional<std::string> raceId;  // absent: every race that is not running
  bool keepBranches = false;
};

struct CleanupResult {
  std::vector<std::string> removed;  // worktree paths
};

// --- notifications -----------------------------------------------------------

struct AgentStartedParams {
  std::string raceId;
  std::string agentId;
  std::string agent;
  std::string branch;
  std::string worktree;
};

struct Usage {
  std::optional<std::int64_t> inputTokens;
  std::optional<std::int64_t> outputTokens;
  std::optional<std::int64_t> cachedInputTokens;
  std::optional<double> costUsd;
};

// What an adapter made of the agent's output. `kind` is text, toolCall,
// toolResult, fileChange, usage, error, summary or raw; members that do not
// apply to the kind are absent.
struct AgentEvent {
  std::string kind;
  std::optional<std::string> text;
  std::optional<std::string> tool;
  std::optional<std::string> detail;
  std::optional<std::string> path;
  std::optional<std::string> change;
  std::optional<bool> isError;
  std::optional<Usage> usage;
  std::optional<int> turns;
  std::optional<std::vector<std::string>> warnings;
};

struct AgentOutputParams {
  std::string raceId;
  std::string agentId;
  std::string stream;  // stdout or stderr
  std::vector<std::string> lines;
  std::vector<AgentEvent> events;
  std::optional<std::uint64_t> droppedLines;  // lines left out here; hydra/log has them
};

struct AgentFinishedParams {
  std::string raceId;
  std::string agentId;
  std::string status;           // completed, failed, timedOut, cancelled
  std::optional<int> exitCode;  // null when it did not exit normally
  std::int64_t durationMs = 0;
  std::optional<Usage> usage;
  std::optional<std::string> error;
};

struct ScoringStartedParams {
  std::string raceId;
};

struct RaceFinishedParams {
  std::string raceId;
  std::string status;                 // completed, cancelled, interrupted, failed
  std::vector<Ranking> rankings;      // empty when the race was not scored
  std::optional<std::string> winner;  // null when not scored
  bool autoMergeEligible = false;
  bool allFailed = false;
};

#define HYDRA_WIRE_TYPE(T)                                           \
  void tag_invoke(json::value_from_tag, json::value& v, const T& x); \
  T tag_invoke(json::value_to_tag<T>, const json::value& v)

HYDRA_WIRE_TYPE(HydraCapabilities);
HYDRA_WIRE_TYPE(AgentInfo);
HYDRA_WIRE_TYPE(AgentsResult);
HYDRA_WIRE_TYPE(RaceParams);
HYDRA_WIRE_TYPE(RaceAgent);
HYDRA_WIRE_TYPE(RaceResult);
HYDRA_WIRE_TYPE(StatusParams);
HYDRA_WIRE_TYPE(AgentState);
HYDRA_WIRE_TYPE(RaceSummary);
HYDRA_WIRE_TYPE(StatusResult);
HYDRA_WIRE_TYPE(RacesParams);
HYDRA_WIRE_TYPE(RacesResult);
HYDRA_WIRE_TYPE(CancelRaceParams);
HYDRA_WIRE_TYPE(CancelRaceResult);
HYDRA_WIRE_TYPE(RaceIdParams);
HYDRA_WIRE_TYPE(TestCounts);
HYDRA_WIRE_TYPE(LintCounts);
HYDRA_WIRE_TYPE(CheckResult);
HYDRA_WIRE_TYPE(CheckSet);
HYDRA_WIRE_TYPE(ScoreBreakdown);
HYDRA_WIRE_TYPE(DiffStats);
HYDRA_WIRE_TYPE(Ranking);
HYDRA_WIRE_TYPE(Baseline);
HYDRA_WIRE_TYPE(ScoresResult);
HYDRA_WIRE_TYPE(DiffParams);
HYDRA_WIRE_TYPE(FileChange);
HYDRA_WIRE_TYPE(DiffResult);
HYDRA_WIRE_TYPE(FileContentsResult);
HYDRA_WIRE_TYPE(MergeParams);
HYDRA_WIRE_TYPE(MergeResult);
HYDRA_WIRE_TYPE(LogParams);
HYDRA_WIRE_TYPE(LogResult);
HYDRA_WIRE_TYPE(CleanupParams);
HYDRA_WIRE_TYPE(CleanupResult);
HYDRA_WIRE_TYPE(AgentStartedParams);
HYDRA_WIRE_TYPE(Usage);
HYDRA_WIRE_TYPE(AgentEvent);
HYDRA_WIRE_TYPE(AgentOutputParams);
HYDRA_WIRE_TYPE(AgentFinishedParams);
HYDRA_WIRE_TYPE(ScoringStartedParams);
HYDRA_WIRE_TYPE(RaceFinishedParams);

#undef HYDRA_WIRE_TYPE

}  // namespace hydra::protocol
