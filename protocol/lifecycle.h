#pragma once

// Wire types of the LSP lifecycle, cancellation, progress and messages, plus
// hydra/ping. Field names are the wire names.

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include "protocol/message.h"

namespace hydra::protocol {

namespace json = boost::json;

struct ClientInfo {
  std::string name;
  std::optional<std::string> version;
};

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
};

struct InitializeResult {
  json::object capabilities;
  ServerInfo serverInfo;
};

struct CancelParams {
  RequestId id;
};

// Progress tokens have the same shape as request ids.
using ProgressToken = RequestId;

struct WorkDoneProgressCreateParams {
  ProgressToken token;
};

struct WorkDoneProgressCancelParams {
  ProgressToken token;
};

struct WorkDoneProgressBegin {
  std::string title;
  std::optional<bool> cancellable;
  std::optional<std::string> message;
  std::optional<int> percentage;
};

struct WorkDoneProgressReport {
  std::optional<bool> cancellable;
  std::optional<std::string> message;
  std::optional<int> percentage;
};

struct WorkDoneProgressEnd {
  std::optional<std::string> message;
};

struct ProgressParams {
  ProgressToken token;
  json::value value;
};

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

struct PingResult {
  json::value data;
  std::string version;
};

#define HYDRA_WIRE_TYPE(T)                                              \
  void tag_invoke(json::value_from_tag, json::value& v, const T& x);   \
  T tag_invoke(json::value_to_tag<T>, const json::value& v)

HYDRA_WIRE_TYPE(ClientInfo);
HYDRA_WIRE_TYPE(InitializeParams);
HYDRA_WIRE_TYPE(ServerInfo);
HYDRA_WIRE_TYPE(InitializeResult);
HYDRA_WIRE_TYPE(CancelParams);
HYDRA_WIRE_TYPE(WorkDoneProgressCreateParams);
HYDRA_WIRE_TYPE(WorkDoneProgressCancelParams);
HYDRA_WIRE_TYPE(WorkDoneProgressBegin);
HYDRA_WIRE_TYPE(WorkDoneProgressReport);
HYDRA_WIRE_TYPE(WorkDoneProgressEnd);
HYDRA_WIRE_TYPE(ProgressParams);
HYDRA_WIRE_TYPE(ShowMessageParams);
HYDRA_WIRE_TYPE(PingParams);
HYDRA_WIRE_TYPE(PingResult);

#undef HYDRA_WIRE_TYPE

}  // namespace hydra::protocol
