#include "core/guard/git_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <set>

#include "core/git/git.h"
#include "core/git/object_quarantine.h"
#include "core/util/file_lock.h"
#include "core/util/safe_fs.h"

namespace hydra::core::guard {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWatchedFolders[] = {"hooks", "info"};
constexpr const char* kWatchedFiles[] = {"config", "objects/info/alternates", "objects/info/http-alternates"};
// Under a watched folder but git's own: `git update-server-info`, which every
// repack and so a background `git gc --auto` after the user's own commit
// runs, rewrites info/refs. Only a dumb HTTP client reads it; no local git
// command runs anything from it.
constexpr const char* kUnwatched[] = {"info/refs"};

bool unwatched(const std::string& relative) {
  for (const char* name : kUnwatched) {
    if (relative == name) return true;
  }
  return false;
}

std::uint64_t digestOf(std::string_view data) {
  // FNV-1a, 64 bits: enough to tell a rewrite, not meant against collisions.
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : data) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return hash;
}

constexpr std::string_view kAlternates = "objects/info/alternates";

// The alternates file's lines that hydra wrote for its quarantines
// (core/git/object_quarantine.h) and the rest.
std::pair<std::string, std::string> splitAlternates(const fs::path& commonDir, std::string_view content) {
  std::string hydras;
  std::string others;
  while (!content.empty()) {
    const std::size_t end = content.find('\n');
    const std::string_view line = content.substr(0, end);
    (isQuarantineLine(commonDir, line) ? hydras : others).append(line).append("\n");
    if (end == std::string_view::npos) break;
    content.remove_prefix(end + 1);
  }
  return {hydras, others};
}

std::optional<GitDirFile> readWatched(const fs::path& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) return std::nullopt;
  GitDirFile read;
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    read.content = "symbolic link to " + fs::read_symlink(file, ec).string();
  } else if (S_ISREG(st.st_mode)) {
    read.mode = st.st_mode & 07777;
    std::ifstream in(file, std::ios::binary);
    std::string content;
    char buffer[8192];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) content.append(buffer, static_cast<std::size_t>(in.gcount()));
    read.digest = digestOf(content);
    if (content.size() > kMaxKept) {
      read.tooLarge = true;
    } else {
      read.content = std::move(content);
    }
  } else {
    return std::nullopt;  // a directory: its files are listed on their own
  }
  return read;
}

std::string shown(const std::string& relative) {
  if (relative.rfind("objects/", 0) == 0 && relative.size() == 8 + 2 + 1 + 38) {
    return "object " + relative.substr(8, 2) + relative.substr(11) + " of the base commit (.git/" + relative + ")";
  }
  return ".git/" + relative;
}

// Whether the object of loose `relative` ("objects/ab/cdef...") is still in
// the repository, in a pack.
bool packedNow(const GitDirSnapshot& snapshot, const std::string& relative) {
  if (relative.rfind("objects/", 0) != 0 || relative.size() != 8 + 2 + 1 + 38) return false;
  git_odb* odb = nullptr;
  if (git_odb_open(&odb, (snapshot.commonDir / "objects").c_str()) != 0) return false;
  git_oid id;
  const std::string hex = relative.substr(8, 2) + relative.substr(11);
  const bool found = git_oid_fromstr(&id, hex.c_str()) == 0 && git_odb_exists(odb, &id) == 1;
  git_odb_free(odb);
  return found;
}

// A watched file as the guard compares it: the alternates file without the
// lines of hydra's own quarantines, which other races add and remove while an
// agent runs (a file holding only those counts as absent).
std::optional<GitDirFile> readCompared(const fs::path& commonDir, const std::string& relative) {
  auto file = readWatched(commonDir / relative);
  if (!file || relative != kAlternates || file->tooLarge || file->mode == 0) return file;
  auto [hydras, others] = splitAlternates(commonDir, file->content);
  if (hydras.empty()) return file;
  if (others.empty()) return std::nullopt;
  file->content = std::move(others);
  file->digest = digestOf(file->content);
  return file;
}

