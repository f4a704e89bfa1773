// The transport's send queue against real pipes: a client that stops reading
// is dropped once more than the limit waits, a client that reads gets every
// message whole, and large messages at the front of the queue never count.

#include "server/transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/events/events.h"
#include "protocol/framing.h"
#include "server/dispatcher.h"
#include "server/output_notifier.h"

namespace hydra::server {
namespace {

namespace json = boost::json;

// The two pipes of a session. The server's ends are handed to a Transport
// (which duplicates them) and closed here; the test keeps the client's ends.
struct Pipes {
  int clientWrites = -1;  // the server's stdin
  int clientReads = -1;   // the server's stdout
  int serverIn = -1;
  int serverOut = -1;

  Pipes() {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe");
    serverIn = in[0];
    clientWrites = in[1];
    clientReads = out[0];
    serverOut = out[1];
    // The smallest pipe Linux allows, so that an unread pipe fills at once.
    ::fcntl(serverOut, F_SETPIPE_SZ, 4096);
  }
  void closeServerEnds() {
    closeFd(serverIn);
    closeFd(serverOut);
  }
  ~Pipes() {
    closeServerEnds();
    closeFd(clientWrites);
    closeFd(clientReads);
  }
  static void closeFd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// A JSON string body of about `bytes` bytes.
std::string bodyOf(std::size_t bytes, char fill = 'x') {
  return "\"" + std::string(bytes, fill) + "\"";
}

class TransportTest : public ::testing::Test {
 protected:
  void make(
      SendLimits limits, std::function<void(std::string)> onFrame = [](std::string) {}) {
    transport = std::make_unique<Transport>(io, pipes.serverIn, pipes.serverOut,
                                            protocol::FrameLimits{}, limits);
    pipes.closeServerEnds();
    transport->start(Transport::Handlers{
        .onFrame = std::move(onFrame),
        .onFrameError = [](const protocol::FrameError&) {},
        .onClosed =
            [this] {
              EXPECT_FALSE(insideSend) << "onClosed ran from inside send()";
              ++closedCount;
            },
    });
  }
  void send(std::string body) {
    insideSend = true;
    transport->send(std::move(body));
    insideSend = false;
  }
  void poll() {
    io.restart();
    io.poll();
  }

  boost::asio::io_context io;
  Pipes pipes;
  std::unique_ptr<Transport> transport;
  bool insideSend = false;
  int closedCount = 0;
};

TEST_F(TransportTest, ClientThatStopsReadingIsDroppedOncePastTheLimitAndItsQueueFreed) {
  constexpr std::size_t kLimit = 256 * 1024;
  make(SendLimits{.maxWaitingBytes = kLimit});
  const std::string body = bodyOf(10 * 1024);
  const std::size_t frame = protocol::encodeFrame(body).size();

  int sent = 0;
  while (!transport->outputClosed()) {
    ASSERT_LT(sent, 1000) << "never dropped";
    send(body);
    ++sent;
    poll();
  }
  // Dropped at the first message past the limit: the limit, the two messages
  // at the front, and what the pipe took.
  EXPECT_LE(static_cast<std::size_t>(sent) * frame, kLimit + 3 * frame + 4096);
  EXPECT_GE(static_cast<std::size_t>(sent) * frame, kLimit);
  EXPECT_EQ(closedCount, 1);
  EXPECT_EQ(transport->queuedBytes(), 0u) << "the queue was kept after the client was dropped";

  send(body);  // nothing more is queued for a client that is gone
  EXPECT_EQ(transport->queuedBytes(), 0u);
  bool drained = false;
  transport->closeAfterDrain([&] { drained = true; });
  poll();
  EXPECT_TRUE(drained);
  EXPECT_EQ(closedCount, 1);
}

TEST_F(TransportTest, LargeMessagesAtTheFrontOfTheQueueDoNotCountAgainstTheClient) {
  make(SendLimits{.maxWaitingBytes = 64 * 1024});
  send(bodyOf(1024 * 1024, 'a'));  // being written
  send(bodyOf(1024 * 1024, 'b'));  // next
  for (int i = 0; i < 3; ++i) send(bodyOf(10 * 1024));
  poll();
  EXPECT_FALSE(transport->outputClosed());
  EXPECT_EQ(closedCount, 0);

  send(bodyOf(1024 * 1024, 'c'));  // a third one waits behind them: too much
  EXPECT_TRUE(transport->outputClosed());
  poll();
  EXPECT_EQ(closedCount, 1);
}

TEST_F(TransportTest, ClientThatReadsGetsEveryMessageWhole) {
  make(SendLimits{.maxWaitingBytes = 64 * 1024});
  std::string received;
  std::thread reader([&, fd = pipes.clientReads] {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      received.append(buf, static_cast<std::size_t>(n));
    }
  });
  std::vector<std::string> bodies{bodyOf(3 * 1024 * 1024, 'L')};
  for (int i = 0; i < 200; ++i) bodies.push_back(json::serialize(json::value(i)));
  for (const auto& b : bodies) send(b);
  while (transport->queuedBytes() > 0) io.run_one();
  EXPECT_FALSE(transport->outputClosed());
  transport.reset();  // closes the server's copy of stdout: the reader sees the end
  reader.join();

