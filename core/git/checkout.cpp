#include "core/git/checkout.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/git/git.h"
#include "core/git/index_file.h"
#include "core/git/object_quarantine.h"
#include "core/git/result_size.h"

namespace hydra::core::git {

namespace fs = std::filesystem;

namespace {

// One blob, link or submodule of the tree, and what writing it left on disk.
struct Entry {
  std::string path;  // relative, '/'-separated
  git_oid id{};
  git_filemode_t mode = GIT_FILEMODE_BLOB;
  struct stat written{};
  bool skipWorktree = false;  // outside a sparse checkout: in the index only
};

struct Walk {
  std::vector<Entry> entries;
  std::vector<std::string> directories;  // parents before children
  bool attributes = false;               // a .gitattributes somewhere
};

int collect(const char* root, const git_tree_entry* entry, void* payload) {
  auto& walk = *static_cast<Walk*>(payload);
  const std::string path = std::string(root) + git_tree_entry_name(entry);
  const git_filemode_t mode = git_tree_entry_filemode(entry);
  if (mode == GIT_FILEMODE_TREE) {
    walk.directories.push_back(path);
    return 0;
  }
  if (std::strcmp(git_tree_entry_name(entry), ".gitattributes") == 0) walk.attributes = true;
  Entry e;
  e.path = path;
  git_oid_cpy(&e.id, git_tree_entry_id(entry));
  e.mode = mode;
  walk.entries.push_back(std::move(e));
  return 0;
}

Walk walkTree(git_repository* repo, const std::string& commit) {
  CommitPtr c = lookupCommit(repo, oidFromHex(commit));
  git_tree* raw = nullptr;
  check(git_commit_tree(&raw, c.get()), "read the tree of " + commit);
  TreePtr tree(raw);
  Walk walk;
  check(git_tree_walk(tree.get(), GIT_TREEWALK_PRE, collect, &walk), "walk the tree of " + commit);
  return walk;
}

GitError osError(const std::string& what) {
  return GitError(GIT_ERROR, GIT_ERROR_OS, what + ": " + std::strerror(errno));
}

bool configSet(git_repository* repo, const char* key) {
  ConfigPtr config;
  git_config* raw = nullptr;
  if (git_repository_config_snapshot(&raw, repo) < 0) {
    git_error_clear();
    return true;  // unreadable: let libgit2 decide
  }
  config.reset(raw);
  git_buf value = GIT_BUF_INIT;
  const int rc = git_config_get_string_buf(&value, config.get(), key);
  git_buf_dispose(&value);
  if (rc == GIT_ENOTFOUND) {
    git_error_clear();
    return false;
  }
  if (rc < 0) git_error_clear();
  return true;
}

void writeAll(int fd, const char* data, std::size_t size, const std::string& path) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw osError("write " + path);
    done += static_cast<std::size_t>(n);
  }
}