// Reads `snapshot`'s watched settings and objects as they are now into `snapshot.files`.
void readInto(GitDirSnapshot& snapshot) {
  std::size_t objectsKept = 0;
  for (const auto& relative : snapshot.objects) {
    auto file = readWatched(snapshot.commonDir / relative);
    if (!file) continue;
    objectsKept += file->content.size();
    if (objectsKept > kMaxObjectsKept) {
      file->content.clear();
      file->tooLarge = true;
    }
    snapshot.files[relative] = std::move(*file);
  }
}

// Puts `relative` back as `file` was, or removes it when `file` is null;
// what it says for people.
std::string putBack(const fs::path& commonDir, const std::string& relative, const GitDirFile* file) {
  const fs::path path(relative);
  try {
    if (relative == kAlternates) {
      // The lines of hydra's quarantines stay as they are now: under the
      // lock their owners write them with.
      const FileLock lock(alternatesLock(commonDir));
      const auto now = readWatched(commonDir / relative);
      const std::string hydras =
          now && now->mode != 0 && !now->tooLarge ? splitAlternates(commonDir, now->content).first : std::string();
      if (!hydras.empty() && (!file || !file->tooLarge)) {
        SafeDir dir = SafeDir::openBeneath(commonDir, path.parent_path());
        if (auto st = dir.status("alternates"); st && S_ISDIR(st->st_mode)) dir.remove("alternates");
        dir.writeFile("alternates", (file ? file->content : std::string()) + hydras);
        return file ? "put back" : "removed";
      }
    }
    // Beneath the git directory without following a link on the way: an
    // agent that swapped hooks/ for a link does not get hydra to write there.
    SafeDir dir = SafeDir::openBeneath(commonDir, path.parent_path());
    const std::string name = path.filename().string();
    if (!file) {
      dir.remove(name);
      return "removed";
    }
    if (file->tooLarge) return "could not be put back: larger than hydra keeps";
    if (file->content.rfind("symbolic link to ", 0) == 0) return "could not be put back: it was a symbolic link";
    if (auto st = dir.status(name); st && S_ISDIR(st->st_mode)) dir.remove(name);
    dir.writeFile(name, file->content);
    if (::fchmodat(dir.fd(), name.c_str(), file->mode, 0) != 0) {
      return "put back, but its mode could not be";
    }
    return "put back";
  } catch (const std::exception& e) {
    return std::string("could not be put back: ") + e.what();
  }
}

