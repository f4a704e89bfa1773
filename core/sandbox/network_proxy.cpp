#include "core/sandbox/network_proxy.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <system_error>

namespace hydra::core::sandbox {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Local = asio::local::stream_protocol;
using Tcp = asio::ip::tcp;

namespace {

// One client connection: its request head, then either an answer from the
// proxy or a relay to the host it asked for.
class ProxySession final : public Closable, public std::enable_shared_from_this<ProxySession> {
 public:
  ProxySession(std::shared_ptr<NetworkProxy> proxy, Local::socket client)
      : proxy_(std::move(proxy)),
        client_(std::move(client)),
        upstream_(client_.get_executor()),
        resolver_(client_.get_executor()),
        timer_(client_.get_executor()) {}

  void start() {
    auto self = shared_from_this();
    arm(proxy_->limits().headTimeout, [self] { self->close(); });
    asio::async_read_until(client_, asio::dynamic_buffer(head_, proxy_->limits().maxHeadBytes), "\r\n\r\n",
                           [self](const boost::system::error_code& ec, std::size_t n) { self->onHead(ec, n); });
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    resolver_.cancel();
    upstream_.close(ignored);
    client_.close(ignored);
  }

 private:
  template <class Handler>
  void arm(std::chrono::steady_clock::duration after, Handler onExpiry) {
    timer_.expires_after(after);
    auto self = shared_from_this();
    timer_.async_wait([self, onExpiry](const boost::system::error_code& ec) {
      if (!ec && !self->closed_) onExpiry();
    });
  }

  void onHead(const boost::system::error_code& ec, std::size_t n) {
    if (closed_) return;
    if (ec == asio::error::not_found || ec == asio::error::message_size) {
      return answer({431, "the request head is over " + std::to_string(proxy_->limits().maxHeadBytes) + " bytes"});
    }
    if (ec) return close();
    ParsedProxyRequest parsed = parseProxyRequest(std::string_view(head_).substr(0, n));
    if (!parsed.request) return answer(parsed.refusal);
    if (auto refusal = checkAllowed(*parsed.request, proxy_->rules())) {
      proxy_->refused(refusal->reason);
      return answer(*refusal);
    }
    request_ = std::move(*parsed.request);
    leftover_ = head_.substr(n);
    head_.clear();
    head_.shrink_to_fit();
    auto self = shared_from_this();
    arm(proxy_->limits().connectTimeout, [self] {
      self->resolver_.cancel();
      boost::system::error_code ignored;
      self->upstream_.close(ignored);
      self->timedOut_ = true;
    });
    resolver_.async_resolve(request_.host, std::to_string(request_.port),
                            [self](const boost::system::error_code& rec, Tcp::resolver::results_type results) {
                              if (self->closed_) return;
                              if (rec) return self->unreachable(rec);
                              asio::async_connect(self->upstream_, results,
                                                  [self](const boost::system::error_code& cec, const Tcp::endpoint&) {
                                                    if (self->closed_) return;
                                                    if (cec) return self->unreachable(cec);
                                                    self->connected();
                                                  });
                            });
  }

  void unreachable(const boost::system::error_code& ec) {
    const std::string target = request_.host + ":" + std::to_string(request_.port);
    if (timedOut_) return answer({504, "no connection to " + target + " in time"});
    answer({502, "cannot reach " + target + ": " + ec.message()});
  }

  void connected() {
    timer_.cancel();
    auto self = shared_from_this();
    if (!request_.tunnel) return relay(request_.forwardHead + leftover_);
    reply_ = "HTTP/1.1 200 Connection established\r\n\r\n";
    asio::async_write(client_, asio::buffer(reply_), [self](const boost::system::error_code& ec, std::size_t) {
      if (ec || self->closed_) return self->close();
      self->relay(std::move(self->leftover_));
    });
  }

  void relay(std::string toHost) {
    closed_ = true;  // the sockets belong to the relay from now on
    auto relay = std::make_shared<Relay<Local::socket, Tcp::socket>>(std::move(client_), std::move(upstream_),
                                                                     proxy_->limits().idleTimeout);
    proxy_->track(relay);
    relay->start(std::move(toHost));
  }