// The loose object `id` of `objectsDir` (its content, past the "blob <size>"
// header) into `fd`, read and inflated 64 KiB at a time with read(2): nothing
// of it is mapped or held, whatever its size. False when it is not a loose
// object there (it is packed, or in an alternate).
bool writeLoose(const fs::path& objectsDir, const git_oid& id, int fd, const std::string& path) {
  const std::string hex = toHex(id);
  const int in = ::open((objectsDir / hex.substr(0, 2) / hex.substr(2)).c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return false;
  struct Closer {
    int fd;
    z_stream* z;
    ~Closer() {
      ::close(fd);
      inflateEnd(z);
    }
  };
  z_stream z{};
  if (inflateInit(&z) != Z_OK) {
    ::close(in);
    throw GitError(GIT_ERROR, GIT_ERROR_ZLIB, "read " + path + ": cannot start inflating");
  }
  const Closer closer{in, &z};
  std::vector<unsigned char> packed(std::size_t{64} << 10);
  std::vector<unsigned char> plain(std::size_t{1} << 20);
  std::string header;  // "blob <size>", until its NUL has been seen
  bool inHeader = true;
  std::uint64_t expected = 0, written = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    const ssize_t n = ::read(in, packed.data(), packed.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw osError("read the object of " + path);
    if (n == 0) break;
    z.next_in = packed.data();
    z.avail_in = static_cast<uInt>(n);
    // Until this input is used up and no output is pending (a full buffer may hide more).
    do {
      z.next_out = plain.data();
      z.avail_out = static_cast<uInt>(plain.size());
      rc = inflate(&z, Z_NO_FLUSH);
      if (rc == Z_BUF_ERROR) {  // no progress possible: it needs more input
        rc = Z_OK;
        break;
      }
      if (rc != Z_OK && rc != Z_STREAM_END) {
        throw GitError(GIT_ERROR, GIT_ERROR_ZLIB, "read " + path + ": its object " + hex + " is corrupt");
      }
      std::size_t from = 0;
      const std::size_t got = plain.size() - z.avail_out;
      if (inHeader) {
        for (; from < got && inHeader; ++from) {
          if (plain[from] == '\0') {
            inHeader = false;
          } else {
            header += static_cast<char>(plain[from]);
          }
        }
        if (inHeader && header.size() > 64) {
          throw GitError(GIT_ERROR, GIT_ERROR_ODB, "read " + path + ": its object " + hex + " has no header");
        }
        if (!inHeader) {
          if (!header.starts_with("blob ")) {
            throw GitError(GIT_ERROR, GIT_ERROR_ODB, "read " + path + ": " + hex + " is not a blob");
          }
          expected = std::stoull(header.substr(5));
        }
      }
      writeAll(fd, reinterpret_cast<const char*>(plain.data()) + from, got - from, path);
      written += got - from;
    } while ((z.avail_in > 0 || z.avail_out == 0) && rc != Z_STREAM_END);
  }
  if (rc != Z_STREAM_END || inHeader || written != expected) {
    throw GitError(GIT_ERROR, GIT_ERROR_ODB, "read " + path + ": its object " + hex + " ended early");
  }
  return true;
}

// The blob of `e` into `fd`. A loose object (every object an agent's commit
// made) is inflated a piece at a time (writeLoose), so a file of gigabytes
// costs hydra no more memory than a small one; a packed one is read whole,
// as libgit2 reads packs.
void writeBlob(git_repository* repo, const Entry& e, int fd) {
  const fs::path commonDir(git_repository_commondir(repo));
  if (writeLoose(commonDir / "objects", e.id, fd, e.path)) return;
  // A race's result lives in its quarantine (core/git/object_quarantine.h),
  // loose too: a large blob there is inflated a piece at a time as well. (A
  // small one, or one the user's packs hold, is not worth the search.)
  git_odb* rawOdb = nullptr;
  check(git_repository_odb(&rawOdb, repo), "open the object store");
  const OdbPtr odb(rawOdb);
  std::size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (git_odb_read_header(&size, &type, odb.get(), &e.id) == 0 &&
      size >= static_cast<std::size_t>(kStreamedFileBytes)) {
    for (const std::string& name : ObjectQuarantine::list(commonDir)) {
      const auto quarantine = ObjectQuarantine::find(commonDir, name);
      if (quarantine && writeLoose(quarantine->path(), e.id, fd, e.path)) return;
    }
  }
  git_blob* raw = nullptr;
  check(git_blob_lookup(&raw, repo, &e.id), "read " + e.path);
  BlobPtr blob(raw);
  writeAll(fd, static_cast<const char*>(git_blob_rawcontent(blob.get())),
           static_cast<std::size_t>(git_blob_rawsize(blob.get())), e.path);
}

void writeEntryIn(git_repository* repo, int dir, Entry& e);

// Writes one entry below `dir` (the open directory `worktree`) and stats it.
// Errors name the worktree as well as the file in it: a full disk is the
// disk of that path.
void writeEntry(git_repository* repo, const fs::path& worktree, int dir, Entry& e) {
  try {
    writeEntryIn(repo, dir, e);
  } catch (const GitError& error) {
    throw GitError(error.code(), error.klass(), worktree.string() + ": " + error.what());
  }
}

void writeEntryIn(git_repository* repo, int dir, Entry& e) {
  const char* path = e.path.c_str();
  if (e.mode == GIT_FILEMODE_COMMIT) {  // a submodule: git leaves an empty directory
    if (::mkdirat(dir, path, 0777) < 0 && errno != EEXIST) throw osError("create " + e.path);
    e.written = {};
    return;
  }
  if (e.mode == GIT_FILEMODE_LINK) {
    git_blob* raw = nullptr;
    check(git_blob_lookup(&raw, repo, &e.id), "read " + e.path);
    BlobPtr blob(raw);
    const std::string target(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                             static_cast<std::size_t>(git_blob_rawsize(blob.get())));
    if (::symlinkat(target.c_str(), dir, path) < 0) throw osError("create the link " + e.path);
    if (::fstatat(dir, path, &e.written, AT_SYMLINK_NOFOLLOW) < 0) throw osError("stat " + e.path);
    return;
  }
  const mode_t perms = e.mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0777 : 0666;
  const int fd = ::openat(dir, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perms);
  if (fd < 0) throw osError("create " + e.path);
  try {
    writeBlob(repo, e, fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  const int statted = ::fstat(fd, &e.written);
  if (::close(fd) < 0 || statted < 0) throw osError("write " + e.path);
}

git_index_entry indexEntry(const Entry& e) {
  git_index_entry entry = indexEntryFromStat(e.written, e.mode, e.id, e.path.c_str());
  if (e.skipWorktree) entry.flags_extended = GIT_INDEX_ENTRY_SKIP_WORKTREE;
  return entry;
}

// An open directory of the worktree, closed when done.
struct Directory {
  int fd;
  explicit Directory(const fs::path& path) : fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd < 0) throw osError("open " + path.string());
  }
  ~Directory() { ::close(fd); }
  Directory(const Directory&) = delete;
  Directory& operator=(const Directory&) = delete;
};

TreePtr treeOf(git_repository* repo, const std::string& commit);

// The worktree's whole index from `entries` (sorted here, so each is
// appended), with the stat data of what is on disk, and `commit`'s trees
// cached in it (the TREE extension): committing a result then writes only
// the trees of the folders that changed, not all of them. Reading the tree
// into the index keeps the stat data of every entry whose path, mode and
// blob it matches (libgit2's git_index_read_tree), which is all of them; it
// drops skip-worktree flags, so a sparse checkout's index goes without.
void writeIndex(git_repository* repo, const fs::path& worktree, std::vector<Entry>& entries, const std::string& commit) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.path < b.path; });
  git_index* rawIndex = nullptr;
  check(git_repository_index(&rawIndex, repo), "open the index of " + worktree.string());
  IndexPtr index(rawIndex);
  check(git_index_clear(index.get()), "clear the index of " + worktree.string());
  bool sparse = false;
  for (const Entry& e : entries) {
    const git_index_entry entry = indexEntry(e);
    check(git_index_add(index.get(), &entry), "add " + e.path + " to the index");
    sparse = sparse || e.skipWorktree;
  }
  if (!sparse) {
    TreePtr tree = treeOf(repo, commit);
    check(git_index_read_tree(index.get(), tree.get()), "cache the trees of " + commit + " in the index");
  }
  check(git_index_write(index.get()), "write the index of " + worktree.string());
}

