#pragma once

// Wire types of hydra's own methods: the params each hydra/* request takes,
// decoded strictly (a bad field is -32602 with its JSON path), and what
// initialize announces. Plain structs with the wire's camelCase names,
// described for protocol/wire.h, which reads and writes them: a field is
// added in its struct and its BOOST_DESCRIBE_STRUCT list (plus
// protocol/params.json for a request's params), and checkWire holds a
// type's own rules; docs/protocol.md shows each with an example. Like the rest of protocol/,
// nothing here knows about git, processes or races.
//
// Results and notifications are not declared here: they are core's typed
// results and events, in the one JSON form core gives each (core/workspace/
// results.h, core/events/events.h), which the records and the terminal's
// --json use too.

#include <boost/describe/class.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/lifecycle.h"
#include "protocol/wire.h"

namespace hydra::protocol {

namespace json = boost::json;

// --- initialize --------------------------------------------------------------

// InitializeResult.capabilities.hydra
struct HydraCapabilities {
  std::string version;
  std::vector<std::string> agents;   // every agent name hydra/race accepts: hydra.toml's, then the built-in adapters
  std::vector<std::string> methods;  // every hydra/* request the server answers

  static constexpr std::string_view wireRequired[] = {"version"};
};
BOOST_DESCRIBE_STRUCT(HydraCapabilities, (), (version, agents, methods))

// --- hydra/race --------------------------------------------------------------

struct RaceParams {
  std::string task;                            // not blank
  std::vector<std::string> agents;             // names; one may repeat; not empty
  std::optional<std::string> base;             // commit or ref; default HEAD
  std::optional<std::string> executor;         // "local" or "slurm"; default [executor] kind
  std::optional<ProgressToken> workDoneToken;  // LSP's WorkDoneProgressParams

  static constexpr std::string_view wireRequired[] = {"task", "agents"};
};
BOOST_DESCRIBE_STRUCT(RaceParams, (), (task, agents, base, executor, workDoneToken))
void checkWire(const RaceParams& x);

// --- hydra/collab ---------------------------------------------------------------

struct CollabParams {
  std::string task;                            // not blank
  std::optional<std::string> builder;          // default: [collaboration] builder
  std::optional<std::string> reviewer;         // default: [collaboration] reviewer
  std::optional<int> maxIterations;            // >= 1
  std::optional<double> untilScore;            // 0..100
  std::optional<std::string> base;             // commit or ref; default HEAD
  std::optional<std::string> executor;         // "local" or "slurm"; default [executor] kind
  std::optional<ProgressToken> workDoneToken;  // LSP's WorkDoneProgressParams

  static constexpr std::string_view wireRequired[] = {"task"};
};
BOOST_DESCRIBE_STRUCT(CollabParams, (), (task, builder, reviewer, maxIterations, untilScore, base, executor, workDoneToken))
void checkWire(const CollabParams& x);

// --- hydra/status, hydra/races -----------------------------------------------

struct StatusParams {
  std::optional<std::string> raceId;
};
BOOST_DESCRIBE_STRUCT(StatusParams, (), (raceId))

struct RacesParams {
  std::int64_t offset = 0;  // >= 0
  std::int64_t limit = 50;  // 1..500
};
BOOST_DESCRIBE_STRUCT(RacesParams, (), (offset, limit))
void checkWire(const RacesParams& x);

// --- hydra/cancel ------------------------------------------------------------

struct CancelRaceParams {
  std::string raceId;
  std::optional<std::string> agentId;  // absent: the whole race

  static constexpr std::string_view wireRequired[] = {"raceId"};
};
BOOST_DESCRIBE_STRUCT(CancelRaceParams, (), (raceId, agentId))

struct CancelRaceResult {
  bool cancelled = false;

  static constexpr std::string_view wireRequired[] = {"cancelled"};
};
BOOST_DESCRIBE_STRUCT(CancelRaceResult, (), (cancelled))

// --- hydra/scores ------------------------------------------------------------

struct RaceIdParams {
  std::string raceId;

