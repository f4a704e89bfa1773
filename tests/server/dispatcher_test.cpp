#include "server/dispatcher.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <thread>

#include "protocol/lifecycle.h"
#include "protocol/methods.h"
#include "server/progress.h"

namespace hydra::server {
namespace {

namespace json = boost::json;
using protocol::ErrorCode;

struct Named {
  std::string name;
};
Named tag_invoke(json::value_to_tag<Named>, const json::value& v) {
  protocol::ObjectReader r(v);
  Named n;
  r.required("name", n.name);
  return n;
}

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest() {
    dispatcher = std::make_shared<Dispatcher>(io.get_executor(), [this](const protocol::Message& m) {
      sent.push_back(json::parse(protocol::serialize(m)).as_object());
    });
    dispatcher->bind<NoParams>("initialize", [this](NoParams, Dispatcher::Reply reply) {
      dispatcher->setState(Dispatcher::State::Running);
      reply(json::object{{"capabilities", json::object{}}});
    });
    dispatcher->bind<NoParams>("shutdown", [this](NoParams, Dispatcher::Reply reply) {
      dispatcher->setState(Dispatcher::State::ShutDown);
      reply(nullptr);
    });
    dispatcher->bindNotification<json::value>("exit", [this](const json::value&) { exits++; });
    dispatcher->bindNotification<json::value>("initialized", [this](const json::value&) { initializedCount++; });
    dispatcher->bind<Named>("test/hello", [](Named n, Dispatcher::Reply reply) {
      reply(json::value("hello " + n.name));
    });
  }

  void send(std::string_view body) {
    dispatcher->handle(body);
    io.restart();
    io.poll();
  }
  void request(int id, std::string_view method, std::string_view params = "{}") {
    send(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + std::string(method) +
         R"(","params":)" + std::string(params) + "}");
  }
  void initialize() {
    request(0, "initialize");
    sent.clear();
  }
  // The one message sent since the last call, as an object.
  json::object only() {
    EXPECT_EQ(sent.size(), 1u) << dump();
    json::object o = sent.empty() ? json::object{} : sent.front();
    sent.clear();
    return o;
  }
  int errorCode(const json::object& o) {
    if (!o.contains("error")) return 0;
    return static_cast<int>(o.at("error").at("code").as_int64());
  }
  std::string dump() {
    std::string s;
    for (auto& o : sent) s += json::serialize(o) + "\n";
    return s;
  }

  boost::asio::io_context io;
  std::shared_ptr<Dispatcher> dispatcher;
  std::vector<json::object> sent;
  int exits = 0;
  int initializedCount = 0;
};

TEST_F(DispatcherTest, RequestBeforeInitializeIsServerNotInitialized) {
  request(1, "test/hello", R"({"name":"x"})");
  auto o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::ServerNotInitialized));
  EXPECT_EQ(o.at("id").as_int64(), 1);
}

TEST_F(DispatcherTest, NotificationsBeforeInitializeAreDroppedButExitIsNot) {
  send(R"({"jsonrpc":"2.0","method":"initialized"})");
  EXPECT_EQ(initializedCount, 0);
  send(R"({"jsonrpc":"2.0","method":"exit"})");
  EXPECT_EQ(exits, 1);
  EXPECT_TRUE(sent.empty());
}

TEST_F(DispatcherTest, SecondInitializeIsInvalidRequest) {
  initialize();
  request(2, "initialize");
  EXPECT_EQ(errorCode(only()), static_cast<int>(ErrorCode::InvalidRequest));
}

TEST_F(DispatcherTest, RequestsAfterShutdownAreInvalidButExitStillWorks) {
  initialize();
  request(1, "shutdown");
  EXPECT_TRUE(only().at("result").is_null());
  request(2, "test/hello", R"({"name":"x"})");
  auto o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::InvalidRequest));
  EXPECT_NE(std::string(o.at("error").at("message").as_string()).find("shutting down"), std::string::npos);
  send(R"({"jsonrpc":"2.0","method":"exit"})");
  EXPECT_EQ(exits, 1);
}