// The pack files (".pack" and ".idx") under `commonDir`/objects/pack, by path
// relative to `commonDir`. Links are not followed.
std::map<std::string, PackFile> listPacks(const fs::path& commonDir) {
  std::map<std::string, PackFile> packs;
  std::error_code ec;
  for (fs::directory_iterator it(commonDir / "objects" / "pack", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool pack = name.size() > 5 && name.compare(name.size() - 5, 5, ".pack") == 0;
    const bool idx = name.size() > 4 && name.compare(name.size() - 4, 4, ".idx") == 0;
    if (!pack && !idx) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    packs["objects/pack/" + name] = PackFile{static_cast<std::uint64_t>(st.st_ino), static_cast<std::uint64_t>(st.st_size),
                                             static_cast<std::int64_t>(st.st_ctim.tv_sec),
                                             static_cast<std::int64_t>(st.st_ctim.tv_nsec)};
  }
  return packs;
}

// "objects/pack/pack-1234.idx" -> "objects/pack/pack-1234".
std::string packStem(const std::string& relative) { return relative.substr(0, relative.rfind('.')); }

std::vector<git_oid> baseIds(const GitDirSnapshot& snapshot) {
  std::vector<git_oid> ids;
  for (const auto& relative : snapshot.objects) {
    git_oid id;
    const std::string hex = relative.substr(8, 2) + relative.substr(11);
    if (git_oid_fromstr(&id, hex.c_str()) == 0) ids.push_back(id);
  }
  return ids;
}

struct OdbFree {
  void operator()(git_odb* odb) const { git_odb_free(odb); }
};
using OdbPtr = std::unique_ptr<git_odb, OdbFree>;

// The base objects that `odb` holds and cannot give back whole: read again,
// each one's content must hash to its id. Objects over kMaxVerified are
// left out (memory stays bounded).
std::vector<std::string> damagedIn(git_odb* odb, const std::vector<git_oid>& ids) {
  std::vector<std::string> damaged;
  for (const auto& id : ids) {
    if (git_odb_exists(odb, &id) != 1) continue;
    std::size_t size = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    if (git_odb_read_header(&size, &type, odb, &id) == 0 && size > kMaxVerified) continue;
    git_odb_object* object = nullptr;
    if (git_odb_read(&object, odb, &id) != 0) {
      damaged.push_back(git::toHex(id));  // libgit2 verifies the id of what it read
      continue;
    }
    git_odb_object_free(object);
  }
  return damaged;
}

std::string listed(const std::vector<std::string>& ids) {
  constexpr std::size_t kNamed = 3;
  std::string out;
  for (std::size_t i = 0; i < ids.size() && i < kNamed; ++i) out += (i ? ", " : "") + ids[i];
  if (ids.size() > kNamed) out += " and " + std::to_string(ids.size() - kNamed) + " more";
  return out;
}

// What changed among the packs since `before`, for people: only what damaged
// or lost an object of the base. `before.packs` becomes the packs now.
std::vector<std::string> comparePacks(GitDirSnapshot& before) {
  std::map<std::string, PackFile> now = listPacks(before.commonDir);
  if (now == before.packs) return {};
  std::set<std::string> touched, removed;
  for (const auto& [path, file] : now) {
    auto was = before.packs.find(path);
    if (was == before.packs.end() || !(was->second == file)) touched.insert(packStem(path));
  }
  for (const auto& [path, file] : before.packs) {
    if (!now.count(path)) removed.insert(packStem(path));
  }
  before.packs = std::move(now);
  const std::vector<git_oid> ids = baseIds(before);
  std::vector<std::string> said;
  for (const auto& stem : touched) {
    // A pack git is still writing has no index yet: git does not read it either.
    if (!before.packs.count(stem + ".idx") || !before.packs.count(stem + ".pack")) continue;
    git_odb* raw = nullptr;
    git_odb_backend* backend = nullptr;
    std::vector<std::string> damaged;
    if (git_odb_new(&raw) != 0) continue;
    OdbPtr odb(raw);
    if (git_odb_backend_one_pack(&backend, (before.commonDir / (stem + ".idx")).c_str()) != 0 ||
        git_odb_add_backend(odb.get(), backend, 1) != 0) {
      said.push_back(".git/" + stem + ".pack was written and cannot be read (could not be put back)");
      continue;
    }
    damaged = damagedIn(odb.get(), ids);
    // git may touch a damaged pack again (freshening it): what was told is not told again.
    std::erase_if(damaged, [&](const std::string& id) { return !before.toldDamaged.insert(id).second; });
    if (!damaged.empty()) {
      said.push_back(".git/" + stem + ".pack was written: " + std::to_string(damaged.size()) +
                     " object(s) of the base commit in it are damaged (" + listed(damaged) +
                     "; could not be put back)");
    }
  }
  if (!removed.empty()) {
    git_odb* raw = nullptr;
    if (git_odb_open(&raw, (before.commonDir / "objects").c_str()) == 0) {
      OdbPtr odb(raw);
      std::vector<std::string> lost;
      for (const auto& id : ids) {
        if (git_odb_exists(odb.get(), &id) == 1) continue;
        if (std::string hex = git::toHex(id); before.toldDamaged.insert(hex).second) lost.push_back(hex);
      }
      if (!lost.empty()) {
        std::string packs;
        for (const auto& stem : removed) packs += (packs.empty() ? ".git/" : ", .git/") + stem + ".pack";
        said.push_back(packs + " removed: " + std::to_string(lost.size()) + " object(s) of the base commit are gone (" +
                       listed(lost) + "; could not be put back)");
      }
    }
  }
  return said;
}

}  // namespace

