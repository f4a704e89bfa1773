// The protocol fuzz target: framing, JSON-RPC validation and dispatch with the
// real param decoders. The handlers answer with what they decoded (each wire
// type's value_from), so every decoder and encoder of protocol/hydra.h runs on
// whatever the fuzzer makes; some fail with errors quoting the params, so the
// error paths carry arbitrary text too.

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <string>
#include <variant>
#include <vector>

#include "protocol/errors.h"
#include "protocol/framing.h"
#include "protocol/hydra.h"
#include "protocol/lifecycle.h"
#include "protocol/message.h"
#include "protocol/methods.h"
#include "server/dispatcher.h"
#include "tests/fuzz/fuzz_checks.h"

namespace hydra::fuzz {

namespace json = boost::json;
namespace method = protocol::method;
using server::Dispatcher;
using server::NoParams;

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw Failure(what);
}

// Small limits, so that the fuzzer reaches oversized bodies and header blocks.
constexpr protocol::FrameLimits kLimits{.maxContentLength = 64 * 1024, .maxHeaderBytes = 1024};

// What a decoder makes of `input` fed `chunk` bytes at a time, as text.
std::vector<std::string> decodeInChunks(std::string_view input, std::size_t chunk,
                                        std::vector<protocol::FrameDecoder::Result>* results) {
  protocol::FrameDecoder decoder(kLimits);
  std::vector<std::string> seen;
  auto take = [&] {
    while (auto r = decoder.next()) {
      if (const auto* f = std::get_if<protocol::Frame>(&*r)) {
        seen.push_back("frame " + f->body);
      } else {
        const auto& e = std::get<protocol::FrameError>(*r);
        seen.push_back("error " + std::to_string(static_cast<int>(e.kind)) + " " + e.message);
      }
      if (results) results->push_back(std::move(*r));
    }
  };
  for (std::size_t at = 0; at < input.size(); at += chunk) {
    decoder.feed(input.substr(at, chunk));
    take();
  }
  if (auto e = decoder.finish()) {
    seen.push_back("end " + e->message);
    if (results) results->push_back(*e);
  }
  return seen;
}

// Binds `name` to a handler that decodes Params and answers with them.
template <class Params>
void echo(Dispatcher& d, std::string_view name) {
  d.bind<Params>(name, [](Params p, Dispatcher::Reply reply) { reply(json::value_from(p)); });
}

void bindAll(Dispatcher& d) {
  d.bind<protocol::InitializeParams>(
      method::kInitialize, [&d](protocol::InitializeParams p, Dispatcher::Reply reply) {
        d.setState(Dispatcher::State::Running);
        reply(json::value_from(protocol::InitializeResult{
            json::object{{"echo", json::value_from(p)}}, protocol::ServerInfo{"hydra", "fuzz"}}));
        // A request of the server's own, which a response in the input may answer.
        d.call(method::kWorkDoneProgressCreate,
               json::value_from(protocol::WorkDoneProgressCreateParams{protocol::RequestId{"t"}}),
               [](const protocol::Response&) {});
      });
  d.bindNotification<NoParams>(method::kInitialized, [](NoParams) {});
  d.bind<NoParams>(method::kShutdown, [&d](NoParams, Dispatcher::Reply reply) {
    d.setState(Dispatcher::State::ShutDown);
    reply(nullptr);
  });
  d.bindNotification<json::value>(method::kExit, [](const json::value&) {});
  d.bindNotification<json::value>(method::kSetTrace, [](const json::value&) {});
  d.bindNotification<protocol::WorkDoneProgressCancelParams>(
      method::kWorkDoneProgressCancel, [](const protocol::WorkDoneProgressCancelParams&) {});

  d.bind<protocol::PingParams>(method::kPing, [](protocol::PingParams p, Dispatcher::Reply reply) {
    reply(json::value_from(protocol::PingResult{std::move(p.data), "fuzz"}));
  });
  d.bind<NoParams>(method::kAgents, [](NoParams, Dispatcher::Reply reply) {
    reply(json::object{{"agents", json::array{}}});
  });
  echo<protocol::RaceParams>(d, method::kRace);
  echo<protocol::StatusParams>(d, method::kStatus);
  echo<protocol::RacesParams>(d, method::kRaces);
  echo<protocol::CancelRaceParams>(d, method::kCancel);
  echo<protocol::LogParams>(d, method::kLog);
  echo<protocol::CleanupParams>(d, method::kCleanup);
  echo<protocol::AgentEventsParams>(d, method::kAgentEvents);
  // Application errors and internal errors, with text taken from the params.
  d.bind<protocol::RaceIdParams>(method::kScores, [](protocol::RaceIdParams p, Dispatcher::Reply) {
    throw protocol::RpcError(protocol::ErrorCode::UnknownRace, "no race '" + p.raceId + "'",
                             json::value_from(p));
  });
  d.bind<protocol::DiffParams>(method::kDiff, [](protocol::DiffParams p, Dispatcher::Reply reply) {
    reply.error(protocol::RpcError(protocol::ErrorCode::PathOutsideChanges,
                                   "not changed: " + p.path.value_or(""), json::value_from(p)));
  });
  d.bind<protocol::MergeParams>(method::kMerge, [](protocol::MergeParams p, Dispatcher::Reply) {
    throw std::runtime_error("merging " + p.raceId + " failed");
  });
}

