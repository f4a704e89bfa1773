#pragma once

// hydra's application errors (-32000 range), one function each, so every
// method words them the same way and puts the same `data` in them.
// docs/protocol.md lists them.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"
#include "core/merge/merge.h"
#include "core/race/record.h"
#include "core/race/review.h"
#include "protocol/errors.h"

namespace hydra::server::rpc {

protocol::RpcError unknownRace(std::string_view raceId);
protocol::RpcError unknownAgent(const core::RaceRecord& race, std::string_view agentId);
protocol::RpcError unknownAgentName(std::string_view name, const std::vector<std::string>& known);
protocol::RpcError configError(const core::ConfigError& e);
protocol::RpcError notARepository(const std::filesystem::path& where, std::string_view why);
protocol::RpcError pathOutsideChanges(std::string_view path, std::string_view why);
protocol::RpcError notScored(const core::RaceRecord& race, bool scoring);
protocol::RpcError raceRunning(std::string_view raceId, std::string_view what);
protocol::RpcError raceRefused(std::string_view why);
// ReviewError from core/race/review.h, for `raceId` / `agentId`.
protocol::RpcError fromReview(const core::ReviewError& e, std::string_view raceId,
                              std::optional<std::string_view> agentId);
// DirtyWorkingTree (with the files), or MergeRefused (with the reason).
protocol::RpcError fromMergeRefused(const core::merge::MergeRefused& e);

}  // namespace hydra::server::rpc
