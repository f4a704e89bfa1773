#pragma once

// Copies bytes both ways between two connected stream sockets (TCP or unix),
// for the network proxy and its forwarder inside an agent's namespace.
// Bounded: one fixed buffer per direction (a slow reader stops the other
// side's reads, nothing piles up), and an idle timeout that closes both.
// An end of stream on one side is passed on as a shutdown of the other; the
// relay closes once both directions have ended, or at the first error.

#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <memory>
#include <string>

namespace hydra::core::sandbox {

// What a proxy or forwarder closes when it ends: its relays and sessions.
class Closable {
 public:
  virtual ~Closable() = default;
  virtual void close() = 0;
};

template <class A, class B>
class Relay final : public Closable, public std::enable_shared_from_this<Relay<A, B>> {
 public:
  static constexpr std::size_t kBufferBytes = 16 * 1024;

  Relay(A a, B b, std::chrono::steady_clock::duration idle)
      : a_(std::move(a)), b_(std::move(b)), timer_(a_.get_executor()), idle_(idle) {}

  // `toB`: bytes already read from `a` that go to `b` before anything else.
  void start(std::string toB) {
    touch();
    watch();
    pending_ = std::move(toB);
    auto self = this->shared_from_this();
    if (pending_.empty()) {
      pump(a_, b_, fromA_);
    } else {
      boost::asio::async_write(b_, boost::asio::buffer(pending_),
                               [self](const boost::system::error_code& ec, std::size_t) {
                                 self->pending_.clear();
                                 if (ec || self->closed_) return self->close();
                                 self->pump(self->a_, self->b_, self->fromA_);
                               });
    }
    pump(b_, a_, fromB_);
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    a_.close(ignored);
    b_.close(ignored);
    timer_.cancel();
  }

 private:
  using Buffer = std::array<char, kBufferBytes>;

  template <class From, class To>
  void pump(From& from, To& to, Buffer& buffer) {
    auto self = this->shared_from_this();
    from.async_read_some(boost::asio::buffer(buffer), [self, &from, &to, &buffer](const boost::system::error_code& ec,
                                                                                  std::size_t n) {
      if (self->closed_) return;
      if (ec) {
        if (ec != boost::asio::error::eof) return self->close();
        boost::system::error_code ignored;
        to.shutdown(To::shutdown_send, ignored);
        if (++self->ended_ == 2) self->close();
        return;
      }
      self->touch();
      boost::asio::async_write(to, boost::asio::buffer(buffer.data(), n),
                               [self, &from, &to, &buffer](const boost::system::error_code& wec, std::size_t) {
                                 if (wec || self->closed_) return self->close();
                                 self->pump(from, to, buffer);
                               });
    });
  }

  void touch() { last_ = std::chrono::steady_clock::now(); }

  void watch() {
    timer_.expires_at(last_ + idle_);
    auto self = this->shared_from_this();
    timer_.async_wait([self](const boost::system::error_code& ec) {
      if (ec || self->closed_) return;
      if (std::chrono::steady_clock::now() >= self->last_ + self->idle_) return self->close();
      self->watch();
    });
  }

  A a_;
  B b_;
  boost::asio::steady_timer timer_;
  std::chrono::steady_clock::duration idle_;
  std::chrono::steady_clock::time_point last_;
  Buffer fromA_{};
  Buffer fromB_{};
  std::string pending_;
  int ended_ = 0;
  bool closed_ = false;
};

}  // namespace hydra::core::sandbox
