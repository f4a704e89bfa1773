#pragma once

// Turns agents' output lines into hydra/agentOutput notifications: coalesced
// per agent (OutputCoalescer), flushed by a timer on the io thread, and left
// out while the client is too far behind (the transport holds more than
// `congestedBytes` unwritten), so a client that reads slowly costs bounded
// memory and never slows an agent. What is left out is counted: the count
// waits in the coalescer until the client catches up, or until the agent's
// lifecycle notification, and then goes out as `droppedLines`. Agent output is
// thus the first thing a slow client loses; the transport's own limit, which
// ends the session, is far above `congestedBytes`. The complete output stays
// in the race's logs (hydra/log).

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/events/events.h"
#include "server/dispatcher.h"
#include "server/output_coalescer.h"
#include "server/transport.h"

namespace hydra::server {

class OutputNotifier {
 public:
  struct Options {
    OutputCoalescer::Limits limits;
    std::size_t congestedBytes = 8 * 1024 * 1024;
  };

  // io thread only, like every method here.
  OutputNotifier(boost::asio::io_context& io, std::shared_ptr<Dispatcher> dispatcher,
                 const Transport& transport, Options options);
  ~OutputNotifier();
  OutputNotifier(const OutputNotifier&) = delete;
  OutputNotifier& operator=(const OutputNotifier&) = delete;

  void add(core::AgentOutput output);
  void dropped(const core::OutputDropped& dropped);

  // Sends what is pending, now: before an agent's or a race's lifecycle
  // notification, so that no output arrives after it.
  void flushAgent(const std::string& raceId, const std::string& agentId);
  void flushRace(const std::string& raceId);

  // Lines left out because the client was behind, since the start.
  std::uint64_t droppedForCongestion() const { return droppedForCongestion_; }

 private:
  // `flushing`: the batch must go now (a lifecycle notification follows), so
  // a count is sent even while the client is behind.
  void send(OutputBatch batch, bool flushing);
  bool congested() const { return transport_.queuedBytes() > options_.congestedBytes; }
  void arm();

  std::shared_ptr<Dispatcher> dispatcher_;
  const Transport& transport_;
  Options options_;
  OutputCoalescer coalescer_;
  boost::asio::steady_timer timer_;
  bool armed_ = false;
  std::uint64_t droppedForCongestion_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace hydra::server
