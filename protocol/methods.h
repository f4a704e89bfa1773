#pragma once

// Every method and notification name hydra speaks, declared once.
// Mirrored in editors/vscode/src/protocol.ts and editors/neovim/lua/hydra/protocol.lua.

#include <array>
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
inline constexpr std::string_view kPublishDiagnostics = "textDocument/publishDiagnostics";
inline constexpr std::string_view kLogMessage = "window/logMessage";

// hydra's own requests.
inline constexpr std::string_view kPing = "hydra/ping";
inline constexpr std::string_view kAgents = "hydra/agents";
inline constexpr std::string_view kRace = "hydra/race";
inline constexpr std::string_view kCollab = "hydra/collab";
inline constexpr std::string_view kStatus = "hydra/status";
inline constexpr std::string_view kCancel = "hydra/cancel";
inline constexpr std::string_view kScores = "hydra/scores";
inline constexpr std::string_view kDiff = "hydra/diff";
inline constexpr std::string_view kMerge = "hydra/merge";
inline constexpr std::string_view kLog = "hydra/log";
inline constexpr std::string_view kRaces = "hydra/races";
inline constexpr std::string_view kCleanup = "hydra/cleanup";
inline constexpr std::string_view kAgentEvents = "hydra/agentEvents";
inline constexpr std::string_view kEvalRun = "hydra/evalRun";
inline constexpr std::string_view kEvalReport = "hydra/evalReport";
inline constexpr std::string_view kEvalCancel = "hydra/evalCancel";

// Every hydra/* request, as initialize announces them in capabilities.hydra.methods.
inline constexpr std::array kHydraRequests = {kPing,  kAgents, kRace,    kCollab,      kStatus,  kCancel,
                                              kScores, kDiff,  kMerge,   kLog,         kRaces,   kCleanup,
                                              kAgentEvents, kEvalRun, kEvalReport, kEvalCancel};

// hydra's notifications to the client while a race or a collaboration runs.
inline constexpr std::string_view kAgentStarted = "hydra/agentStarted";
inline constexpr std::string_view kAgentOutput = "hydra/agentOutput";
inline constexpr std::string_view kAgentFinished = "hydra/agentFinished";
inline constexpr std::string_view kScoringStarted = "hydra/scoringStarted";
inline constexpr std::string_view kIterationFinished = "hydra/iterationFinished";
inline constexpr std::string_view kRaceFinished = "hydra/raceFinished";

// hydra's notifications while an evaluation runs (its samples' races send none of the above).
inline constexpr std::string_view kEvalSample = "hydra/evalSample";
inline constexpr std::string_view kEvalFinished = "hydra/evalFinished";

// The prefix LSP reserves for protocol-implementation notifications that may be ignored.
inline constexpr std::string_view kDollarPrefix = "$/";

}  // namespace hydra::protocol::method
