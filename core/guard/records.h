#pragma once

// hydra's own records (`.hydra/`) during a race. Confined, an agent cannot
// see them; unconfined, it could rewrite an earlier race's result, forge a
// race, or plant files hydra reads later. The guard takes a snapshot of the
// records when the race's worktrees exist and compares after each agent:
// whatever changed that hydra did not write itself is tampering.
//
// What is watched:
//   - every file of a finished race (`.hydra/races/<id>/...`), and
//     everything else under `.hydra/`;
//   - of a race under way (its own and any other), only `race.json` and
//     `scores.json`, and only once hydra has written them in this process:
//     its logs and event streams grow all the time;
//   - a new folder under `.hydra/races/` whose name is not a race id.
// Not watched: a new race folder named like hydra's races (another hydra
// may have started it), the logs and events of races under way, and the eval
// reports (`.hydra/evals/`), which hydra writes after every sample while the
// next ones run and which are written whole from memory each time.
//
// Files are compared by their stat data (inode, size, modification and
// change times) and, up to 1 MiB, a digest of their content: cheap on a long
// history (logs are not read), and a write cannot keep the change time. hydra's own writes go through OwnRecordWrite, which holds comparisons
// off while it writes and remembers what it left.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hydra::core::guard {

// The folder of .hydra/ that `hydra eval run` writes its reports in by default.
inline constexpr const char* kEvalReportsFolder = "evals";

struct FileStamp {
  dev_t device = 0;
  ino_t inode = 0;
  std::uintmax_t size = 0;
  std::int64_t modifiedNs = 0;
  std::int64_t changedNs = 0;
  // Of the content, for files up to kDigestLimit: stat data alone misses a
  // same-size rewrite within one clock tick.
  std::uint64_t digest = 0;

  bool operator==(const FileStamp&) const = default;
};

inline constexpr std::uintmax_t kDigestLimit = 1 << 20;

// The file's stamp; nullopt when it does not exist (or is not a regular file).
std::optional<FileStamp> stampOf(const std::filesystem::path& file);

// A write hydra makes to its records, held apart from every comparison, and
// remembered afterwards so no guard takes it for tampering. Process-wide.
class OwnRecordWrite {
 public:
  // `files`: what the write creates, changes or removes (absolute paths).
  explicit OwnRecordWrite(std::vector<std::filesystem::path> files);
  ~OwnRecordWrite();  // remembers each file as it now is
  OwnRecordWrite(const OwnRecordWrite&) = delete;
  OwnRecordWrite& operator=(const OwnRecordWrite&) = delete;

 private:
  std::vector<std::filesystem::path> files_;
  std::unique_lock<std::recursive_mutex> lock_;
};

// The regular files under `dir` (recursively), for OwnRecordWrite before a removal.
std::vector<std::filesystem::path> filesUnder(const std::filesystem::path& dir);

struct RecordsSnapshot {
  std::filesystem::path root;                        // <repository>/.hydra
  std::set<std::string> underWay;                    // race ids under way when it was taken
  std::map<std::string, FileStamp> files;            // by path relative to `root`
  std::map<std::string, std::optional<FileStamp>> told;  // changes told of races under way
};

// `finished(raceId)`: whether that race is over (its record says so).
RecordsSnapshot snapshotRecords(const std::filesystem::path& repository,
                                const std::function<bool(const std::string&)>& finished);

// What changed in the records since `before`, for people ("changed hydra's
// record races/20261125-101010-ab12/race.json"); `before` becomes the state
// now, so each change is told once.
std::vector<std::string> compareRecords(RecordsSnapshot& before);

}  // namespace hydra::core::guard
