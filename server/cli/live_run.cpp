#include "server/cli/live_run.h"

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <csignal>
#include <iostream>

namespace hydra::cli {

namespace asio = boost::asio;

int runUntilStopped(asio::io_context& io, core::Workspace& workspace,
                    const std::function<std::optional<std::string>()>& runId, const std::function<void()>& redraw,
                    std::chrono::milliseconds every, std::string_view what) {
  asio::steady_timer ticker(io);
  std::function<void()> tick = [&] {
    redraw();
    ticker.expires_after(every);
    ticker.async_wait([&](boost::system::error_code ec) {
      if (!ec) tick();
    });
  };
  tick();

  int interrupts = 0;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void()> waitSignal = [&] {
    signals.async_wait([&](boost::system::error_code ec, int) {
      if (ec) return;
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
  return interrupts;
}

}  // namespace hydra::cli