TEST_F(DispatcherTest, TypedParamsReachTheHandler) {
  initialize();
  request(3, "test/hello", R"({"name":"hydra"})");
  EXPECT_EQ(only().at("result").as_string(), "hello hydra");
}

TEST_F(DispatcherTest, InvalidParamsNameTheJsonPath) {
  initialize();
  request(4, "test/hello", R"({"name":42})");
  auto o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::InvalidParams));
  EXPECT_EQ(o.at("error").at("data").at("path").as_string(), "params.name");
  EXPECT_NE(std::string(o.at("error").at("message").as_string()).find("params.name: expected string, found number"),
            std::string::npos);

  request(5, "test/hello", R"({})");
  EXPECT_EQ(only().at("error").at("data").at("path").as_string(), "params.name");
  request(6, "test/hello", R"([1])");
  EXPECT_EQ(only().at("error").at("data").at("path").as_string(), "params");
}

TEST_F(DispatcherTest, NoParamsMethodsRejectParams) {
  initialize();
  request(7, "shutdown", R"({"unexpected":1})");
  EXPECT_EQ(errorCode(only()), static_cast<int>(ErrorCode::InvalidParams));
}

TEST_F(DispatcherTest, UnknownMethodIsMethodNotFound) {
  initialize();
  request(8, "hydra/doesNotExist");
  auto o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::MethodNotFound));
  EXPECT_NE(std::string(o.at("error").at("message").as_string()).find("hydra/doesNotExist"), std::string::npos);
  request(9, "$/someRequest");
  EXPECT_EQ(errorCode(only()), static_cast<int>(ErrorCode::MethodNotFound));
}

TEST_F(DispatcherTest, UnknownNotificationsAreIgnored) {
  initialize();
  send(R"({"jsonrpc":"2.0","method":"$/unknownThing","params":{}})");
  send(R"({"jsonrpc":"2.0","method":"custom/notification","params":{}})");
  EXPECT_TRUE(sent.empty()) << dump();
}

TEST_F(DispatcherTest, InvalidMessagesAreAnsweredWithTheirId) {
  send(R"({"jsonrpc":"1.0","id":10,"method":"x"})");
  auto o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::InvalidRequest));
  EXPECT_EQ(o.at("id").as_int64(), 10);
  send("{not json");
  o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::ParseError));
  EXPECT_TRUE(o.at("id").is_null());
  send(R"({"jsonrpc":"2.0","method":"n","params":3})");  // a notification: nobody to answer
  EXPECT_TRUE(sent.empty());
}

TEST_F(DispatcherTest, FrameErrorsAreAnsweredWithNullId) {
  dispatcher->handleFrameError({protocol::FrameError::Kind::BadHeader, "missing Content-Length header"});
  auto o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::ParseError));
  EXPECT_TRUE(o.at("id").is_null());
  dispatcher->handleFrameError({protocol::FrameError::Kind::TooLarge, "too big"});
  EXPECT_EQ(errorCode(only()), static_cast<int>(ErrorCode::InvalidRequest));
  dispatcher->handleFrameError({protocol::FrameError::Kind::Truncated, "cut"});
  EXPECT_TRUE(sent.empty());
}

TEST_F(DispatcherTest, HandlerThatNeverRepliesGetsInternalError) {
  dispatcher->bind<NoParams>("test/silent", [](NoParams, Dispatcher::Reply) {});
  initialize();
  request(11, "test/silent");
  auto o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::InternalError));
  EXPECT_NE(std::string(o.at("error").at("message").as_string()).find("failed to reply"), std::string::npos);
  EXPECT_EQ(dispatcher->pendingCount(), 0u);
}

TEST_F(DispatcherTest, SecondReplyIsDropped) {
  dispatcher->bind<NoParams>("test/twice", [](NoParams, Dispatcher::Reply reply) {
    reply(json::value(1));
    reply(json::value(2));
  });
  initialize();
  request(12, "test/twice");
  EXPECT_EQ(only().at("result").as_int64(), 1);
}