  static constexpr std::string_view wireRequired[] = {"raceId"};
};
BOOST_DESCRIBE_STRUCT(RaceIdParams, (), (raceId))

// --- hydra/diff --------------------------------------------------------------

struct DiffParams {
  std::string raceId;
  std::string agentId;
  std::optional<std::string> path;  // present: both versions of this one file

  static constexpr std::string_view wireRequired[] = {"raceId", "agentId"};
};
BOOST_DESCRIBE_STRUCT(DiffParams, (), (raceId, agentId, path))

// --- hydra/merge -------------------------------------------------------------

struct MergeParams {
  std::string raceId;
  std::optional<std::string> agentId;  // default: the race's winner
  bool dryRun = false;
  bool keep = false;  // keep the race's worktrees and branches after merging
  bool force = false;  // merge an agent that is not a safe pick (not the winner, a failed check, flagged)

  static constexpr std::string_view wireRequired[] = {"raceId"};
};
BOOST_DESCRIBE_STRUCT(MergeParams, (), (raceId, agentId, dryRun, keep, force))

// --- hydra/log ---------------------------------------------------------------

struct LogParams {
  std::string raceId;
  std::string agentId;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> limit;  // capped by the server
  std::string stream = "stdout";       // stdout or stderr

  static constexpr std::string_view wireRequired[] = {"raceId", "agentId"};
};
BOOST_DESCRIBE_STRUCT(LogParams, (), (raceId, agentId, offset, limit, stream))
void checkWire(const LogParams& x);

// --- hydra/cleanup -----------------------------------------------------------

struct CleanupParams {
  std::optional<std::string> raceId;  // absent: every race that is not running
  bool keepBranches = false;
  bool pool = false;  // also remove the pooled worktrees ([general] pool_size)
};
BOOST_DESCRIBE_STRUCT(CleanupParams, (), (raceId, keepBranches, pool))

// --- hydra/agentEvents -------------------------------------------------------

struct AgentEventsParams {
  std::string raceId;
  std::string agentId;
  std::uint64_t offset = 0;            // the index of the first event
  std::optional<std::uint64_t> limit;  // capped by the server

  static constexpr std::string_view wireRequired[] = {"raceId", "agentId"};
};
BOOST_DESCRIBE_STRUCT(AgentEventsParams, (), (raceId, agentId, offset, limit))
void checkWire(const AgentEventsParams& x);

// --- hydra/evalRun, hydra/evalReport, hydra/evalCancel -----------------------

struct EvalRunParams {
  std::string set;                             // the eval set's file, relative to the repository root
  std::vector<std::string> agents;             // empty: the set's [eval] agents
  std::optional<int> samples;                  // >= 1; default: the set's
  std::vector<int> passK;                      // each >= 1; empty: the set's
  std::optional<std::string> out;              // the report's path; default .hydra/evals/NAME-TIME.json
  std::optional<std::string> resume;           // a report of an unfinished run of the same set
  std::optional<std::string> executor;         // "local" or "slurm"; default [executor] kind
  std::optional<ProgressToken> workDoneToken;  // LSP's WorkDoneProgressParams

  static constexpr std::string_view wireRequired[] = {"set"};
};
BOOST_DESCRIBE_STRUCT(EvalRunParams, (), (set, agents, samples, passK, out, resume, executor, workDoneToken))
void checkWire(const EvalRunParams& x);

struct EvalReportParams {
  std::optional<std::string> report;  // a report's path, relative to the repository root
  std::optional<std::string> evalId;  // an evaluation of this session
  std::string format = "json";        // json, or text / markdown for `text` too
};
BOOST_DESCRIBE_STRUCT(EvalReportParams, (), (report, evalId, format))
void checkWire(const EvalReportParams& x);

struct EvalIdParams {
  std::string evalId;

  static constexpr std::string_view wireRequired[] = {"evalId"};
};
BOOST_DESCRIBE_STRUCT(EvalIdParams, (), (evalId))
void checkWire(const EvalIdParams& x);

}  // namespace hydra::protocol
