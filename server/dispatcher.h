#pragma once

// The one place where JSON-RPC messages meet handlers: a flat table of methods,
// the LSP lifecycle gate, cancellation, replies that happen exactly once, and
// the server's own requests to the client. Everything here runs on the
// io_context's thread; a Reply may be called from any thread.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/value.hpp>

#include "protocol/errors.h"
#include "protocol/framing.h"
#include "protocol/json_read.h"
#include "protocol/message.h"

namespace hydra::server {

namespace json = boost::json;

// Requests that take no params accept an absent, empty or null `params`.
struct NoParams {};

// A request's params that did not decode: answered -32602 naming the field.
// Its own type, so a JSON error a handler meets later (a broken record, which
// throws the same ParamError) is hydra's internal error, not the client's.
class InvalidParams : public std::runtime_error {
 public:
  explicit InvalidParams(protocol::ParamError e) : std::runtime_error(e.what()), error(std::move(e)) {}
  protocol::ParamError error;
};

class Dispatcher : public std::enable_shared_from_this<Dispatcher> {
  struct PendingRequest;

 public:
  enum class State { Uninitialized, Running, ShutDown };

  // Writes one message to the client. Called on the io thread.
  using Sink = std::function<void(const protocol::Message&)>;

  // The answer to one request. Move-only; must be called exactly once. One that
  // is destroyed unanswered sends -32603; a second answer is logged and dropped.
  class Reply {
   public:
    Reply(Reply&&) = default;
    Reply& operator=(Reply&&) = default;
    Reply(const Reply&) = delete;
    Reply& operator=(const Reply&) = delete;
    ~Reply();

    void operator()(json::value result);
    void error(const protocol::RpcError& e);

    // True once nobody wants the answer any more: the client cancelled the
    // request, or the session ended (any thread). The answer is then dropped
    // where it is given, and work not yet done may be skipped.
    bool cancelled() const;
    // Runs on the io thread when the client cancels; at most once.
    void onCancel(std::function<void()> fn);
    const protocol::RequestId& id() const;
    const std::string& method() const;

   private:
    friend class Dispatcher;
    explicit Reply(std::shared_ptr<PendingRequest> state) : state_(std::move(state)) {}
    std::shared_ptr<PendingRequest> state_;
  };

  using RequestHandler = std::function<void(const json::value& params, Reply)>;
  using NotificationHandler = std::function<void(const json::value& params)>;
  using ResponseHandler = std::function<void(const protocol::Response&)>;

  // Requests being worked on at once, at most. Their answers (a hydra/log
  // slice, a diff) are built before they reach the transport's bounded send
  // queue, so their number must be bounded too: while this many are in
  // progress, the server reads nothing more from the client, and the requests
  // wait in its pipe. docs/protocol.md ("Slow clients") documents it.
  static constexpr std::size_t kMaxRequestsInProgress = 16;

  Dispatcher(boost::asio::any_io_executor executor, Sink sink);

  // Called with true when kMaxRequestsInProgress requests are in progress, and
  // with false when one of them is answered; the server stops and resumes
  // reading from the client with it. Called on the io thread, never from
  // inside a handler's own call.
  void onBusyChanged(std::function<void(bool busy)> fn) { onBusyChanged_ = std::move(fn); }
  bool busy() const { return busy_; }

  // Binds `method` to a handler taking typed params: fn(Params, Reply).
  template <class Params, class Fn>
  void bind(std::string_view method, Fn fn) {
    requests_[std::string(method)] = [fn = std::move(fn)](const json::value& params, Reply reply) mutable {
      fn(decodeParams<Params>(params), std::move(reply));
    };
  }
  // Binds a notification: fn(Params).
  template <class Params, class Fn>
  void bindNotification(std::string_view method, Fn fn) {
    notifications_[std::string(method)] = [fn = std::move(fn)](const json::value& params) mutable {
      fn(decodeParams<Params>(params));
    };
  }

  // One frame's body, as read from the transport.
  void handle(std::string_view body);
  // A frame the decoder rejected: answered with a null id.
  void handleFrameError(const protocol::FrameError& error);

  void notify(std::string_view method, json::value params);
  // A request to the client; `onResponse` gets its answer (on the io thread).
  void call(std::string_view method, json::value params, ResponseHandler onResponse);

  State state() const { return state_; }
  void setState(State s) { state_ = s; }
  bool shutdownRequested() const { return state_ == State::ShutDown; }

  // Answers nothing more: pending requests are forgotten (the client is gone).
  void abandonPending();
  std::size_t pendingCount() const { return pending_.size(); }

  template <class Params>
  static Params decodeParams(const json::value& params) {
    if constexpr (std::is_same_v<Params, NoParams>) {
      if (!params.is_null() && !(params.is_object() && params.get_object().empty()) &&
          !(params.is_array() && params.get_array().empty())) {
        throw InvalidParams(protocol::ParamError("params", "this method takes no params"));
      }
      return NoParams{};
    } else if constexpr (std::is_same_v<Params, json::value>) {
      return params;
    } else {
      try {
        return protocol::decode<Params>(params.is_null() ? json::value(json::object()) : params);
      } catch (const protocol::ParamError& e) {
        throw InvalidParams(e.within("params"));
      }
    }
  }

 private:
  struct PendingRequest {
    std::weak_ptr<Dispatcher> dispatcher;
    boost::asio::any_io_executor executor;
    protocol::RequestId id;
    std::string method;
    bool replied = false;  // io thread only
    std::atomic<bool> cancelled{false};
    std::function<void()> onCancel;
  };

  void handleRequest(protocol::Request request);
  void handleNotification(const protocol::Notification& notification);
  void handleResponse(const protocol::Response& response);
  void handleCancel(const json::value& params);
  void complete(const std::shared_ptr<PendingRequest>& state,
                std::variant<json::value, protocol::ResponseError> outcome);
  void sendError(std::optional<protocol::RequestId> id, int code, std::string message,
                 json::value data = nullptr);

  static std::string key(const protocol::RequestId& id);
  void updateBusy();

  boost::asio::any_io_executor executor_;
  Sink sink_;
  State state_ = State::Uninitialized;
  std::map<std::string, RequestHandler, std::less<>> requests_;
  std::map<std::string, NotificationHandler, std::less<>> notifications_;
  std::unordered_map<std::string, std::shared_ptr<PendingRequest>> pending_;
  std::unordered_map<std::string, ResponseHandler> outgoing_;
  std::int64_t nextOutgoingId_ = 1;
  std::function<void(bool)> onBusyChanged_;
  bool busy_ = false;
  std::size_t handling_ = 0;  // handleRequest frames on the stack
};

}  // namespace hydra::server
