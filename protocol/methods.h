#pragma once

// Every method and notification name hydra speaks, declared once.
// Mirrored in editors/vscode/src/protocol.ts and editors/neovim/lua/hydra/protocol.lua.

#include <string_view>

namespace hydra::protocol::method {

// LSP lifecycle and base protocol.
inline constexpr std::string_view kInitialize = "initialize";
inline constexpr std::string_view kInitialized = "initialized";
inline constexpr std::string_view kShutdown = "shutdown";
inline constexpr std::string_view kExit = "exit";
inline constexpr std::string_view kCancelRequest = "$/cancelRequest";
inline constexpr std::string_view kProgress = "$/progress";
inline constexpr std::string_view kSetTrace = "$/setTrace";
inline constexpr std::string_view kWorkDoneProgressCreate = "window/workDoneProgress/create";
inline constexpr std::string_view kWorkDoneProgressCancel = "window/workDoneProgress/cancel";
inline constexpr std::string_view kShowMessage = "window/showMessage";
inline constexpr std::string_view kLogMessage = "window/logMessage";

// hydra's own methods.
inline constexpr std::string_view kPing = "hydra/ping";

// The prefix LSP reserves for protocol-implementation notifications that may be ignored.
inline constexpr std::string_view kDollarPrefix = "$/";

}  // namespace hydra::protocol::method
