#pragma once

// The record of one race, as kept in `.hydra/races/<id>/race.json`: enough to
// list past races, show their agents, and recover after hydra died mid-race.
// The JSON form uses camelCase names, like the protocol; absent optionals are
// left out; timestamps are ISO 8601 UTC with milliseconds.

#include <boost/json/conversion.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/adapter/event.h"
#include "core/events/race_event.h"

namespace hydra::core {

using Timestamp = std::chrono::system_clock::time_point;

// "2026-11-21T11:05:01.123Z" (milliseconds, truncated).
std::string formatTimestamp(Timestamp time);
// The form formatTimestamp writes; the fraction may have 0 to 9 digits. nullopt
// for anything else (other offsets than Z included).
std::optional<Timestamp> parseTimestamp(std::string_view text);
// Now, truncated to what the records keep, so a saved and reloaded time compares equal.
Timestamp recordNow();

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

  friend bool operator==(const AgentRecord&, const AgentRecord&);
};

struct RaceRecord {
  std::string id;
  std::string task;
  std::string baseRef;
  std::string baseCommit;
  std::string repoRoot;
  Timestamp createdAt;
  std::optional<Timestamp> finishedAt;
  RaceStatus status = RaceStatus::Running;
  // The hydra process running the race, and its /proc starttime: a running race
  // whose process is gone (or whose pid now names another process) was interrupted.
  int hydraPid = 0;
  std::uint64_t hydraStartTime = 0;
  std::vector<AgentRecord> agents;

  AgentRecord* findAgent(std::string_view agentId);
  const AgentRecord* findAgent(std::string_view agentId) const;

  friend bool operator==(const RaceRecord&, const RaceRecord&);
};

// A race.json that does not hold a race record; what() names the field.
class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const AgentRecord& agent);
void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const RaceRecord& race);
// Throw RecordError.
AgentRecord tag_invoke(boost::json::value_to_tag<AgentRecord>, const boost::json::value& in);
RaceRecord tag_invoke(boost::json::value_to_tag<RaceRecord>, const boost::json::value& in);

}  // namespace hydra::core
