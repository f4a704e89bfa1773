#pragma once

// The record of one race, as kept in `.hydra/races/<id>/race.json`: enough to
// list past races, show their agents, and recover after hydra died mid-race.
// It is what the race's events add up to (RaceRecord::apply).
// The JSON form uses camelCase names, like the protocol; absent optionals are
// left out; timestamps are ISO 8601 UTC with milliseconds.

#include <boost/json/conversion.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/adapter/event.h"
#include "core/events/events.h"
#include "core/util/json_fields.h"
#include "core/util/owner.h"
#include "core/util/timestamp.h"

namespace hydra::core {

// An agent's result taken into the user's branch, by `hydra merge`,
// hydra/merge or [scoring] auto_merge: the race's results are then history.
struct MergeRecord {
  std::string agentId;
  std::string outcome;       // fastForward, merged or upToDate
  std::string targetBranch;  // the branch it went into
  std::optional<std::string> commit;  // HEAD after the merge, when it moved
  Timestamp mergedAt;
  bool automatic = false;  // by [scoring] auto_merge

  friend bool operator==(const MergeRecord&, const MergeRecord&) = default;
};

struct AgentRecord {
  std::string agentId;  // unique within the race, [A-Za-z0-9_-]+
  std::string agent;    // the configured agent name
  std::string adapter;
  std::string branch;
  std::string worktree;
  AgentStatus status = AgentStatus::Queued;
  std::optional<int> pid;
  // /proc/<pid>/stat starttime of `pid`, to tell it from a later process that
  // reused the number.
  std::optional<std::uint64_t> pidStartTime;
  std::optional<int> processGroup;
  std::optional<int> exitCode;
  std::optional<int> signal;
  std::optional<Timestamp> startedAt;
  std::optional<Timestamp> finishedAt;
  std::optional<std::int64_t> durationMs;
  std::optional<std::string> commit;  // the commit holding the agent's result
  std::optional<Usage> usage;
  std::optional<std::string> error;
  std::vector<std::string> warnings;     // what the CLI's summary reported
  std::string stderrTail;                // the last lines of its stderr
  int deniedToolCalls = 0;               // tool calls its CLI refused
  std::string finalMessage;              // its last word, from its summary
  std::optional<std::string> sessionId;  // for CLIs that can continue a session
  std::vector<std::string> escapes;       // what it changed outside its worktree (AgentFinished::escapes)

  friend bool operator==(const AgentRecord&, const AgentRecord&);
};

struct RaceRecord : RunHeader {
  std::string id;
  std::optional<Timestamp> finishedAt;
  // A running race whose hydra process (RunHeader::hydraOwner) is gone, or
  // whose pid now names another process, was interrupted.
  RaceStatus status = RaceStatus::Running;
  std::vector<AgentRecord> agents;
  std::optional<AutoMergeOutcome> autoMerge;
  std::optional<MergeRecord> merged;  // once one of its agents was merged
  // A collaboration (kind "collab"): its iterations so far, and why its loop
  // stopped (its settings are the header's).
  std::vector<IterationResult> iterations;
  std::optional<std::string> stopReason;

  const IterationResult* findIteration(int iteration) const;

  // The record as its RaceStarted event describes it.
  static RaceRecord started(const RaceStarted& event);
  // Brings the record up to date with one of its race's events: the one place
  // that says how an event changes a record, for the engine's live copy and for
  // the store's alike. Events of other races, and output, change nothing.
  void apply(const RaceEventBody& event);

  AgentRecord* findAgent(std::string_view agentId);
  const AgentRecord* findAgent(std::string_view agentId) const;

  friend bool operator==(const RaceRecord&, const RaceRecord&);
};

// True for the outcomes of a merge that took the agent's result: fastForward,
// merged, upToDate.
bool isMergedOutcome(std::string_view outcome);

// A race.json that does not hold a race record; what() names the field.
using RecordError = JsonFieldError;

void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const MergeRecord& merged);
// Throws RecordError.
MergeRecord readMergeRecord(const JsonFields& fields);
void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const AgentRecord& agent);
void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const RaceRecord& race);
// Throw RecordError.
AgentRecord tag_invoke(boost::json::value_to_tag<AgentRecord>, const boost::json::value& in);
RaceRecord tag_invoke(boost::json::value_to_tag<RaceRecord>, const boost::json::value& in);

}  // namespace hydra::core