// True when the repository's configuration or info/attributes could make git
// filter what files hold on disk (a tree's own .gitattributes are seen apart).
bool filtersConfigured(git_repository* repo) {
  if (configSet(repo, "core.autocrlf") || configSet(repo, "core.eol")) return true;
  std::error_code ec;
  const fs::path attributes = commonDir(repo) / "info" / "attributes";
  return fs::exists(attributes, ec) && fs::file_size(attributes, ec) > 0;
}

TreePtr treeOf(git_repository* repo, const std::string& commit) {
  CommitPtr c = lookupCommit(repo, oidFromHex(commit));
  git_tree* raw = nullptr;
  check(git_commit_tree(&raw, c.get()), "read the tree of " + commit);
  return TreePtr(raw);
}

// Removes whatever is at `p`, a whole folder included, even one an agent made
// read-only.
void removeAny(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  if (!ec) return;
  fs::permissions(p, fs::perms::owner_all, fs::perm_options::add | fs::perm_options::nofollow, ec);
  for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  }
  ec.clear();
  fs::remove_all(p, ec);
  if (ec) throw GitError(GIT_ERROR, GIT_ERROR_OS, "remove " + p.string() + ": " + ec.message());
}

// Bytes the files below `root` take on disk, links not followed.
std::uintmax_t diskUsage(const fs::path& root) {
  std::uintmax_t bytes = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0) bytes += static_cast<std::uintmax_t>(st.st_blocks) * 512;
  }
  return bytes;
}

