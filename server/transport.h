#pragma once

// Frames over a pair of file descriptors (stdin/stdout), on one io_context.
// One reader feeds the FrameDecoder; one writer drains a queue, so nothing
// else ever touches the output and no mutex is needed.
//
// The queue is bounded: a client that stops reading must not make hydra grow
// without limit. OutputNotifier stops putting agent output into it first
// (past OutputNotifier::Options::congestedBytes); when, besides the message
// being written and the next one, more than SendLimits::maxWaitingBytes wait,
// the client is treated as gone: the queue is dropped and onClosed runs, as
// when the client disconnects. The two messages at the front are left out of
// the count so that one large reply (a big diff) never counts against a
// client that reads it.

#include <array>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "protocol/framing.h"

namespace hydra::server {

// docs/protocol.md ("Slow clients") documents this figure.
inline constexpr std::size_t kDefaultMaxWaitingBytes = 64 * 1024 * 1024;

struct SendLimits {
  std::size_t maxWaitingBytes = kDefaultMaxWaitingBytes;
};

class Transport {
 public:
  struct Handlers {
    std::function<void(std::string body)> onFrame;
    std::function<void(const protocol::FrameError&)> onFrameError;
    // The input ended, the output broke, or the client stopped reading past
    // the send limit: the client is gone. Runs once, never from inside send().
    std::function<void()> onClosed;
  };

  // Takes ownership of neither descriptor: both are duplicated.
  Transport(boost::asio::io_context& io, int inFd, int outFd, protocol::FrameLimits limits,
            SendLimits sendLimits = {});

  void start(Handlers handlers);
  // Queues one message body; it is framed here. io thread only.
  void send(std::string body);
  // Flow control: while paused, no frame is handed on and nothing more is
  // read (the client's writes wait in its pipe). Resuming hands on the frames
  // already read first, from a fresh call stack. io thread only.
  void pauseReading();
  void resumeReading();

  // Stops reading; `done` runs once every queued message has been written
  // (at once when the output is broken or the client was dropped).
  void closeAfterDrain(std::function<void()> done);

  // Every byte not yet written, the message being written included.
  std::size_t queuedBytes() const { return queuedBytes_; }
  // True once the client was dropped for not reading (or the output broke).
  bool outputClosed() const { return outputBroken_; }

 private:
  void readSome();
  // Hands on decoded frames until paused, then reads more (or reports the end).
  void pump();
  void writeNext();
  void closed();
  // Bytes queued behind the message being written and the one after it.
  std::size_t waitingBytes() const;
  // The client stopped reading: drop what is queued and report it gone.
  void dropClient();

  boost::asio::io_context& io_;
  boost::asio::posix::stream_descriptor in_;
  boost::asio::posix::stream_descriptor out_;
  protocol::FrameDecoder decoder_;
  SendLimits sendLimits_;
  Handlers handlers_;
  std::array<char, 64 * 1024> readBuffer_{};
  std::deque<std::string> queue_;  // framed messages; the front one is being written
  std::size_t queuedBytes_ = 0;
  bool writing_ = false;
  bool reading_ = false;  // a read is outstanding
  bool readPaused_ = false;
  // While paused no read is outstanding; this stands in for it, so that the
  // io_context does not run out of work while answers are built elsewhere.
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      pausedWork_;
  bool pumpPosted_ = false;
  bool inputEnded_ = false;  // the last read hit the end of input (or failed)
  bool endReported_ = false;
  bool outputBroken_ = false;
  bool closing_ = false;
  bool closedReported_ = false;
  std::function<void()> drained_;
};

}  // namespace hydra::server
