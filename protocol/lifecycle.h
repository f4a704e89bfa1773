#pragma once

// Wire types of the LSP lifecycle, cancellation, progress and messages, plus
// hydra/ping. Field names are the wire names.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/describe/class.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include "protocol/message.h"
#include "protocol/wire.h"

namespace hydra::protocol {

namespace json = boost::json;

struct ClientInfo {
  std::string name;
  std::optional<std::string> version;

  static constexpr std::string_view wireRequired[] = {"name"};
};
BOOST_DESCRIBE_STRUCT(ClientInfo, (), (name, version))

struct InitializeParams {
  std::optional<std::int64_t> processId;
  std::optional<std::string> rootUri;
  std::optional<std::string> rootPath;
  std::optional<ClientInfo> clientInfo;
  json::object capabilities;
  json::value initializationOptions;
  std::optional<std::string> trace;

  // capabilities.window.workDoneProgress: the client accepts server-created progress.
  bool supportsWorkDoneProgress() const;
};

struct ServerInfo {
  std::string name;
  std::string version;

  static constexpr std::string_view wireRequired[] = {"name", "version"};
};
BOOST_DESCRIBE_STRUCT(ServerInfo, (), (name, version))

struct InitializeResult {
  json::object capabilities;
  ServerInfo serverInfo;

  static constexpr std::string_view wireRequired[] = {"capabilities", "serverInfo"};
};
BOOST_DESCRIBE_STRUCT(InitializeResult, (), (capabilities, serverInfo))

struct CancelParams {
  RequestId id;

  static constexpr std::string_view wireRequired[] = {"id"};
};
BOOST_DESCRIBE_STRUCT(CancelParams, (), (id))

// Progress tokens have the same shape as request ids.
using ProgressToken = RequestId;

struct WorkDoneProgressCreateParams {
  ProgressToken token;

  static constexpr std::string_view wireRequired[] = {"token"};
};
BOOST_DESCRIBE_STRUCT(WorkDoneProgressCreateParams, (), (token))

struct WorkDoneProgressCancelParams {
  ProgressToken token;

  static constexpr std::string_view wireRequired[] = {"token"};
};
BOOST_DESCRIBE_STRUCT(WorkDoneProgressCancelParams, (), (token))

struct WorkDoneProgressBegin {
  std::string title;
  std::optional<bool> cancellable;
  std::optional<std::string> message;
  std::optional<int> percentage;

  static constexpr std::string_view wireKind = "begin";
  static constexpr std::string_view wireRequired[] = {"title"};
};
BOOST_DESCRIBE_STRUCT(WorkDoneProgressBegin, (), (title, cancellable, message, percentage))

struct WorkDoneProgressReport {
  std::optional<bool> cancellable;
  std::optional<std::string> message;
  std::optional<int> percentage;

  static constexpr std::string_view wireKind = "report";
};
BOOST_DESCRIBE_STRUCT(WorkDoneProgressReport, (), (cancellable, message, percentage))

struct WorkDoneProgressEnd {
  std::optional<std::string> message;

  static constexpr std::string_view wireKind = "end";
};
BOOST_DESCRIBE_STRUCT(WorkDoneProgressEnd, (), (message))

struct ProgressParams {
  ProgressToken token;
  json::value value;

  static constexpr std::string_view wireRequired[] = {"token", "value"};
};
BOOST_DESCRIBE_STRUCT(ProgressParams, (), (token, value))

enum class MessageType { Error = 1, Warning = 2, Info = 3, Log = 4 };

struct ShowMessageParams {
  MessageType type = MessageType::Info;
  std::string message;
};

// hydra/ping: a health check that echoes `data`; `delayMs` (at most 60 s)
// holds the reply back, which clients and tests use to exercise cancellation.
struct PingParams {
  json::value data;
  std::optional<std::int64_t> delayMs;
  std::optional<ProgressToken> workDoneToken;  // LSP's WorkDoneProgressParams
};
BOOST_DESCRIBE_STRUCT(PingParams, (), (data, delayMs, workDoneToken))
void checkWire(const PingParams& x);

struct PingResult {
  json::value data;
  std::string version;

  static constexpr std::string_view wireRequired[] = {"version"};
};
BOOST_DESCRIBE_STRUCT(PingResult, (), (data, version))

#define HYDRA_WIRE_TYPE(T)                                              \
  void tag_invoke(json::value_from_tag, json::value& v, const T& x);   \
  T tag_invoke(json::value_to_tag<T>, const json::value& v)

HYDRA_WIRE_TYPE(InitializeParams);
HYDRA_WIRE_TYPE(ShowMessageParams);

#undef HYDRA_WIRE_TYPE

}  // namespace hydra::protocol