std::string readLink(const fs::path& p) {
  std::string target(4096, '\0');
  const ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
  if (n < 0) return {};
  target.resize(static_cast<std::size_t>(n));
  return target;
}

// Every blob, link and submodule of `tree`, below `prefix`, into `out`.
void entriesBelow(git_repository* repo, const git_tree_entry* tree, const std::string& prefix, std::vector<Entry>& out) {
  git_tree* raw = nullptr;
  check(git_tree_lookup(&raw, repo, git_tree_entry_id(tree)), "read the tree " + prefix);
  TreePtr sub(raw);
  Walk walk;
  check(git_tree_walk(sub.get(), GIT_TREEWALK_PRE, collect, &walk), "walk the tree " + prefix);
  for (Entry& e : walk.entries) {
    e.path = prefix + "/" + e.path;
    out.push_back(std::move(e));
  }
}

// What differs between the trees `a` and `b` (below `prefix`): the entries of
// `a` that go and those of `b` that come (both, for a changed file). Only
// subtrees whose ids differ are read, so moving between two commits of a
// large repository costs what they changed, where a diff reads every entry.
void compareTrees(git_repository* repo, const git_tree* a, const git_tree* b, const std::string& prefix,
                  std::vector<Entry>& removed, std::vector<Entry>& written) {
  std::map<std::string_view, std::pair<const git_tree_entry*, const git_tree_entry*>> names;
  for (std::size_t i = 0; i < git_tree_entrycount(a); ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(a, i);
    names[git_tree_entry_name(e)].first = e;
  }
  for (std::size_t i = 0; i < git_tree_entrycount(b); ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(b, i);
    names[git_tree_entry_name(e)].second = e;
  }
  auto entry = [](const std::string& path, const git_tree_entry* e) {
    Entry out;
    out.path = path;
    git_oid_cpy(&out.id, git_tree_entry_id(e));
    out.mode = git_tree_entry_filemode(e);
    return out;
  };
  for (const auto& [name, pair] : names) {
    const auto [old, now] = pair;
    const std::string path = prefix.empty() ? std::string(name) : prefix + "/" + std::string(name);
    if (old && now && git_tree_entry_filemode(old) == git_tree_entry_filemode(now) &&
        git_oid_equal(git_tree_entry_id(old), git_tree_entry_id(now))) {
      continue;
    }
    const bool oldTree = old && git_tree_entry_filemode(old) == GIT_FILEMODE_TREE;
    const bool nowTree = now && git_tree_entry_filemode(now) == GIT_FILEMODE_TREE;
    if (oldTree && nowTree) {
      git_tree* rawOld = nullptr;
      git_tree* rawNow = nullptr;
      check(git_tree_lookup(&rawOld, repo, git_tree_entry_id(old)), "read the tree " + path);
      TreePtr oldSub(rawOld);
      check(git_tree_lookup(&rawNow, repo, git_tree_entry_id(now)), "read the tree " + path);
      TreePtr nowSub(rawNow);
      compareTrees(repo, oldSub.get(), nowSub.get(), path, removed, written);
      continue;
    }
    if (oldTree) {
      entriesBelow(repo, old, path, removed);
    } else if (old) {
      removed.push_back(entry(path, old));
    }
    if (nowTree) {
      entriesBelow(repo, now, path, written);
    } else if (now) {
      written.push_back(entry(path, now));
    }
  }
}

// A used worktree compared, path by path, with the tree it must hold again.
struct Reset {
  git_repository* repo;
  fs::path root;
  Walk& walk;
  const std::vector<std::string>& keep;
  std::unordered_map<std::string, std::size_t> files;  // path -> walk.entries
  std::unordered_set<std::string> directories;
  std::vector<bool> intact;        // per entry: on disk as the tree has it
  std::vector<std::string> kept;   // untracked folders keep names, to check against .gitignore

