#pragma once

// JSON-RPC error codes used by hydra. docs/protocol.md lists each with its meaning.

#include <stdexcept>
#include <string>

#include <boost/json/value.hpp>

namespace hydra::protocol {

enum class ErrorCode : int {
  // JSON-RPC 2.0.
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  // LSP.
  ServerNotInitialized = -32002,
  UnknownErrorCode = -32001,
  RequestFailed = -32803,
  ServerCancelled = -32802,
  RequestCancelled = -32800,
};

// An error a handler reports; the dispatcher turns it into a JSON-RPC error
// response. Application codes live in the -32000 range.
class RpcError : public std::runtime_error {
 public:
  RpcError(int code, std::string message, boost::json::value data = nullptr)
      : std::runtime_error(std::move(message)), code_(code), data_(std::move(data)) {}
  RpcError(ErrorCode code, std::string message, boost::json::value data = nullptr)
      : RpcError(static_cast<int>(code), std::move(message), std::move(data)) {}

  int code() const { return code_; }
  const boost::json::value& data() const { return data_; }

 private:
  int code_;
  boost::json::value data_;
};

}  // namespace hydra::protocol
