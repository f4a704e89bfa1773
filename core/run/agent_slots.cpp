#include "core/run/agent_slots.h"

#include <algorithm>

namespace hydra::core {

AgentSlots::Ticket AgentSlots::acquire(std::function<void()> start) {
  Ticket ticket = next_++;
  waiting_.emplace_back(ticket, std::move(start));
  handOut();
  return ticket;
}

void AgentSlots::release() {
  if (running_ > 0) --running_;
  handOut();
}

bool AgentSlots::withdraw(Ticket ticket) {
  auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& w) { return w.first == ticket; });
  if (it == waiting_.end()) return false;
  waiting_.erase(it);
  return true;
}

void AgentSlots::handOut() {
  auto limit = static_cast<std::size_t>(std::max(1, limit_()));
  while (running_ < limit && !waiting_.empty()) {
    auto start = std::move(waiting_.front().second);
    waiting_.pop_front();
    ++running_;
    start();  // may acquire or release: the loop re-reads the state
  }
}

}  // namespace hydra::core