TEST_F(DispatcherTest, ExceptionsBecomeErrors) {
  dispatcher->bind<NoParams>("test/rpcError", [](NoParams, Dispatcher::Reply) {
    throw protocol::RpcError(-32010, "unknown race 'x'", json::object{{"raceId", "x"}});
  });
  dispatcher->bind<NoParams>("test/crash", [](NoParams, Dispatcher::Reply) { throw std::runtime_error("boom"); });
  initialize();
  request(13, "test/rpcError");
  auto o = only();
  EXPECT_EQ(errorCode(o), -32010);
  EXPECT_EQ(o.at("error").at("data").at("raceId").as_string(), "x");
  request(14, "test/crash");
  o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::InternalError));
  EXPECT_NE(std::string(o.at("error").at("message").as_string()).find("boom"), std::string::npos);
}

TEST_F(DispatcherTest, ReplyFromAnotherThreadIsDeliveredOnTheIoThread) {
  std::thread worker;
  dispatcher->bind<NoParams>("test/async", [&worker](NoParams, Dispatcher::Reply reply) {
    worker = std::thread([reply = std::move(reply)]() mutable { reply(json::value("from worker")); });
  });
  initialize();
  request(15, "test/async");
  worker.join();
  io.restart();
  io.poll();
  EXPECT_EQ(only().at("result").as_string(), "from worker");
}

TEST_F(DispatcherTest, CancelAnswersRequestCancelledAndDropsTheLateReply) {
  std::optional<Dispatcher::Reply> held;
  bool cancelHookRan = false;
  dispatcher->bind<NoParams>("test/slow", [&](NoParams, Dispatcher::Reply reply) {
    reply.onCancel([&] { cancelHookRan = true; });
    held.emplace(std::move(reply));
  });
  initialize();
  request(16, "test/slow");
  EXPECT_TRUE(sent.empty());
  send(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":16}})");
  auto o = only();
  EXPECT_EQ(errorCode(o), static_cast<int>(ErrorCode::RequestCancelled));
  EXPECT_EQ(o.at("id").as_int64(), 16);
  EXPECT_TRUE(cancelHookRan);
  EXPECT_TRUE(held->cancelled());
  (*held)(json::value("too late"));
  io.restart();
  io.poll();
  EXPECT_TRUE(sent.empty()) << dump();
}

TEST_F(DispatcherTest, CancelOfUnknownOrMalformedIdIsIgnored) {
  initialize();
  send(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":999}})");
  send(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":[1]}})");
  EXPECT_TRUE(sent.empty());
}

TEST_F(DispatcherTest, DuplicatePendingIdIsRejected) {
  std::optional<Dispatcher::Reply> held;
  dispatcher->bind<NoParams>("test/hold", [&](NoParams, Dispatcher::Reply reply) { held.emplace(std::move(reply)); });
  initialize();
  request(17, "test/hold");
  request(17, "test/hold");
  EXPECT_EQ(errorCode(only()), static_cast<int>(ErrorCode::InvalidRequest));
  (*held)(nullptr);
  io.restart();
  io.poll();
  EXPECT_EQ(only().at("id").as_int64(), 17);
}

TEST_F(DispatcherTest, StringAndIntegerIdsAreDistinct) {
  std::vector<Dispatcher::Reply> held;
  dispatcher->bind<NoParams>("test/hold", [&](NoParams, Dispatcher::Reply reply) { held.push_back(std::move(reply)); });
  initialize();
  request(1, "test/hold");
  send(R"({"jsonrpc":"2.0","id":"1","method":"test/hold"})");
  EXPECT_TRUE(sent.empty()) << dump();
  EXPECT_EQ(dispatcher->pendingCount(), 2u);
}

