#include "core/events/bus.h"

#include <algorithm>
#include <stdexcept>

namespace hydra::core {

namespace detail {

// Shared by the bus and its subscriptions, so either may go first. Its mutex
// orders publishing against subscribing and unsubscribing: while a publish
// holds it, no subscription it is delivering to can be destroyed.
struct BusState {
  std::mutex mutex;
  std::vector<Subscription*> subscribers;
  std::uint64_t nextSeq = 1;
};

}  // namespace detail

namespace {

std::size_t agentEventBytes(const AgentEvent& e) {
  std::size_t bytes = sizeof(AgentEvent) + e.text.size() + e.tool.size() + e.detail.size() +
                      e.path.size() + e.change.size();
  for (const auto& warning : e.warnings) bytes += sizeof(std::string) + warning.size();
  return bytes;
}

std::size_t bodyBytes(const RaceStarted& e) {
  std::size_t bytes = e.raceId.size() + e.task.size() + e.baseRef.size() + e.baseCommit.size();
  for (const auto& a : e.agents) bytes += sizeof(AgentPlan) + a.agentId.size() + a.branch.size() + a.worktree.size();
  return bytes;
}
std::size_t bodyBytes(const AgentStarted& e) {
  return e.raceId.size() + e.agentId.size() + e.agent.size() + e.branch.size() + e.worktree.size();
}
std::size_t bodyBytes(const AgentOutput& e) {
  std::size_t bytes = e.raceId.size() + e.agentId.size() + e.line.size();
  for (const auto& parsed : e.events) bytes += agentEventBytes(parsed);
  return bytes;
}
std::size_t bodyBytes(const AgentFinished& e) {
  std::size_t bytes = e.raceId.size() + e.agentId.size() + (e.error ? e.error->size() : 0) + e.stderrTail.size() +
                      e.finalMessage.size();
  for (const auto& w : e.warnings) bytes += sizeof(std::string) + w.size();
  return bytes;
}
std::size_t bodyBytes(const ScoringStarted& e) { return e.raceId.size(); }
std::size_t bodyBytes(const CheckOutput& e) { return e.raceId.size() + e.subject.size() + e.line.size(); }
std::size_t checksBytes(const scoring::CheckSet& checks) {
  std::size_t bytes = 0;
  for (const auto* c : {&checks.build, &checks.tests, &checks.lint}) {
    if (*c) bytes += sizeof(scoring::CheckResult) + (*c)->output.size() + (*c)->command.size();
  }
  return bytes;
}
std::size_t bodyBytes(const RaceFinished& e) {
  std::size_t bytes = e.raceId.size();
  if (e.scores) {
    bytes += checksBytes(e.scores->baseline.checks);
    for (const auto& a : e.scores->rankings) bytes += sizeof(scoring::AgentScore) + checksBytes(a.checks);
  }
  return bytes;
}
std::size_t iterationBytes(const IterationResult& x) {
  std::size_t bytes = x.review ? x.review->size() : 0;
  if (x.score) bytes += sizeof(scoring::AgentScore) + checksBytes(x.score->checks);
  return bytes;
}
std::size_t bodyBytes(const IterationScored& e) { return e.raceId.size() + iterationBytes(e.result); }
std::size_t bodyBytes(const IterationFinished& e) { return e.raceId.size() + iterationBytes(e.result); }
std::size_t bodyBytes(const OutputDropped& e) { return e.raceId.size() + e.agentId.size(); }

}  // namespace

std::size_t approximateSize(const RaceEvent& event) {
  return sizeof(RaceEvent) +
         std::visit([](const auto& body) { return bodyBytes(body); }, event.body);
}

Subscription::Subscription(std::weak_ptr<detail::BusState> bus, SubscriptionOptions options)
    : bus_(std::move(bus)), options_(std::move(options)) {
  // A queue that can hold nothing would turn every output line into a drop.
  options_.maxEvents = std::max<std::size_t>(options_.maxEvents, 1);
}

Subscription::~Subscription() {
  if (auto bus = bus_.lock()) {
    std::lock_guard lock(bus->mutex);
    std::erase(bus->subscribers, this);
  }
}

bool Subscription::deliver(const RaceEvent& event) {
  std::lock_guard lock(mutex_);
  if (closed_) return false;
  bool wasPending = pendingLocked();
  std::size_t bytes = approximateSize(event);
  if (!options_.lossless && isDroppable(event.body) &&
      (queue_.size() >= options_.maxEvents || bytes_ + bytes > options_.maxBytes)) {
    // Agent output leaves a gap the subscriber is told about; check output
    // is only counted (its logs have it all).
    if (const auto* output = std::get_if<AgentOutput>(&event.body)) {
      Gap& gap = gaps_[{output->raceId, output->agentId}];
      ++gap.lines;
      gap.lastSeq = event.seq;
      gap.lastTime = event.time;
    }
    ++dropped_;
  } else {
    // Anything dropped so far is older than this event, so it is reported first.
    queueGapsLocked();
    queue_.push_back({event, bytes});
    bytes_ += bytes;
  }
  // Always notified, not only on the first pending event: with two threads
  // popping one subscription, the second must wake for the second event.
  ready_.notify_one();
  return !wasPending && pendingLocked() && static_cast<bool>(options_.onReady);
}

bool Subscription::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  ready_.notify_all();
  return static_cast<bool>(options_.onReady);
}

