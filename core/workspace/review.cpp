// Reviewing what an agent did: its diff against the race's base commit, both
// versions of one changed file, its logs and the events its adapter read.
//
// No request reads outside the repository and its worktrees: race and agent
// ids are checked before they name a file, and a file's contents come only
// from the git objects of a change the agent made.

#include <algorithm>

#include "core/collab/iterations.h"
#include "core/merge/diff.h"
#include "core/util/utf8.h"
#include "core/util/base64.h"
#include "core/util/paths.h"
#include "core/workspace/workspace.h"

namespace hydra::core {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kDefaultLogRead = 256 * 1024;

// A path as git names files in a tree: relative, '/'-separated, no "." or
// ".." or empty component. Anything else cannot be one of the agent's changes.
void requireTreePath(const std::string& path) {
  if (path.empty()) throw WorkspaceError::pathOutsideChanges(path, "the path is empty");
  if (path.find('\0') != std::string::npos) throw WorkspaceError::pathOutsideChanges(path, "the path contains NUL");
  if (path.front() == '/') throw WorkspaceError::pathOutsideChanges(path, "absolute paths are not accepted");
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part.empty() || part == "." || part == "..") {
      throw WorkspaceError::pathOutsideChanges(path, "paths are relative to the repository, without '.', '..' or '//'");
    }
    start = end + 1;
  }
}

// The UTF-8 text of a byte range of a log: a multi-byte character cut by the
// end of the range is left for the next read (unless the log ends there);
// bytes that are not UTF-8 become U+FFFD. Returns the text and how many bytes
// of `bytes` it covers.
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
  return {makeValidUtf8(bytes.substr(0, keep)), keep};
}

}  // namespace

AgentRecord Workspace::withResult(const RaceRecord& race, const std::string& agentId) {
  if (race.isCollab()) {
    // builder@N is iteration N's commit; builder alone, the latest iteration.
    const AgentRecord* builder = race.findAgent(collab::kBuilder);
    std::optional<int> n = collab::parseIterationId(agentId);
    if (agentId == collab::kBuilder && builder && !race.iterations.empty()) n = race.iterations.back().iteration;
    if (n && builder) {
      const IterationResult* it = race.findIteration(*n);
      if (!it) throw WorkspaceError::unknownAgent(race, agentId);
      AgentRecord out = *builder;
      out.agentId = collab::iterationId(*n);
      out.status = it->builderStatus;
      out.commit = it->commit;
      if (!out.commit) throw WorkspaceError::noResult(race, out);
      return out;
    }
    if (agentId == collab::kReviewer && race.findAgent(agentId)) {
      throw WorkspaceError::noResult(race, *race.findAgent(agentId),
                                     "a reviewer's changes are not kept; its review is in the iterations");
    }
  }
  const AgentRecord* agent = isValidId(agentId) ? race.findAgent(agentId) : nullptr;
  if (!agent) throw WorkspaceError::unknownAgent(race, agentId);
  if (!agent->commit) throw WorkspaceError::noResult(race, *agent);
  return *agent;
}

// Whose log an id names: an iteration's is the builder's (one log for all its rounds).
std::string Workspace::logSubject(const RaceRecord& race, const std::string& agentId) {
  std::string subject = agentId;
  if (race.isCollab() && collab::parseIterationId(agentId)) subject = std::string(collab::kBuilder);
  if (!isValidId(subject) || !race.findAgent(subject)) throw WorkspaceError::unknownAgent(race, agentId);
  return subject;
}

DiffResult Workspace::diff(const std::string& raceId, const std::string& agentId) {
  RaceRecord race = record(raceId);
  const AgentRecord agent = withResult(race, agentId);
  auto summary = merge::diffCommits(root_, race.baseCommit, *agent.commit);
  DiffResult out;
  out.files = summary.files;
  out.additions = summary.additions;
  out.deletions = summary.deletions;
  // A secret the agent wrote into a file is masked in every diff hydra shows.
  out.patch = diffRedactor()->redact(makeValidUtf8(merge::unifiedPatch(root_, race.baseCommit, *agent.commit)));
  return out;
}

std::string Workspace::patch(const std::string& raceId, const std::string& agentId,
                             const std::optional<std::string>& path) {
  RaceRecord race = record(raceId);
  const AgentRecord agent = withResult(race, agentId);
  if (path) requireTreePath(*path);
  return diffRedactor()->redact(merge::unifiedPatch(root_, race.baseCommit, *agent.commit, path));
}

FileContents Workspace::file(const std::string& raceId, const std::string& agentId, const std::string& path) {
  RaceRecord race = record(raceId);
  const AgentRecord agent = withResult(race, agentId);
  requireTreePath(path);
  // A symlink the agent made may point anywhere: never follow one out of its worktree.
  std::error_code ec;
  if (fs::is_directory(agent.worktree, ec) && !resolveInside(agent.worktree, path)) {
    throw WorkspaceError::pathOutsideChanges(path, "it leads outside the agent's worktree");
  }
  auto summary = merge::diffCommits(root_, race.baseCommit, *agent.commit);
  bool changed = std::any_of(summary.files.begin(), summary.files.end(),
                             [&](const merge::FileChange& f) { return f.path == path || f.oldPath == path; });
  if (!changed) throw WorkspaceError::pathOutsideChanges(path, "the agent did not change it");

  merge::FileVersions versions;
  try {
    versions = merge::fileVersions(root_, race.baseCommit, *agent.commit, path);
  } catch (const std::invalid_argument& e) {
    throw WorkspaceError::pathOutsideChanges(path, e.what());
  }
  FileContents out;
  out.path = path;
  out.binary = versions.binary;
  bool text = !versions.binary && (!versions.base || isValidUtf8(*versions.base)) &&
              (!versions.agent || isValidUtf8(*versions.agent));
  out.encoding = text ? "utf-8" : "base64";
  const auto redactor = diffRedactor();
  auto encode = [&](const std::optional<std::string>& bytes) -> std::optional<std::string> {
    if (!bytes) return std::nullopt;
    return text ? redactor->redact(*bytes) : base64(*bytes);
  };
  out.base = encode(versions.base);
  out.agent = encode(versions.agent);
  return out;
}

LogText Workspace::log(const std::string& raceId, const std::string& agentId, OutputStream stream,
                       std::uint64_t offset, std::uint64_t limit) {
  RaceRecord race = record(raceId);
  const std::string subject = logSubject(race, agentId);
  auto slice = store_.readLog(raceId, subject, offset, std::min(limit == 0 ? kDefaultLogRead : limit, kMaxLogRead),
                              stream);
  if (!slice) throw WorkspaceError::unknownRace(raceId);
  bool atEnd = slice->offset + slice->data.size() >= slice->totalSize;
  auto [text, used] = logText(slice->data, atEnd);
  LogText out;
  out.data = std::move(text);
  out.offset = slice->offset;
  out.totalSize = slice->totalSize;
  out.nextOffset = slice->offset + used;
  return out;
}

AgentEventsResult Workspace::agentEvents(const std::string& raceId, const std::string& agentId,
                                         std::uint64_t offset, std::uint64_t limit) {
  RaceRecord race = record(raceId);
  const std::string subject = logSubject(race, agentId);
  auto page = store_.readAgentEvents(raceId, subject, offset, std::min<std::uint64_t>(limit, kMaxEventsRead));
  AgentEventsResult out;
  out.offset = page.offset;
  out.total = page.total;
  out.events = std::move(page.events);
  out.streams = std::move(page.streams);
  if (offset + out.events.size() < out.total) out.nextOffset = offset + out.events.size();
  return out;
}

}  // namespace hydra::core
