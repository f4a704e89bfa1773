#pragma once

// What the workspace's operations answer, typed, each with its one JSON form
// (its described members, read and written by protocol/wire.h, or the
// tag_invoke pairs below where the form has rules of its own): the
// terminal's `--json`, the protocol's results and the records all write
// these, so they cannot drift apart. The protocol may add members; it never
// renames one (docs/protocol.md).

#include <boost/describe/class.hpp>
#include <boost/json/conversion.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/adapter/event.h"
#include "core/merge/diff.h"
#include "core/merge/merge.h"
#include "core/process/resource_limits.h"
#include "core/records/record.h"
#include "core/scoring/scores.h"
#include "core/util/json_fields.h"

namespace hydra::core {

// An agent hydra can run here (hydra/agents, `hydra agents`).
struct AgentInfo {
  std::string name;
  std::string adapter;
  std::string binary;       // as configured
  bool configured = false;  // has an [agents.NAME] table
  bool available = false;
  std::optional<std::string> version;  // the first line of its version output
  std::optional<std::string> path;     // where the binary is, when available
  std::optional<std::string> problem;  // why it is not available

  static constexpr std::string_view wireRequired[] = {"name", "adapter", "binary"};
  static constexpr std::string_view wireNullable[] = {"version"};
};
BOOST_DESCRIBE_STRUCT(AgentInfo, (), (name, adapter, binary, configured, available, version, path, problem))

// How agents run here now (`hydra sandbox`): with hydra.toml's [general]
// sandbox and what the probe found.
// The per-agent limits races here would run under (docs/configuration.md,
// Per-agent limits), and how they are held.
struct LimitsStatus {
  std::string mechanism;  // "cgroup v2", "cgroup v1" or "rlimits"
  std::string detail;     // a cgroup: where; rlimits: why no cgroup
  ResourceLimits defaults;                        // [general]'s, defaults applied
  std::map<std::string, ResourceLimits> agents;   // each configured agent's, where it differs
  std::string summary;    // for people: "memory 4 GiB, 4096 processes, CPU unlimited; held by a cgroup v1 per run"
};

struct SandboxStatus {
  std::string mode;       // as asked: "auto", "bubblewrap" or "off"
  bool confined = false;  // races run under bubblewrap
  bool refused = false;   // races are refused: bubblewrap was asked for and does not work
  std::string summary;    // for people: "confined by bubblewrap (/usr/bin/bwrap)", ...
  LimitsStatus limits;

  static constexpr std::string_view wireRequired[] = {"mode", "summary"};
};
BOOST_DESCRIBE_STRUCT(SandboxStatus, (), (mode, confined, refused, summary, limits))

// One agent of a race as a person wants to see it.
struct AgentState {
  std::string agentId;
  std::string agent;
  // queued, running, completed, failed, timedOut, cancelled, interrupted,
  // setupFailed; notNeeded: a collaboration's reviewer that never had to run.
  std::string state;
  std::int64_t elapsedMs = 0;
  std::optional<int> exitCode;
  std::string branch;
  std::string worktree;
  std::optional<std::string> commit;
  std::optional<std::string> error;
  std::vector<std::string> warnings;  // what its CLI reported (permission denials, model errors)
  std::string stderrTail;             // the last lines its CLI wrote to stderr
  int deniedToolCalls = 0;
  std::optional<int> rank;      // once scored
  std::optional<double> total;  // once scored

  static constexpr std::string_view wireRequired[] = {"agentId", "agent", "state"};
  static constexpr std::string_view wireOmitDefault[] = {"warnings", "stderrTail", "deniedToolCalls"};
};
BOOST_DESCRIBE_STRUCT(AgentState, (), (agentId, agent, state, elapsedMs, exitCode, branch, worktree, commit, error, warnings, stderrTail, deniedToolCalls, rank, total))

// A race as hydra/status and `hydra status` show it.
// A race as hydra/status and `hydra status` show it: its header
// (RunHeaderForm::Public on the wire: not its repository, process or
// SLURM_CONF) and where it stands.
struct RaceSummary : RunHeader {
  std::string raceId;
  std::string state;  // running, scoring, completed, cancelled, interrupted, failed
  std::optional<Timestamp> finishedAt;
  std::vector<AgentState> agents;
  std::optional<std::string> winner;  // once scored
  bool allFailed = false;
  std::optional<MergeRecord> merged;   // once one of its agents was merged
  // A collaboration (its settings are the header's): why it stopped, and its
  // iterations as `hydra/status` shows them ({iteration, commit?,
  // builderStatus, resumed, score? (the total), breakdown?, review?,
  // reviewStatus?, approved, stopReason?}; iterationSummary()).
  std::optional<std::string> stopReason;
  boost::json::array iterations;
};

// One iteration of a collaboration as RaceSummary lists it: the record's
// form with the score reduced to its total and breakdown.
boost::json::object iterationSummary(const IterationResult& iteration);

struct RacePage {
  std::vector<RaceSummary> races;
  std::int64_t total = 0;
  std::optional<std::int64_t> nextOffset;  // absent on the last page