  protocol::FrameDecoder decoder;
  decoder.feed(received);
  std::vector<std::string> got;
  while (auto r = decoder.next()) got.push_back(std::get<protocol::Frame>(*r).body);
  EXPECT_EQ(got, bodies);
  EXPECT_EQ(closedCount, 0);
}

// A client far behind gets no agent output and no counts while it is behind;
// the count of what it missed arrives, whole, before the agent's lifecycle
// notification (flushAgent).
TEST_F(TransportTest, OutputForAClientFarBehindIsCountedNotQueued) {
  make(SendLimits{});
  auto dispatcher = std::make_shared<Dispatcher>(
      io.get_executor(),
      [this](const protocol::Message& m) { transport->send(protocol::serialize(m)); });
  OutputNotifier notifier(
      io, dispatcher, *transport,
      OutputNotifier::Options{.limits = {.interval = std::chrono::milliseconds(50), .maxBytes = 64},
                              .congestedBytes = 16 * 1024});
  dispatcher->notify("test/filler", json::object{{"x", std::string(32 * 1024, 'f')}});
  const std::size_t behind = transport->queuedBytes();
  ASSERT_GT(behind, 16u * 1024);

  constexpr int kLines = 1000;
  for (int i = 0; i < kLines; ++i) {
    notifier.add(
        core::AgentOutput{"r", "a", core::OutputStream::Stdout, "line " + std::to_string(i), {}});
  }
  EXPECT_EQ(transport->queuedBytes(), behind)
      << "output or counts were queued for a client far behind";
  // All but the last few lines, which still wait in the coalescer.
  EXPECT_GT(notifier.droppedForCongestion(), static_cast<std::uint64_t>(kLines) - 10);

  notifier.flushAgent("r", "a");
  EXPECT_EQ(notifier.droppedForCongestion(), static_cast<std::uint64_t>(kLines));
  ASSERT_GT(transport->queuedBytes(), behind);

  std::string received;
  ::fcntl(pipes.clientReads, F_SETFL, O_NONBLOCK);
  while (transport->queuedBytes() > 0) {
    poll();
    char buf[65536];
    ssize_t n = ::read(pipes.clientReads, buf, sizeof buf);
    if (n > 0) received.append(buf, static_cast<std::size_t>(n));
  }
  protocol::FrameDecoder decoder;
  decoder.feed(received);
  std::vector<json::object> messages;
  while (auto r = decoder.next())
    messages.push_back(json::parse(std::get<protocol::Frame>(*r).body).as_object());
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1].at("method").as_string(), "hydra/agentOutput");
  const json::object& params = messages[1].at("params").as_object();
  EXPECT_EQ(params.at("droppedLines").to_number<std::int64_t>(), kLines);
  EXPECT_TRUE(params.at("lines").as_array().empty());
}

// Answers are built before the send queue can bound them, so the number of
// requests in progress is bounded: at 16 the transport stops handing on frames
// (and reading), and resumes when one is answered. The end of input waits too.
TEST_F(TransportTest, ReadingPausesWhileSixteenRequestsAreInProgress) {
  std::shared_ptr<Dispatcher> dispatcher;
  // The frames reach the dispatcher as the real server's do.
  make(SendLimits{}, [&](std::string body) { dispatcher->handle(body); });
  dispatcher = std::make_shared<Dispatcher>(io.get_executor(), [this](const protocol::Message& m) {
    transport->send(protocol::serialize(m));
  });
  dispatcher->setState(Dispatcher::State::Running);
  dispatcher->onBusyChanged([this](bool busy) {
    if (busy) {
      transport->pauseReading();
    } else {
      transport->resumeReading();
    }
  });
  std::vector<Dispatcher::Reply> held;
  dispatcher->bind<json::value>("test/hold", [&](const json::value&, Dispatcher::Reply reply) {
    held.push_back(std::move(reply));
  });

  constexpr int kRequests = 20;
  std::string input;
  for (int i = 0; i < kRequests; ++i) {
    input += protocol::encodeFrame(R"({"jsonrpc":"2.0","id":)" + std::to_string(i) +
                                   R"(,"method":"test/hold"})");
  }
  ASSERT_EQ(::write(pipes.clientWrites, input.data(), input.size()),
            static_cast<ssize_t>(input.size()));
  Pipes::closeFd(pipes.clientWrites);  // and the input ends
  auto settle = [&] {
    io.restart();
    while (io.poll() > 0) {
    }
  };

  settle();
  EXPECT_EQ(held.size(), Dispatcher::kMaxRequestsInProgress);
  EXPECT_TRUE(dispatcher->busy());
  EXPECT_EQ(closedCount, 0) << "the end of input overtook requests not yet handed on";

  held[0](nullptr);
  settle();
  EXPECT_EQ(held.size(), Dispatcher::kMaxRequestsInProgress + 1);

  for (std::size_t answered = 1; answered < held.size(); ++answered) {
    held[answered](nullptr);
    settle();
  }
  EXPECT_EQ(held.size(), static_cast<std::size_t>(kRequests));
  EXPECT_FALSE(dispatcher->busy());
  EXPECT_EQ(dispatcher->pendingCount(), 0u);
  EXPECT_EQ(closedCount, 1);
}

}  // namespace
}  // namespace hydra::server
