#pragma once

// The blocking half of hydra/status, hydra/races, hydra/scores, hydra/log,
// hydra/diff, hydra/merge and hydra/cleanup: reading race records, logs and
// git objects, and merging. Each function runs on a worker thread, takes
// everything it needs by value or const reference (nothing of the io thread's
// state), and reports what the client did wrong as a protocol::RpcError.
//
// No request reads or writes outside the repository and its worktrees: race
// and agent ids are checked before they name a file, and hydra/diff reads a
// file only from the git objects of a change the agent made.

#include <boost/json/value.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "core/config/config.h"
#include "core/race/record.h"
#include "core/race/store.h"
#include "core/scoring/scores.h"
#include "protocol/hydra.h"

namespace hydra::server {

// What the io thread knows that the records on disk do not, copied for a
// worker thread.
struct LiveRaces {
  std::set<std::string> running;  // races this server runs now
  std::set<std::string> scoring;  // races whose results are being scored now

  bool busy(const std::string& raceId) const {
    return running.contains(raceId) || scoring.contains(raceId);
  }
};

namespace queries {

// How much of a log one hydra/log answer carries at most.
inline constexpr std::uint64_t kMaxLogRead = 1024 * 1024;
// How many finished races hydra/status lists after the running ones.
inline constexpr std::size_t kStatusNewest = 20;

// The race's record. Throws UnknownRace (also for a malformed id).
core::RaceRecord loadRace(const core::RaceStore& store, const std::string& raceId);
// The agent's record in `race`. Throws UnknownAgent.
const core::AgentRecord& agentOf(const core::RaceRecord& race, const std::string& agentId);
// The race's scores.json, if it was scored.
std::optional<core::scoring::RaceScores> readScores(const core::RaceStore& store,
                                                    const std::string& raceId);

protocol::StatusResult status(const std::filesystem::path& root,
                              const std::optional<std::string>& raceId, const LiveRaces& live);
protocol::RacesResult races(const std::filesystem::path& root, const protocol::RacesParams& params,
                            const LiveRaces& live);
protocol::ScoresResult scores(const std::filesystem::path& root, const std::string& raceId,
                              const LiveRaces& live);
protocol::LogResult log(const std::filesystem::path& root, const protocol::LogParams& params);
// DiffResult without a path, FileContentsResult with one.
boost::json::value diff(const std::filesystem::path& root, const protocol::DiffParams& params);
protocol::MergeResult merge(const std::filesystem::path& root, const core::Config& config,
                            const protocol::MergeParams& params, const LiveRaces& live);
protocol::CleanupResult cleanup(const std::filesystem::path& root, const core::Config& config,
                                const protocol::CleanupParams& params, const LiveRaces& live);

// The UTF-8 text of a byte range of a log: a multi-byte character cut by the
// end of the range is left for the next read (unless the log ends there);
// bytes that are not UTF-8 become U+FFFD. Returns the text and how many bytes
// of `bytes` it covers.
std::pair<std::string, std::size_t> logText(std::string_view bytes, bool atEnd);

std::string base64(std::string_view bytes);

}  // namespace queries
}  // namespace hydra::server
