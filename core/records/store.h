#pragma once

// Where races live on disk, and how they survive a crash of hydra:
//
//   <repoRoot>/.hydra/races/<raceId>/
//     owner                    the hydra that made the folder ("<pid>:<start>:<host>"), there from the start
//     race.json                the RaceRecord, replaced atomically on every save
//     scores.json              the race's scores, once it has been scored
//     events.jsonl             one JSON object per line, appended
//     <agentId>.log            the agent's stdout, line by line, as printed
//     <agentId>.stderr.log     the agent's stderr, likewise (created on its first line)
//     <agentId>.events.jsonl   what the agent's adapter read from its output, one event per line (raw lines excepted)
//     checks/<subject>.<check>.log   the output of a scoring check
//
// What is written here is redacted by whoever produced it (every event on the
// bus already is), and the store masks once more, with its own Redactor, as a
// last line of defence. Stdout and stderr are kept apart, unprefixed, so the
// stdout log is exactly the stream an adapter parses and can be parsed again later.
//
// The RaceRecorder (recorder.h) is what writes during a race: it takes every
// event from the bus, losslessly, on a thread of its own.

#include <sys/types.h>

#include <boost/json/object.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/events/events.h"
#include "core/util/proc_stat.h"
#include "core/scoring/scores.h"
#include "core/records/record.h"
#include "core/util/atomic_file.h"
#include "core/util/redact.h"

namespace hydra::core {

// Race and agent ids name files, so they are limited to [A-Za-z0-9_-]{1,128}:
// no id can climb out of the races directory.
bool isValidId(std::string_view id);


// A race still marked running whose hydra process is gone (or whose pid now
// names another process) was interrupted: marks it so, and its queued and
// running agents, in `race` only (nothing is written). False, and `race`
// untouched, for any other race, including one whose hydra runs on another host.
bool markIfOrphaned(RaceRecord& race);

// The append-only logs of one agent. Thread-safe: stdout and stderr may be
// read on different threads.
class AgentLog {
 public:
  // Without a redactor, lines are written as they are given.
  AgentLog(std::filesystem::path stdoutPath, std::filesystem::path stderrPath,
           std::shared_ptr<const Redactor> redactor, std::filesystem::path eventsPath = {});

  // Appends one line (without its newline) to the stream's log.
  // Throws std::system_error when the file cannot be written.
  void write(OutputStream stream, std::string_view line);
  // Appends what the agent's adapter read from that stream, one JSON event per
  // line (AgentEvent's JSON form with its "stream"), to the events log, when
  // the log was opened with one. Raw events are left out: they are lines the
  // adapter could not read, and the log holds them as they were.
  void writeEvents(OutputStream stream, const std::vector<AgentEvent>& events);
  // Forces both logs to stable storage.
  void sync();

 private:
  struct Stream {
    std::filesystem::path path;
    std::optional<AppendFile> file;  // opened on the first line
    Redactor::LineState state;
  };
  std::mutex mutex_;
  std::shared_ptr<const Redactor> redactor_;
  Stream out_;
  Stream err_;
  std::filesystem::path eventsPath_;
  std::optional<AppendFile> events_;
};

// A byte range of a log: `data` starts at `offset`; the log held `totalSize`
// bytes when it was read, so `offset + data.size() < totalSize` means more.
struct LogSlice {
  std::string data;
  std::uint64_t offset = 0;
  std::uint64_t totalSize = 0;
};

class RaceStore {
 public:
  // Reads are capped at this many bytes per readLog call.
  static constexpr std::uint64_t kMaxLogSlice = 16 * 1024 * 1024;

  explicit RaceStore(std::filesystem::path repoRoot, Redactor redactor = {});

  // <repoRoot>/.hydra/races
  const std::filesystem::path& racesDir() const { return racesDir_; }
  // Throws std::invalid_argument for an invalid id.
  std::filesystem::path raceDir(std::string_view raceId) const;

