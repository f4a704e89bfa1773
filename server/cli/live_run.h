#pragma once

// The loop of a command that watches a run (hydra race, hydra collab) on the
// terminal: redraws, and Ctrl-C handled the same way by each.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/events/bus.h"
#include "core/workspace/workspace.h"

namespace hydra::cli {

// Every event of the workspace's bus, handed to `handle` on the io thread.
// Made before the run starts, so nothing of it is missed.
class EventFollower {
 public:
  EventFollower(boost::asio::io_context& io, core::Workspace& workspace,
                std::function<void(const core::RaceEvent&)> handle);
  EventFollower(const EventFollower&) = delete;
  EventFollower& operator=(const EventFollower&) = delete;
  // Hands on what has arrived; after io.run() returns, what arrived last.
  void drain();

 private:
  std::function<void(const core::RaceEvent&)> handle_;
  std::shared_ptr<core::Subscription> subscription_;
};

// The newest race of the repository (what `latest` names); a CommandError
// when there is none.
std::string latestRace(core::Workspace& workspace);

// Runs `io` until it is stopped (the run ended or was refused), calling
// `redraw` every `every`. The first SIGINT or SIGTERM cancels the run that
// `runId` names ("cancelling the <what>"); the second interrupts everything at
// once. Returns how many interrupts arrived.
int runUntilStopped(boost::asio::io_context& io, core::Workspace& workspace,
                    const std::function<std::optional<std::string>()>& runId,
                    const std::function<void()>& redraw, std::chrono::milliseconds every,
                    std::string_view what);

}  // namespace hydra::cli
