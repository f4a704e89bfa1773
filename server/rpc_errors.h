#pragma once

// The one place where what the workspace refuses becomes a JSON-RPC error:
// each WorkspaceError kind has its application code (-32010..-32099, listed in
// docs/protocol.md), its message and its data unchanged.

#include "core/workspace/errors.h"
#include "protocol/errors.h"

namespace hydra::server {

protocol::RpcError toRpcError(const core::WorkspaceError& error);

}  // namespace hydra::server