  static constexpr std::string_view wireRequired[] = {"total"};
};
BOOST_DESCRIBE_STRUCT(RacePage, (), (races, total, nextOffset))

// What an agent changed (hydra/diff without a path).
struct DiffResult {
  std::vector<merge::FileChange> files;
  int additions = 0;
  int deletions = 0;
  std::string patch;

  static constexpr std::string_view wireRequired[] = {"additions", "deletions"};
};
BOOST_DESCRIBE_STRUCT(DiffResult, (), (files, additions, deletions, patch))

// Both versions of one changed file (hydra/diff with a path). Contents are
// UTF-8 text, or base64 when `encoding` says so.
struct FileContents {
  std::string path;
  std::optional<std::string> base;   // null when the agent added the file
  std::optional<std::string> agent;  // null when the agent deleted it
  bool binary = false;
  std::string encoding = "utf-8";  // utf-8 or base64

  static constexpr std::string_view wireRequired[] = {"path"};
  static constexpr std::string_view wireNullable[] = {"base", "agent"};
};
BOOST_DESCRIBE_STRUCT(FileContents, (), (path, base, agent, binary, encoding))

struct MergeReport {
  std::string outcome;  // fastForward, merged, conflict, upToDate
  std::string agentId;
  std::string branch;
  std::string targetBranch;
  bool dryRun = false;
  std::vector<std::string> files;
  std::vector<std::string> conflicts;
  std::optional<std::string> commit;
  bool cleanedUp = false;
  // What speaks against merging this agent (mergeConcerns): said by a dry run,
  // and what a merge without `force` refuses on.
  std::vector<std::string> concerns;

  static constexpr std::string_view wireRequired[] = {"outcome", "agentId", "branch", "targetBranch"};
  static constexpr std::string_view wireOmitDefault[] = {"concerns"};
};
BOOST_DESCRIBE_STRUCT(MergeReport, (), (outcome, agentId, branch, targetBranch, dryRun, files, conflicts, commit, cleanedUp, concerns))

// A byte range of a log, as text.
struct LogText {
  std::string data;  // UTF-8; bytes that are not become U+FFFD
  std::uint64_t offset = 0;
  std::uint64_t totalSize = 0;
  std::uint64_t nextOffset = 0;  // == totalSize at the end

  static constexpr std::string_view wireRequired[] = {"data", "offset", "totalSize", "nextOffset"};
};
BOOST_DESCRIBE_STRUCT(LogText, (), (data, offset, totalSize, nextOffset))

// What an agent's adapter read from its output, as stored: a page of them.
struct AgentEventsResult {
  std::vector<AgentEvent> events;
  std::vector<OutputStream> streams;  // each event's stream, in the same order
  std::uint64_t offset = 0;
  std::uint64_t total = 0;
  std::optional<std::uint64_t> nextOffset;  // absent on the last page
};

struct CleanupReport {
  std::vector<std::string> removed;  // worktree paths no longer there
  std::vector<std::string> pooled;   // of those, the ones kept in the warm pool for later races
  std::vector<std::string> poolRemoved;  // pooled worktrees removed (cleanup --pool)
  std::uintmax_t poolBytesFreed = 0;
};
BOOST_DESCRIBE_STRUCT(CleanupReport, (), (removed, pooled, poolRemoved, poolBytesFreed))

// The warm pool of worktrees ([general] pool_size) as `hydra status` shows it.
struct PoolStatus {
  std::size_t worktrees = 0;
  std::uintmax_t bytes = 0;  // on disk, as measured when each was pooled
  std::size_t size = 0;      // [general] pool_size
};
BOOST_DESCRIBE_STRUCT(PoolStatus, (), (worktrees, bytes, size))

#define HYDRA_RESULT_TYPE(T)                                                                 \
  void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const T& x); \
  T tag_invoke(boost::json::value_to_tag<T>, const boost::json::value& in)

HYDRA_RESULT_TYPE(LimitsStatus);
HYDRA_RESULT_TYPE(RaceSummary);
HYDRA_RESULT_TYPE(AgentEventsResult);

#undef HYDRA_RESULT_TYPE

}  // namespace hydra::core

namespace hydra::core::merge {
void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const FileChange& x);
FileChange tag_invoke(boost::json::value_to_tag<FileChange>, const boost::json::value& in);
}  // namespace hydra::core::merge
