// The server's hot path in process: framing, JSON-RPC parsing, dispatch,
// serialisation of the reply and its frame, for small and large messages.

#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include "protocol/framing.h"
#include "protocol/message.h"
#include "server/dispatcher.h"

namespace {

namespace json = boost::json;
using hydra::protocol::FrameDecoder;
using hydra::protocol::encodeFrame;
using hydra::server::Dispatcher;

// A hydra/ping-shaped request whose serialised body is about `size` bytes.
std::string pingBody(std::int64_t id, std::size_t size) {
  std::string prefix = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"bench/echo","params":{"data":")";
  std::string suffix = R"("}})";
  std::size_t fill = size > prefix.size() + suffix.size() ? size - prefix.size() - suffix.size() : 0;
  return prefix + std::string(fill, 'x') + suffix;
}

void BM_FrameDecode(benchmark::State& state) {
  auto size = static_cast<std::size_t>(state.range(0));
  std::string frame = encodeFrame(pingBody(1, size));
  FrameDecoder decoder;
  for (auto _ : state) {
    decoder.feed(frame);
    auto r = decoder.next();
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_FrameDecode)->Arg(1 << 10)->Arg(1 << 20);

void BM_ParseMessage(benchmark::State& state) {
  std::string body = pingBody(1, static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    auto r = hydra::protocol::parseMessage(body);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_ParseMessage)->Arg(1 << 10)->Arg(1 << 20);

// Frame in -> frame out: decode, parse, dispatch to a handler that echoes its
// params, serialise the response, frame it.
void BM_RoundTrip(benchmark::State& state) {
  auto size = static_cast<std::size_t>(state.range(0));
  boost::asio::io_context io;
  std::size_t outBytes = 0;
  auto dispatcher = std::make_shared<Dispatcher>(io.get_executor(), [&](const hydra::protocol::Message& m) {
    std::string frame = encodeFrame(hydra::protocol::serialize(m));
    outBytes += frame.size();
    benchmark::DoNotOptimize(frame);
  });
  dispatcher->setState(Dispatcher::State::Running);
  dispatcher->bind<json::value>("bench/echo", [](json::value params, Dispatcher::Reply reply) {
    reply(std::move(params));
  });
  std::string frame = encodeFrame(pingBody(1, size));
  FrameDecoder decoder;
  for (auto _ : state) {
    decoder.feed(frame);
    while (auto r = decoder.next()) dispatcher->handle(std::get<hydra::protocol::Frame>(*r).body);
    io.restart();
    io.poll();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
  state.counters["reply_bytes"] = static_cast<double>(outBytes) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_RoundTrip)->Arg(1 << 10)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