  void answer(const ProxyRefusal& refusal) {
    reply_ = refusalResponse(refusal);
    auto self = shared_from_this();
    asio::async_write(client_, asio::buffer(reply_), [self](const boost::system::error_code&, std::size_t) {
      boost::system::error_code ignored;
      self->client_.shutdown(Local::socket::shutdown_both, ignored);
      self->close();
    });
  }

  std::shared_ptr<NetworkProxy> proxy_;
  Local::socket client_;
  Tcp::socket upstream_;
  Tcp::resolver resolver_;
  asio::steady_timer timer_;
  std::string head_;
  std::string leftover_;
  std::string reply_;
  ProxyRequest request_;
  bool timedOut_ = false;
  bool closed_ = false;
};

}  // namespace

NetworkProxy::NetworkProxy(asio::io_context& io, std::vector<HostRule> rules, OnRefused onRefused, ProxyLimits limits)
    : acceptor_(io), rules_(std::move(rules)), onRefused_(std::move(onRefused)), limits_(limits) {}

std::shared_ptr<NetworkProxy> NetworkProxy::start(asio::io_context& io, std::vector<HostRule> rules,
                                                  OnRefused onRefused, ProxyLimits limits, const fs::path& parent) {
  std::shared_ptr<NetworkProxy> proxy(new NetworkProxy(io, std::move(rules), std::move(onRefused), limits));
  // A short path (a unix socket's path is at most 107 bytes), private to
  // hydra's user: mkdtemp makes it 0700.
  std::string pattern = ((parent.empty() ? fs::temp_directory_path() : parent) / "hydra-net-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    throw std::system_error(errno, std::generic_category(), "cannot make a directory for the network proxy");
  }
  proxy->directory_ = pattern;
  proxy->socket_ = proxy->directory_ / "proxy.sock";
  try {
    proxy->acceptor_.open(Local());
    proxy->acceptor_.bind(Local::endpoint(proxy->socket_.string()));
    proxy->acceptor_.listen();
  } catch (const boost::system::system_error& e) {
    proxy->close();
    throw std::system_error(e.code(), "cannot listen on " + proxy->socket_.string());
  }
  proxy->accept();
  return proxy;
}

NetworkProxy::~NetworkProxy() { close(); }

void NetworkProxy::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (auto& weak : live_) {
    if (auto live = weak.lock()) live->close();
  }
  live_.clear();
  std::error_code ec;
  fs::remove(socket_, ec);
  fs::remove(directory_, ec);
}

void NetworkProxy::refused(const std::string& reason) const {
  if (onRefused_ && !closed_) onRefused_(reason);
}

void NetworkProxy::track(const std::shared_ptr<Closable>& closable) {
  if (closed_) return closable->close();
  live_.push_back(closable);
}

std::size_t NetworkProxy::open() {
  std::erase_if(live_, [](const std::weak_ptr<Closable>& weak) { return weak.expired(); });
  return live_.size();
}

void NetworkProxy::accept() {
  auto self = shared_from_this();
  acceptor_.async_accept([self](const boost::system::error_code& ec, Local::socket client) {
    if (self->closed_) return;
    if (!ec) {
      if (self->open() >= self->limits_.maxConnections) {
        // Answered, not queued: the agent learns at once why.
        const std::string busy = refusalResponse(
            {503, "this run already has " + std::to_string(self->limits_.maxConnections) + " connections open"});
        auto reply = std::make_shared<std::string>(busy);
        auto socket = std::make_shared<Local::socket>(std::move(client));
        asio::async_write(*socket, asio::buffer(*reply), [socket, reply](const boost::system::error_code&, std::size_t) {
          boost::system::error_code ignored;
          socket->close(ignored);
        });
      } else {
        auto session = std::make_shared<ProxySession>(self, std::move(client));
        self->track(session);
        session->start();
      }
    }
    self->accept();
  });
}

}  // namespace hydra::core::sandbox