  bool keeps(const std::string& path, const std::string& name) const {
    return std::any_of(keep.begin(), keep.end(), [&](const std::string& k) {
      return k.find('/') == std::string::npos ? k == name : k == path;
    });
  }

  bool matches(const Entry& e, const fs::path& file, const struct stat& st) const {
    if (e.mode == GIT_FILEMODE_COMMIT) {
      std::error_code ec;
      return S_ISDIR(st.st_mode) && fs::is_empty(file, ec) && !ec;
    }
    if (e.mode == GIT_FILEMODE_LINK) {
      if (!S_ISLNK(st.st_mode)) return false;
      git_blob* raw = nullptr;
      if (git_blob_lookup(&raw, repo, &e.id) < 0) {
        git_error_clear();
        return false;
      }
      BlobPtr blob(raw);
      const std::string target(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                               static_cast<std::size_t>(git_blob_rawsize(blob.get())));
      return readLink(file) == target;
    }
    // A second link could be changed from elsewhere: rewritten, whatever it holds.
    if (!S_ISREG(st.st_mode) || st.st_nlink != 1) return false;
    if (((st.st_mode & S_IXUSR) != 0) != (e.mode == GIT_FILEMODE_BLOB_EXECUTABLE)) return false;
    git_oid id;
    if (git_odb_hashfile(&id, file.c_str(), GIT_OBJECT_BLOB) < 0) {
      git_error_clear();
      return false;
    }
    return git_oid_equal(&id, &e.id) != 0;
  }

  void scan(const std::string& relative) {
    const fs::path folder = relative.empty() ? root : root / relative;
    struct stat self {};
    if (::lstat(folder.c_str(), &self) == 0 && (self.st_mode & S_IRWXU) != S_IRWXU) {
      ::chmod(folder.c_str(), (self.st_mode & 07777) | S_IRWXU);
    }
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) names.push_back(entry.path().filename().string());
    if (ec) throw GitError(GIT_ERROR, GIT_ERROR_OS, "list " + folder.string() + ": " + ec.message());
    for (const std::string& name : names) {
      if (relative.empty() && name == ".git") continue;
      const std::string path = relative.empty() ? name : relative + "/" + name;
      const fs::path file = root / path;
      struct stat st {};
      if (::lstat(file.c_str(), &st) < 0) continue;
      if (directories.contains(path)) {
        if (S_ISDIR(st.st_mode)) {
          scan(path);
        } else {
          removeAny(file);
        }
        continue;
      }
      if (const auto it = files.find(path); it != files.end()) {
        Entry& e = walk.entries[it->second];
        if (matches(e, file, st)) {
          e.written = st;
          intact[it->second] = true;
        } else {
          removeAny(file);
        }
        continue;
      }
      if (S_ISDIR(st.st_mode) && keeps(path, name)) {
        kept.push_back(path);
        continue;
      }
      removeAny(file);
    }
  }
};

}  // namespace

bool inSparseCheckout(std::string_view path, const std::vector<std::string>& sparse) {
  if (sparse.empty() || path.find('/') == std::string_view::npos) return true;
  return std::any_of(sparse.begin(), sparse.end(), [&](const std::string& folder) {
    return path.size() > folder.size() && path.starts_with(folder) && path[folder.size()] == '/';
  });
}