GitDirSnapshot snapshotBaseObjects(const fs::path& repository, const std::string& baseCommit) {
  auto repo = git::openRepository(repository);
  GitDirSnapshot snapshot;
  snapshot.commonDir = git::commonDir(repo.get());
  snapshot.settings = false;
  const git_oid commitId = git::resolveCommit(repo.get(), baseCommit);
  auto commit = git::lookupCommit(repo.get(), commitId);
  git_tree* rawTree = nullptr;
  git::check(git_commit_tree(&rawTree, commit.get()), "read the base commit's tree");
  std::set<std::string> ids{git::toHex(commitId), git::toHex(*git_tree_id(rawTree))};
  auto collect = [](const char*, const git_tree_entry* entry, void* payload) -> int {
    // A submodule's commit lives in another repository.
    if (git_tree_entry_type(entry) != GIT_OBJECT_COMMIT) {
      static_cast<std::set<std::string>*>(payload)->insert(git::toHex(*git_tree_entry_id(entry)));
    }
    return 0;
  };
  const int rc = git_tree_walk(rawTree, GIT_TREEWALK_PRE, collect, &ids);
  git_tree_free(rawTree);
  git::check(rc, "walk the base commit's tree");
  for (const auto& id : ids) snapshot.objects.push_back("objects/" + id.substr(0, 2) + "/" + id.substr(2));
  readInto(snapshot);
  snapshot.packs = listPacks(snapshot.commonDir);
  return snapshot;
}

GitDirSnapshot snapshotGitDir(const fs::path& commonDir) {
  GitDirSnapshot snapshot;
  snapshot.commonDir = commonDir;
  for (const char* name : kWatchedFiles) {
    if (auto file = readCompared(commonDir, name)) snapshot.files[name] = std::move(*file);
  }
  for (const char* folder : kWatchedFolders) {
    std::error_code ec;
    // A folder swapped for a link is one file here (its target), not followed.
    if (auto file = readWatched(commonDir / folder)) {
      snapshot.files[folder] = std::move(*file);
      continue;
    }
    fs::recursive_directory_iterator it(commonDir / folder, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::string relative = it->path().lexically_relative(commonDir).generic_string();
      if (unwatched(relative)) continue;
      if (auto file = readWatched(it->path())) snapshot.files[std::move(relative)] = std::move(*file);
    }
  }
  return snapshot;
}

std::vector<std::string> restoreGitDir(GitDirSnapshot& before) {
  GitDirSnapshot now;
  if (before.settings) {
    now = snapshotGitDir(before.commonDir);
  } else {
    now.commonDir = before.commonDir;
    now.settings = false;
  }
  now.objects = before.objects;
  readInto(now);
  std::set<std::string> paths;
  for (const auto& [path, file] : before.files) paths.insert(path);
  for (const auto& [path, file] : now.files) paths.insert(path);
  std::vector<std::string> said;
  for (const auto& path : paths) {
    const auto was = before.files.find(path);
    const auto is = now.files.find(path);
    const GitDirFile* then = was == before.files.end() ? nullptr : &was->second;
    const GitDirFile* current = is == now.files.end() ? nullptr : &is->second;
    if (then && current && *then == *current) continue;
    if (then && !current && packedNow(before, path)) {
      // git's own gc packed it (git commit may run it): nothing was lost.
      before.files.erase(path);
      continue;
    }
    const std::string what = !then ? "added" : !current ? "deleted" : "changed";
    const std::string done = putBack(before.commonDir, path, then);
    said.push_back(shown(path) + " " + what + " (" + done + ")");
    // What could not be put back stays as it is now: it is not told again.
    const bool restored = done == "put back" || done == "removed";
    if (!restored) {
      if (current) {
        before.files[path] = *current;
      } else {
        before.files.erase(path);
      }
    }
  }
  if (!before.settings) {
    auto packs = comparePacks(before);
    said.insert(said.end(), packs.begin(), packs.end());
  }
  return said;
}

}  // namespace hydra::core::guard
