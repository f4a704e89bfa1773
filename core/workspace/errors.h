#pragma once

// What a workspace operation refuses, typed: every front end turns these into
// its own words in one place (the server into JSON-RPC error codes, the
// terminal into exit codes). The message is for a person and names no
// protocol method or command; `data` says what the error is about, in the
// form the protocol documents for it.

#include <boost/json/object.hpp>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"
#include "core/merge/merge.h"
#include "core/records/record.h"

namespace hydra::core {

class WorkspaceError : public std::runtime_error {
 public:
  enum class Kind {
    NotARepository,      // data: {path}
    ConfigError,         // data: {file, line, column, message}
    InvalidRequest,      // the request itself is malformed (a blank task, no agents)
    UnknownRace,         // data: {raceId}
    UnknownAgent,        // data: {raceId, agentId, agents}
    UnknownAgentName,    // data: {agent, known, suggestion?}
    AgentUnavailable,    // data: {agent, problem}
    PathOutsideChanges,  // data: {path}
    DirtyWorkingTree,    // data: {reason, files}
    MergeRefused,        // data: {reason}
    NotScored,           // data: {raceId, state}
    NoResult,            // data: {raceId, agentId}
    RaceRunning,         // data: {raceId}
    RaceRefused,         // the race cannot start (its base does not exist, ...)
  };

  WorkspaceError(Kind kind, std::string message, boost::json::object data = {})
      : std::runtime_error(std::move(message)), kind_(kind), data_(std::move(data)) {}

  Kind kind() const { return kind_; }
  const boost::json::object& data() const { return data_; }
  // True for what the user must fix (a wrong id, a broken file), false for a refusal of the repository's state.
  bool isUsageError() const;

  static WorkspaceError notARepository(const std::filesystem::path& where, std::string_view why);
  static WorkspaceError config(const ConfigError& e);
  static WorkspaceError invalidRequest(std::string message);
  static WorkspaceError unknownRace(std::string_view raceId);
  // UnknownRace for a start of an id that several races have: data {raceId, candidates}.
  static WorkspaceError ambiguousRace(std::string_view prefix, const std::vector<std::string>& candidates);
  static WorkspaceError unknownAgent(const RaceRecord& race, std::string_view agentId);
  static WorkspaceError unknownAgentName(std::string_view name, const std::vector<std::string>& known);
  static WorkspaceError agentUnavailable(std::string_view name, std::string_view problem,
                                         std::string_view searched = {});
  static WorkspaceError pathOutsideChanges(std::string_view path, std::string_view why);
  static WorkspaceError mergeRefused(const merge::MergeRefused& e);
  static WorkspaceError notScored(const RaceRecord& race, bool scoring);
  // hydra/merge on a race one of whose agents was merged (MergeRefused, reason alreadyMerged).
  static WorkspaceError alreadyMerged(const RaceRecord& race);
  static WorkspaceError noResult(const RaceRecord& race, const AgentRecord& agent);
  static WorkspaceError noResult(const RaceRecord& race, const AgentRecord& agent, std::string why);
  static WorkspaceError raceRunning(std::string_view raceId, std::string_view what);
  // The race runs in another hydra process: only that one can cancel it.
  // RaceRunning, data {raceId, pid, host}.
  static WorkspaceError raceOwnedElsewhere(std::string_view raceId, const ProcessOwner& owner);
  static WorkspaceError raceRefused(std::string why);

 private:
  Kind kind_;
  boost::json::object data_;
};

// The word for a kind, as the protocol's error tables name it ("UnknownRace", ...).
std::string_view toString(WorkspaceError::Kind kind);

// The closest of `candidates` to `word`, when it is close enough to be a typo.
std::optional<std::string> closestName(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace hydra::core
