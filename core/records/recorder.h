#pragma once

// Writes what happens in a workspace to its RaceStore. The recorder is a
// subscriber of the EventBus like any view, but a lossless one: it takes every
// event, output included, and writes it on an executor of its own (a strand of
// the workspace's thread pool), so neither the io thread nor an agent ever
// waits for a disk. What is on disk is therefore a record of the events:
//
//   RaceStarted, AgentStarted, AgentFinished, RaceFinished   race.json (RaceRecord::apply) and events.jsonl
//   ScoringStarted                                          events.jsonl
//   AgentOutput                                             <agent>.log, <agent>.stderr.log, <agent>.events.jsonl
//   CheckOutput                                             checks/<subject>.<check>.log
//   RaceFinished with scores                                scores.json
//
// A write that fails is logged and the recorder goes on: a full disk must not
// stop a race. Each distinct failure (its message names the file and says
// why) is logged once, not once per line of an agent that floods its log, and
// the first one of each race is kept for failure(), so that whoever ran the
// race can say its record is incomplete. The record itself is always written
// whole (writeFileAtomic): a failed save leaves the previous one in place, and
// the next save writes everything again.

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/events/bus.h"
#include "core/records/record.h"
#include "core/records/store.h"

namespace hydra::core {

class RaceRecorder {
 public:
  // `executor` must run handlers one at a time (a strand).
  RaceRecorder(EventBus& bus, RaceStore& store, boost::asio::any_io_executor executor);
  // Writes whatever is still queued.
  ~RaceRecorder();
  RaceRecorder(const RaceRecorder&) = delete;
  RaceRecorder& operator=(const RaceRecorder&) = delete;

  // Returns once every event published before the call is on disk. Must not be
  // called from the recorder's executor.
  void flush();
  // How much is waiting to be written, in bytes (an estimate).
  std::size_t backlog() const { return subscription_->queuedBytes(); }
  // Beyond this backlog, agents' output is read no further until the disk
  // catches up: the recorder never drops a line, so it must not grow without bound.
  static constexpr std::size_t kMaxBacklog = 2 * 1024 * 1024;

  // Runs `fn` on the recorder's executor once every event published before
  // the call is on disk.
  void afterWritten(std::function<void()> fn);

  // The first write of race `raceId` that failed, as "recording <what> failed:
  // cannot write <path>: <reason>", or nullopt when all of it so far is on
  // disk. Thread-safe; kept after the race ends.
  std::optional<std::string> failure(const std::string& raceId) const;

 private:
  struct OpenRace {
    RaceRecord record;
    std::map<std::string, std::unique_ptr<AgentLog>> logs;  // by agent id
    std::map<std::pair<std::string, std::string>, std::unique_ptr<AgentLog>> checkLogs;  // (subject, check)
  };

  void drain();
  void write(const RaceEvent& event);
  void appendEvent(const RaceEvent& event);
  void save(const RaceRecord& record);
  AgentLog* agentLog(OpenRace& race, const std::string& agentId);
  // Runs `fn`; a failure is logged (once per distinct message) and remembered for failure().
  template <class Fn>
  void attempt(const std::string& raceId, std::string_view what, Fn&& fn);

  RaceStore& store_;
  boost::asio::any_io_executor executor_;
  std::shared_ptr<Subscription> subscription_;
  std::map<std::string, OpenRace> races_;
  std::set<std::string> logged_;  // failure messages already logged (recorder's executor only)
  mutable std::mutex failuresMutex_;
  std::map<std::string, std::string> failures_;  // the first failure, by race id
};

}  // namespace hydra::core