bool writeTree(const fs::path& worktree, const std::string& commit, std::size_t threads,
               const std::vector<std::string>& sparse) {
  RepositoryPtr repo = openRepository(worktree);
  if (filtersConfigured(repo.get())) return false;
  Walk walk = walkTree(repo.get(), commit);
  if (walk.attributes) return false;
  // Outside a sparse checkout: in the index only, marked skip-worktree, no folder made for it.
  std::vector<Entry> skipped;
  if (!sparse.empty()) {
    auto outside = std::stable_partition(walk.entries.begin(), walk.entries.end(),
                                         [&](const Entry& e) { return inSparseCheckout(e.path, sparse); });
    skipped.assign(std::make_move_iterator(outside), std::make_move_iterator(walk.entries.end()));
    walk.entries.erase(outside, walk.entries.end());
    std::erase_if(walk.directories, [&](const std::string& d) {
      return !inSparseCheckout(d + "/x", sparse) &&
             std::none_of(sparse.begin(), sparse.end(), [&](const std::string& s) { return s.starts_with(d + "/"); });
    });
  }

  const Directory directory(worktree);
  const int dir = directory.fd;
  for (const std::string& d : walk.directories) {
    if (::mkdirat(dir, d.c_str(), 0777) < 0 && errno != EEXIST) throw osError("create " + d);
  }

  // The files, on `threads` writers taking the next entry as they go.
  std::atomic<std::size_t> next{0};
  std::mutex errorMutex;
  std::exception_ptr error;
  auto writer = [&] {
    try {
      RepositoryPtr own = openRepository(worktree);
      for (std::size_t i = next++; i < walk.entries.size(); i = next++) writeEntry(own.get(), worktree, dir, walk.entries[i]);
    } catch (...) {
      std::lock_guard lock(errorMutex);
      if (!error) error = std::current_exception();
      next = walk.entries.size();  // the others stop too
    }
  };
  const std::size_t count = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(1, walk.entries.size()));
  if (count == 1) {
    writer();
  } else {
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < count; ++t) pool.emplace_back(writer);
  }
  if (error) std::rethrow_exception(error);

  for (Entry& e : skipped) {
    e.written = {};
    e.skipWorktree = true;
  }
  walk.entries.insert(walk.entries.end(), std::make_move_iterator(skipped.begin()),
                      std::make_move_iterator(skipped.end()));
  writeIndex(repo.get(), worktree, walk.entries, commit);
  return true;
}

void sparsify(const fs::path& worktree, const std::vector<std::string>& sparse) {
  if (sparse.empty()) return;
  RepositoryPtr repo = openRepository(worktree);
  git_index* rawIndex = nullptr;
  check(git_repository_index(&rawIndex, repo.get()), "open the index of " + worktree.string());
  IndexPtr index(rawIndex);
  std::set<std::string> folders;
  for (std::size_t i = 0; i < git_index_entrycount(index.get()); ++i) {
    const git_index_entry* entry = git_index_get_byindex(index.get(), i);
    const std::string path = entry->path;
    if (inSparseCheckout(path, sparse)) continue;
    git_index_entry skipped = *entry;
    skipped.flags_extended |= GIT_INDEX_ENTRY_SKIP_WORKTREE;
    check(git_index_add(index.get(), &skipped), "mark " + path + " skip-worktree");
    std::error_code ec;
    fs::remove(worktree / path, ec);
    for (auto slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      folders.insert(path.substr(0, slash));
    }
  }
  // Deepest first, so a folder is empty once its subfolders are gone.
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) {
    std::error_code ec;
    if (fs::is_empty(worktree / *it, ec) && !ec) fs::remove(worktree / *it, ec);
  }
  check(git_index_write(index.get()), "write the index of " + worktree.string());
}

std::optional<std::uintmax_t> resetTree(const fs::path& worktree, const std::string& commit,
                                        const std::vector<std::string>& keep) {
  RepositoryPtr repo = openRepository(worktree);
  if (filtersConfigured(repo.get())) return std::nullopt;
  Walk walk = walkTree(repo.get(), commit);
  if (walk.attributes) return std::nullopt;

  Reset reset{repo.get(), worktree, walk, keep, {}, {}, {}, {}};
  for (std::size_t i = 0; i < walk.entries.size(); ++i) reset.files.emplace(walk.entries[i].path, i);
  reset.directories.insert(walk.directories.begin(), walk.directories.end());
  reset.intact.assign(walk.entries.size(), false);
  reset.scan("");

  const Directory directory(worktree);
  const int dir = directory.fd;
  for (const std::string& d : walk.directories) {
    if (::mkdirat(dir, d.c_str(), 0777) < 0 && errno != EEXIST) throw osError("create " + d);
  }
  for (std::size_t i = 0; i < walk.entries.size(); ++i) {
    if (!reset.intact[i]) writeEntry(repo.get(), worktree, dir, walk.entries[i]);
  }

  // Now that every .gitignore is the tree's own: a kept folder must be one git ignores.
  std::uintmax_t bytes = 0;
  for (const std::string& folder : reset.kept) {
    int ignored = 0;
    if (git_ignore_path_is_ignored(&ignored, repo.get(), (folder + "/").c_str()) < 0) {
      git_error_clear();
      ignored = 0;
    }
    if (ignored) {
      bytes += diskUsage(worktree / folder);
    } else {
      removeAny(worktree / folder);
    }
  }
  for (const Entry& e : walk.entries) bytes += static_cast<std::uintmax_t>(e.written.st_blocks) * 512;

  // A new index: whatever the last agent left there is not read.
  std::error_code ec;
  fs::remove(fs::path(git_repository_path(repo.get())) / "index", ec);
  writeIndex(repo.get(), worktree, walk.entries, commit);
  return bytes;
}