  // A fresh id, `YYYYMMDD-HHMMSS-xxxx` (UTC, then 4 random hex digits), so ids
  // sort by creation time. Its directory is created here, which reserves it,
  // and it holds a file `owner` (this process, as ProcessOwner's word) from
  // the moment it appears: it is made as `.claim-<hex>-<owner>` and renamed
  // into place (never over another race's), so that a hydra killed before
  // its race's first record leaves a folder recovery can tell is dead.
  // Throws std::system_error naming the folder it could not make.
  std::string newRaceId();
  // Removes the folder of a race that never started (its plan was refused):
  // only while it holds no record.
  void abandon(std::string_view raceId);
  // Removes what a dead hydra left before its race had a record: race
  // folders without race.json whose owner is dead (or unknown), and claims
  // (`.claim-*`) of dead owners. A live hydra's are left alone. Returns how
  // many it removed.
  int removeAbandoned();

  // Writes race.json atomically (creating the race's directory if needed).
  // String values are redacted. Throws std::system_error.
  void save(const RaceRecord& race);
  // nullopt when the race has no race.json. Throws RecordError for a file
  // that does not hold a record.
  std::optional<RaceRecord> load(std::string_view raceId) const;
  // Every readable race, newest first (by createdAt, then id). Directories
  // without a readable race.json are skipped.
  std::vector<RaceRecord> list() const;
  // Deletes the race's directory (records and logs; never worktrees).
  // False when there was no such race.
  bool remove(std::string_view raceId);

  // Appends `event` to events.jsonl as one line. Every string value in it is
  // redacted; member names and the shape are kept, so it reads back as written.
  // Throws std::system_error (e.g. when the race's directory does not exist).
  void appendEvent(std::string_view raceId, const boost::json::object& event);
  // The events appended so far; lines that do not parse (a write cut short by
  // a crash) are skipped.
  std::vector<boost::json::object> readEvents(std::string_view raceId) const;

  std::unique_ptr<AgentLog> openLog(std::string_view raceId, std::string_view agentId);
  // The log of one scoring check, by its subject (an agent id or "baseline"), if it exists.
  std::filesystem::path checkLogPath(std::string_view raceId, std::string_view subject, std::string_view check) const;

  // The complete output of one scoring check (`check` is build, tests or lint)
  // run for `subject` (an agent id, or "baseline"): checks/<subject>.<check>.log.
  std::unique_ptr<AgentLog> openCheckLog(std::string_view raceId, std::string_view subject,
                                         std::string_view check);


  // Where a race's scores.json lives.
  std::filesystem::path scoresPath(std::string_view raceId) const;
  // Writes scores.json atomically.
  void saveScores(std::string_view raceId, const scoring::RaceScores& scores);
  // nullopt when the race has no scores.json (it was not scored). Throws
  // RecordError when the file exists but does not hold scores.
  std::optional<scoring::RaceScores> loadScores(std::string_view raceId) const;

  // Up to `limit` of an agent's stored events from the `offset`th (0-based);
  // `total` is how many there are. Lines that do not parse (a write cut short
  // by a crash) are skipped.
  struct AgentEventsPage {
    std::vector<AgentEvent> events;
    std::vector<OutputStream> streams;  // the stream each event was read from
    std::uint64_t offset = 0;
    std::uint64_t total = 0;
  };
  AgentEventsPage readAgentEvents(std::string_view raceId, std::string_view agentId, std::uint64_t offset,
                                  std::uint64_t limit) const;
  // Up to `limit` bytes (at most kMaxLogSlice) of a log from `offset`.
  // nullopt when there is no such race; an empty slice when the agent has
  // written nothing to that stream yet.
  std::optional<LogSlice> readLog(std::string_view raceId, std::string_view agentId,
                                  std::uint64_t offset, std::uint64_t limit,
                                  OutputStream stream = OutputStream::Stdout) const;

  // After a crash: every race still marked running whose hydra process is
  // gone (or whose pid now belongs to a different process) becomes
  // interrupted, and so do its queued and running agents. For each of its
  // agents whose process group still exists, `killGroup(pgid)` is called
  // (never for hydra's own group, never for an agent whose pid now names
  // another process). Worktrees are left alone. Returns the races it changed,
  // as saved.
  std::vector<RaceRecord> recoverInterrupted(const std::function<void(pid_t)>& killGroup);

 private:
  std::filesystem::path logPath(std::string_view raceId, std::string_view agentId,
                                OutputStream stream) const;

  std::filesystem::path racesDir_;
  std::shared_ptr<const Redactor> redactor_;
};

}  // namespace hydra::core