void Subscription::queueGapsLocked() {
  if (gaps_.empty()) return;
  std::vector<std::pair<AgentKey, Gap>> gaps(gaps_.begin(), gaps_.end());
  gaps_.clear();
  // In the order the last line of each gap was published, to keep seq increasing.
  std::sort(gaps.begin(), gaps.end(),
            [](const auto& a, const auto& b) { return a.second.lastSeq < b.second.lastSeq; });
  for (auto& [key, gap] : gaps) {
    RaceEvent notice{gap.lastSeq, gap.lastTime,
                     OutputDropped{std::move(key.first), std::move(key.second), gap.lines}};
    std::size_t bytes = approximateSize(notice);
    queue_.push_back({std::move(notice), bytes});
    bytes_ += bytes;
  }
}

bool Subscription::takeLocked(RaceEvent& out) {
  // Gaps are newer than anything queued, so they are reported once the queue is empty.
  if (queue_.empty()) queueGapsLocked();
  if (queue_.empty()) return false;
  out = std::move(queue_.front().event);
  bytes_ -= queue_.front().bytes;
  queue_.pop_front();
  return true;
}

bool Subscription::pop(RaceEvent& out, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return pendingLocked() || closed_; });
  return takeLocked(out);
}

std::optional<RaceEvent> Subscription::tryPop() {
  std::lock_guard lock(mutex_);
  RaceEvent event;
  if (!takeLocked(event)) return std::nullopt;
  return event;
}

std::vector<RaceEvent> Subscription::drain() {
  std::lock_guard lock(mutex_);
  queueGapsLocked();
  std::vector<RaceEvent> events;
  events.reserve(queue_.size());
  for (auto& queued : queue_) events.push_back(std::move(queued.event));
  queue_.clear();
  bytes_ = 0;
  return events;
}

std::size_t Subscription::queuedEvents() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

std::size_t Subscription::queuedBytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

std::uint64_t Subscription::droppedLines() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

bool Subscription::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

EventBus::EventBus() : state_(std::make_shared<detail::BusState>()) {}

EventBus::~EventBus() {
  std::lock_guard lock(state_->mutex);
  for (Subscription* subscriber : state_->subscribers) {
    if (subscriber->close()) subscriber->options_.onReady();
  }
  state_->subscribers.clear();
}

std::shared_ptr<Subscription> EventBus::subscribe(SubscriptionOptions options) {
  // The constructor is private: only the bus makes subscriptions.
  std::shared_ptr<Subscription> subscription(new Subscription(state_, std::move(options)));
  std::lock_guard lock(state_->mutex);
  state_->subscribers.push_back(subscription.get());
  return subscription;
}

std::uint64_t EventBus::publish(RaceEventBody body) {
  if (std::holds_alternative<OutputDropped>(body)) {
    throw std::invalid_argument("OutputDropped events are made by the bus, not published");
  }
  std::lock_guard lock(state_->mutex);
  RaceEvent event{state_->nextSeq++, std::chrono::system_clock::now(), std::move(body)};
  for (Subscription* subscriber : state_->subscribers) {
    // onReady runs after the subscription's own lock is released, so it may drain.
    if (subscriber->deliver(event)) subscriber->options_.onReady();
  }
  return event.seq;
}

std::size_t EventBus::subscriberCount() const {
  std::lock_guard lock(state_->mutex);
  return state_->subscribers.size();
}

}  // namespace hydra::core
