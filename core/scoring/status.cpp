#include "core/scoring/status.h"

#include <array>
#include <utility>

namespace hydra::core {

namespace {

constexpr std::array<std::pair<RaceStatus, std::string_view>, 5> kRaceStatuses{{
    {RaceStatus::Running, "running"},
    {RaceStatus::Completed, "completed"},
    {RaceStatus::Interrupted, "interrupted"},
    {RaceStatus::Cancelled, "cancelled"},
    {RaceStatus::Failed, "failed"},
}};

constexpr std::array<std::pair<RunKind, std::string_view>, 3> kRunKinds{{
    {RunKind::Race, "race"},
    {RunKind::Collab, "collab"},
    {RunKind::Sample, "sample"},
}};

constexpr std::array<std::pair<AgentStatus, std::string_view>, 8> kAgentStatuses{{
    {AgentStatus::Queued, "queued"},
    {AgentStatus::Running, "running"},
    {AgentStatus::Completed, "completed"},
    {AgentStatus::Failed, "failed"},
    {AgentStatus::TimedOut, "timedOut"},
    {AgentStatus::Cancelled, "cancelled"},
    {AgentStatus::Interrupted, "interrupted"},
    {AgentStatus::SetupFailed, "setupFailed"},
}};


template <class Enum, std::size_t N>
std::string_view nameOf(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}

template <class Enum, std::size_t N>
std::optional<Enum> valueOf(const std::array<std::pair<Enum, std::string_view>, N>& table,
                            std::string_view text) {
  for (const auto& [e, name] : table) {
    if (name == text) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view toString(RunKind kind) { return nameOf(kRunKinds, kind); }
std::string_view toString(RaceStatus status) { return nameOf(kRaceStatuses, status); }
std::string_view toString(AgentStatus status) { return nameOf(kAgentStatuses, status); }

std::optional<RunKind> parseRunKind(std::string_view text) { return valueOf(kRunKinds, text); }

std::optional<RaceStatus> parseRaceStatus(std::string_view text) {
  return valueOf(kRaceStatuses, text);
}
std::optional<AgentStatus> parseAgentStatus(std::string_view text) {
  return valueOf(kAgentStatuses, text);
}

}  // namespace hydra::core
