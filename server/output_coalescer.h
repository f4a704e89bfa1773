#pragma once

// Agents print line by line, sometimes thousands of lines a second; editors
// want a few notifications a second. OutputCoalescer gathers each agent's
// lines (per stream) into batches that become one hydra/agentOutput each: a
// batch is due ~50 ms after its first line, or at once when it holds ~64 KB.
//
// It is a plain data structure with the clock passed in, so its policy can be
// tested without timers; the server drives it from its io thread.

#include <boost/json/value.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/adapter/event.h"
#include "core/process/output_stream.h"

namespace hydra::server {

// What one hydra/agentOutput notification carries.
struct OutputBatch {
  std::string raceId;
  std::string agentId;
  core::OutputStream stream = core::OutputStream::Stdout;
  std::vector<std::string> lines;
  std::vector<core::AgentEvent> events;
  std::uint64_t droppedLines = 0;  // lines left out (the client is behind); the log has them
  std::size_t bytes = 0;           // an estimate of what the batch holds

  // Keeps only the count: for a client too far behind to be sent the lines.
  void dropContent();
  // The params of its hydra/agentOutput notification: {raceId, agentId,
  // stream, lines, events, droppedLines?}, each event in AgentEvent's one JSON form.
  boost::json::value toJson() const;
  bool empty() const { return lines.empty() && events.empty() && droppedLines == 0; }
};

class OutputCoalescer {
 public:
  using Clock = std::chrono::steady_clock;

  struct Limits {
    std::chrono::milliseconds interval{50};  // longest a line waits
    std::size_t maxBytes = 64 * 1024;        // a batch this big is sent at once
  };

  OutputCoalescer() = default;
  explicit OutputCoalescer(Limits limits) : limits_(limits) {}

  // Adds one line and the events the adapter parsed from it. An empty `line`
  // with events is events only (an adapter's summary at exit); a Raw event
  // that only repeats its line is left out. Returns the batch when it has just
  // reached maxBytes and must go now.
  std::optional<OutputBatch> add(const std::string& raceId, const std::string& agentId,
                                 core::OutputStream stream, std::string line,
                                 std::vector<core::AgentEvent> events, Clock::time_point now);

  // `lines` of the agent's output were lost before reaching us (the event
  // queue overflowed): counted in the agent's next stdout batch.
  void addDropped(const std::string& raceId, const std::string& agentId, std::uint64_t lines,
                  Clock::time_point now);

  // Batches whose interval has passed, oldest first.
  std::vector<OutputBatch> takeDue(Clock::time_point now);
  // Everything pending for one agent, oldest first: sent before its lifecycle
  // notifications so that a client never sees output after agentFinished.
  std::vector<OutputBatch> takeAgent(const std::string& raceId, const std::string& agentId);
  std::vector<OutputBatch> takeRace(const std::string& raceId);
  std::vector<OutputBatch> takeAll();

  // When the oldest pending batch falls due; nullopt when nothing is pending.
  std::optional<Clock::time_point> nextDue() const;
  bool empty() const { return pending_.empty(); }

 private:
  using Key = std::tuple<std::string, std::string, core::OutputStream>;  // race, agent, stream
  struct Pending {
    OutputBatch batch;
    Clock::time_point opened;
  };

  Pending& open(const Key& key, Clock::time_point now);
  template <class Pred>
  std::vector<OutputBatch> take(Pred pred);

  Limits limits_;
  std::map<Key, Pending> pending_;
};

}  // namespace hydra::server
