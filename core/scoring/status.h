#pragma once

// The kinds of run, the states a run and its agents go through, and their
// wire words, shared by the live events, the records on disk and every front
// end.

#include <optional>
#include <string_view>

namespace hydra::core {

// What a run under .hydra/races is: a race, a collaboration, or one sample
// of an evaluation (which `hydra status` and the editors' race lists leave out).
enum class RunKind { Race, Collab, Sample };

enum class RaceStatus { Running, Completed, Interrupted, Cancelled, Failed };

// SetupFailed: [general] setup_command failed in its worktree, so the agent never ran.
enum class AgentStatus { Queued, Running, Completed, Failed, TimedOut, Cancelled, Interrupted, SetupFailed };

// Wire words: race, collab, sample; running, completed, interrupted, cancelled, failed; queued,
// timedOut, setupFailed. parse* give nullopt for anything else.
std::string_view toString(RunKind kind);
std::string_view toString(RaceStatus status);
std::string_view toString(AgentStatus status);
std::optional<RunKind> parseRunKind(std::string_view text);
std::optional<RaceStatus> parseRaceStatus(std::string_view text);
std::optional<AgentStatus> parseAgentStatus(std::string_view text);

// An agent that is done, one way or another.
inline bool isFinal(AgentStatus status) {
  return status != AgentStatus::Queued && status != AgentStatus::Running;
}

}  // namespace hydra::core
