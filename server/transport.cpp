#include "server/transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>
#include <system_error>
#include <utility>

namespace hydra::server {

namespace asio = boost::asio;

namespace {

int duplicate(int fd) {
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) throw std::system_error(errno, std::generic_category(), "cannot duplicate descriptor");
  return copy;
}

}  // namespace

Transport::Transport(asio::io_context& io, int inFd, int outFd, protocol::FrameLimits limits,
                     SendLimits sendLimits)
    : io_(io),
      in_(io, duplicate(inFd)),
      out_(io, duplicate(outFd)),
      decoder_(limits),
      sendLimits_(sendLimits) {}

void Transport::start(Handlers handlers) {
  handlers_ = std::move(handlers);
  readSome();
}

void Transport::readSome() {
  reading_ = true;
  in_.async_read_some(asio::buffer(readBuffer_),
                      [this](boost::system::error_code ec, std::size_t n) {
                        reading_ = false;
                        if (closing_) return;
                        if (n > 0) decoder_.feed(std::string_view(readBuffer_.data(), n));
                        if (ec) {
                          if (ec != asio::error::eof)
                            spdlog::warn("reading from the client failed: {}", ec.message());
                          inputEnded_ = true;
                        }
                        pump();
                      });
}

void Transport::pump() {
  while (!readPaused_ && !closing_) {
    auto result = decoder_.next();
    if (!result) break;
    if (auto* frame = std::get_if<protocol::Frame>(&*result)) {
      handlers_.onFrame(std::move(frame->body));
    } else {
      handlers_.onFrameError(std::get<protocol::FrameError>(*result));
    }
  }
  // A handler may have ended the session or paused reading.
  if (readPaused_ || closing_ || reading_) return;
  if (inputEnded_) {
    if (std::exchange(endReported_, true)) return;
    if (auto truncated = decoder_.finish()) handlers_.onFrameError(*truncated);
    closed();
    return;
  }
  readSome();
}

void Transport::pauseReading() {
  if (readPaused_ || closing_) return;
  readPaused_ = true;
  pausedWork_.emplace(io_.get_executor());
}

void Transport::resumeReading() {
  if (!readPaused_) return;
  readPaused_ = false;
  pausedWork_.reset();
  if (pumpPosted_) return;
  pumpPosted_ = true;
  asio::post(io_, [this] {
    pumpPosted_ = false;
    if (!readPaused_ && !closing_) pump();
  });
}

std::size_t Transport::waitingBytes() const {
  std::size_t front = 0;
  for (std::size_t i = 0; i < queue_.size() && i < 2; ++i) front += queue_[i].size();
  return queuedBytes_ - front;
}

void Transport::send(std::string body) {
  if (outputBroken_) return;
  std::string frame = protocol::encodeFrame(body);
  queuedBytes_ += frame.size();
  queue_.push_back(std::move(frame));
  if (waitingBytes() > sendLimits_.maxWaitingBytes) {
    dropClient();
    return;
  }
  if (!writing_) writeNext();
}

void Transport::dropClient() {
  spdlog::error(
      "the client is not reading: more than {} bytes wait to be written to it; treating it as "
      "gone",
      sendLimits_.maxWaitingBytes);
  outputBroken_ = true;
  // The message being written stays alive until its cancelled write returns.
  while (queue_.size() > (writing_ ? 1u : 0u)) {
    queuedBytes_ -= queue_.back().size();
    queue_.pop_back();
  }
  boost::system::error_code ignored;
  out_.cancel(ignored);
  // Reported from a clean stack: send() runs deep inside handlers that the
  // session's end (stopping every agent) must not pull the rug from under.
  asio::post(io_, [this] { closed(); });
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
    if (ec && !outputBroken_) {
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
  pausedWork_.reset();
  boost::system::error_code ignored;
  in_.cancel(ignored);
  if (!writing_) {
    done();
  } else {
    drained_ = std::move(done);
  }
}

}  // namespace hydra::server
