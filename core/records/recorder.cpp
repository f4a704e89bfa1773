#include "core/records/recorder.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <future>
#include <variant>

namespace hydra::core {

namespace asio = boost::asio;
namespace json = boost::json;

RaceRecorder::RaceRecorder(EventBus& bus, RaceStore& store, asio::any_io_executor executor)
    : store_(store), executor_(std::move(executor)) {
  subscription_ = bus.subscribe(SubscriptionOptions{
      .lossless = true,
      .onReady = [this] { asio::post(executor_, [this] { drain(); }); },
  });
}

RaceRecorder::~RaceRecorder() {
  flush();
  subscription_.reset();
}

void RaceRecorder::flush() {
  std::promise<void> done;
  auto written = done.get_future();
  asio::post(executor_, [this, &done] {
    drain();
    done.set_value();
  });
  written.wait();
}

void RaceRecorder::afterWritten(std::function<void()> fn) {
  asio::post(executor_, [this, fn = std::move(fn)] {
    drain();
    fn();
  });
}

std::optional<std::string> RaceRecorder::failure(const std::string& raceId) const {
  std::lock_guard lock(failuresMutex_);
  auto it = failures_.find(raceId);
  if (it == failures_.end()) return std::nullopt;
  return it->second;
}

template <class Fn>
void RaceRecorder::attempt(const std::string& raceId, std::string_view what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    const std::string message = "recording " + std::string(what) + " failed: " + e.what();
    // An agent that floods its log on a full disk fails once per line: the
    // same message over and over says nothing new.
    if (logged_.insert(e.what()).second) spdlog::error("race {}: {}", raceId, message);
    std::lock_guard lock(failuresMutex_);
    failures_.try_emplace(raceId, message);
  }
}

void RaceRecorder::drain() {
  for (const RaceEvent& event : subscription_->drain()) {
    attempt(raceIdOf(event.body), typeOf(event.body), [&] { write(event); });
  }
}

void RaceRecorder::appendEvent(const RaceEvent& event) {
  json::object line{{"type", typeOf(event.body)}, {"time", formatTimestamp(event.time)}, {"seq", event.seq}};
  for (auto& member : toJson(event.body)) line.insert(std::move(member));
  attempt(raceIdOf(event.body), typeOf(event.body), [&] { store_.appendEvent(raceIdOf(event.body), line); });
}

void RaceRecorder::save(const RaceRecord& record) {
  attempt(record.id, "its record", [&] { store_.save(record); });
}

AgentLog* RaceRecorder::agentLog(OpenRace& race, const std::string& agentId) {
  auto it = race.logs.find(agentId);
  if (it != race.logs.end()) return it->second.get();
  if (!race.record.findAgent(agentId)) return nullptr;
  auto [inserted, _] = race.logs.emplace(agentId, store_.openLog(race.record.id, agentId));
  return inserted->second.get();
}

void RaceRecorder::write(const RaceEvent& event) {
  const std::string& raceId = raceIdOf(event.body);
  if (const auto* started = std::get_if<RaceStarted>(&event.body)) {
    OpenRace& race = races_[raceId];
    race.record = RaceRecord::started(*started);
    save(race.record);
    appendEvent(event);
    return;
  }
  auto it = races_.find(raceId);
  if (it == races_.end()) return;  // a race recorded by someone else, or already closed
  OpenRace& race = it->second;

  std::visit(
      [&](const auto& e) {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, AgentOutput>) {
          if (AgentLog* log = agentLog(race, e.agentId)) {
            if (!e.line.empty()) log->write(e.stream, e.line);
            log->writeEvents(e.stream, e.events);
          }
        } else if constexpr (std::is_same_v<E, CheckOutput>) {
          auto& log = race.checkLogs[{e.subject, e.check}];
          if (!log) log = store_.openCheckLog(raceId, e.subject, e.check);
          log->write(e.stream, e.line);
        } else if constexpr (std::is_same_v<E, AgentStarted>) {
          race.record.apply(event.body);
          // The log exists from the start, so a viewer can page it at once.
          attempt(raceId, "the log of " + e.agentId, [&] { agentLog(race, e.agentId); });
          save(race.record);
          appendEvent(event);
        } else if constexpr (std::is_same_v<E, AgentFinished>) {
          race.record.apply(event.body);
          if (auto log = race.logs.find(e.agentId); log != race.logs.end()) {
            attempt(raceId, "the log of " + e.agentId, [&] { log->second->sync(); });
            race.logs.erase(log);
          }
          save(race.record);
          appendEvent(event);
        } else if constexpr (std::is_same_v<E, ScoringStarted>) {
          appendEvent(event);
        } else if constexpr (std::is_same_v<E, IterationFinished> || std::is_same_v<E, IterationScored>) {
          // A collaboration's iteration is history once published: on disk at once.
          race.record.apply(event.body);
          for (auto& entry : race.checkLogs) attempt(raceId, "a check's log", [&] { entry.second->sync(); });
          save(race.record);
          appendEvent(event);
        } else if constexpr (std::is_same_v<E, RaceFinished>) {
          race.record.apply(event.body);
          for (auto& entry : race.checkLogs) attempt(raceId, "a check's log", [&] { entry.second->sync(); });
          for (auto& entry : race.logs) attempt(raceId, "the log of " + entry.first, [&] { entry.second->sync(); });
          if (e.scores) attempt(raceId, "its scores", [&] { store_.saveScores(raceId, *e.scores); });
          save(race.record);
          appendEvent(event);
          races_.erase(it);
        }
      },
      event.body);
}

}  // namespace hydra::core
