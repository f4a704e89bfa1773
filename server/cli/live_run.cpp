#include "server/cli/live_run.h"

#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <csignal>
#include <iostream>
#include <memory>

#include "server/cli/common.h"

namespace hydra::cli {

namespace asio = boost::asio;

EventFollower::EventFollower(asio::io_context& io, core::Workspace& workspace,
                             std::function<void(const core::RaceEvent&)> handle)
    : handle_(std::move(handle)) {
  subscription_ = workspace.bus().subscribe(core::SubscriptionOptions{
      .maxEvents = 4096, .maxBytes = 4 * 1024 * 1024, .onReady = [this, &io] {
        asio::post(io, [this] { drain(); });
      }});
}

void EventFollower::drain() {
  for (auto& event : subscription_->drain()) handle_(event);
}

int runUntilStopped(asio::io_context& io, core::Workspace& workspace,
                    const std::function<std::optional<std::string>()>& runId,
                    const std::function<void()>& redraw, std::chrono::milliseconds every,
                    std::string_view what) {
  // A handler that completed but had not run when io.stop() came runs in the
  // caller's later io.poll(), after this frame is gone: it must then do nothing.
  auto inScope = std::make_shared<bool>(true);
  asio::steady_timer ticker(io);
  std::function<void()> tick = [&] {
    redraw();
    ticker.expires_after(every);
    ticker.async_wait([&, inScope](boost::system::error_code ec) {
      if (!ec && *inScope) tick();
    });
  };
  tick();

  int interrupts = 0;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void()> waitSignal = [&] {
    signals.async_wait([&, inScope](boost::system::error_code ec, int) {
      if (ec || !*inScope) return;
      auto id = runId();
      if (++interrupts == 1 && id) {
        std::cerr << "\nhydra: cancelling the " << what << " (interrupt again to stop at once)\n";
        workspace.cancel(*id);
        waitSignal();
      } else {
        workspace.interruptAll([&] { io.stop(); });
      }
    });
  };
  waitSignal();
  io.run();
  *inScope = false;
  return interrupts;
}

std::string latestRace(core::Workspace& workspace) {
  auto page = workspace.races(0, 1);
  if (page.races.empty()) {
    throw CommandError("no races yet in this repository: start one with hydra race \"TASK\" --agents NAME[,NAME...]", 2);
  }
  return page.races.front().raceId;
}

}  // namespace hydra::cli