bool moveTree(const fs::path& worktree, const std::string& from, const std::string& to) {
  RepositoryPtr repo = openRepository(worktree);
  if (filtersConfigured(repo.get())) return false;
  TreePtr before = treeOf(repo.get(), from);
  TreePtr after = treeOf(repo.get(), to);

  // What goes and what comes, all known before anything on disk changes.
  std::vector<Entry> removed;
  std::vector<Entry> written;
  compareTrees(repo.get(), before.get(), after.get(), "", removed, written);
  for (const auto* list : {&removed, &written}) {
    for (const Entry& e : *list) {
      if (e.path == ".gitattributes" || e.path.ends_with("/.gitattributes")) return false;
    }
  }

  const Directory directory(worktree);
  const int dir = directory.fd;

  auto isTree = [](git_tree* tree, const std::string& path) {
    git_tree_entry* raw = nullptr;
    if (git_tree_entry_bypath(&raw, tree, path.c_str()) < 0) {
      git_error_clear();
      return false;
    }
    const bool isFolder = git_tree_entry_type(raw) == GIT_OBJECT_TREE;
    git_tree_entry_free(raw);
    return isFolder;
  };
  for (const Entry& e : removed) {
    if (e.mode == GIT_FILEMODE_COMMIT) {
      removeAny(worktree / e.path);
    } else if (::unlinkat(dir, e.path.c_str(), 0) < 0 && errno != ENOENT) {
      throw osError("remove " + e.path);
    }
    // A folder the new tree no longer has goes, with anything kept in it.
    for (std::size_t slash = e.path.find('/'); slash != std::string::npos; slash = e.path.find('/', slash + 1)) {
      const std::string parent = e.path.substr(0, slash);
      if (!isTree(after.get(), parent)) {
        removeAny(worktree / parent);
        break;
      }
    }
  }
  for (Entry& e : written) {
    // Each folder on the way must be the new tree's, not a kept folder in its place.
    for (std::size_t slash = e.path.find('/'); slash != std::string::npos; slash = e.path.find('/', slash + 1)) {
      const std::string parent = e.path.substr(0, slash);
      struct stat st {};
      if (::fstatat(dir, parent.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode) && isTree(before.get(), parent)) continue;
        removeAny(worktree / parent);
      }
      if (::mkdirat(dir, parent.c_str(), 0777) < 0 && errno != EEXIST) throw osError("create " + parent);
    }
    struct stat st {};
    if (::fstatat(dir, e.path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) removeAny(worktree / e.path);
    writeEntry(repo.get(), worktree, dir, e);
  }

  // The few entries that changed, the others copied as they are; libgit2's
  // index when the file is not one patchIndex() handles.
  std::vector<std::string> gone;
  for (const Entry& e : removed) gone.push_back(e.path);
  std::vector<IndexUpdate> updates;
  for (const Entry& e : written) updates.push_back({e.path, e.id, e.mode, e.written});
  if (patchIndex(fs::path(git_repository_path(repo.get())) / "index", gone, std::move(updates))) return true;
  git_index* rawIndex = nullptr;
  check(git_repository_index(&rawIndex, repo.get()), "open the index of " + worktree.string());
  IndexPtr index(rawIndex);
  for (const Entry& e : removed) {
    if (git_index_remove(index.get(), e.path.c_str(), 0) < 0) git_error_clear();
  }
  for (const Entry& e : written) {
    const git_index_entry entry = indexEntry(e);
    check(git_index_add(index.get(), &entry), "add " + e.path + " to the index");
  }
  check(git_index_write(index.get()), "write the index of " + worktree.string());
  return true;
}

}  // namespace hydra::core::git
