#include "server/dispatcher.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "protocol/lifecycle.h"
#include "protocol/methods.h"

namespace hydra::server {

using protocol::ErrorCode;
using protocol::RequestId;
using protocol::ResponseError;
using protocol::RpcError;

namespace {

ResponseError toResponseError(int code, std::string message, json::value data = nullptr) {
  return ResponseError{code, std::move(message), std::move(data)};
}

ResponseError paramError(const protocol::ParamError& e) {
  return toResponseError(static_cast<int>(ErrorCode::InvalidParams), "invalid params: " + std::string(e.what()),
                         json::object{{"path", e.path()}});
}

}  // namespace

// --- Reply -------------------------------------------------------------------

Dispatcher::Reply::~Reply() {
  if (!state_) return;  // moved from
  // Posted, not run inline: when a handler throws, the dispatcher answers with
  // the exception's error first and this check then finds the request replied.
  auto state = std::move(state_);
  boost::asio::post(state->executor, [state] {
    if (auto d = state->dispatcher.lock(); d && !state->replied) {
      spdlog::error("handler for '{}' (id {}) did not reply", state->method, protocol::toString(state->id));
      d->complete(state, toResponseError(static_cast<int>(ErrorCode::InternalError),
                                         "server failed to reply to '" + state->method + "'"));
    }
  });
}

void Dispatcher::Reply::operator()(json::value result) {
  auto state = state_;
  // Dropped here, on the thread that made it: an answer nobody waits for
  // (the session may be over, its io_context stopped) must not be queued.
  if (state->cancelled) return;
  boost::asio::dispatch(state->executor, [state, result = std::move(result)]() mutable {
    if (auto d = state->dispatcher.lock()) d->complete(state, std::move(result));
  });
}

void Dispatcher::Reply::error(const RpcError& e) {
  auto state = state_;
  if (state->cancelled) return;
  auto re = toResponseError(e.code(), e.what(), e.data());
  boost::asio::dispatch(state->executor, [state, re = std::move(re)]() mutable {
    if (auto d = state->dispatcher.lock()) d->complete(state, std::move(re));
  });
}

bool Dispatcher::Reply::cancelled() const { return state_->cancelled.load(); }

void Dispatcher::Reply::onCancel(std::function<void()> fn) {
  auto state = state_;
  boost::asio::dispatch(state->executor, [state, fn = std::move(fn)]() mutable {
    if (state->cancelled) {
      fn();
    } else {
      state->onCancel = std::move(fn);
    }
  });
}

const RequestId& Dispatcher::Reply::id() const { return state_->id; }
const std::string& Dispatcher::Reply::method() const { return state_->method; }

// --- Dispatcher --------------------------------------------------------------

Dispatcher::Dispatcher(boost::asio::any_io_executor executor, Sink sink)
    : executor_(std::move(executor)), sink_(std::move(sink)) {}

std::string Dispatcher::key(const RequestId& id) {
  // Integer 1 and string "1" are different ids.
  if (const auto* n = std::get_if<std::int64_t>(&id)) return "i" + std::to_string(*n);
  return "s" + std::get<std::string>(id);
}

void Dispatcher::handle(std::string_view body) {
  protocol::ParseResult parsed = protocol::parseMessage(body);
  if (auto* bad = std::get_if<protocol::InvalidMessage>(&parsed)) {
    spdlog::warn("invalid message: {}", bad->error.message);
    if (bad->reply) sendError(bad->id, bad->error.code, bad->error.message, bad->error.data);
    return;
  }
  auto& message = std::get<protocol::Message>(parsed);
  if (auto* request = std::get_if<protocol::Request>(&message)) {
    handleRequest(std::move(*request));
  } else if (auto* notification = std::get_if<protocol::Notification>(&message)) {
    handleNotification(*notification);
  } else {
    handleResponse(std::get<protocol::Response>(message));
  }
}

void Dispatcher::handleFrameError(const protocol::FrameError& error) {
  spdlog::warn("bad frame: {}", error.message);
  if (error.kind == protocol::FrameError::Kind::Truncated) return;  // nobody left to answer
  auto code = error.kind == protocol::FrameError::Kind::TooLarge ? ErrorCode::InvalidRequest
                                                                 : ErrorCode::ParseError;
  sendError(std::nullopt, static_cast<int>(code), error.message);
}

void Dispatcher::handleRequest(protocol::Request request) {
  spdlog::debug("<-- {} ({})", request.method, protocol::toString(request.id));
  bool isInitialize = request.method == protocol::method::kInitialize;
  switch (state_) {
    case State::Uninitialized:
      if (!isInitialize) {
        sendError(request.id, static_cast<int>(ErrorCode::ServerNotInitialized),
                  "server not initialized: send 'initialize' first");
        return;
      }
      break;
    case State::Running:
      if (isInitialize) {
        sendError(request.id, static_cast<int>(ErrorCode::InvalidRequest),
                  "'initialize' may only be sent once");
        return;
      }
      break;
    case State::ShutDown:
      sendError(request.id, static_cast<int>(ErrorCode::InvalidRequest),
                "server is shutting down: only 'exit' is accepted after 'shutdown'");
      return;
  }

  auto handler = requests_.find(request.method);
  if (handler == requests_.end()) {
    sendError(request.id, static_cast<int>(ErrorCode::MethodNotFound),
              "method not found: '" + request.method + "'");
    return;
  }

  std::string k = key(request.id);
  if (pending_.contains(k)) {
    sendError(request.id, static_cast<int>(ErrorCode::InvalidRequest),
              "request id " + protocol::toString(request.id) + " is already in use");
    return;
  }
  struct Handling {  // busy is judged once the handler has returned, not while it replies inline
    Dispatcher& d;
    explicit Handling(Dispatcher& dispatcher) : d(dispatcher) { ++d.handling_; }
    ~Handling() {
      --d.handling_;
      d.updateBusy();
    }
  } handling(*this);
  auto state = std::make_shared<PendingRequest>();
  state->dispatcher = weak_from_this();
  state->executor = executor_;
  state->id = request.id;
  state->method = request.method;
  pending_.emplace(std::move(k), state);

  try {
    handler->second(request.params, Reply(state));
  } catch (const InvalidParams& e) {
    complete(state, paramError(e.error));
  } catch (const RpcError& e) {
    complete(state, toResponseError(e.code(), e.what(), e.data()));
  } catch (const std::exception& e) {
    spdlog::error("handler for '{}' failed: {}", request.method, e.what());
    complete(state, toResponseError(static_cast<int>(ErrorCode::InternalError),
                                    "internal error in '" + request.method + "': " + e.what()));
  }
}

void Dispatcher::handleNotification(const protocol::Notification& notification) {
  spdlog::debug("<-- {} (notification)", notification.method);
  const std::string& method = notification.method;
  if (method == protocol::method::kCancelRequest) {
    handleCancel(notification.params);
    return;
  }
  bool isExit = method == protocol::method::kExit;
  if (state_ == State::Uninitialized && !isExit) {
    spdlog::debug("dropping '{}' received before 'initialize'", method);
    return;
  }
  auto handler = notifications_.find(method);
  if (handler == notifications_.end()) {
    if (method.starts_with(protocol::method::kDollarPrefix)) {
      spdlog::debug("ignoring '{}'", method);
    } else {
      spdlog::info("ignoring unknown notification '{}'", method);
    }
    return;
  }
  try {
    handler->second(notification.params);
  } catch (const std::exception& e) {
    // A notification has nobody to answer; the log is all there is.
    spdlog::warn("notification '{}' failed: {}", method, e.what());
  }
}

void Dispatcher::handleCancel(const json::value& params) {
  protocol::CancelParams cancel;
  try {
    cancel = decodeParams<protocol::CancelParams>(params);
  } catch (const InvalidParams& e) {
    spdlog::warn("ignoring malformed $/cancelRequest: {}", e.what());
    return;
  }
  auto it = pending_.find(key(cancel.id));
  if (it == pending_.end()) {
    spdlog::debug("$/cancelRequest for {} which is not pending", protocol::toString(cancel.id));
    return;
  }
  auto state = it->second;
  state->cancelled = true;
  complete(state, toResponseError(static_cast<int>(ErrorCode::RequestCancelled),
                                  "request '" + state->method + "' was cancelled"));
  if (auto fn = std::move(state->onCancel)) fn();
}

void Dispatcher::handleResponse(const protocol::Response& response) {
  if (!response.id) {
    spdlog::warn("client reported an error about an unreadable message: {}",
                 response.isError() ? std::get<ResponseError>(response.outcome).message : "");
    return;
  }
  auto it = outgoing_.find(key(*response.id));
  if (it == outgoing_.end()) {
    spdlog::warn("response to unknown request {}", protocol::toString(*response.id));
    return;
  }
  auto handler = std::move(it->second);
  outgoing_.erase(it);
  if (handler) handler(response);
}

void Dispatcher::complete(const std::shared_ptr<PendingRequest>& state,
                          std::variant<json::value, ResponseError> outcome) {
  if (state->replied) {
    if (state->cancelled) {
      spdlog::debug("reply to cancelled '{}' ({}) dropped", state->method, protocol::toString(state->id));
    } else {
      spdlog::error("second reply to '{}' ({}) dropped", state->method, protocol::toString(state->id));
    }
    return;
  }
  state->replied = true;
  pending_.erase(key(state->id));
  spdlog::debug("--> reply {} ({})", state->method, protocol::toString(state->id));
  sink_(protocol::Message{protocol::Response{state->id, std::move(outcome)}});
  updateBusy();
}

void Dispatcher::updateBusy() {
  if (handling_ > 0) return;
  bool busy = pending_.size() >= kMaxRequestsInProgress;
  if (busy == busy_) return;
  busy_ = busy;
  spdlog::debug("{} requests in progress: {} reading", pending_.size(),
                busy ? "pausing" : "resuming");
  if (onBusyChanged_) onBusyChanged_(busy);
}

void Dispatcher::sendError(std::optional<RequestId> id, int code, std::string message, json::value data) {
  sink_(protocol::Message{protocol::Response{std::move(id), ResponseError{code, std::move(message), std::move(data)}}});
}

void Dispatcher::notify(std::string_view method, json::value params) {
  sink_(protocol::Message{protocol::Notification{std::string(method), std::move(params)}});
}

void Dispatcher::call(std::string_view method, json::value params, ResponseHandler onResponse) {
  RequestId id = "hydra-" + std::to_string(nextOutgoingId_++);
  outgoing_.emplace(key(id), std::move(onResponse));
  sink_(protocol::Message{protocol::Request{std::move(id), std::string(method), std::move(params)}});
}

void Dispatcher::abandonPending() {
  for (auto& [k, state] : pending_) {
    state->replied = true;
    state->cancelled = true;  // work still running for it may stop, and its answer is dropped
  }
  pending_.clear();
  outgoing_.clear();
  updateBusy();
}

}  // namespace hydra::server
