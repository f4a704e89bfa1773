#include "server/race_queries.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <fstream>
#include <sstream>

#include "core/git/worktree.h"
#include "core/merge/diff.h"
#include "core/merge/merge.h"
#include "core/process/utf8.h"
#include "core/race/review.h"
#include "core/util/paths.h"
#include "server/rpc_errors.h"
#include "server/wire.h"

namespace hydra::server::queries {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr std::uint64_t kDefaultLogRead = 256 * 1024;

bool isRunning(const core::RaceRecord& race, const LiveRaces& live) {
  return race.status == core::RaceStatus::Running || live.busy(race.id);
}

protocol::RaceSummary summary(const core::RaceRecord& race, const LiveRaces& live,
                              core::Timestamp now) {
  return wire::summarize(race, live.scoring.contains(race.id), now);
}

// A path as git names files in a tree: relative, '/'-separated, no "." or
// ".." or empty component. Anything else cannot be one of the agent's changes.
void requireTreePath(const std::string& path) {
  if (path.empty()) throw rpc::pathOutsideChanges(path, "the path is empty");
  if (path.find('\0') != std::string::npos)
    throw rpc::pathOutsideChanges(path, "the path contains NUL");
  if (path.front() == '/') throw rpc::pathOutsideChanges(path, "absolute paths are not accepted");
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part.empty() || part == "." || part == "..") {
      throw rpc::pathOutsideChanges(
          path, "paths are relative to the repository, without '.', '..' or '//'");
    }
    start = end + 1;
  }
}

const core::AgentRecord& withResult(const core::RaceRecord& race, const std::string& agentId) {
  agentOf(race, agentId);
  try {
    return core::resultOf(race, agentId);
  } catch (const core::ReviewError& e) {
    throw rpc::fromReview(e, race.id, agentId);
  }
}

protocol::FileContentsResult fileContents(const fs::path& root, const core::RaceRecord& race,
                                          const core::AgentRecord& agent, const std::string& path) {
  requireTreePath(path);
  // A symlink the agent made may point anywhere: never follow one out of its worktree.
  std::error_code ec;
  if (fs::is_directory(agent.worktree, ec) && !core::resolveInside(agent.worktree, path)) {
    throw rpc::pathOutsideChanges(path, "it leads outside the agent's worktree");
  }
  auto summary = core::merge::diffCommits(root, race.baseCommit, *agent.commit);
  bool changed = std::any_of(
      summary.files.begin(), summary.files.end(),
      [&](const core::merge::FileChange& f) { return f.path == path || f.oldPath == path; });
  if (!changed) throw rpc::pathOutsideChanges(path, "the agent did not change it");

  core::merge::FileVersions versions;
  try {
    versions = core::merge::fileVersions(root, race.baseCommit, *agent.commit, path);
  } catch (const std::invalid_argument& e) {
    throw rpc::pathOutsideChanges(path, e.what());
  }
  protocol::FileContentsResult out;
  out.path = path;
  out.binary = versions.binary;
  bool text = !versions.binary && (!versions.base || core::isValidUtf8(*versions.base)) &&
              (!versions.agent || core::isValidUtf8(*versions.agent));
  out.encoding = text ? "utf-8" : "base64";
  auto encode = [&](const std::optional<std::string>& bytes) -> std::optional<std::string> {
    if (!bytes) return std::nullopt;
    return text ? *bytes : base64(*bytes);
  };
  out.base = encode(versions.base);
  out.agent = encode(versions.agent);
  return out;
}

}  // namespace

core::RaceRecord loadRace(const core::RaceStore& store, const std::string& raceId) {
  if (!core::isValidId(raceId)) throw rpc::unknownRace(raceId);
  auto race = store.load(raceId);
  if (!race) throw rpc::unknownRace(raceId);
  return *race;
}

const core::AgentRecord& agentOf(const core::RaceRecord& race, const std::string& agentId) {
  const core::AgentRecord* agent = core::isValidId(agentId) ? race.findAgent(agentId) : nullptr;
  if (!agent) throw rpc::unknownAgent(race, agentId);
  return *agent;
}

std::optional<core::scoring::RaceScores> readScores(const core::RaceStore& store,
                                                    const std::string& raceId) {
  try {
    return core::scoring::readScores(store.scoresPath(raceId));
  } catch (const std::exception& e) {
    throw std::runtime_error("the scores of race " + raceId + " are unreadable: " + e.what());
  }
}

protocol::StatusResult status(const fs::path& root, const std::optional<std::string>& raceId,
                              const LiveRaces& live) {
  core::RaceStore store(root);
  auto now = std::chrono::system_clock::now();
  protocol::StatusResult out;
  if (raceId) {
    out.races.push_back(summary(loadRace(store, *raceId), live, now));
    return out;
  }
  // Running races first, then the newest of the others.
  std::vector<core::RaceRecord> rest;
  for (auto& race : store.list()) {
    if (isRunning(race, live)) {
      out.races.push_back(summary(race, live, now));
    } else if (rest.size() < kStatusNewest) {
      rest.push_back(std::move(race));
    }
  }
  for (const auto& race : rest) out.races.push_back(summary(race, live, now));
  return out;
}

protocol::RacesResult races(const fs::path& root, const protocol::RacesParams& params,
                            const LiveRaces& live) {
  core::RaceStore store(root);
  auto all = store.list();  // newest first
  auto now = std::chrono::system_clock::now();
  protocol::RacesResult out;
  out.total = static_cast<std::int64_t>(all.size());
  auto begin = std::min<std::size_t>(static_cast<std::size_t>(params.offset), all.size());
  auto end = std::min<std::size_t>(begin + static_cast<std::size_t>(params.limit), all.size());
  for (std::size_t i = begin; i < end; ++i) out.races.push_back(summary(all[i], live, now));
  if (end < all.size()) out.nextOffset = static_cast<std::int64_t>(end);
  return out;
}

