#include "core/git/object_quarantine.h"

#include <fcntl.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_set>

#include "core/git/git.h"
#include "core/util/atomic_file.h"
#include "core/util/file_lock.h"
#include "core/util/owner.h"
#include "core/util/safe_fs.h"
#include "core/util/timestamp.h"

namespace fs = std::filesystem;

namespace hydra::core {
namespace {

constexpr std::string_view kFolder = "hydra-objects";
constexpr std::string_view kSealed = "hydra-sealed";  // in the quarantine's info/
constexpr std::string_view kBorn = "hydra-born";      // in the quarantine's info/: when it was made
constexpr int kQuarantinePriority = 10;                // above the repository's own loose (1) and packed (2)

using git::check;

// One path component made of what a race id holds.
bool safeName(std::string_view name) {
  if (name.empty() || name.size() > 200 || name == "." || name == "..") return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

struct OidHash {
  std::size_t operator()(const git_oid& id) const noexcept {
    std::size_t h = 0;
    std::memcpy(&h, id.id, sizeof h);
    return h;
  }
};
struct OidEqual {
  bool operator()(const git_oid& a, const git_oid& b) const noexcept { return git_oid_equal(&a, &b) != 0; }
};
using OidSet = std::unordered_set<git_oid, OidHash, OidEqual>;

// The alternates file's lines. A link in its place is refused: hydra writes
// this file, and never through a link (nor does it drop a line the link's
// target may hold).
std::vector<std::string> readAlternates(const SafeDir& info) {
  std::vector<std::string> lines;
  const auto st = info.status("alternates");
  if (!st) return lines;
  if (!S_ISREG(st->st_mode)) {
    throw std::system_error(ELOOP, std::generic_category(),
                            (info.path() / "alternates").string() +
                                " is not a regular file; hydra does not write through it (make it a file)");
  }
  std::istringstream in(info.readFile("alternates"));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void writeAlternates(const SafeDir& info, const std::vector<std::string>& lines) {
  if (lines.empty()) {
    info.remove("alternates");
    return;
  }
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  info.writeFile("alternates", text);
}

// `objects/info`, made when missing (a fresh repository may have none).
SafeDir openInfo(const fs::path& commonDir) {
  const SafeDir objects = SafeDir::openBeneath(commonDir, "objects");
  if (!objects.status("info") && ::mkdirat(objects.fd(), "info", 0777) != 0 && errno != EEXIST) {
    throw std::system_error(errno, std::generic_category(), "create " + (commonDir / "objects" / "info").string());
  }
  return objects.openDirectory("info");
}

std::optional<Timestamp> sealedAt(const fs::path& quarantine) {
  struct stat st {};
  if (::lstat((quarantine / "info" / kSealed).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return Timestamp(std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec));
}

// A copy into the user's store is written under a temporary name that says
// whose it is, so that what a killed hydra left is known and removed
// (removeDeadCopies()) and a live one's copy is never touched.
constexpr std::string_view kCopyPrefix = ".hydra-adopt-";

std::string copyName(const std::string& name) {
  static const std::string self = toWord(ProcessOwner::self());
  return std::string(kCopyPrefix) + self + "-" + name;
}

// Removes the temporary copies hydras killed while copying left in the user's
// loose object folders.
void removeDeadCopies(const fs::path& commonDir) {
  std::error_code ec;
  for (const auto& fan : fs::directory_iterator(commonDir / "objects", ec)) {
    const std::string prefix = fan.path().filename().string();
    if (prefix.size() != 2 || fan.is_symlink(ec) || !fan.is_directory(ec)) continue;
    std::vector<std::string> dead;
    for (const auto& file : fs::directory_iterator(fan.path(), ec)) {
      const std::string name = file.path().filename().string();
      if (!name.starts_with(kCopyPrefix)) continue;
      const std::string_view rest = std::string_view(name).substr(kCopyPrefix.size());
      const auto dash = rest.rfind('-');  // the object's name has none; a host may
      const auto owner = dash == std::string_view::npos ? std::nullopt : parseOwnerWord(rest.substr(0, dash));
      if (owner && ownerLife(*owner) != OwnerLife::Dead) continue;
      dead.push_back(name);
    }
    if (dead.empty()) continue;
    try {
      const SafeDir dir = SafeDir::open(fan.path());
      for (const std::string& name : dead) ::unlinkat(dir.fd(), name.c_str(), 0);
    } catch (const std::exception&) {
      // Not a plain folder of the user's any more: nothing of hydra's to remove there.
    }
  }
}

// Copies the regular file `from` to `dir/name` (a temporary name first, then
// a link that never replaces an object already there), without following a
// link on either side. False when `to` was already there.
bool copyInto(const fs::path& from, const SafeDir& dir, const std::string& name) {
  const int in = ::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0) throw std::system_error(errno, std::generic_category(), "open " + from.string());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } inCloser{in};
  struct stat st {};
  if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw std::system_error(EINVAL, std::generic_category(), from.string() + " is not a regular file");
  }
  if (dir.status(name)) return false;
  const std::string temp = copyName(name);
  const int out = ::openat(dir.fd(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (out < 0) throw std::system_error(errno, std::generic_category(), "create " + (dir.path() / temp).string());
  bool done = false;
  struct Cleanup {
    const SafeDir& dir;
    const std::string& temp;
    int fd;
    bool& done;
    ~Cleanup() {
      ::close(fd);
      if (!done) ::unlinkat(dir.fd(), temp.c_str(), 0);
    }
  } cleanup{dir, temp, out, done};
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "read " + from.string());
    if (n == 0) break;
    for (ssize_t off = 0; off < n;) {
      const ssize_t w = ::write(out, buffer + off, static_cast<std::size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw std::system_error(errno, std::generic_category(), "write " + (dir.path() / temp).string());
      off += w;
    }
  }
  if (::fsync(out) != 0) throw std::system_error(errno, std::generic_category(), "sync " + (dir.path() / temp).string());
  // linkat never replaces: an object written meanwhile by git is the same object.
  const bool linked = ::linkat(dir.fd(), temp.c_str(), dir.fd(), name.c_str(), 0) == 0;
  if (!linked && errno != EEXIST) {
    throw std::system_error(errno, std::generic_category(), "store " + (dir.path() / name).string());
  }
  ::unlinkat(dir.fd(), temp.c_str(), 0);
  done = true;
  return linked;
}

// The two views of objects a walk needs: what the user's own store holds,
// and what the quarantine holds.
class Stores {
 public:
  Stores(const fs::path& commonDir, const fs::path& quarantine, std::optional<Timestamp> born)
      : commonDir_(commonDir), quarantine_(quarantine), born_(born) {
    const fs::path objects = commonDir / "objects";
    git_odb* raw = nullptr;
    // The packs the user's store had before the quarantine was made: what
    // they hold cannot name a quarantined object.
    check(git_odb_new(&raw), "open " + objects.string());
    oldPacks_.reset(raw);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(objects / "pack", ec)) {
      const fs::path idx = entry.path();
      if (idx.extension() != ".idx" || !born) continue;
      fs::path pack = idx;
      pack.replace_extension(".pack");
      struct stat st {};
      if (::lstat(pack.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || !isOld(st)) continue;
      git_odb_backend* one = nullptr;
      if (git_odb_backend_one_pack(&one, idx.c_str()) != 0) continue;  // unreadable: its objects count as new
      addBackend(oldPacks_.get(), one, 1, idx);
    }
    // The user's store: its own objects and every alternate but this quarantine.
    check(git_odb_new(&raw), "open " + objects.string());
    user_.reset(raw);
    git_odb_backend* backend = nullptr;
    check(git_odb_backend_loose(&backend, objects.c_str(), -1, 0, 0, 0), "open " + objects.string());
    addBackend(user_.get(), backend, 1, objects);
    check(git_odb_backend_pack(&backend, objects.c_str()), "open " + objects.string());
    addBackend(user_.get(), backend, 2, objects);
    for (const std::string& line : readAlternates(openInfo(commonDir))) {
      if (line.empty() || line[0] == '#') continue;
      const fs::path other = fs::path(line).is_absolute() ? fs::path(line) : objects / line;
      if (other == quarantine) continue;
      check(git_odb_add_disk_alternate(user_.get(), other.c_str()), "open " + other.string());
    }
    check(git_odb_new(&raw), "open the quarantine");
    mine_.reset(raw);
    check(git_odb_add_disk_alternate(mine_.get(), quarantine.c_str()), "open " + quarantine.string());
    // Reads through both: the quarantine's trees name the user's blobs and the other way round.
    check(git_odb_open(&raw, objects.c_str()), "open " + objects.string());
    both_.reset(raw);
    check(git_odb_add_disk_alternate(both_.get(), quarantine.c_str()), "open " + quarantine.string());
  }

  bool inUserStore(const git_oid& id) const { return git_odb_exists(user_.get(), &id) != 0; }

  // In the user's store since before the quarantine was made: loose with an
  // older time (git only ever freshens a file's time forwards), or in a pack
  // that is older.
  bool oldInUserStore(const git_oid& id) const {
    if (!born_) return false;
    const std::string hex = git::toHex(id);
    struct stat st {};
    if (::lstat((commonDir_ / "objects" / hex.substr(0, 2) / hex.substr(2)).c_str(), &st) == 0 && isOld(st)) return true;
    return git_odb_exists(oldPacks_.get(), &id) != 0;
  }
  bool inQuarantine(const git_oid& id) const { return git_odb_exists(mine_.get(), &id) != 0; }
  git_odb* both() const { return both_.get(); }

  fs::path looseInQuarantine(const git_oid& id) const {
    const std::string hex = git::toHex(id);
    return quarantine_ / hex.substr(0, 2) / hex.substr(2);
  }

 private:
  static void addBackend(git_odb* odb, git_odb_backend* backend, int priority, const fs::path& shown) {
    if (const int rc = git_odb_add_backend(odb, backend, priority); rc != 0) {
      backend->free(backend);
      check(rc, "open " + shown.string());
    }
  }

  bool isOld(const struct stat& st) const {
    return Timestamp(std::chrono::seconds(st.st_mtim.tv_sec)) < *born_ - std::chrono::seconds(2);
  }

  fs::path commonDir_;
  fs::path quarantine_;
  std::optional<Timestamp> born_;
  git::OdbPtr oldPacks_;
  git::OdbPtr user_;
  git::OdbPtr mine_;
  git::OdbPtr both_;
};

// The objects `id` names directly: a commit's tree and parents, a tree's
// entries (not a submodule's commit), a tag's target.
std::vector<git_oid> childrenOf(git_odb* odb, const git_oid& id) {
  std::vector<git_oid> out;
  git_odb_object* raw = nullptr;
  if (git_odb_read(&raw, odb, &id) != 0) return out;  // missing: nothing to adopt through it
  std::unique_ptr<git_odb_object, void (*)(git_odb_object*)> object(raw, git_odb_object_free);
  const git_object_t type = git_odb_object_type(raw);
  const auto* data = static_cast<const char*>(git_odb_object_data(raw));
  const std::size_t size = git_odb_object_size(raw);
  if (type == GIT_OBJECT_COMMIT || type == GIT_OBJECT_TAG) {
    std::string_view text(data, size);
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = text.find('\n', at);
      const std::string_view line = text.substr(at, end == std::string_view::npos ? text.size() - at : end - at);
      if (line.empty()) break;  // the headers end at the first empty line
      for (std::string_view key : {"tree ", "parent ", "object "}) {
        if (line.starts_with(key) && line.size() >= key.size() + GIT_OID_HEXSZ) {
          git_oid child;
          if (git_oid_fromstrn(&child, line.data() + key.size(), GIT_OID_HEXSZ) == 0) out.push_back(child);
        }
      }
      if (end == std::string_view::npos) break;
      at = end + 1;
    }
  } else if (type == GIT_OBJECT_TREE) {
    // Entries: "<mode> <name>\0<20-byte id>".
    for (std::size_t at = 0; at < size;) {
      const char* space = static_cast<const char*>(std::memchr(data + at, ' ', size - at));
      if (space == nullptr) break;
      const std::string_view mode(data + at, static_cast<std::size_t>(space - (data + at)));
      const char* nul = static_cast<const char*>(std::memchr(space, '\0', size - static_cast<std::size_t>(space - data)));
      if (nul == nullptr || static_cast<std::size_t>(nul - data) + 1 + GIT_OID_RAWSZ > size) break;
      if (mode != "160000") {
        git_oid child;
        git_oid_fromraw(&child, reinterpret_cast<const unsigned char*>(nul + 1));
        out.push_back(child);
      }
      at = static_cast<std::size_t>(nul - data) + 1 + GIT_OID_RAWSZ;
    }
  }
  return out;
}

// Every object reachable from `roots` that only the quarantine holds. The
// walk does not go below an object the user's store held before the
// quarantine was made: it cannot name a quarantined object (a repack
// meanwhile makes the objects look new, which costs time, never correctness).
OidSet onlyQuarantined(const Stores& stores, std::vector<git_oid> roots) {
  OidSet seen;
  OidSet found;
  while (!roots.empty()) {
    const git_oid id = roots.back();
    roots.pop_back();
    if (!seen.insert(id).second) continue;
    if (stores.inUserStore(id)) {
      if (stores.oldInUserStore(id)) continue;
    } else if (stores.inQuarantine(id)) {
      found.insert(id);
    } else {
      continue;  // in neither (a missing object): not ours to repair
    }
    for (const git_oid& child : childrenOf(stores.both(), id)) {
      if (!seen.count(child)) roots.push_back(child);
    }
  }
  return found;
}

// What the repository reaches from: every ref and reflog entry, each
// worktree's HEAD and index. The quarantine's own race's refs are gone by
// the time a drop walks.
std::vector<git_oid> repositoryRoots(git_repository* repo, const fs::path& commonDir) {
  std::vector<git_oid> roots;
  git_reference_iterator* rawIter = nullptr;
  check(git_reference_iterator_new(&rawIter, repo), "list the references");
  std::unique_ptr<git_reference_iterator, void (*)(git_reference_iterator*)> iter(rawIter, git_reference_iterator_free);
  std::vector<std::string> names{"HEAD"};
  git_reference* ref = nullptr;
  while (git_reference_next(&ref, iter.get()) == 0) {
    git::ReferencePtr owned(ref);
    names.emplace_back(git_reference_name(ref));
    if (git_reference_type(ref) == GIT_REFERENCE_DIRECT) roots.push_back(*git_reference_target(ref));
  }
  for (const std::string& name : names) {
    git_oid id;
    if (name == "HEAD" && git_reference_name_to_id(&id, repo, "HEAD") == 0) roots.push_back(id);
    git_reflog* rawLog = nullptr;
    if (git_reflog_read(&rawLog, repo, name.c_str()) != 0) continue;
    std::unique_ptr<git_reflog, void (*)(git_reflog*)> log(rawLog, git_reflog_free);
    for (std::size_t i = 0; i < git_reflog_entrycount(rawLog); ++i) {
      const git_reflog_entry* entry = git_reflog_entry_byindex(rawLog, i);
      roots.push_back(*git_reflog_entry_id_new(entry));
      roots.push_back(*git_reflog_entry_id_old(entry));
    }
  }
  // Indexes and HEADs of the main checkout and every linked worktree.
  std::vector<fs::path> gitDirs{commonDir};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(commonDir / "worktrees", ec)) gitDirs.push_back(entry.path());
  for (const fs::path& dir : gitDirs) {
    git_index* rawIndex = nullptr;
    struct stat st {};
    if (::lstat((dir / "index").c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        git_index_open(&rawIndex, (dir / "index").c_str()) == 0) {
      git::IndexPtr index(rawIndex);
      for (std::size_t i = 0; i < git_index_entrycount(rawIndex); ++i) roots.push_back(git_index_get_byindex(rawIndex, i)->id);
    }
    if (dir == commonDir) continue;
    git_repository* rawWorktree = nullptr;
    if (git_repository_open_ext(&rawWorktree, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) continue;
    git::RepositoryPtr worktree(rawWorktree);
    git_oid id;
    if (git_reference_name_to_id(&id, rawWorktree, "HEAD") == 0) roots.push_back(id);
  }
  return roots;
}

// Copies `objects` (loose in the quarantine) into the user's store. An
// object the quarantine holds only in a pack (an agent packed it) takes the
// whole pack along.
std::pair<std::size_t, std::size_t> copyToUserStore(const Stores& stores, const fs::path& commonDir,
                                                    const fs::path& quarantine, const OidSet& objects) {
  std::size_t loose = 0;
  bool needPacks = false;
  const SafeDir userObjects = SafeDir::openBeneath(commonDir, "objects");
  for (const git_oid& id : objects) {
    const fs::path from = stores.looseInQuarantine(id);
    struct stat st {};
    if (::lstat(from.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      needPacks = true;
      continue;
    }
    const std::string hex = git::toHex(id);
    const std::string fan = hex.substr(0, 2);
    if (!userObjects.status(fan) && ::mkdirat(userObjects.fd(), fan.c_str(), 0777) != 0 && errno != EEXIST) {
      throw std::system_error(errno, std::generic_category(), "create " + (commonDir / "objects" / fan).string());
    }
    if (copyInto(from, userObjects.openDirectory(fan), hex.substr(2))) ++loose;
  }
  std::size_t packs = 0;
  if (needPacks) {
    if (!userObjects.status("pack") && ::mkdirat(userObjects.fd(), "pack", 0777) != 0 && errno != EEXIST) {
      throw std::system_error(errno, std::generic_category(), "create " + (commonDir / "objects" / "pack").string());
    }
    const SafeDir packDir = userObjects.openDirectory("pack");
    std::error_code ec;
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(quarantine / "pack", ec)) names.insert(entry.path().filename().string());
    // The pack before its index: git takes a pack for present once its .idx is.
    for (const std::string& name : names) {
      if (name.ends_with(".pack") && copyInto(quarantine / "pack" / name, packDir, name)) ++packs;
    }
    for (const std::string& name : names) {
      if (name.ends_with(".idx")) copyInto(quarantine / "pack" / name, packDir, name);
    }
  }
  return {loose, packs};
}

std::optional<Timestamp> bornAt(const fs::path& quarantine) {
  struct stat st {};
  if (::lstat((quarantine / "info" / kBorn).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return Timestamp(std::chrono::seconds(st.st_mtim.tv_sec));
}

// The objects `tree` brings that `old` (its first parent's tree, or null)
// did not have: itself, and each entry that differs, subtrees walked only
// where they differ. Gitlinks (submodules) name no object of this store.
void newObjects(git_repository* repo, const git_tree* tree, const git_tree* old, std::unordered_set<std::string>& out) {
  if (!out.insert(git::toHex(*git_tree_id(tree))).second) return;
  const std::size_t count = git_tree_entrycount(tree);
  for (std::size_t i = 0; i < count; ++i) {
    const git_tree_entry* entry = git_tree_entry_byindex(tree, i);
    const git_tree_entry* was = old != nullptr ? git_tree_entry_byname(old, git_tree_entry_name(entry)) : nullptr;
    if (was != nullptr && git_oid_equal(git_tree_entry_id(was), git_tree_entry_id(entry))) continue;
    const git_object_t type = git_tree_entry_type(entry);
    if (type == GIT_OBJECT_BLOB) {
      out.insert(git::toHex(*git_tree_entry_id(entry)));
    } else if (type == GIT_OBJECT_TREE) {
      git_tree* rawSub = nullptr;
      if (git_tree_lookup(&rawSub, repo, git_tree_entry_id(entry)) != 0) {
        git_error_clear();
        continue;  // not readable: nothing to move
      }
      const git::TreePtr sub(rawSub);
      git::TreePtr oldSub;
      if (was != nullptr && git_tree_entry_type(was) == GIT_OBJECT_TREE) {
        git_tree* rawOld = nullptr;
        if (git_tree_lookup(&rawOld, repo, git_tree_entry_id(was)) == 0) oldSub.reset(rawOld);
        git_error_clear();
      }
      newObjects(repo, sub.get(), oldSub.get(), out);
    }
  }
}

}  // namespace

bool isQuarantineLine(const fs::path& commonDir, std::string_view line) {
  const fs::path path(line);
  return path.parent_path() == commonDir / kFolder && safeName(path.filename().string());
}

fs::path alternatesLock(const fs::path& commonDir) { return commonDir / "hydra-objects.lock"; }

ObjectQuarantine ObjectQuarantine::open(const fs::path& commonDir, std::string_view name) {
  if (!safeName(name)) throw std::invalid_argument("not a quarantine name: \"" + std::string(name) + "\"");
  const FileLock lock(alternatesLock(commonDir));
  const SafeDir info = openInfo(commonDir);
  std::vector<std::string> lines = readAlternates(info);  // refused before anything is made
  const SafeDir git = SafeDir::open(commonDir);
  if (!git.status(kFolder) && ::mkdirat(git.fd(), std::string(kFolder).c_str(), 0777) != 0 && errno != EEXIST) {
    throw std::system_error(errno, std::generic_category(), "create " + (commonDir / kFolder).string());
  }
  const SafeDir folder = git.openDirectory(kFolder);
  const std::string own(name);
  if (!folder.status(own) && ::mkdirat(folder.fd(), own.c_str(), 0777) != 0 && errno != EEXIST) {
    throw std::system_error(errno, std::generic_category(), "create " + (commonDir / kFolder / own).string());
  }
  const SafeDir mine = folder.openDirectory(own);
  if (!mine.status("info") && ::mkdirat(mine.fd(), "info", 0777) != 0 && errno != EEXIST) {
    throw std::system_error(errno, std::generic_category(), "create " + (commonDir / kFolder / own / "info").string());
  }
  // Its birth, once: no object of the user's store older than this can name
  // one of its objects. Without it, every object counts as new.
  if (const SafeDir info = mine.openDirectory("info"); !info.status(kBorn)) info.writeFile(kBorn, "");
  const fs::path path = commonDir / kFolder / own;
  if (std::find(lines.begin(), lines.end(), path.string()) == lines.end()) {
    lines.push_back(path.string());
    writeAlternates(info, lines);
  }
  return ObjectQuarantine(commonDir, own, path);
}

std::optional<ObjectQuarantine> ObjectQuarantine::find(const fs::path& commonDir, std::string_view name) {
  if (!safeName(name)) return std::nullopt;
  const fs::path path = commonDir / kFolder / name;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(path, ec))) return std::nullopt;
  return ObjectQuarantine(commonDir, std::string(name), path);
}

std::vector<std::string> ObjectQuarantine::list(const fs::path& commonDir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(commonDir / kFolder, ec)) {
    const std::string name = entry.path().filename().string();
    if (safeName(name) && entry.is_directory(ec) && !entry.is_symlink(ec)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

git::OdbPtr ObjectQuarantine::ownStore() const {
  // A store of its own for `repo`: this quarantine, written first and read
  // first; the user's loose objects and packs and the user's own alternates,
  // read only. Not the other races' quarantines: libgit2 writes no object it
  // finds anywhere (it freshens that file instead), so a result would come to
  // rely on another race's quarantine, which that race's cleanup can drop
  // after its last look for what others rely on.
  git_odb* rawOdb = nullptr;
  check(git_odb_new(&rawOdb), "open the object store of " + path_.string());
  git::OdbPtr odb(rawOdb);
  const fs::path objects = commonDir_ / "objects";
  const auto add = [&](git_odb_backend* backend, int priority, bool writable, const fs::path& where) {
    const int rc = writable ? git_odb_add_backend(odb.get(), backend, priority)
                            : git_odb_add_alternate(odb.get(), backend, priority);
    if (rc != 0) {
      backend->free(backend);
      check(rc, "open " + where.string());
    }
  };
  git_odb_backend* backend = nullptr;
  check(git_odb_backend_loose(&backend, path_.c_str(), -1, 0, 0, 0), "open " + path_.string());
  add(backend, kQuarantinePriority, true, path_);
  if (fs::is_directory(path_ / "pack")) {
    check(git_odb_backend_pack(&backend, path_.c_str()), "open " + (path_ / "pack").string());
    add(backend, kQuarantinePriority - 1, false, path_ / "pack");
  }
  check(git_odb_backend_loose(&backend, objects.c_str(), -1, 0, 0, 0), "open " + objects.string());
  add(backend, 1, false, objects);
  check(git_odb_backend_pack(&backend, objects.c_str()), "open " + (objects / "pack").string());
  add(backend, 2, false, objects / "pack");
  for (const std::string& line : readAlternates(openInfo(commonDir_))) {
    if (line.empty() || line.front() == '#' || isQuarantineLine(commonDir_, line)) continue;
    const fs::path other = fs::path(line).is_absolute() ? fs::path(line) : objects / line;
    if (git_odb_add_disk_alternate(odb.get(), other.c_str()) != 0) git_error_clear();  // as git: a missing one is skipped
  }
  return git::OdbPtr(odb.release());
}

void ObjectQuarantine::writeInto(git_repository* repo) const {
  const git::OdbPtr odb = ownStore();
  check(git_repository_set_odb(repo, odb.get()), "write into " + path_.string());
}

std::optional<ObjectQuarantine> ObjectQuarantine::holding(const fs::path& commonDir, std::string_view commitHex) {
  if (commitHex.size() != GIT_OID_HEXSZ) return std::nullopt;
  const std::string fan(commitHex.substr(0, 2));
  const std::string rest(commitHex.substr(2));
  for (const std::string& name : list(commonDir)) {
    auto found = find(commonDir, name);
    if (!found) continue;
    std::error_code ec;
    if (fs::exists(found->path() / fan / rest, ec)) return found;
    if (fs::is_directory(found->path() / "pack", ec)) {
      git_odb_backend* raw = nullptr;
      git_odb* odb = nullptr;
      if (git_odb_new(&odb) == 0) {
        const git::OdbPtr packs(odb);
        if (git_odb_backend_pack(&raw, found->path().c_str()) == 0 && git_odb_add_backend(packs.get(), raw, 1) == 0) {
          const git_oid id = git::oidFromHex(commitHex);
          if (git_odb_exists(packs.get(), &id) == 1) return found;
        }
      }
      git_error_clear();
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> ObjectQuarantine::environment() const {
  return {{"GIT_OBJECT_DIRECTORY", path_.string()},
          {"GIT_ALTERNATE_OBJECT_DIRECTORIES", (commonDir_ / "objects").string()}};
}

std::size_t ObjectQuarantine::claim(git_repository* repo, std::string_view tipHex, std::string_view baseHex) const {
  // Its birth to the nanosecond, and only what was written strictly after it
  // (file times are as coarse as the kernel's clock tick): an object of the
  // base or of the user's from before the race always stays where it is.
  struct stat bornStat {};
  if (::lstat((path_ / "info" / kBorn).c_str(), &bornStat) != 0 || !S_ISREG(bornStat.st_mode)) return 0;
  const Timestamp born(std::chrono::seconds(bornStat.st_mtim.tv_sec) + std::chrono::nanoseconds(bornStat.st_mtim.tv_nsec));
  if (tipHex.empty() || tipHex == baseHex) return 0;
  git_revwalk* rawWalk = nullptr;
  check(git_revwalk_new(&rawWalk, repo), "walk the commits of " + std::string(tipHex));
  const git::RevwalkPtr walk(rawWalk);
  const git_oid tip = git::oidFromHex(std::string(tipHex));
  check(git_revwalk_push(walk.get(), &tip), "walk from " + std::string(tipHex));
  if (!baseHex.empty()) {
    const git_oid base = git::oidFromHex(std::string(baseHex));
    check(git_revwalk_hide(walk.get(), &base), "walk down to " + std::string(baseHex));
  }
  std::unordered_set<std::string> brought;
  git_oid id;
  while (git_revwalk_next(&id, walk.get()) == 0) {
    brought.insert(git::toHex(id));
    const git::CommitPtr commit = git::lookupCommit(repo, id);
    git_tree* rawTree = nullptr;
    check(git_commit_tree(&rawTree, commit.get()), "read the tree of " + git::toHex(id));
    const git::TreePtr tree(rawTree);
    git::TreePtr parentTree;
    if (git_commit_parentcount(commit.get()) > 0) {
      git_commit* rawParent = nullptr;
      if (git_commit_parent(&rawParent, commit.get(), 0) == 0) {
        const git::CommitPtr parent(rawParent);
        git_tree* rawOld = nullptr;
        if (git_commit_tree(&rawOld, parent.get()) == 0) parentTree.reset(rawOld);
      }
      git_error_clear();
    }
    if (parentTree && git_oid_equal(git_tree_id(tree.get()), git_tree_id(parentTree.get()))) continue;
    newObjects(repo, tree.get(), parentTree.get(), brought);
  }
  git_error_clear();

  // What the base holds stays in the user's store even when the agent's git
  // freshened it (writing a blob the base already has touches its file): the
  // guard keeps the base's objects where they are. Read only when needed.
  std::optional<std::unordered_set<std::string>> baseObjects;
  const auto inBase = [&](const std::string& hex) {
    if (!baseObjects) {
      baseObjects.emplace();
      if (!baseHex.empty()) {
        const git::CommitPtr base = git::lookupCommit(repo, git::oidFromHex(std::string(baseHex)));
        git_tree* rawTree = nullptr;
        check(git_commit_tree(&rawTree, base.get()), "read the tree of " + std::string(baseHex));
        const git::TreePtr tree(rawTree);
        baseObjects->insert(git::toHex(*git_tree_id(tree.get())));
        const auto collect = [](const char*, const git_tree_entry* entry, void* payload) -> int {
          if (git_tree_entry_type(entry) != GIT_OBJECT_COMMIT) {
            static_cast<std::unordered_set<std::string>*>(payload)->insert(git::toHex(*git_tree_entry_id(entry)));
          }
          return 0;
        };
        check(git_tree_walk(tree.get(), GIT_TREEWALK_PRE, collect, &*baseObjects), "walk the tree of " + std::string(baseHex));
      }
    }
    return baseObjects->count(hex) > 0;
  };

  // Moved one at a time, each in one rename: at every moment the object is
  // in the user's store or here, and git reads both.
  const SafeDir userObjects = SafeDir::open(commonDir_ / "objects");
  const SafeDir mine = SafeDir::open(path_);
  const auto moveHere = [&](const std::string& hex) {
    const std::string fan = hex.substr(0, 2);
    const std::string rest = hex.substr(2);
    const auto fanStat = userObjects.status(fan);
    if (!fanStat || !S_ISDIR(fanStat->st_mode)) return false;
    const SafeDir from = userObjects.openDirectory(fan);
    const auto st = from.status(rest);
    if (!st || !S_ISREG(st->st_mode)) return false;  // packed, or not in the user's store
    const Timestamp written(std::chrono::seconds(st->st_mtim.tv_sec) + std::chrono::nanoseconds(st->st_mtim.tv_nsec));
    if (written <= born || inBase(hex)) return false;  // the user's before the race: stays
    if (!mine.status(fan) && ::mkdirat(mine.fd(), fan.c_str(), 0777) != 0 && errno != EEXIST) {
      throw std::system_error(errno, std::generic_category(), "create " + (path_ / fan).string());
    }
    const SafeDir to = mine.openDirectory(fan);
    if (::renameat(from.fd(), rest.c_str(), to.fd(), rest.c_str()) != 0) {
      if (errno == ENOENT) return false;  // moved or packed meanwhile
      throw std::system_error(errno, std::generic_category(),
                              "move " + (commonDir_ / "objects" / fan / rest).string() + " into " + path_.string());
    }
    return true;
  };
  // What the agent's git found in another race's quarantine it did not
  // write: that race's cleanup may drop it, so this race keeps a copy.
  const git::OdbPtr own = ownStore();
  git_odb* rawAll = nullptr;
  check(git_repository_odb(&rawAll, repo), "open the object store");
  const git::OdbPtr all(rawAll);
  const auto copyHere = [&](const std::string& hex) {
    const git_oid oid = git::oidFromHex(hex);
    if (git_odb_exists(own.get(), &oid) == 1) return false;
    git_odb_object* raw = nullptr;
    if (git_odb_read(&raw, all.get(), &oid) != 0) {
      git_error_clear();
      return false;  // nowhere to be read: the commit will say so
    }
    const std::unique_ptr<git_odb_object, decltype(&git_odb_object_free)> object(raw, git_odb_object_free);
    git_oid written;
    check(git_odb_write(&written, own.get(), git_odb_object_data(object.get()), git_odb_object_size(object.get()),
                        git_odb_object_type(object.get())),
          "copy " + hex + " into " + path_.string());
    return true;
  };
  std::size_t moved = 0;
  for (const std::string& hex : brought) {
    if (moveHere(hex) || copyHere(hex)) ++moved;
  }
  return moved;
}

void ObjectQuarantine::seal() const {
  // File times are as coarse as the kernel's clock tick: the mark is written
  // again until its time is past that of its first writing, so every object
  // the race wrote before it is strictly older, and a file touched at or
  // after its time was touched after the seal (drop() copies those).
  const SafeDir info = SafeDir::open(path_ / "info");
  const auto markedAt = [&] {
    info.writeFile(kSealed, "");
    const auto st = info.status(kSealed);
    return st ? std::pair(st->st_mtim.tv_sec, st->st_mtim.tv_nsec) : std::pair<time_t, long>(0, 0);
  };
  const auto first = markedAt();
  for (int i = 0; i < 200 && markedAt() <= first; ++i) ::usleep(2000);
}

std::size_t ObjectQuarantine::adopt(std::string_view commitHex) const {
  const Stores stores(commonDir_, path_, bornAt(path_));
  const OidSet objects = onlyQuarantined(stores, {git::oidFromHex(commitHex)});
  return copyToUserStore(stores, commonDir_, path_, objects).first;
}

QuarantineDrop ObjectQuarantine::drop() const {
  QuarantineDrop result;
  {
    const FileLock lock(alternatesLock(commonDir_));
    const SafeDir info = openInfo(commonDir_);
    std::vector<std::string> lines = readAlternates(info);
    std::erase(lines, path_.string());
    writeAlternates(info, lines);
  }
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(path_, ec))) return result;
  const Stores stores(commonDir_, path_, bornAt(path_));
  git::RepositoryPtr repo = git::openRepository(commonDir_);
  std::vector<git_oid> roots = repositoryRoots(repo.get(), commonDir_);
  // Objects touched after the race sealed the quarantine: someone's git took
  // them for its own instead of writing them. The same instant counts as
  // after (file times are as coarse as the kernel's clock tick): copying one
  // more object is safe, missing one is not.
  if (const auto sealed = sealedAt(path_)) {
    for (const auto& fan : fs::directory_iterator(path_, ec)) {
      const std::string prefix = fan.path().filename().string();
      if (prefix.size() != 2 || fan.is_symlink(ec)) continue;
      for (const auto& file : fs::directory_iterator(fan.path(), ec)) {
        struct stat st {};
        if (::lstat(file.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        const Timestamp touched(std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec));
        git_oid id;
        if (touched >= *sealed && git_oid_fromstrn(&id, (prefix + file.path().filename().string()).c_str(), GIT_OID_HEXSZ) == 0) {
          roots.push_back(id);
        }
      }
    }
  } else {
    // Never sealed (a hydra killed during its race): every object counts as touched.
    for (const auto& fan : fs::directory_iterator(path_, ec)) {
      const std::string prefix = fan.path().filename().string();
      if (prefix.size() != 2 || fan.is_symlink(ec)) continue;
      for (const auto& file : fs::directory_iterator(fan.path(), ec)) {
        git_oid id;
        if (git_oid_fromstrn(&id, (prefix + file.path().filename().string()).c_str(), GIT_OID_HEXSZ) == 0) {
          roots.push_back(id);
        }
      }
    }
  }
  const OidSet needed = onlyQuarantined(stores, std::move(roots));
  const auto [loose, packs] = copyToUserStore(stores, commonDir_, path_, needed);
  result.adoptedObjects = loose;
  result.adoptedPacks = packs;
  SafeDir::open(commonDir_ / kFolder).remove(name_);
  result.removed = true;
  removeDeadCopies(commonDir_);
  {
    // The folder goes with the last quarantine; open() makes it again under
    // the same lock, so it is never taken from under a race being set up.
    const FileLock lock(alternatesLock(commonDir_));
    ::rmdir((commonDir_ / kFolder).c_str());
  }
  return result;
}

}  // namespace hydra::core
