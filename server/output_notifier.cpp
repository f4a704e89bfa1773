#include "server/output_notifier.h"

#include <spdlog/spdlog.h>

#include <boost/json/value_from.hpp>

#include "protocol/methods.h"

namespace hydra::server {

OutputNotifier::OutputNotifier(boost::asio::io_context& io, std::shared_ptr<Dispatcher> dispatcher,
                               const Transport& transport, Options options)
    : dispatcher_(std::move(dispatcher)),
      transport_(transport),
      options_(options),
      coalescer_(options.limits),
      timer_(io) {}

OutputNotifier::~OutputNotifier() { *alive_ = false; }

void OutputNotifier::add(core::AgentOutput output) {
  auto full = coalescer_.add(output.raceId, output.agentId, output.stream, std::move(output.line),
                             std::move(output.events), OutputCoalescer::Clock::now());
  if (full) send(std::move(*full), false);
  arm();
}

void OutputNotifier::dropped(const core::OutputDropped& dropped) {
  coalescer_.addDropped(dropped.raceId, dropped.agentId, dropped.lines,
                        OutputCoalescer::Clock::now());
  arm();
}

void OutputNotifier::flushAgent(const std::string& raceId, const std::string& agentId) {
  for (auto& batch : coalescer_.takeAgent(raceId, agentId)) send(std::move(batch), true);
}

void OutputNotifier::flushRace(const std::string& raceId) {
  for (auto& batch : coalescer_.takeRace(raceId)) send(std::move(batch), true);
}

void OutputNotifier::send(OutputBatch batch, bool flushing) {
  if (congested()) {
    if (!batch.lines.empty()) {
      if (droppedForCongestion_ == 0) {
        spdlog::warn(
            "the client is reading slowly ({} bytes unwritten): agent output is left out of "
            "notifications, hydra/log has it",
            transport_.queuedBytes());
      }
      droppedForCongestion_ += batch.lines.size();
      batch.dropContent();
    }
    // A count alone is not worth queueing behind a client that does not read:
    // it waits here, growing, and goes out once the client catches up.
    if (!flushing && batch.lines.empty() && batch.events.empty()) {
      coalescer_.addDropped(batch.raceId, batch.agentId, batch.droppedLines,
                            OutputCoalescer::Clock::now());
      arm();
      return;
    }
  }
  if (batch.empty()) return;
  dispatcher_->notify(protocol::method::kAgentOutput, batch.toJson());
}

void OutputNotifier::arm() {
  // The earliest batch never falls due sooner than when the timer was armed
  // (batches open later than the ones pending), so one wait at a time suffices.
  if (armed_) return;
  auto due = coalescer_.nextDue();
  if (!due) return;
  armed_ = true;
  timer_.expires_at(*due);
  timer_.async_wait([this, alive = alive_](boost::system::error_code ec) {
    if (!*alive) return;
    armed_ = false;
    if (ec) return;
    for (auto& batch : coalescer_.takeDue(OutputCoalescer::Clock::now())) {
      send(std::move(batch), false);
    }
    arm();
  });
}

}  // namespace hydra::server
