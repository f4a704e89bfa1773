#include "core/sandbox/network.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace hydra::core::sandbox {

namespace {

constexpr std::array<std::pair<NetworkMode, std::string_view>, 3> kModes = {{
    {NetworkMode::Open, "open"},
    {NetworkMode::None, "none"},
    {NetworkMode::Allowlist, "allowlist"},
}};

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool startsWithNoCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && lowercase(text.substr(0, prefix.size())) == prefix;
}

std::optional<std::uint16_t> parsePort(std::string_view text) {
  unsigned value = 0;
  if (text.empty() || text.size() > 5) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

struct HostPort {
  std::string host;
  std::optional<std::uint16_t> port;
};

// "name", "name:port", "[v6]" or "[v6]:port"; nullopt with `why` otherwise.
std::optional<HostPort> splitHostPort(std::string_view text, std::string* why) {
  auto fail = [why](std::string message) -> std::optional<HostPort> {
    if (why) *why = std::move(message);
    return std::nullopt;
  };
  if (text.empty()) return fail("no host");
  std::string_view host;
  std::string_view rest;
  bool literal6 = false;
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return fail("'[' without ']'");
    host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
    literal6 = true;
  } else {
    const auto colon = text.find(':');
    if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
      return fail("an IPv6 address must be in brackets, as [::1]:8080");
    }
    host = text.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon);
  }
  if (host.empty()) return fail("no host");
  if (host.size() > 253) return fail("a host name is at most 253 characters");
  for (char c : host) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
                    (literal6 && c == ':');
    if (!ok) return fail("'" + std::string(1, c) + "' is not part of a host name");
  }
  HostPort out{lowercase(host), std::nullopt};
  if (!rest.empty()) {
    if (rest.front() != ':') return fail("unexpected '" + std::string(rest) + "' after the host");
    out.port = parsePort(rest.substr(1));
    if (!out.port) return fail("the port must be a number from 1 to 65535");
  }
  return out;
}

ProxyRefusal malformed(std::string reason) { return ProxyRefusal{400, "malformed proxy request: " + reason}; }

bool isToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
  });
}

}  // namespace

std::optional<NetworkMode> parseNetworkMode(std::string_view name) {
  for (const auto& [mode, text] : kModes) {
    if (text == name) return mode;
  }
  return std::nullopt;
}

std::string_view networkModeName(NetworkMode mode) {
  for (const auto& [each, text] : kModes) {
    if (each == mode) return text;
  }
  return "open";
}

std::vector<std::string_view> networkModeNames() {
  std::vector<std::string_view> names;
  for (const auto& mode : kModes) names.push_back(mode.second);
  return names;
}

std::optional<HostRule> parseHostRule(std::string_view entry, std::string* why) {
  if (entry.find("://") != std::string_view::npos || entry.find('/') != std::string_view::npos) {
    if (why) *why = "a host name, or host:port, without a scheme or path";
    return std::nullopt;
  }
  auto parsed = splitHostPort(entry, why);
  if (!parsed) return std::nullopt;
  return HostRule{std::move(parsed->host), parsed->port};
}

bool hostAllowed(const std::vector<HostRule>& rules, std::string_view host, std::uint16_t port) {
  const std::string asked = lowercase(host);
  return std::any_of(rules.begin(), rules.end(), [&](const HostRule& rule) {
    return rule.host == asked && (!rule.port || *rule.port == port);
  });
}