TEST_F(DispatcherTest, ServerRequestsGetTheirResponses) {
  initialize();
  std::optional<protocol::Response> got;
  dispatcher->call("window/workDoneProgress/create", json::object{{"token", "t"}},
                   [&](const protocol::Response& r) { got = r; });
  auto out = only();
  std::string id(out.at("id").as_string());
  send(R"({"jsonrpc":"2.0","id":")" + id + R"(","result":null})");
  ASSERT_TRUE(got);
  EXPECT_FALSE(got->isError());
  // A response nobody asked for is logged and ignored.
  send(R"({"jsonrpc":"2.0","id":"nobody","result":null})");
  EXPECT_TRUE(sent.empty());
}

TEST_F(DispatcherTest, ProgressOnAClientTokenIsSentAtOnce) {
  initialize();
  protocol::WorkDoneProgressBegin begin;
  begin.title = "Racing";
  auto p = WorkDoneProgress::begin(*dispatcher, protocol::ProgressToken{std::string("tok")}, false, begin);
  protocol::WorkDoneProgressReport report;
  report.message = "claude finished";
  p->report(report);
  p->end({});
  p->report(report);  // after end: nothing
  ASSERT_EQ(sent.size(), 3u) << dump();
  EXPECT_EQ(sent[0].at("method").as_string(), "$/progress");
  EXPECT_EQ(sent[0].at("params").at("token").as_string(), "tok");
  EXPECT_EQ(sent[0].at("params").at("value").at("kind").as_string(), "begin");
  EXPECT_EQ(sent[1].at("params").at("value").at("message").as_string(), "claude finished");
  EXPECT_EQ(sent[2].at("params").at("value").at("kind").as_string(), "end");
}

TEST_F(DispatcherTest, ServerCreatedProgressWaitsForTheClientsAnswer) {
  initialize();
  protocol::WorkDoneProgressBegin begin;
  begin.title = "Racing";
  auto p = WorkDoneProgress::begin(*dispatcher, std::nullopt, true, begin);
  p->end({});
  auto create = only();
  EXPECT_EQ(create.at("method").as_string(), "window/workDoneProgress/create");
  std::string id(create.at("id").as_string());
  send(R"({"jsonrpc":"2.0","id":")" + id + R"(","result":null})");
  ASSERT_EQ(sent.size(), 2u) << dump();
  EXPECT_EQ(sent[0].at("params").at("value").at("kind").as_string(), "begin");
  EXPECT_EQ(sent[1].at("params").at("value").at("kind").as_string(), "end");
}

TEST_F(DispatcherTest, ProgressThatEndsBeforeTheClientAnswersIsStillDelivered) {
  initialize();
  protocol::WorkDoneProgressBegin begin;
  begin.title = "Racing";
  {
    auto p = WorkDoneProgress::begin(*dispatcher, std::nullopt, true, begin);
    p->end({});
  }  // the work is over and its owner gone before the client accepts the token
  std::string id(only().at("id").as_string());
  send(R"({"jsonrpc":"2.0","id":")" + id + R"(","result":null})");
  ASSERT_EQ(sent.size(), 2u) << dump();
  EXPECT_EQ(sent[0].at("params").at("value").at("kind").as_string(), "begin");
  EXPECT_EQ(sent[1].at("params").at("value").at("kind").as_string(), "end");
}

TEST_F(DispatcherTest, RefusedProgressTokenSendsNothing) {
  initialize();
  protocol::WorkDoneProgressBegin begin;
  begin.title = "Racing";
  auto p = WorkDoneProgress::begin(*dispatcher, std::nullopt, true, begin);
  std::string id(only().at("id").as_string());
  send(R"({"jsonrpc":"2.0","id":")" + id + R"(","error":{"code":-32600,"message":"no"}})");
  p->end({});
  EXPECT_TRUE(sent.empty()) << dump();
}

TEST_F(DispatcherTest, NoTokenAndNoClientSupportMeansNoProgress) {
  initialize();
  protocol::WorkDoneProgressBegin begin;
  begin.title = "Racing";
  auto p = WorkDoneProgress::begin(*dispatcher, std::nullopt, false, begin);
  p->end({});
  EXPECT_FALSE(p->active());
  EXPECT_TRUE(sent.empty());
}

}  // namespace
}  // namespace hydra::server
