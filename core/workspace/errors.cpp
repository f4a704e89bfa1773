#include "core/workspace/errors.h"

#include <algorithm>
#include <cctype>
#include <climits>

#include "core/records/store.h"
#include "core/util/json_fields.h"

namespace hydra::core {

namespace json = boost::json;

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

std::string lower(std::string_view word) {
  std::string out;
  for (char c : word) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Edit distance where swapping two neighbours counts as one edit.
std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> closestName(std::string_view word, const std::vector<std::string>& candidates) {
  std::string typed = lower(word);
  std::optional<std::string> best;
  std::size_t bestDistance = SIZE_MAX;
  for (const auto& candidate : candidates) {
    std::string wanted = lower(candidate);
    // A prefix is a likely abbreviation ("open" for "opencode").
    std::size_t distance = wanted.starts_with(typed) && typed.size() >= 3 ? 1 : editDistance(typed, wanted);
    std::size_t allowed = std::max<std::size_t>(1, wanted.size() / 3);
    if (distance <= allowed && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

bool WorkspaceError::isUsageError() const {
  switch (kind_) {
    case Kind::DirtyWorkingTree:
    case Kind::MergeRefused:
    case Kind::RaceRefused:
      return false;
    default:
      return true;
  }
}

std::string_view toString(WorkspaceError::Kind kind) {
  using K = WorkspaceError::Kind;
  switch (kind) {
    case K::NotARepository: return "NotARepository";
    case K::ConfigError: return "ConfigError";
    case K::InvalidRequest: return "InvalidRequest";
    case K::UnknownRace: return "UnknownRace";
    case K::UnknownAgent: return "UnknownAgent";
    case K::UnknownAgentName: return "UnknownAgentName";
    case K::AgentUnavailable: return "AgentUnavailable";
    case K::PathOutsideChanges: return "PathOutsideChanges";
    case K::DirtyWorkingTree: return "DirtyWorkingTree";
    case K::MergeRefused: return "MergeRefused";
    case K::NotScored: return "NotScored";
    case K::NoResult: return "NoResult";
    case K::RaceRunning: return "RaceRunning";
    case K::RaceRefused: return "RaceRefused";
  }
  return "Unknown";
}

WorkspaceError WorkspaceError::notARepository(const std::filesystem::path& where, std::string_view why) {
  return WorkspaceError(Kind::NotARepository,
                        "not inside a git repository: " + where.string() + " (" + std::string(why) +
                            "); open a folder of a git repository, or run `git init` there",
                        json::object{{"path", where.string()}});
}

WorkspaceError WorkspaceError::config(const ConfigError& e) {
  return WorkspaceError(Kind::ConfigError, std::string("hydra.toml is broken: ") + e.what(),
                        json::object{{"file", e.file().string()},
                                     {"line", e.line()},
                                     {"column", e.column()},
                                     {"message", e.message()}});
}

WorkspaceError WorkspaceError::invalidRequest(std::string message) {
  return WorkspaceError(Kind::InvalidRequest, std::move(message));
}

WorkspaceError WorkspaceError::unknownRace(std::string_view raceId) {
  bool wellFormed = isValidId(raceId);
  return WorkspaceError(Kind::UnknownRace,
                        wellFormed ? "no race '" + std::string(raceId) + "' in this repository"
                                   : "'" + std::string(raceId) + "' is not a race id",
                        json::object{{"raceId", raceId}});
}

WorkspaceError WorkspaceError::ambiguousRace(std::string_view prefix, const std::vector<std::string>& candidates) {
  std::string named;
  json::array ids;
  for (const auto& id : candidates) {
    named += (named.empty() ? "" : ", ") + id;
    ids.emplace_back(id);
  }
  return WorkspaceError(Kind::UnknownRace,
                        "'" + std::string(prefix) + "' is ambiguous: " + std::to_string(candidates.size()) +
                            " races start with it (" + named + "); give more of the id",
                        json::object{{"raceId", prefix}, {"candidates", std::move(ids)}});
}

WorkspaceError WorkspaceError::unknownAgent(const RaceRecord& race, std::string_view agentId) {
  std::vector<std::string> ids;
  for (const auto& a : race.agents) ids.push_back(a.agentId);
  std::string message = "race " + race.id + " has no agent '" + std::string(agentId) + "' (its agents: " + joined(ids) + ")";
  return WorkspaceError(Kind::UnknownAgent, message,
                        json::object{{"raceId", race.id}, {"agentId", agentId}, {"agents", stringArray(ids)}});
}

WorkspaceError WorkspaceError::unknownAgentName(std::string_view name, const std::vector<std::string>& known) {
  auto suggestion = closestName(name, known);
  std::string message = "unknown agent '" + std::string(name) + "'";
  if (suggestion) message += "; did you mean '" + *suggestion + "'?";
  message += " (known: " + joined(known) + "; add an [agents." + std::string(name) +
             "] table to hydra.toml to define it)";
  json::object data{{"agent", name}, {"known", stringArray(known)}};
  if (suggestion) data["suggestion"] = *suggestion;
  return WorkspaceError(Kind::UnknownAgentName, message, std::move(data));
}

WorkspaceError WorkspaceError::agentUnavailable(std::string_view name, std::string_view problem,
                                                std::string_view searched) {
  // The message quotes the PATH searched; data.problem is hydra/agents' own words.
  return WorkspaceError(Kind::AgentUnavailable,
                        "agent '" + std::string(name) + "' cannot run here: " + std::string(problem) +
                            (searched.empty() ? std::string() : " (" + std::string(searched) + ")"),
                        json::object{{"agent", name}, {"problem", problem}});
}

WorkspaceError WorkspaceError::pathOutsideChanges(std::string_view path, std::string_view why) {
  return WorkspaceError(Kind::PathOutsideChanges,
                        "'" + std::string(path) + "' is not among the agent's changes: " + std::string(why),
                        json::object{{"path", path}});
}

WorkspaceError WorkspaceError::mergeRefused(const merge::MergeRefused& e) {
  json::object data{{"reason", merge::toString(e.reason())}};
  if (e.reason() == merge::MergeRefused::Reason::DirtyWorkingTree) {
    data["files"] = stringArray(e.files());
    // The merge's own words name the files and what to do: said once.
    return WorkspaceError(Kind::DirtyWorkingTree, std::string("merge refused: ") + e.what(), std::move(data));
  }
  return WorkspaceError(Kind::MergeRefused, std::string("merge refused: ") + e.what(), std::move(data));
}

WorkspaceError WorkspaceError::notScored(const RaceRecord& race, bool scoring) {
  std::string state = scoring ? "scoring" : std::string(toString(race.status));
  std::string why = scoring                               ? "its results are being checked now"
                    : race.status == RaceStatus::Running  ? "it is still running"
                    : race.status == RaceStatus::Completed ? "it was not scored"
                                                           : "it was " + state + " before scoring";
  bool wait = scoring || race.status == RaceStatus::Running;
  return WorkspaceError(Kind::NotScored,
                        "race " + race.id + " has no scores: " + why + (wait ? "; wait until it finishes" : ""),
                        json::object{{"raceId", race.id}, {"state", state}});
}

WorkspaceError WorkspaceError::noResult(const RaceRecord& race, const AgentRecord& agent) {
  return noResult(race, agent, "it left no result commit (" + std::string(toString(agent.status)) + ")");
}

WorkspaceError WorkspaceError::noResult(const RaceRecord& race, const AgentRecord& agent, std::string why) {
  return WorkspaceError(Kind::NoResult, "agent '" + agent.agentId + "' of race " + race.id + ": " + why,
                        json::object{{"raceId", race.id}, {"agentId", agent.agentId}});
}

WorkspaceError WorkspaceError::raceRunning(std::string_view raceId, std::string_view what) {
  return WorkspaceError(Kind::RaceRunning,
                        "race " + std::string(raceId) + " is still running: " + std::string(what) +
                            " (wait until it finishes, or cancel it)",
                        json::object{{"raceId", raceId}});
}

WorkspaceError WorkspaceError::raceOwnedElsewhere(std::string_view raceId, const ProcessOwner& owner) {
  return WorkspaceError(Kind::RaceRunning,
                        "race " + std::string(raceId) + " is run by another hydra (" + describe(owner) +
                            "): cancel it there",
                        json::object{{"raceId", raceId}, {"pid", owner.pid}, {"host", owner.host}});
}

WorkspaceError WorkspaceError::alreadyMerged(const RaceRecord& race) {
  const MergeRecord& m = *race.merged;
  std::string how = m.automatic ? " (automatically)" : "";
  std::string into = m.targetBranch.empty() ? "" : " into " + m.targetBranch;
  std::string commit = m.commit ? ", commit " + m.commit->substr(0, 10) : "";
  return WorkspaceError(Kind::MergeRefused,
                        "race " + race.id + " was merged already: " + m.agentId + into + how + " at " +
                            formatTimestamp(m.mergedAt) + commit,
                        json::object{{"reason", "alreadyMerged"}, {"agentId", m.agentId}});
}

WorkspaceError WorkspaceError::raceRefused(std::string why) { return WorkspaceError(Kind::RaceRefused, std::move(why)); }

}  // namespace hydra::core
