#pragma once

// Wire types of hydra's own methods: the params each hydra/* request takes,
// decoded strictly (a bad field is -32602 with its JSON path), and what
// initialize announces. Plain structs with the wire's camelCase names;
// docs/protocol.md shows each with an example. Like the rest of protocol/,
// nothing here knows about git, processes or races.
//
// Results and notifications are not declared here: they are core's typed
// results and events, in the one JSON form core gives each (core/workspace/
// results.h, core/events/events.h), which the records and the terminal's
// --json use too.

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
  std::vector<std::string> agents;   // every agent name hydra/race accepts: hydra.toml's, then the built-in adapters
  std::vector<std::string> methods;  // every hydra/* request the server answers
};

// --- hydra/race --------------------------------------------------------------

struct RaceParams {
  std::string task;                            // not blank
  std::vector<std::string> agents;             // names; one may repeat; not empty
  std::optional<std::string> base;             // commit or ref; default HEAD
  std::optional<std::string> executor;         // "local" or "slurm"; default [executor] kind
  std::optional<ProgressToken> workDoneToken;  // LSP's WorkDoneProgressParams
};

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
};

// --- hydra/status, hydra/races -----------------------------------------------

struct StatusParams {
  std::optional<std::string> raceId;
};

struct RacesParams {
  std::int64_t offset = 0;  // >= 0
  std::int64_t limit = 50;  // 1..500
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

// --- hydra/diff --------------------------------------------------------------

struct DiffParams {
  std::string raceId;
  std::string agentId;
  std::optional<std::string> path;  // present: both versions of this one file
};

// --- hydra/merge -------------------------------------------------------------

struct MergeParams {
  std::string raceId;
  std::optional<std::string> agentId;  // default: the race's winner
  bool dryRun = false;
  bool keep = false;  // keep the race's worktrees and branches after merging
  bool force = false;  // merge an agent that is not a safe pick (not the winner, a failed check, flagged)
};

// --- hydra/log ---------------------------------------------------------------

struct LogParams {
  std::string raceId;
  std::string agentId;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> limit;  // capped by the server
  std::string stream = "stdout";       // stdout or stderr
};

// --- hydra/cleanup -----------------------------------------------------------

struct CleanupParams {
  std::optional<std::string> raceId;  // absent: every race that is not running
  bool keepBranches = false;
  bool pool = false;  // also remove the pooled worktrees ([general] pool_size)
};

// --- hydra/agentEvents -------------------------------------------------------

struct AgentEventsParams {
  std::string raceId;
  std::string agentId;
  std::uint64_t offset = 0;            // the index of the first event
  std::optional<std::uint64_t> limit;  // capped by the server
};

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
};

struct EvalReportParams {
  std::optional<std::string> report;  // a report's path, relative to the repository root
  std::optional<std::string> evalId;  // an evaluation of this session
  std::string format = "json";        // json, or text / markdown for `text` too
};

struct EvalIdParams {
  std::string evalId;
};

#define HYDRA_WIRE_TYPE(T)                                           \
  void tag_invoke(json::value_from_tag, json::value& v, const T& x); \
  T tag_invoke(json::value_to_tag<T>, const json::value& v)

HYDRA_WIRE_TYPE(HydraCapabilities);
HYDRA_WIRE_TYPE(RaceParams);
HYDRA_WIRE_TYPE(CollabParams);
HYDRA_WIRE_TYPE(StatusParams);
HYDRA_WIRE_TYPE(RacesParams);
HYDRA_WIRE_TYPE(CancelRaceParams);
HYDRA_WIRE_TYPE(CancelRaceResult);
HYDRA_WIRE_TYPE(RaceIdParams);
HYDRA_WIRE_TYPE(DiffParams);
HYDRA_WIRE_TYPE(MergeParams);
HYDRA_WIRE_TYPE(LogParams);
HYDRA_WIRE_TYPE(CleanupParams);
HYDRA_WIRE_TYPE(AgentEventsParams);
HYDRA_WIRE_TYPE(EvalRunParams);
HYDRA_WIRE_TYPE(EvalReportParams);
HYDRA_WIRE_TYPE(EvalIdParams);

#undef HYDRA_WIRE_TYPE

}  // namespace hydra::protocol
