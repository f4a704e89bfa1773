#pragma once

// How many agents may run at once in a workspace ([general]
// max_concurrent_agents), across every race, collaboration and evaluation, and
// across reloads of hydra.toml: one queue, first come first served. io thread only.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>

namespace hydra::core {

class AgentSlots {
 public:
  // `limit` is asked each time a slot may be handed out, so a changed
  // hydra.toml takes effect at once (running agents are never stopped for it).
  explicit AgentSlots(std::function<int()> limit) : limit_(std::move(limit)) {}
  AgentSlots(const AgentSlots&) = delete;
  AgentSlots& operator=(const AgentSlots&) = delete;

  using Ticket = std::uint64_t;

  // Calls `start` once a slot is free: at once (before returning) when one is.
  // The slot is held until release().
  Ticket acquire(std::function<void()> start);
  // Gives a held slot back and hands it on to the first waiter.
  void release();
  // Forgets a waiter that no longer wants its slot. False when it is not
  // waiting (it already got its slot, or was withdrawn).
  bool withdraw(Ticket ticket);

  std::size_t running() const { return running_; }
  std::size_t waiting() const { return waiting_.size(); }

 private:
  void handOut();

  std::function<int()> limit_;
  std::deque<std::pair<Ticket, std::function<void()>>> waiting_;
  std::size_t running_ = 0;
  Ticket next_ = 1;
};

}  // namespace hydra::core
