#include "core/guard/records.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string_view>

namespace hydra::core::guard {

namespace fs = std::filesystem;

namespace {

// hydra's own writes to its records, as each left its file (nullopt: removed).
struct OwnWrites {
  std::recursive_mutex mutex;
  std::map<std::string, std::optional<FileStamp>> last;

  static OwnWrites& instance() {
    static auto* writes = new OwnWrites;  // never destroyed: writes may happen during exit
    return *writes;
  }
};

// The names hydra gives races: 20261125-151147-edd1.
bool looksLikeRaceId(std::string_view name) {
  if (name.size() != 20 || name[8] != '-' || name[15] != '-') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (i == 8 || i == 15) continue;
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (i < 15 ? !std::isdigit(c) : !(std::isdigit(c) || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool sameStamp(const FileStamp* a, const FileStamp* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return *a == *b;
}

constexpr std::string_view kWatchedWhileUnderWay[] = {"race.json", "scores.json"};

void addFilesUnder(const fs::path& root, const fs::path& dir, std::map<std::string, FileStamp>& out) {
  for (const fs::path& file : filesUnder(dir)) {
    if (auto stamp = stampOf(file)) out[file.lexically_relative(root).generic_string()] = *stamp;
  }
}

// The files to compare now: those of finished races and directly under
// .hydra/; `underWay` gains every race folder that looks like hydra's and is
// not finished (`finished` is asked only for folders not seen before).
std::map<std::string, FileStamp> watchedFiles(const fs::path& root, std::set<std::string>& underWay,
                                              const std::set<std::string>& finishedBefore,
                                              const std::function<bool(const std::string&)>& finished) {
  std::map<std::string, FileStamp> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && !entry.is_symlink()) {
      if (auto stamp = stampOf(entry.path())) files[name] = *stamp;
    } else if (entry.is_directory() && !entry.is_symlink() && name != "races" && name != kEvalReportsFolder) {
      addFilesUnder(root, entry.path(), files);
    }
  }
  for (const auto& entry : fs::directory_iterator(root / "races", ec)) {
    const std::string id = entry.path().filename().string();
    if (!entry.is_directory() || entry.is_symlink()) {
      if (auto stamp = stampOf(entry.path())) files["races/" + id] = *stamp;
      continue;
    }
    if (underWay.count(id) > 0) continue;
    // A race folder being claimed (RaceStore::newRaceId): hydra's, and
    // renamed to its race's id a moment later.
    if (id.rfind(".claim-", 0) == 0) continue;
    const bool known = finishedBefore.count(id) > 0;
    if (!known && looksLikeRaceId(id) && !finished(id)) {
      underWay.insert(id);
      continue;
    }
    addFilesUnder(root, entry.path(), files);
  }
  return files;
}

// The race folders whose files are watched whole.
std::set<std::string> watchedRaces(const std::map<std::string, FileStamp>& files) {
  std::set<std::string> ids;
  for (const auto& [path, stamp] : files) {
    if (path.rfind("races/", 0) != 0) continue;
    const auto slash = path.find('/', 6);
    if (slash != std::string::npos) ids.insert(path.substr(6, slash - 6));
  }
  return ids;
}

}  // namespace

std::optional<FileStamp> stampOf(const fs::path& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  FileStamp stamp;
  stamp.device = st.st_dev;
  stamp.inode = st.st_ino;
  stamp.size = static_cast<std::uintmax_t>(st.st_size);
  stamp.modifiedNs = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  stamp.changedNs = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  if (stamp.size <= kDigestLimit) {
    // FNV-1a, 64 bits: enough to tell a rewrite, not meant against collisions.
    std::ifstream in(file, std::ios::binary);
    std::uint64_t hash = 0xcbf29ce484222325ull;
    char buffer[8192];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      for (std::streamsize i = 0; i < in.gcount(); ++i) {
        hash = (hash ^ static_cast<unsigned char>(buffer[i])) * 0x100000001b3ull;
      }
    }
    stamp.digest = hash;
  }
  return stamp;
}

OwnRecordWrite::OwnRecordWrite(std::vector<fs::path> files)
    : files_(std::move(files)), lock_(OwnWrites::instance().mutex) {}

OwnRecordWrite::~OwnRecordWrite() {
  auto& writes = OwnWrites::instance();
  for (const auto& file : files_) writes.last[file.lexically_normal().string()] = stampOf(file);
}

std::vector<fs::path> filesUnder(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec)) files.push_back(it->path());
  }
  return files;
}

RecordsSnapshot snapshotRecords(const fs::path& repository, const std::function<bool(const std::string&)>& finished) {
  std::lock_guard lock(OwnWrites::instance().mutex);
  RecordsSnapshot snapshot;
  snapshot.root = repository / ".hydra";
  snapshot.files = watchedFiles(snapshot.root, snapshot.underWay, {}, finished);
  return snapshot;
}

std::vector<std::string> compareRecords(RecordsSnapshot& before) {
  auto& writes = OwnWrites::instance();
  std::lock_guard lock(writes.mutex);
  // Folders that appeared since are races under way, by hydra's ids, or
  // planted; what was finished stays watched.
  const std::set<std::string> finishedBefore = watchedRaces(before.files);
  auto now = watchedFiles(before.root, before.underWay, finishedBefore, [](const std::string&) { return false; });
  std::vector<std::string> said;
  auto hydraWrote = [&](const std::string& relative, const FileStamp* stamp) {
    auto it = writes.last.find((before.root / relative).lexically_normal().string());
    return it != writes.last.end() && sameStamp(it->second ? &*it->second : nullptr, stamp);
  };
  std::set<std::string> paths;
  for (const auto& [path, stamp] : before.files) paths.insert(path);
  for (const auto& [path, stamp] : now) paths.insert(path);
  for (const auto& path : paths) {
    auto was = before.files.find(path);
    auto is = now.find(path);
    const FileStamp* then = was == before.files.end() ? nullptr : &was->second;
    const FileStamp* current = is == now.end() ? nullptr : &is->second;
    if (sameStamp(then, current) || hydraWrote(path, current)) continue;
    if (!current) {
      said.push_back("deleted hydra's record .hydra/" + path);
    } else if (!then) {
      said.push_back("added .hydra/" + path + " to hydra's records");
    } else {
      said.push_back("changed hydra's record .hydra/" + path);
    }
  }
  // Races under way: what hydra last wrote of their record and scores.
  for (const auto& id : before.underWay) {
    for (std::string_view name : kWatchedWhileUnderWay) {
      const std::string relative = "races/" + id + "/" + std::string(name);
      const fs::path file = before.root / relative;
      auto it = writes.last.find(file.lexically_normal().string());
      if (it == writes.last.end()) continue;  // not written by this hydra (yet)
      const std::optional<FileStamp> current = stampOf(file);
      const FileStamp* is = current ? &*current : nullptr;
      if (sameStamp(it->second ? &*it->second : nullptr, is)) continue;
      // Told once per change.
      auto told = before.told.find(relative);
      if (told != before.told.end() && sameStamp(told->second ? &*told->second : nullptr, is)) continue;
      said.push_back((current ? "changed hydra's record .hydra/" : "deleted hydra's record .hydra/") + relative);
      before.told[relative] = current;
    }
  }
  before.files = std::move(now);
  return said;
}

}  // namespace hydra::core::guard
