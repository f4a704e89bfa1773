#include "core/events/bus.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <thread>

namespace hydra::core {
namespace {

using namespace std::chrono_literals;

// Long enough never to expire on a loaded machine; only a hang would reach it.
constexpr auto kPatience = 60s;

AgentOutput output(const std::string& agentId, int n, std::size_t padding = 0) {
  return AgentOutput{"race1",
                     agentId,
                     OutputStream::Stdout,
                     "line " + std::to_string(n) + std::string(padding, '.'),
                     {}};
}

SubscriptionOptions bounded(std::size_t maxEvents, std::size_t maxBytes) {
  SubscriptionOptions options;
  options.maxEvents = maxEvents;
  options.maxBytes = maxBytes;
  return options;
}

AgentFinished finished(const std::string& agentId) {
  AgentFinished f;
  f.raceId = "race1";
  f.agentId = agentId;
  f.status = AgentStatus::Completed;
  f.exitCode = 0;
  return f;
}

template <class T>
const T& as(const RaceEvent& event) {
  const T* body = std::get_if<T>(&event.body);
  if (!body)
    throw std::runtime_error("unexpected event kind " + std::to_string(event.body.index()));
  return *body;
}

void expectIncreasingSeq(const std::vector<RaceEvent>& events) {
  for (std::size_t i = 1; i < events.size(); ++i) {
    EXPECT_LT(events[i - 1].seq, events[i].seq) << "at " << i;
  }
}

RaceStarted started(std::string raceId, std::string task) {
  RaceStarted e;
  e.raceId = std::move(raceId);
  e.task = std::move(task);
  e.baseRef = "main";
  e.baseCommit = "abc123";
  return e;
}

AgentStarted agentStarted(std::string raceId, std::string agentId) {
  AgentStarted e;
  e.raceId = std::move(raceId);
  e.agentId = agentId;
  e.agent = agentId;
  e.branch = "hydra/" + e.raceId + "/" + agentId;
  e.worktree = "/tmp/wt";
  return e;
}

RaceFinished raceFinished(std::string raceId) {
  RaceFinished e;
  e.raceId = std::move(raceId);
  e.status = RaceStatus::Completed;
  return e;
}

TEST(EventBusTest, EverySubscriberGetsEveryEventInOrder) {
  EventBus bus;
  auto first = bus.subscribe();
  auto second = bus.subscribe();

  bus.publish(started("race1", "fix the bug"));
  bus.publish(agentStarted("race1", "claude"));
  for (int i = 0; i < 5; ++i) bus.publish(output("claude", i));
  bus.publish(finished("claude"));
  bus.publish(raceFinished("race1"));

  for (const auto& subscription : {first, second}) {
    auto events = subscription->drain();
    ASSERT_EQ(events.size(), 9u);
    EXPECT_EQ(as<RaceStarted>(events[0]).task, "fix the bug");
    EXPECT_EQ(as<AgentStarted>(events[1]).branch, "hydra/race1/claude");
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(as<AgentOutput>(events[2 + i]).line, "line " + std::to_string(i));
    EXPECT_EQ(as<AgentFinished>(events[7]).exitCode, 0);
    EXPECT_EQ(as<RaceFinished>(events[8]).status, RaceStatus::Completed);
    expectIncreasingSeq(events);
    EXPECT_EQ(subscription->droppedLines(), 0u);
  }
}

// A subscriber whose consumer is stuck must neither stop the publisher nor
// hold back a subscriber that keeps up.
TEST(EventBusTest, StuckSubscriberBlocksNeitherPublisherNorFastSubscriber) {
  constexpr int kEvents = 20000;
  EventBus bus;
  auto slow = bus.subscribe(bounded(100, 1 << 20));
  auto fast = bus.subscribe(bounded(kEvents + 10, 64 << 20));

  std::promise<void> tookFirst;
  std::promise<void> release;
  std::thread slowConsumer([&, released = release.get_future()] {
    RaceEvent event;
    slow->pop(event, kPatience);
    tookFirst.set_value();
    released.wait();  // stuck "processing" its first event until the test ends
  });
  std::promise<std::vector<RaceEvent>> fastResult;
  std::thread fastConsumer([&] {
    std::vector<RaceEvent> received;
    RaceEvent event;
    while (received.size() < kEvents && fast->pop(event, kPatience)) received.push_back(event);
    fastResult.set_value(std::move(received));
  });

  bus.publish(output("codex", 0));
  tookFirst.get_future().wait();
  for (int i = 1; i < kEvents; ++i) bus.publish(output("codex", i));

  auto received = fastResult.get_future().get();
  release.set_value();
  slowConsumer.join();
  fastConsumer.join();

  ASSERT_EQ(received.size(), static_cast<std::size_t>(kEvents));
  for (int i = 0; i < kEvents; ++i)
    ASSERT_EQ(as<AgentOutput>(received[i]).line, "line " + std::to_string(i));
  EXPECT_EQ(fast->droppedLines(), 0u);
  EXPECT_EQ(slow->queuedEvents(), 100u);
  // One was taken before it got stuck, 100 wait in its queue, the rest were dropped.
  EXPECT_EQ(slow->droppedLines(), static_cast<std::uint64_t>(kEvents - 101));
}

TEST(EventBusTest, FullQueueDropsOutputAndCountsItPerAgent) {
  EventBus bus;
  auto subscription = bus.subscribe(bounded(10, 1 << 20));
  for (int i = 0; i < 10; ++i) bus.publish(output("claude", i));
  for (int i = 10; i < 25; ++i) bus.publish(output("claude", i));
  for (int i = 0; i < 5; ++i) bus.publish(output("gemini", i));

  EXPECT_EQ(subscription->queuedEvents(), 10u);
  EXPECT_EQ(subscription->droppedLines(), 20u);

  auto events = subscription->drain();
  ASSERT_EQ(events.size(), 12u);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(as<AgentOutput>(events[i]).line, "line " + std::to_string(i));
  const auto& claude = as<OutputDropped>(events[10]);
  EXPECT_EQ(claude.raceId, "race1");
  EXPECT_EQ(claude.agentId, "claude");
  EXPECT_EQ(claude.lines, 15u);
  const auto& gemini = as<OutputDropped>(events[11]);
  EXPECT_EQ(gemini.agentId, "gemini");
  EXPECT_EQ(gemini.lines, 5u);
  expectIncreasingSeq(events);
}

TEST(EventBusTest, DropNoticeComesWhereTheGapWasBeforeLaterOutput) {
  EventBus bus;
  auto subscription = bus.subscribe(bounded(3, 1 << 20));
  for (int i = 1; i <= 7; ++i) bus.publish(output("claude", i));  // 4 to 7 are dropped

  RaceEvent first;
  ASSERT_TRUE(subscription->pop(first, kPatience));
  EXPECT_EQ(as<AgentOutput>(first).line, "line 1");
  bus.publish(output("claude", 8));  // there is room again

  auto rest = subscription->drain();
  ASSERT_EQ(rest.size(), 4u);
  EXPECT_EQ(as<AgentOutput>(rest[0]).line, "line 2");
  EXPECT_EQ(as<AgentOutput>(rest[1]).line, "line 3");
  EXPECT_EQ(as<OutputDropped>(rest[2]).lines, 4u);
  EXPECT_EQ(as<AgentOutput>(rest[3]).line, "line 8");
  rest.insert(rest.begin(), first);
  expectIncreasingSeq(rest);
}

TEST(EventBusTest, LifecycleEventsAreNeverDropped) {
  EventBus bus;
  auto subscription = bus.subscribe(bounded(2, 1 << 20));
  bus.publish(started("race1", "task"));
  bus.publish(agentStarted("race1", "claude"));
  for (int i = 0; i < 3; ++i) bus.publish(output("claude", i));  // the queue is already full
  bus.publish(finished("claude"));
  bus.publish(raceFinished("race1"));

  auto events = subscription->drain();
  ASSERT_EQ(events.size(), 5u);
  EXPECT_TRUE(std::holds_alternative<RaceStarted>(events[0].body));
  EXPECT_TRUE(std::holds_alternative<AgentStarted>(events[1].body));
  EXPECT_EQ(as<OutputDropped>(events[2]).lines, 3u);
  EXPECT_EQ(as<AgentFinished>(events[3]).agentId, "claude");
  EXPECT_TRUE(std::holds_alternative<RaceFinished>(events[4].body));
  expectIncreasingSeq(events);
}

TEST(EventBusTest, MemoryStaysBoundedForASubscriberThatNeverReads) {
  constexpr int kEvents = 1'000'000;
  EventBus bus;
  auto byCount = bus.subscribe(bounded(1000, 64 << 20));
  auto byBytes = bus.subscribe(bounded(kEvents, 256 << 10));

  for (int i = 0; i < kEvents; ++i) bus.publish(output("claude", i, 100));

  EXPECT_EQ(byCount->queuedEvents(), 1000u);
  EXPECT_EQ(byCount->droppedLines(), static_cast<std::uint64_t>(kEvents - 1000));
  EXPECT_LE(byBytes->queuedBytes(), 256u << 10);
  EXPECT_GT(byBytes->queuedEvents(), 0u);
  EXPECT_EQ(byBytes->droppedLines() + byBytes->queuedEvents(), static_cast<std::uint64_t>(kEvents));
}

TEST(EventBusTest, LineLargerThanTheByteBoundIsDroppedAndReported) {
  EventBus bus;
  auto subscription = bus.subscribe(bounded(100, 1024));
  bus.publish(output("aider", 1, 4096));

  RaceEvent event;
  ASSERT_TRUE(subscription->pop(event, kPatience));
  EXPECT_EQ(as<OutputDropped>(event).agentId, "aider");
  EXPECT_EQ(as<OutputDropped>(event).lines, 1u);
}

TEST(EventBusTest, PopTimesOutWhenNothingIsPublished) {
  EventBus bus;
  auto subscription = bus.subscribe();
  RaceEvent event;
  EXPECT_FALSE(subscription->pop(event, 10ms));
  EXPECT_FALSE(subscription->closed());
  EXPECT_FALSE(subscription->tryPop());
}

TEST(EventBusTest, DestroyingTheBusWakesWaitersAfterTheQueueIsTaken) {
  auto bus = std::make_unique<EventBus>();
  auto subscription = bus->subscribe();
  bus->publish(output("claude", 1));

  auto waiter = std::async(std::launch::async, [&] {
    RaceEvent event;
    bool first = subscription->pop(event, kPatience);
    bool second = subscription->pop(event, kPatience);  // woken by the bus going away
    return std::make_pair(first, second);
  });
  // Destroy the bus only once the waiter has taken the queued event.
  while (subscription->queuedEvents() != 0) std::this_thread::yield();
  bus.reset();

  auto [first, second] = waiter.get();
  EXPECT_TRUE(first);
  EXPECT_FALSE(second);
  EXPECT_TRUE(subscription->closed());
}

TEST(EventBusTest, DestroyingASubscriptionUnsubscribesIt) {
  EventBus bus;
  auto kept = bus.subscribe();
  auto dropped = bus.subscribe();
  EXPECT_EQ(bus.subscriberCount(), 2u);
  dropped.reset();
  EXPECT_EQ(bus.subscriberCount(), 1u);
  bus.publish(output("claude", 1));
  EXPECT_EQ(kept->drain().size(), 1u);
}

TEST(EventBusTest, OnReadyFiresWhenSomethingBecomesPendingAndWhenTheBusCloses) {
  std::atomic<int> calls{0};
  auto bus = std::make_unique<EventBus>();
  auto subscription =
      bus->subscribe({.maxEvents = 100, .maxBytes = 1 << 20, .onReady = [&] { ++calls; }});

  bus->publish(output("claude", 1));
  bus->publish(output("claude", 2));
  EXPECT_EQ(calls.load(), 1);  // already pending the second time
  EXPECT_EQ(subscription->drain().size(), 2u);
  bus->publish(output("claude", 3));
  EXPECT_EQ(calls.load(), 2);
  bus.reset();
  EXPECT_EQ(calls.load(), 3);
}

TEST(EventBusTest, OnReadyMayDrainOnThePublishingThread) {
  EventBus bus;
  std::vector<RaceEvent> seen;
  std::shared_ptr<Subscription> subscription;
  subscription = bus.subscribe({.maxEvents = 100, .maxBytes = 1 << 20, .onReady = [&] {
                                  for (auto& e : subscription->drain())
                                    seen.push_back(std::move(e));
                                }});
  for (int i = 0; i < 3; ++i) bus.publish(output("claude", i));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(as<AgentOutput>(seen[2]).line, "line 2");
}

TEST(EventBusTest, ConcurrentPublishersGetUniqueIncreasingSequenceNumbers) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  EventBus bus;
  auto subscription = bus.subscribe(bounded(kThreads * kPerThread, 64 << 20));

