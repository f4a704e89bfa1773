#pragma once

// The HTTP proxy of one agent run with network = "allowlist": it listens on
// a unix socket in a private directory (mode 0700) of its own, which the
// agent's forwarder (net_jail.h) reaches from inside the agent's network
// namespace. It carries out CONNECT host:port (HTTPS) and absolute-URI http://
// requests to the hosts its rules allow, by the name the client asked for,
// and answers anything else itself: 400 for a malformed request, 403 for a
// host not allowed (and tells `onRefused`), 502/504 when the host cannot be
// reached, 503 when the run already has kMaxConnections open.
//
// Bounded: connections, the size of a request head, the time to send one,
// to connect, and idle time; relays use fixed buffers (relay.h). close() (or
// the destructor) ends every connection and removes the socket and its
// directory: nothing stays listening after the run.

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/sandbox/network.h"
#include "core/sandbox/relay.h"

namespace hydra::core::sandbox {

struct ProxyLimits {
  std::size_t maxConnections = 64;
  std::size_t maxHeadBytes = 16 * 1024;
  std::chrono::steady_clock::duration headTimeout = std::chrono::seconds(30);
  std::chrono::steady_clock::duration connectTimeout = std::chrono::seconds(30);
  std::chrono::steady_clock::duration idleTimeout = std::chrono::minutes(10);
};

class NetworkProxy : public std::enable_shared_from_this<NetworkProxy> {
 public:
  // Called on the io_context with a refusal's reason, e.g. "refused connect
  // to example.org:443 (not in allowed_hosts)".
  using OnRefused = std::function<void(const std::string& reason)>;

  // Listening at once, in a new directory under `parent` (the system's
  // temporary directory when empty). Throws std::system_error.
  static std::shared_ptr<NetworkProxy> start(boost::asio::io_context& io, std::vector<HostRule> rules,
                                             OnRefused onRefused, ProxyLimits limits = {},
                                             const std::filesystem::path& parent = {});
  ~NetworkProxy();

  const std::filesystem::path& socketPath() const { return socket_; }
  const std::filesystem::path& directory() const { return directory_; }
  void close();

  // For the proxy's sessions.
  const std::vector<HostRule>& rules() const { return rules_; }
  const ProxyLimits& limits() const { return limits_; }
  void refused(const std::string& reason) const;
  void track(const std::shared_ptr<Closable>& closable);

 private:
  NetworkProxy(boost::asio::io_context& io, std::vector<HostRule> rules, OnRefused onRefused, ProxyLimits limits);
  void accept();
  std::size_t open();

  boost::asio::local::stream_protocol::acceptor acceptor_;
  std::vector<HostRule> rules_;
  OnRefused onRefused_;
  ProxyLimits limits_;
  std::filesystem::path directory_;
  std::filesystem::path socket_;
  std::vector<std::weak_ptr<Closable>> live_;
  bool closed_ = false;
};

}  // namespace hydra::core::sandbox
