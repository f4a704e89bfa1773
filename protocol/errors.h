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
  // hydra's application errors (-32000 to -32099; LSP took -32001 and -32002).
  // docs/protocol.md says when each is sent and what its `data` holds.
  UnknownRace = -32010,         // no race with that id in this repository
  UnknownAgent = -32011,        // the race has no agent with that id
  UnknownAgentName = -32012,    // hydra/race named an agent hydra.toml does not define
  PathOutsideChanges = -32013,  // hydra/diff asked for a file the agent did not change
  DirtyWorkingTree = -32014,    // the merge would overwrite uncommitted work
  MergeRefused = -32015,        // a merge is in progress, HEAD is detached or unborn
  NotScored = -32016,           // the race has no scores (yet)
  NoResult = -32017,            // the agent left no result commit
  RaceRunning = -32018,         // the race must finish first
  ConfigError = -32019,         // hydra.toml is broken
  NotARepository = -32020,      // the workspace is not inside a git repository
  RaceRefused = -32021,         // the race cannot start, e.g. its base does not exist
  AgentUnavailable = -32022,    // an agent's binary is not installed
  EvalSetError = -32023,        // hydra/evalRun's eval set is missing or broken
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
