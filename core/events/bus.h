#pragma once

// Fan-out of race events to live views (the server's notifications, the CLI's
// progress display). Publishing never waits for a subscriber: each subscriber
// has its own bounded queue, and one that falls behind loses output lines
// (and is told how many), never lifecycle events.
//
// The bus is lossy by design, so it is not how output reaches the disk: the
// race runner writes every line to the agent's log (RaceStore::openLog) itself,
// before publishing it here.
//
// Consuming: a subscriber pops on a thread of its own (pop with a timeout, or
// drain), or, to stay on an executor, sets `onReady` to post a drain() there.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/events/events.h"

namespace hydra::core {

struct SubscriptionOptions {
  // Bounds of the queue. When either is reached, AgentOutput events are dropped
  // (and counted) until the subscriber catches up. Lifecycle events and drop
  // notices are always queued; they number a handful per agent, so memory
  // stays bounded.
  std::size_t maxEvents = 4096;
  std::size_t maxBytes = 4 * 1024 * 1024;
  // Never drop anything, whatever the bounds: for the record store, which
  // writes every line and drains its queue on a thread of its own.
  bool lossless = false;
  // Called on the publishing thread when the queue goes from nothing pending to
  // something pending, and when the bus closes. It runs with the bus locked:
  // it must be quick, must not call the bus (publish, subscribe) and must not
  // drop the last reference to its subscription. Draining its own
  // subscription is fine; posting a drain to an executor is the usual use.
  std::function<void()> onReady;
};

namespace detail {
struct BusState;
}

class Subscription {
 public:
  // Unsubscribes: nothing is queued for it from then on.
  ~Subscription();
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  // Waits up to `timeout` for the next event. False on timeout, or when the bus
  // is gone and everything queued has been taken.
  bool pop(RaceEvent& out, std::chrono::milliseconds timeout);
  std::optional<RaceEvent> tryPop();
  // Everything pending, oldest first, without waiting.
  std::vector<RaceEvent> drain();

  std::size_t queuedEvents() const;
  std::size_t queuedBytes() const;
  // Output events (AgentOutput, CheckOutput) dropped for this subscriber so far, all agents together.
  std::uint64_t droppedLines() const;
  // The bus was destroyed; what is queued can still be taken.
  bool closed() const;

 private:
  friend class EventBus;
  struct Queued {
    RaceEvent event;
    std::size_t bytes;
  };
  // Output dropped for one agent since the last event this subscriber queued.
  struct Gap {
    std::uint64_t lines = 0;
    std::uint64_t lastSeq = 0;
    std::chrono::system_clock::time_point lastTime;
  };
  using AgentKey = std::pair<std::string, std::string>;  // raceId, agentId

  Subscription(std::weak_ptr<detail::BusState> bus, SubscriptionOptions options);
  // Queues `event` or counts it as dropped. True when onReady should be called.
  bool deliver(const RaceEvent& event);
  // Marks the subscription closed. True when onReady should be called.
  bool close();
  void queueGapsLocked();
  bool pendingLocked() const { return !queue_.empty() || !gaps_.empty(); }
  bool takeLocked(RaceEvent& out);

  std::weak_ptr<detail::BusState> bus_;
  SubscriptionOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Queued> queue_;
  std::size_t bytes_ = 0;
  std::map<AgentKey, Gap> gaps_;
  std::uint64_t dropped_ = 0;
  bool closed_ = false;
};

class EventBus {
 public:
  EventBus();
  // Closes every subscription (their pops return once they are empty).
  ~EventBus();
  EventBus(const EventBus&) = delete;
  EventBus& operator=(const EventBus&) = delete;

  std::shared_ptr<Subscription> subscribe(SubscriptionOptions options = {});

  // Stamps `body` with the next sequence number and the current time and
  // queues it for every subscriber. Never waits for a subscriber to consume.
  // Thread-safe. OutputDropped is the bus's own and is rejected (invalid_argument).
  std::uint64_t publish(RaceEventBody body);

  std::size_t subscriberCount() const;

 private:
  std::shared_ptr<detail::BusState> state_;
};

// An estimate of the memory one queued event holds, for SubscriptionOptions::maxBytes.
std::size_t approximateSize(const RaceEvent& event);

}  // namespace hydra::core
