#include "server/transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>
#include <system_error>

namespace hydra::server {

namespace asio = boost::asio;

namespace {

int duplicate(int fd) {
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) throw std::system_error(errno, std::generic_category(), "cannot duplicate descriptor");
  return copy;
}

}  // namespace

Transport::Transport(asio::io_context& io, int inFd, int outFd, protocol::FrameLimits limits)
    : in_(io, duplicate(inFd)), out_(io, duplicate(outFd)), decoder_(limits) {}

void Transport::start(Handlers handlers) {
  handlers_ = std::move(handlers);
  readSome();
}

void Transport::readSome() {
  in_.async_read_some(asio::buffer(readBuffer_), [this](boost::system::error_code ec, std::size_t n) {
    if (closing_) return;
    if (n > 0) {
      decoder_.feed(std::string_view(readBuffer_.data(), n));
      while (auto result = decoder_.next()) {
        if (auto* frame = std::get_if<protocol::Frame>(&*result)) {
          handlers_.onFrame(std::move(frame->body));
        } else {
          handlers_.onFrameError(std::get<protocol::FrameError>(*result));
        }
        if (closing_) return;  // a handler may have ended the session
      }
    }
    if (ec) {
      if (ec != asio::error::eof) spdlog::warn("reading from the client failed: {}", ec.message());
      if (auto truncated = decoder_.finish()) handlers_.onFrameError(*truncated);
      closed();
      return;
    }
    readSome();
  });
}

void Transport::send(std::string body) {
  if (outputBroken_) return;
  std::string frame = protocol::encodeFrame(body);
  queuedBytes_ += frame.size();
  queue_.push_back(std::move(frame));
  if (!writing_) writeNext();
}

void Transport::writeNext() {
  if (queue_.empty() || outputBroken_) {
    writing_ = false;
    if (drained_) std::exchange(drained_, nullptr)();
    return;
  }
  writing_ = true;
  asio::async_write(out_, asio::buffer(queue_.front()), [this](boost::system::error_code ec, std::size_t) {
    queuedBytes_ -= queue_.front().size();
    queue_.pop_front();
    if (ec) {
      spdlog::warn("writing to the client failed: {}", ec.message());
      outputBroken_ = true;
      queue_.clear();
      queuedBytes_ = 0;
      closed();
    }
    writeNext();
  });
}

void Transport::closed() {
  if (closedReported_) return;
  closedReported_ = true;
  if (handlers_.onClosed) handlers_.onClosed();
}

void Transport::closeAfterDrain(std::function<void()> done) {
  closing_ = true;
  boost::system::error_code ignored;
  in_.cancel(ignored);
  if (!writing_) {
    done();
  } else {
    drained_ = std::move(done);
  }
}

}  // namespace hydra::server