protocol::ScoresResult scores(const fs::path& root, const std::string& raceId,
                              const LiveRaces& live) {
  core::RaceStore store(root);
  auto race = loadRace(store, raceId);
  auto scores = readScores(store, raceId);
  if (!scores) throw rpc::notScored(race, live.scoring.contains(raceId));
  return wire::toWire(*scores);
}

std::pair<std::string, std::size_t> logText(std::string_view bytes, bool atEnd) {
  std::size_t keep = bytes.size();
  if (!atEnd) {
    // Look back over the last three bytes for the lead byte of the last character.
    for (std::size_t back = 1; back <= 3 && back <= bytes.size(); ++back) {
      auto c = static_cast<unsigned char>(bytes[bytes.size() - back]);
      if ((c & 0xC0) == 0x80) continue;  // a continuation byte
      std::size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      if (length > back) keep = bytes.size() - back;
      break;
    }
    // A range too short for even one character is sent as it is, so reads always advance.
    if (keep == 0) keep = bytes.size();
  }
  return {core::makeValidUtf8(bytes.substr(0, keep)), keep};
}

protocol::LogResult log(const fs::path& root, const protocol::LogParams& params) {
  core::RaceStore store(root);
  auto race = loadRace(store, params.raceId);
  agentOf(race, params.agentId);
  std::uint64_t limit = std::min(params.limit.value_or(kDefaultLogRead), kMaxLogRead);
  auto stream = params.stream == "stderr" ? core::OutputStream::Stderr : core::OutputStream::Stdout;
  auto slice = store.readLog(params.raceId, params.agentId, params.offset, limit, stream);
  if (!slice) throw rpc::unknownRace(params.raceId);
  bool atEnd = slice->offset + slice->data.size() >= slice->totalSize;
  auto [text, used] = logText(slice->data, atEnd);
  protocol::LogResult out;
  out.data = std::move(text);
  out.offset = slice->offset;
  out.totalSize = slice->totalSize;
  out.nextOffset = slice->offset + used;
  return out;
}

json::value diff(const fs::path& root, const protocol::DiffParams& params) {
  core::RaceStore store(root);
  auto race = loadRace(store, params.raceId);
  const core::AgentRecord& agent = withResult(race, params.agentId);
  if (params.path) return json::value_from(fileContents(root, race, agent, *params.path));

  auto summary = core::merge::diffCommits(root, race.baseCommit, *agent.commit);
  protocol::DiffResult out;
  for (const auto& f : summary.files) out.files.push_back(wire::toWire(f));
  out.additions = summary.additions;
  out.deletions = summary.deletions;
  out.patch = core::makeValidUtf8(core::merge::unifiedPatch(root, race.baseCommit, *agent.commit));
  return json::value_from(out);
}

protocol::MergeResult merge(const fs::path& root, const core::Config& config,
                            const protocol::MergeParams& params, const LiveRaces& live) {
  core::RaceStore store(root);
  auto race = loadRace(store, params.raceId);
  if (isRunning(race, live))
    throw rpc::raceRunning(race.id, "its results can be merged once it has finished");
  if (params.agentId) agentOf(race, *params.agentId);
  std::string agentId;
  core::RaceMerge merged;
  try {
    agentId = core::chooseAgent(race, readScores(store, race.id), params.agentId);
    merged = core::mergeRaceAgent(root, config, race, agentId, params.dryRun, params.keep);
  } catch (const core::ReviewError& e) {
    throw rpc::fromReview(
        e, race.id, agentId.empty() ? std::nullopt : std::optional<std::string_view>(agentId));
  } catch (const core::merge::MergeRefused& e) {
    throw rpc::fromMergeRefused(e);
  }
  protocol::MergeResult out;
  out.outcome = std::string(core::merge::toString(merged.result.outcome));
  out.agentId = merged.agentId;
  out.branch = merged.branch;
  out.targetBranch = merged.result.targetBranch;
  out.dryRun = params.dryRun;
  out.files = merged.result.files;
  out.conflicts = merged.result.conflicts;
  out.commit = merged.result.commit;
  out.cleanedUp = merged.cleanedUp;
  return out;
}

protocol::CleanupResult cleanup(const fs::path& root, const core::Config& config,
                                const protocol::CleanupParams& params, const LiveRaces& live) {
  core::RaceStore store(root);
  std::vector<core::RaceRecord> finished;
  if (params.raceId) {
    auto race = loadRace(store, *params.raceId);
    if (isRunning(race, live)) throw rpc::raceRunning(race.id, "its worktrees are in use");
    finished.push_back(std::move(race));
  } else {
    for (auto& race : store.list()) {
      if (!isRunning(race, live)) finished.push_back(std::move(race));
    }
  }

  core::WorktreeManager worktrees(root, config.general.workspaceDir);
  auto existing = worktrees.list();
  protocol::CleanupResult out;
  for (const auto& race : finished) {
    for (const auto& agent : race.agents) {
      auto wt = std::find_if(existing.begin(), existing.end(), [&](const core::Worktree& w) {
        return w.path.string() == agent.worktree || w.branch == agent.branch;
      });
      if (wt == existing.end()) continue;
      worktrees.remove(*wt, !params.keepBranches);
      spdlog::info("race {}: removed worktree {}", race.id, wt->path.string());
      out.removed.push_back(wt->path.string());
      existing.erase(wt);
    }
  }
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    auto n = (std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16) |
             (std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8) |
             std::uint32_t(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  std::size_t left = bytes.size() - i;
  if (left > 0) {
    std::uint32_t n = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16;
    if (left == 2) n |= std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += left == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace hydra::server::queries