  std::vector<std::thread> publishers;
  for (int t = 0; t < kThreads; ++t) {
    publishers.emplace_back([&bus, t] {
      for (int i = 0; i < kPerThread; ++i) bus.publish(output("agent" + std::to_string(t), i));
    });
  }
  std::vector<RaceEvent> received;
  RaceEvent event;
  while (received.size() < kThreads * kPerThread && subscription->pop(event, kPatience)) {
    received.push_back(event);
  }
  for (auto& publisher : publishers) publisher.join();

  ASSERT_EQ(received.size(), static_cast<std::size_t>(kThreads * kPerThread));
  expectIncreasingSeq(received);
  // Each publisher's events arrive in the order it published them.
  std::map<std::string, int> next;
  for (const auto& e : received) {
    const auto& out = as<AgentOutput>(e);
    EXPECT_EQ(out.line, "line " + std::to_string(next[out.agentId]++));
  }
}

TEST(EventBusTest, PublishingADropNoticeIsRejected) {
  EventBus bus;
  EXPECT_THROW(bus.publish(OutputDropped{"race1", "claude", 3}), std::invalid_argument);
}

TEST(RaceEventTest, StatusWordsRoundTrip) {
  for (auto status : {RaceStatus::Running, RaceStatus::Completed, RaceStatus::Interrupted,
                      RaceStatus::Cancelled, RaceStatus::Failed}) {
    EXPECT_EQ(parseRaceStatus(toString(status)), status);
  }
  for (auto status :
       {AgentStatus::Queued, AgentStatus::Running, AgentStatus::Completed, AgentStatus::Failed,
        AgentStatus::TimedOut, AgentStatus::Cancelled, AgentStatus::Interrupted, AgentStatus::SetupFailed}) {
    EXPECT_EQ(parseAgentStatus(toString(status)), status);
  }
  EXPECT_EQ(toString(AgentStatus::TimedOut), "timedOut");
  EXPECT_EQ(toString(AgentStatus::SetupFailed), "setupFailed");
  EXPECT_EQ(parseOutputStream("stderr"), OutputStream::Stderr);
  EXPECT_FALSE(parseAgentStatus("timed_out"));
  EXPECT_FALSE(parseRaceStatus("Running"));
}

}  // namespace
}  // namespace hydra::core
