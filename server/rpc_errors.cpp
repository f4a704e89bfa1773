#include "server/rpc_errors.h"

namespace hydra::server {

using protocol::ErrorCode;
using Kind = core::WorkspaceError::Kind;

protocol::RpcError toRpcError(const core::WorkspaceError& e) {
  auto code = [&] {
    switch (e.kind()) {
      case Kind::NotARepository: return ErrorCode::NotARepository;
      case Kind::ConfigError: return ErrorCode::ConfigError;
      case Kind::InvalidRequest: return ErrorCode::InvalidParams;
      case Kind::UnknownRace: return ErrorCode::UnknownRace;
      case Kind::UnknownAgent: return ErrorCode::UnknownAgent;
      case Kind::UnknownAgentName: return ErrorCode::UnknownAgentName;
      case Kind::AgentUnavailable: return ErrorCode::AgentUnavailable;
      case Kind::PathOutsideChanges: return ErrorCode::PathOutsideChanges;
      case Kind::DirtyWorkingTree: return ErrorCode::DirtyWorkingTree;
      case Kind::MergeRefused: return ErrorCode::MergeRefused;
      case Kind::NotScored: return ErrorCode::NotScored;
      case Kind::NoResult: return ErrorCode::NoResult;
      case Kind::RaceRunning: return ErrorCode::RaceRunning;
      case Kind::RaceRefused: return ErrorCode::RaceRefused;
    }
    return ErrorCode::RequestFailed;
  }();
  boost::json::value data = e.data().empty() ? boost::json::value(nullptr) : boost::json::value(e.data());
  return protocol::RpcError(code, e.what(), std::move(data));
}

}  // namespace hydra::server
