#pragma once

// An agent's network policy ([agents.NAME] network, allowed_hosts):
//
//   "open"       the host's network, as hydra has it (the default)
//   "none"       a network namespace of its own with only loopback: nothing
//                outside it, not the host's 127.0.0.1, not its abstract unix
//                sockets; a listener the agent opens is not reachable from the host
//   "allowlist"  the same namespace, plus an HTTP proxy hydra runs
//                (network_proxy.h) reached on 127.0.0.1:kProxyPort inside it,
//                which connects only to the host names in allowed_hosts
//
// This file holds what decides: the names, the rules of allowed_hosts, and
// the reading of a proxy request. What starts the namespace is net_jail.h.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hydra::core::sandbox {

enum class NetworkMode { Open, None, Allowlist };

std::optional<NetworkMode> parseNetworkMode(std::string_view name);
std::string_view networkModeName(NetworkMode mode);
// The names hydra.toml accepts, in the order the docs list them.
std::vector<std::string_view> networkModeNames();

// The port the proxy's forwarder listens on inside the agent's namespace;
// the namespace is the agent's alone, so no other run can hold it.
inline constexpr std::uint16_t kProxyPort = 3128;

// One allowed_hosts entry: a host name (any port) or "host:port"; an IP
// literal ("127.0.0.1", "[::1]:8080") only matches when asked for as such.
struct HostRule {
  std::string host;  // lowercase, no brackets
  std::optional<std::uint16_t> port;
};

// `entry` as a rule, or nullopt with `why` set: empty, a scheme or path
// ("https://..."), a port that is not 1-65535, characters no host name has.
std::optional<HostRule> parseHostRule(std::string_view entry, std::string* why);

// Whether a connection to `host`:`port` (as the client named it) is allowed.
bool hostAllowed(const std::vector<HostRule>& rules, std::string_view host, std::uint16_t port);

// A proxy request's head (everything up to and including the blank line),
// read: CONNECT host:port (a tunnel, for HTTPS) or an absolute http:// URI
// (forwarded, its head rewritten to origin form).
struct ProxyRequest {
  bool tunnel = false;  // CONNECT
  std::string host;     // lowercase, no brackets
  std::uint16_t port = 0;
  // What goes to the origin server for a forwarded request: the request line
  // in origin form, the client's headers without Proxy-* and Connection,
  // then "Connection: close" (one request per connection).
  std::string forwardHead;
};

// The answer to a request the proxy does not carry out.
struct ProxyRefusal {
  int status = 400;    // 400 malformed, 403 not allowed
  std::string reason;  // one line, for the client and for the agent's log
};

// `head` read as a proxy request, or the 400 that answers it. Never throws.
struct ParsedProxyRequest {
  std::optional<ProxyRequest> request;
  ProxyRefusal refusal;
};
ParsedProxyRequest parseProxyRequest(std::string_view head);

// Whether `request` may go out under `rules`: nullopt, or the 403 and why
// ("refused connect to example.org:443 (not in allowed_hosts)").
std::optional<ProxyRefusal> checkAllowed(const ProxyRequest& request, const std::vector<HostRule>& rules);

// For `hydra sandbox`: what an agent with network `mode` ("open", ...) and
// these allowed hosts reaches, `confined` or not by bubblewrap.
std::string describeNetwork(std::string_view mode, const std::vector<std::string>& allowedHosts, bool confined);

// The whole HTTP response for a refusal (status line, headers, a text body).
std::string refusalResponse(const ProxyRefusal& refusal);

}  // namespace hydra::core::sandbox
