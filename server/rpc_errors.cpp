#include "server/rpc_errors.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace hydra::server::rpc {

namespace json = boost::json;
using protocol::ErrorCode;
using protocol::RpcError;

namespace {

json::array strings(const std::vector<std::string>& items) {
  json::array a;
  for (const auto& s : items) a.emplace_back(s);
  return a;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

}  // namespace

RpcError unknownRace(std::string_view raceId) {
  return RpcError(
      ErrorCode::UnknownRace,
      "no race '" + std::string(raceId) + "' in this repository (hydra/races lists them)",
      json::object{{"raceId", raceId}});
}

RpcError unknownAgent(const core::RaceRecord& race, std::string_view agentId) {
  std::vector<std::string> ids;
  for (const auto& a : race.agents) ids.push_back(a.agentId);
  return RpcError(
      ErrorCode::UnknownAgent,
      "race " + race.id + " has no agent '" + std::string(agentId) +
          "' (its agents: " + joined(ids) + ")",
      json::object{{"raceId", race.id}, {"agentId", agentId}, {"agents", strings(ids)}});
}

RpcError unknownAgentName(std::string_view name, const std::vector<std::string>& known) {
  return RpcError(ErrorCode::UnknownAgentName,
                  "unknown agent '" + std::string(name) + "' (known: " + joined(known) +
                      "); add an [agents." + std::string(name) +
                      "] table to hydra.toml to define it",
                  json::object{{"agent", name}, {"known", strings(known)}});
}

RpcError configError(const core::ConfigError& e) {
  return RpcError(ErrorCode::ConfigError, std::string("hydra.toml is broken: ") + e.what(),
                  json::object{{"file", e.file().string()},
                               {"line", e.line()},
                               {"column", e.column()},
                               {"message", e.message()}});
}

RpcError notARepository(const std::filesystem::path& where, std::string_view why) {
  return RpcError(ErrorCode::NotARepository,
                  "not inside a git repository: " + where.string() + " (" + std::string(why) +
                      "); open a folder of a git repository, or run `git init` there",
                  json::object{{"path", where.string()}});
}

RpcError pathOutsideChanges(std::string_view path, std::string_view why) {
  return RpcError(ErrorCode::PathOutsideChanges,
                  "'" + std::string(path) + "' is not among the agent's changes: " +
                      std::string(why) + " (hydra/diff without a path lists them)",
                  json::object{{"path", path}});
}

RpcError notScored(const core::RaceRecord& race, bool scoring) {
  std::string state = scoring ? "scoring" : std::string(core::toString(race.status));
  std::string why = scoring                                    ? "its results are being checked now"
                    : race.status == core::RaceStatus::Running ? "it is still running"
                    : race.status == core::RaceStatus::Completed
                        ? "it was not scored"
                        : "it was " + state + " before scoring";
  return RpcError(
      ErrorCode::NotScored,
      "race " + race.id + " has no scores: " + why +
          (scoring || race.status == core::RaceStatus::Running ? "; wait for hydra/raceFinished"
                                                               : ""),
      json::object{{"raceId", race.id}, {"state", state}});
}

RpcError raceRunning(std::string_view raceId, std::string_view what) {
  return RpcError(ErrorCode::RaceRunning,
                  "race " + std::string(raceId) + " is still running: " + std::string(what) +
                      " (wait for hydra/raceFinished, or hydra/cancel it)",
                  json::object{{"raceId", raceId}});
}

RpcError raceRefused(std::string_view why) {
  return RpcError(ErrorCode::RaceRefused, std::string(why));
}

RpcError fromReview(const core::ReviewError& e, std::string_view raceId,
                    std::optional<std::string_view> agentId) {
  json::object data{{"raceId", raceId}};
  if (agentId) data["agentId"] = *agentId;
  switch (e.kind()) {
    case core::ReviewError::Kind::UnknownRace:
      return RpcError(ErrorCode::UnknownRace, e.what(), std::move(data));
    case core::ReviewError::Kind::UnknownAgent:
      return RpcError(ErrorCode::UnknownAgent, e.what(), std::move(data));
    case core::ReviewError::Kind::NoResult:
      return RpcError(ErrorCode::NoResult, e.what(), std::move(data));
    case core::ReviewError::Kind::NotScored:
      return RpcError(ErrorCode::NotScored, e.what(), std::move(data));
    case core::ReviewError::Kind::RaceRunning:
      return RpcError(ErrorCode::RaceRunning, e.what(), std::move(data));
  }
  return RpcError(ErrorCode::RequestFailed, e.what(), std::move(data));
}

RpcError fromMergeRefused(const core::merge::MergeRefused& e) {
  json::object data{{"reason", core::merge::toString(e.reason())}};
  if (e.reason() == core::merge::MergeRefused::Reason::DirtyWorkingTree) {
    data["files"] = strings(e.files());
    return RpcError(ErrorCode::DirtyWorkingTree,
                    std::string("merge refused: ") + e.what() +
                        " (commit or stash these files first: " + joined(e.files()) + ")",
                    std::move(data));
  }
  return RpcError(ErrorCode::MergeRefused, std::string("merge refused: ") + e.what(),
                  std::move(data));
}

}  // namespace hydra::server::rpc
