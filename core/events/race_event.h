#pragma once

// What happens during a race, as live views (the server, the CLI) see it, and
// the status words shared with the race records on disk.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/adapter/event.h"
#include "core/process/output_stream.h"

namespace hydra::core {

enum class RaceStatus { Running, Completed, Interrupted, Cancelled, Failed };

enum class AgentStatus { Queued, Running, Completed, Failed, TimedOut, Cancelled, Interrupted };


// Wire words: running, completed, interrupted, cancelled, failed; queued,
// timedOut; stdout, stderr. parse* give nullopt for anything else.
std::string_view toString(RaceStatus status);
std::string_view toString(AgentStatus status);
std::optional<RaceStatus> parseRaceStatus(std::string_view text);
std::optional<AgentStatus> parseAgentStatus(std::string_view text);

struct RaceStarted {
  std::string raceId;
  std::string task;
  std::string baseRef;
  std::string baseCommit;
};

struct AgentStarted {
  std::string raceId;
  std::string agentId;
  std::string agent;  // the configured agent name
  std::string branch;
  std::string worktree;
};

// One line an agent printed, and what its adapter made of it.
struct AgentOutput {
  std::string raceId;
  std::string agentId;
  OutputStream stream = OutputStream::Stdout;
  std::string line;
  std::vector<AgentEvent> events;
};

struct AgentFinished {
  std::string raceId;
  std::string agentId;
  AgentStatus status = AgentStatus::Completed;  // completed, failed, timedOut or cancelled
  std::optional<int> exitCode;
  std::optional<int> signal;
  std::int64_t durationMs = 0;
  std::optional<Usage> usage;
  std::optional<std::string> error;
};

// Every agent has finished; their results are being built, tested, linted and scored.
struct ScoringStarted {
  std::string raceId;
};

// The race is over (scored, unless it was cancelled or interrupted).
struct RaceFinished {
  std::string raceId;
  RaceStatus status = RaceStatus::Completed;
};

// Made by the bus, never published: `lines` AgentOutput events of this agent
// were dropped for this subscriber because it fell behind. It arrives where the
// gap was: before the agent's next delivered event, or once the queue empties.
struct OutputDropped {
  std::string raceId;
  std::string agentId;
  std::uint64_t lines = 0;
};

using RaceEventBody = std::variant<RaceStarted, AgentStarted, AgentOutput, AgentFinished,
                                   ScoringStarted, RaceFinished, OutputDropped>;

struct RaceEvent {
  std::uint64_t seq = 0;  // assigned by the bus, strictly increasing
  std::chrono::system_clock::time_point time;
  RaceEventBody body;
};

// Output is the only kind of event a lagging subscriber may lose.
inline bool isDroppable(const RaceEventBody& body) {
  return std::holds_alternative<AgentOutput>(body);
}

}  // namespace hydra::core
