#include "core/git/checkout.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/git/git.h"

namespace hydra::core::git {

namespace fs = std::filesystem;

namespace {

// One blob, link or submodule of the tree, and what writing it left on disk.
struct Entry {
  std::string path;  // relative, '/'-separated
  git_oid id{};
  git_filemode_t mode = GIT_FILEMODE_BLOB;
  struct stat written{};
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

// Writes one entry below `dir` (an open directory of the worktree) and stats it.
void writeEntry(git_repository* repo, int dir, Entry& e) {
  const char* path = e.path.c_str();
  if (e.mode == GIT_FILEMODE_COMMIT) {  // a submodule: git leaves an empty directory
    if (::mkdirat(dir, path, 0777) < 0 && errno != EEXIST) throw osError("create " + e.path);
    e.written = {};
    return;
  }
  git_blob* raw = nullptr;
  check(git_blob_lookup(&raw, repo, &e.id), "read " + e.path);
  BlobPtr blob(raw);
  const char* data = static_cast<const char*>(git_blob_rawcontent(blob.get()));
  const auto size = static_cast<std::size_t>(git_blob_rawsize(blob.get()));
  if (e.mode == GIT_FILEMODE_LINK) {
    const std::string target(data, size);
    if (::symlinkat(target.c_str(), dir, path) < 0) throw osError("create the link " + e.path);
    if (::fstatat(dir, path, &e.written, AT_SYMLINK_NOFOLLOW) < 0) throw osError("stat " + e.path);
    return;
  }
  const mode_t perms = e.mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0777 : 0666;
  const int fd = ::openat(dir, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perms);
  if (fd < 0) throw osError("create " + e.path);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const GitError error = osError("write " + e.path);
      ::close(fd);
      throw error;
    }
    done += static_cast<std::size_t>(n);
  }
  const int statted = ::fstat(fd, &e.written);
  if (::close(fd) < 0 || statted < 0) throw osError("write " + e.path);
}

git_index_entry indexEntry(const Entry& e) {
  git_index_entry entry{};
  const struct stat& st = e.written;
  entry.ctime.seconds = static_cast<int32_t>(st.st_ctim.tv_sec);
  entry.ctime.nanoseconds = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  entry.mtime.seconds = static_cast<int32_t>(st.st_mtim.tv_sec);
  entry.mtime.nanoseconds = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  entry.dev = static_cast<uint32_t>(st.st_dev);
  entry.ino = static_cast<uint32_t>(st.st_ino);
  entry.mode = e.mode;
  entry.uid = static_cast<uint32_t>(st.st_uid);
  entry.gid = static_cast<uint32_t>(st.st_gid);
  entry.file_size = static_cast<uint32_t>(st.st_size);
  entry.id = e.id;
  entry.path = e.path.c_str();
  return entry;
}

}  // namespace

bool writeTree(const fs::path& worktree, const std::string& commit, std::size_t threads) {
  RepositoryPtr repo = openRepository(worktree);
  if (configSet(repo.get(), "core.autocrlf") || configSet(repo.get(), "core.eol")) return false;
  std::error_code ec;
  const fs::path attributes = commonDir(repo.get()) / "info" / "attributes";
  if (fs::exists(attributes, ec) && fs::file_size(attributes, ec) > 0) return false;
  Walk walk = walkTree(repo.get(), commit);
  if (walk.attributes) return false;

  const int dir = ::open(worktree.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) throw osError("open " + worktree.string());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{dir};
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
      for (std::size_t i = next++; i < walk.entries.size(); i = next++) writeEntry(own.get(), dir, walk.entries[i]);
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

  // The index, in its own order (so each entry is appended), with what was written.
  std::sort(walk.entries.begin(), walk.entries.end(),
            [](const Entry& a, const Entry& b) { return a.path < b.path; });
  git_index* rawIndex = nullptr;
  check(git_repository_index(&rawIndex, repo.get()), "open the index of " + worktree.string());
  IndexPtr index(rawIndex);
  check(git_index_clear(index.get()), "clear the index of " + worktree.string());
  for (const Entry& e : walk.entries) {
    const git_index_entry entry = indexEntry(e);
    check(git_index_add(index.get(), &entry), "add " + e.path + " to the index");
  }
  check(git_index_write(index.get()), "write the index of " + worktree.string());
  return true;
}

}  // namespace hydra::core::git
