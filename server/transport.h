#pragma once

// Frames over a pair of file descriptors (stdin/stdout), on one io_context.
// One reader feeds the FrameDecoder; one writer drains a queue, so nothing
// else ever touches the output and no mutex is needed.

#include <array>
#include <deque>
#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "protocol/framing.h"

namespace hydra::server {

class Transport {
 public:
  struct Handlers {
    std::function<void(std::string body)> onFrame;
    std::function<void(const protocol::FrameError&)> onFrameError;
    // The input ended or the output broke: the client is gone.
    std::function<void()> onClosed;
  };

  // Takes ownership of neither descriptor: both are duplicated.
  Transport(boost::asio::io_context& io, int inFd, int outFd, protocol::FrameLimits limits);

  void start(Handlers handlers);
  // Queues one message body; it is framed here. io thread only.
  void send(std::string body);
  // Stops reading; `done` runs once every queued message has been written.
  void closeAfterDrain(std::function<void()> done);

  std::size_t queuedBytes() const { return queuedBytes_; }

 private:
  void readSome();
  void writeNext();
  void closed();

  boost::asio::posix::stream_descriptor in_;
  boost::asio::posix::stream_descriptor out_;
  protocol::FrameDecoder decoder_;
  Handlers handlers_;
  std::array<char, 64 * 1024> readBuffer_{};
  std::deque<std::string> queue_;
  std::size_t queuedBytes_ = 0;
  bool writing_ = false;
  bool outputBroken_ = false;
  bool closing_ = false;
  bool closedReported_ = false;
  std::function<void()> drained_;
};

}  // namespace hydra::server
