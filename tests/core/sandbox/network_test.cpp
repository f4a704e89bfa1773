// The network policy's decisions (core/sandbox/network.h) and the proxy
// (network_proxy.h) driven over its real unix socket: malformed requests get
// 400, hosts not allowed 403 (and the run is told), allowed ones are carried
// to a real loopback server, and close() leaves nothing behind.

#include "core/sandbox/network.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "core/sandbox/network_proxy.h"

namespace hydra::core::sandbox {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::vector<HostRule> rules(std::initializer_list<const char*> entries) {
  std::vector<HostRule> out;
  for (const char* e : entries) {
    std::string why;
    auto rule = parseHostRule(e, &why);
    EXPECT_TRUE(rule) << e << ": " << why;
    if (rule) out.push_back(*rule);
  }
  return out;
}

TEST(HostRules, NamesPortsAndLiteralsAreReadAndBadEntriesSayWhy) {
  std::string why;
  auto rule = parseHostRule("API.Example.com", &why);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->host, "api.example.com");
  EXPECT_FALSE(rule->port);
  rule = parseHostRule("[::1]:8080", &why);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->host, "::1");
  EXPECT_EQ(rule->port, 8080);
  for (const char* bad : {"", "https://api.example.com", "api.example.com/v1", "host:0", "host:70000", "host:x",
                          "::1", "a b", "[::1", "host:80:90"}) {
    why.clear();
    EXPECT_FALSE(parseHostRule(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(HostRules, ANameIsAllowedByNameAndPortNeverByWhatItResolvesTo) {
  const auto allowed = rules({"api.example.com", "localhost:8080"});
  EXPECT_TRUE(hostAllowed(allowed, "api.example.com", 443));
  EXPECT_TRUE(hostAllowed(allowed, "API.EXAMPLE.COM", 80));
  EXPECT_TRUE(hostAllowed(allowed, "localhost", 8080));
  EXPECT_FALSE(hostAllowed(allowed, "localhost", 8081));
  EXPECT_FALSE(hostAllowed(allowed, "127.0.0.1", 8080)) << "an IP literal is not the name that was listed";
  EXPECT_FALSE(hostAllowed(allowed, "evil.api.example.com", 443));
  EXPECT_FALSE(hostAllowed(allowed, "example.com", 443));
}

TEST(ProxyRequests, ConnectAndAbsoluteUrisAreRead) {
  auto parsed = parseProxyRequest("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n");
  ASSERT_TRUE(parsed.request) << parsed.refusal.reason;
  EXPECT_TRUE(parsed.request->tunnel);
  EXPECT_EQ(parsed.request->host, "api.example.com");
  EXPECT_EQ(parsed.request->port, 443);

  parsed = parseProxyRequest(
      "POST http://Localhost:8080/v1/messages?x=1 HTTP/1.1\r\nHost: localhost:8080\r\nProxy-Authorization: b\r\n"
      "Connection: keep-alive\r\nContent-Length: 2\r\n\r\n");
  ASSERT_TRUE(parsed.request) << parsed.refusal.reason;
  EXPECT_FALSE(parsed.request->tunnel);
  EXPECT_EQ(parsed.request->host, "localhost");
  EXPECT_EQ(parsed.request->port, 8080);
  EXPECT_EQ(parsed.request->forwardHead,
            "POST /v1/messages?x=1 HTTP/1.1\r\nHost: localhost:8080\r\nContent-Length: 2\r\nConnection: close\r\n\r\n");

  parsed = parseProxyRequest("GET http://example.org HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(parsed.request) << parsed.refusal.reason;
  EXPECT_EQ(parsed.request->port, 80);
  EXPECT_EQ(parsed.request->forwardHead, "GET / HTTP/1.0\r\nHost: example.org\r\nConnection: close\r\n\r\n");
}

TEST(ProxyRequests, MalformedRequestsGet400NeverACrash) {
  for (const char* bad : {"", "\r\n\r\n", "GET\r\n\r\n", "GET / HTTP/1.1\r\n\r\n", "GET http://x/ HTTP/2\r\n\r\n",
                          "CONNECT host HTTP/1.1\r\n\r\n", "CONNECT :443 HTTP/1.1\r\n\r\n",
                          "CONNECT host:99999 HTTP/1.1\r\n\r\n", "GET https://x/ HTTP/1.1\r\n\r\n",
                          "GET http://user@x/ HTTP/1.1\r\n\r\n", "GET http://x/ HTTP/1.1\r\nno colon\r\n\r\n",
                          "GET http://x/ HTTP/1.1\r\nHost: x\r\n", "GET  http://x/ HTTP/1.1\r\n\r\n",
                          "G\x01T http://x/ HTTP/1.1\r\n\r\n", "GET http://[::1/ HTTP/1.1\r\n\r\n",
                          "GET http://x:y/ HTTP/1.1\r\n\r\n", "GET http://x?q HTTP/1.1\r\n\r\n"}) {
    const auto parsed = parseProxyRequest(bad);
    EXPECT_FALSE(parsed.request) << bad;
    EXPECT_EQ(parsed.refusal.status, 400) << bad;
    EXPECT_THAT(parsed.refusal.reason, StartsWith("malformed proxy request: ")) << bad;
  }
}

TEST(ProxyRequests, AHostNotAllowedGets403WithTheReason) {
  const auto parsed = parseProxyRequest("CONNECT example.org:443 HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(parsed.request);
  const auto refusal = checkAllowed(*parsed.request, rules({"api.example.com"}));
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->status, 403);
  EXPECT_EQ(refusal->reason, "refused connect to example.org:443 (not in allowed_hosts)");
  const std::string response = refusalResponse(*refusal);
  EXPECT_THAT(response, StartsWith("HTTP/1.1 403 Forbidden\r\n"));
  EXPECT_THAT(response, HasSubstr("\r\n\r\nhydra: network: refused connect to example.org:443"));
  EXPECT_FALSE(checkAllowed(*parsed.request, rules({"example.org:443"})));
}

// A proxy on its own io thread, and a loopback server answering "ORIGIN".
class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    origin_.listen();
    originPort_ = origin_.local_endpoint().port();
  }
  // The origin answers `count` connections, then stops.
  void serveOrigin(int count) {
    originThread_ = std::thread([this, count] {
      for (int i = 0; i < count; ++i) {
        boost::system::error_code ec;
        asio::ip::tcp::socket peer(originIo_);
        origin_.accept(peer, ec);
        if (ec) return;
        asio::streambuf head;
        asio::read_until(peer, head, "\r\n\r\n", ec);
        const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nORIGIN";
        asio::write(peer, asio::buffer(reply), ec);
      }
    });
  }
  void TearDown() override {
    asio::post(io_, [this] {
      if (proxy_) proxy_->close();
    });
    if (thread_.joinable()) thread_.join();
    if (originThread_.joinable()) originThread_.join();
    boost::system::error_code ignored;
    origin_.close(ignored);
  }

  void start(std::vector<HostRule> allowed, ProxyLimits limits = {}) {
    proxy_ = NetworkProxy::start(io_, std::move(allowed), [this](const std::string& reason) {
      std::lock_guard lock(mutex_);
      refused_.push_back(reason);
    }, limits);
    thread_ = std::thread([this] { io_.run(); });
  }

  // Sends `request` to the proxy and reads until it closes.
  std::string exchange(const std::string& request) {
    asio::io_context io;
    asio::local::stream_protocol::socket socket(io);
    socket.connect(proxy_->socketPath().string());
    boost::system::error_code ec;
    // A proxy may answer and close before it reads the request (over its
    // connection limit): its answer is still there to read.
    asio::write(socket, asio::buffer(request), ec);
    std::string reply;
    asio::read(socket, asio::dynamic_buffer(reply), ec);
    return reply;
  }

  asio::io_context io_;
  std::shared_ptr<NetworkProxy> proxy_;
  std::thread thread_;
  std::thread originThread_;
  std::mutex mutex_;
  std::vector<std::string> refused_;
  asio::io_context originIo_;
  asio::ip::tcp::acceptor origin_{originIo_, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  int originPort_ = 0;
};

TEST_F(ProxyTest, AllowedHostsAreReachedAndTheRestRefusedAndTold) {
  serveOrigin(2);
  start(rules({("localhost:" + std::to_string(originPort_)).c_str()}));
  const std::string port = std::to_string(originPort_);
  EXPECT_THAT(exchange("GET http://localhost:" + port + "/ HTTP/1.1\r\nHost: localhost\r\n\r\n"),
              HasSubstr("ORIGIN"));
  const std::string tunnelled = exchange("CONNECT localhost:" + port + " HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n");
  EXPECT_THAT(tunnelled, StartsWith("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK"));
  EXPECT_THAT(tunnelled, HasSubstr("ORIGIN"));

  const std::string refused = exchange("GET http://127.0.0.1:" + port + "/ HTTP/1.1\r\n\r\n");
  EXPECT_THAT(refused, StartsWith("HTTP/1.1 403 Forbidden"));
  EXPECT_THAT(refused, Not(HasSubstr("ORIGIN")));
  EXPECT_THAT(exchange("nonsense\r\n\r\n"), StartsWith("HTTP/1.1 400 Bad Request"));
  EXPECT_THAT(exchange(std::string(20000, 'x')), StartsWith("HTTP/1.1 431"));
  std::lock_guard lock(mutex_);
  EXPECT_EQ(refused_, std::vector<std::string>{"refused request to 127.0.0.1:" + port + " (not in allowed_hosts)"});
}

TEST_F(ProxyTest, CloseEndsItAndRemovesItsSocket) {
  start(rules({"localhost"}));
  const fs::path directory = proxy_->directory();
  ASSERT_TRUE(fs::exists(proxy_->socketPath()));
  EXPECT_EQ(fs::status(directory).permissions() & fs::perms::all, fs::perms::owner_all);
  asio::post(io_, [this] { proxy_->close(); });
  for (int i = 0; i < 100 && fs::exists(directory); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(fs::exists(directory));
}

TEST_F(ProxyTest, ConnectionsOverTheLimitAreAnswered503) {
  ProxyLimits limits;
  limits.maxConnections = 1;
  start(rules({"localhost"}), limits);
  asio::io_context io;
  asio::local::stream_protocol::socket first(io);
  first.connect(proxy_->socketPath().string());  // holds the one connection, sending nothing
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_THAT(exchange("GET http://localhost/ HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 503"));
}

}  // namespace
}  // namespace hydra::core::sandbox