// One message hydra wrote: valid UTF-8 JSON, and valid JSON-RPC.
void checkWritten(const std::string& body) {
  require(protocol::isValidUtf8(body), "hydra wrote a message that is not UTF-8: " + body);
  json::error_code ec;
  json::value v = json::parse(body, ec);  // Boost.JSON refuses Infinity and NaN
  require(!ec, "hydra wrote a message that is not JSON (" + ec.message() + "): " + body);
  const json::object* o = v.if_object();
  require(o != nullptr, "hydra wrote JSON that is not an object: " + body);
  const json::value* version = o->if_contains("jsonrpc");
  require(version && version->is_string() && version->get_string() == "2.0",
          "no jsonrpc 2.0: " + body);
  const json::value* id = o->if_contains("id");
  if (const json::value* name = o->if_contains("method")) {
    require(name->is_string(), "method is not a string: " + body);
    const json::value* params = o->if_contains("params");
    require(!params || params->is_object() || params->is_array(), "bad params: " + body);
    require(!id || id->is_int64() || id->is_string(), "bad request id: " + body);
  } else {
    require(id && (id->is_int64() || id->is_string() || id->is_null()), "bad response id: " + body);
    const json::value* result = o->if_contains("result");
    const json::value* error = o->if_contains("error");
    require((result != nullptr) != (error != nullptr),
            "not exactly one of result and error: " + body);
    if (error) {
      const json::object* e = error->if_object();
      require(e && e->contains("code") && e->at("code").is_int64() && e->contains("message") &&
                  e->at("message").is_string(),
              "malformed error: " + body);
    }
  }
  // And hydra's own reader, which every client's resembles, accepts it.
  require(std::holds_alternative<protocol::Message>(protocol::parseMessage(body)),
          "hydra's parser refuses what hydra wrote: " + body);
}

}  // namespace

void protocolSession(std::string_view input) {
  std::vector<protocol::FrameDecoder::Result> items;
  std::vector<std::string> whole =
      decodeInChunks(input, std::max<std::size_t>(input.size(), 1), &items);
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, 1 + input.size() % 13}) {
    require(decodeInChunks(input, chunk, nullptr) == whole,
            "framing depends on how the input is split (pieces of " + std::to_string(chunk) + ")");
  }

  boost::asio::io_context io;
  std::string written;
  auto dispatcher =
      std::make_shared<Dispatcher>(io.get_executor(), [&](const protocol::Message& m) {
        std::string text = protocol::serialize(m);
        // serialize() repairs what is not JSON; here nothing should need it: every
        // string hydra sends comes from parsed (valid) JSON or from hydra itself,
        // and no number from the input is infinite.
        std::string raw =
            std::visit([](const auto& x) { return json::serialize(json::value_from(x)); }, m);
        require(text == raw, "hydra made a message that needed repair: " + raw);
        written += protocol::encodeFrame(text);
      });
  bindAll(*dispatcher);
  for (auto& item : items) {
    if (auto* frame = std::get_if<protocol::Frame>(&item)) {
      dispatcher->handle(frame->body);
    } else {
      dispatcher->handleFrameError(std::get<protocol::FrameError>(item));
    }
    io.restart();
    io.poll();
  }
  require(dispatcher->pendingCount() == 0, "a request was left unanswered");

  protocol::FrameDecoder out;
  out.feed(written);
  while (auto r = out.next()) {
    const auto* frame = std::get_if<protocol::Frame>(&*r);
    if (frame == nullptr)
      throw Failure("hydra wrote a bad frame: " + std::get<protocol::FrameError>(*r).message);
    checkWritten(frame->body);
  }
  require(!out.finish(), "hydra's output ends inside a frame");
}

}  // namespace hydra::fuzz