ParsedProxyRequest parseProxyRequest(std::string_view head) {
  ParsedProxyRequest out;
  const auto lineEnd = head.find("\r\n");
  if (lineEnd == std::string_view::npos) {
    out.refusal = malformed("no request line");
    return out;
  }
  const std::string_view requestLine = head.substr(0, lineEnd);
  const auto firstSpace = requestLine.find(' ');
  const auto lastSpace = requestLine.rfind(' ');
  if (firstSpace == std::string_view::npos || firstSpace == lastSpace) {
    out.refusal = malformed("the request line is not METHOD TARGET VERSION");
    return out;
  }
  const std::string_view method = requestLine.substr(0, firstSpace);
  const std::string_view target = requestLine.substr(firstSpace + 1, lastSpace - firstSpace - 1);
  const std::string_view version = requestLine.substr(lastSpace + 1);
  if (!isToken(method) || target.empty() || target.find(' ') != std::string_view::npos ||
      (version != "HTTP/1.1" && version != "HTTP/1.0")) {
    out.refusal = malformed("the request line is not METHOD TARGET HTTP/1.x");
    return out;
  }

  ProxyRequest request;
  std::string why;
  std::string_view path = "/";
  if (method == "CONNECT") {
    auto parsed = splitHostPort(target, &why);
    if (!parsed) {
      out.refusal = malformed("CONNECT target '" + std::string(target) + "': " + why);
      return out;
    }
    if (!parsed->port) {
      out.refusal = malformed("CONNECT target '" + std::string(target) + "' has no port");
      return out;
    }
    request.tunnel = true;
    request.host = parsed->host;
    request.port = *parsed->port;
  } else {
    if (startsWithNoCase(target, "https://")) {
      out.refusal = malformed("https:// goes through CONNECT, not as a plain request");
      return out;
    }
    if (!startsWithNoCase(target, "http://")) {
      out.refusal = malformed("'" + std::string(target) + "' is not an absolute http:// URI");
      return out;
    }
    std::string_view rest = target.substr(7);
    const auto authorityEnd = rest.find_first_of("/?#");
    const std::string_view authority = rest.substr(0, authorityEnd);
    if (authority.find('@') != std::string_view::npos) {
      out.refusal = malformed("user information in the URI is not forwarded");
      return out;
    }
    auto parsed = splitHostPort(authority, &why);
    if (!parsed) {
      out.refusal = malformed("host '" + std::string(authority) + "': " + why);
      return out;
    }
    request.host = parsed->host;
    request.port = parsed->port.value_or(80);
    if (authorityEnd != std::string_view::npos) {
      path = rest.substr(authorityEnd);
      if (path.front() != '/') {
        out.refusal = malformed("the URI's path must start with '/'");
        return out;
      }
    }
  }

  // The headers: checked for every request, kept for forwarded ones.
  std::string headers;
  bool sawHost = false;
  std::size_t at = lineEnd + 2;
  for (;;) {
    const auto end = head.find("\r\n", at);
    if (end == std::string_view::npos) {
      out.refusal = malformed("the head does not end with an empty line");
      return out;
    }
    const std::string_view line = head.substr(at, end - at);
    at = end + 2;
    if (line.empty()) break;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || !isToken(line.substr(0, colon))) {
      out.refusal = malformed("a header line is not NAME: VALUE");
      return out;
    }
    const std::string name = lowercase(line.substr(0, colon));
    if (name.rfind("proxy-", 0) == 0 || name == "connection" || name == "keep-alive") continue;
    if (name == "host") sawHost = true;
    headers.append(line);
    headers += "\r\n";
  }
  if (!request.tunnel) {
    request.forwardHead = std::string(method) + " " + std::string(path) + " " + std::string(version) + "\r\n";
    if (!sawHost) {
      const bool literal6 = request.host.find(':') != std::string::npos;
      request.forwardHead += "Host: " + (literal6 ? "[" + request.host + "]" : request.host) +
                             (request.port == 80 ? "" : ":" + std::to_string(request.port)) + "\r\n";
    }
    request.forwardHead += headers + "Connection: close\r\n\r\n";
  }
  out.request = std::move(request);
  return out;
}

std::optional<ProxyRefusal> checkAllowed(const ProxyRequest& request, const std::vector<HostRule>& rules) {
  if (hostAllowed(rules, request.host, request.port)) return std::nullopt;
  const bool literal6 = request.host.find(':') != std::string::npos;
  return ProxyRefusal{403, std::string("refused ") + (request.tunnel ? "connect" : "request") + " to " +
                               (literal6 ? "[" + request.host + "]" : request.host) + ":" +
                               std::to_string(request.port) + " (not in allowed_hosts)"};
}

std::string describeNetwork(std::string_view mode, const std::vector<std::string>& allowedHosts, bool confined) {
  const std::string how = confined ? "made by bubblewrap" : "made by hydra, or the agent is not started";
  switch (parseNetworkMode(mode).value_or(NetworkMode::Open)) {
    case NetworkMode::Open:
      return "the host's network: everything hydra reaches, 127.0.0.1 and abstract unix sockets included";
    case NetworkMode::None:
      return "no network: a namespace of its own with loopback only (" + how + ")";
    case NetworkMode::Allowlist: {
      std::string hosts;
      for (const auto& h : allowedHosts) hosts += (hosts.empty() ? "" : ", ") + h;
      return "only " + hosts + ", through hydra's HTTP proxy (HTTPS_PROXY); a namespace of its own otherwise (" +
             how + ")";
    }
  }
  return {};
}

std::string refusalResponse(const ProxyRefusal& refusal) {
  const std::string body = "hydra: network: " + refusal.reason + "\n";
  const char* text = refusal.status == 403   ? "Forbidden"
                     : refusal.status == 502 ? "Bad Gateway"
                     : refusal.status == 503 ? "Service Unavailable"
                     : refusal.status == 504 ? "Gateway Timeout"
                     : refusal.status == 431 ? "Request Header Fields Too Large"
                                             : "Bad Request";
  return "HTTP/1.1 " + std::to_string(refusal.status) + " " + text +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace hydra::core::sandbox
