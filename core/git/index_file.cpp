#include "core/git/index_file.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "core/git/git.h"
#include "core/util/safe_fs.h"

namespace hydra::core::git {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kHeaderSize = 12;
constexpr std::size_t kChecksumSize = 20;
constexpr std::size_t kFixedEntrySize = 62;  // before the path: stat data, oid, flags
constexpr std::uint16_t kExtendedFlag = 0x4000;
constexpr std::uint16_t kNameMask = 0x0fff;
// Larger than any index hydra writes (about 100 bytes an entry: millions of
// files); a larger one is left to libgit2 rather than read whole here.
constexpr std::size_t kMaxIndexBytes = std::size_t{1} << 30;

std::uint32_t read32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

std::uint16_t read16(const unsigned char* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }

void put32(std::string& out, std::uint32_t v) {
  const char bytes[] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                        static_cast<char>(v)};
  out.append(bytes, 4);
}

void put16(std::string& out, std::uint16_t v) {
  const char bytes[] = {static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(bytes, 2);
}

// An entry of the file as it stands: its path and where its bytes are.
struct Span {
  std::string_view path;
  std::size_t offset = 0;
  std::size_t size = 0;
};

struct Parsed {
  std::uint32_t version = 0;
  std::vector<Span> entries;
  std::string_view cachedTree;  // the TREE extension's data, when there is one
};

// The cached tree (the index's TREE extension, git's
// Documentation/gitformat-index): for each folder, how many index entries it
// covers and the id of its tree, so that writing the tree of an index whose
// folders did not change costs nothing. A folder whose entries changed is
// invalidated (a negative count, no id); its subfolders keep theirs.
struct CachedTree {
  std::string name;  // relative to its parent; "" for the root
  long long count = -1;
  std::string id;    // GIT_OID_RAWSZ bytes when count >= 0
  std::vector<CachedTree> children;
};

// Deeper than any real tree: a file nested this deep cannot be checked out.
constexpr int kMaxCachedTreeDepth = 4096;

std::optional<CachedTree> parseCachedTree(std::string_view& data, int depth) {
  if (depth > kMaxCachedTreeDepth) return std::nullopt;
  CachedTree tree;
  const std::size_t nul = data.find('\0');
  if (nul == std::string_view::npos) return std::nullopt;
  tree.name = data.substr(0, nul);
  data.remove_prefix(nul + 1);
  const std::size_t newline = data.find('\n');
  const std::size_t space = data.find(' ');
  if (newline == std::string_view::npos || space == std::string_view::npos || space > newline) return std::nullopt;
  long long subtrees = 0;
  try {
    std::size_t used = 0;
    tree.count = std::stoll(std::string(data.substr(0, space)), &used);
    if (used != space) return std::nullopt;
    subtrees = std::stoll(std::string(data.substr(space + 1, newline - space - 1)), &used);
    if (used != newline - space - 1) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  data.remove_prefix(newline + 1);
  // Each subtree takes at least four bytes: no count claims more than there is.
  if (subtrees < 0 || static_cast<unsigned long long>(subtrees) > data.size() / 4) return std::nullopt;
  if (tree.count >= 0) {
    if (data.size() < GIT_OID_RAWSZ) return std::nullopt;
    tree.id = data.substr(0, GIT_OID_RAWSZ);
    data.remove_prefix(GIT_OID_RAWSZ);
  }
  tree.children.reserve(static_cast<std::size_t>(subtrees));
  for (long long i = 0; i < subtrees; ++i) {
    auto child = parseCachedTree(data, depth + 1);
    if (!child) return std::nullopt;
    tree.children.push_back(std::move(*child));
  }
  return tree;
}

void putCachedTree(std::string& out, const CachedTree& tree) {
  out += tree.name;
  out += '\0';
  out += std::to_string(tree.count < 0 ? -1 : tree.count) + " " + std::to_string(tree.children.size()) + "\n";
  if (tree.count >= 0) out += tree.id;
  for (const CachedTree& child : tree.children) putCachedTree(out, child);
}

// Invalidates the folders on the way to `path`, from the root down.
void invalidate(CachedTree& root, std::string_view path) {
  CachedTree* tree = &root;
  tree->count = -1;
  for (std::size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/')) {
    const std::string_view folder = path.substr(0, slash);
    path.remove_prefix(slash + 1);
    auto child = std::find_if(tree->children.begin(), tree->children.end(),
                              [&](const CachedTree& c) { return c.name == folder; });
    if (child == tree->children.end()) return;
    tree = &*child;
    tree->count = -1;
  }
}

// The entries of `data` (a whole index file), or nullopt when it is not one
// patchIndex() handles.
std::optional<Parsed> parse(const std::string& data) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  if (data.size() < kHeaderSize + kChecksumSize || std::memcmp(bytes, "DIRC", 4) != 0) return std::nullopt;
  Parsed parsed;
  parsed.version = read32(bytes + 4);
  if (parsed.version != 2 && parsed.version != 3) return std::nullopt;
  const std::size_t end = data.size() - kChecksumSize;
  unsigned char sum[SHA_DIGEST_LENGTH];
  SHA1(bytes, end, sum);
  if (std::memcmp(sum, bytes + end, kChecksumSize) != 0) return std::nullopt;

  const std::uint32_t count = read32(bytes + 8);
  parsed.entries.reserve(count);
  std::size_t at = kHeaderSize;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (at + kFixedEntrySize > end) return std::nullopt;
    const std::uint16_t flags = read16(bytes + at + 60);
    std::size_t fixed = kFixedEntrySize;
    if ((flags & kExtendedFlag) != 0) {
      if (parsed.version < 3) return std::nullopt;
      fixed += 2;
    }
    const void* nul = std::memchr(bytes + at + fixed, '\0', end - std::min(end, at + fixed));
    if (nul == nullptr) return std::nullopt;
    const std::size_t length = static_cast<const unsigned char*>(nul) - (bytes + at + fixed);
    // The path's NUL and padding to a multiple of eight.
    const std::size_t size = (fixed + length + 8) & ~std::size_t{7};
    if (at + size > end || (flags >> 12 & 0x3) != 0) return std::nullopt;  // staged conflicts: not hydra's
    parsed.entries.push_back({std::string_view(data.data() + at + fixed, length), at, size});
    at += size;
  }
  // Extensions: optional ones (an upper-case first letter) go but the cached
  // tree; any other is not ours to drop.
  while (at + 8 <= end) {
    if (bytes[at] < 'A' || bytes[at] > 'Z') return std::nullopt;
    const std::size_t size = read32(bytes + at + 4);
    if (size > end - at - 8) return std::nullopt;
    if (std::memcmp(bytes + at, "TREE", 4) == 0) parsed.cachedTree = std::string_view(data.data() + at + 8, size);
    at += 8 + size;
  }
  if (at != end) return std::nullopt;
  return parsed;
}

void putEntry(std::string& out, const IndexUpdate& u) {
  const struct stat& st = u.written;
  put32(out, static_cast<std::uint32_t>(st.st_ctim.tv_sec));
  put32(out, static_cast<std::uint32_t>(st.st_ctim.tv_nsec));
  put32(out, static_cast<std::uint32_t>(st.st_mtim.tv_sec));
  put32(out, static_cast<std::uint32_t>(st.st_mtim.tv_nsec));
  put32(out, static_cast<std::uint32_t>(st.st_dev));
  put32(out, static_cast<std::uint32_t>(st.st_ino));
  put32(out, static_cast<std::uint32_t>(u.mode));
  put32(out, static_cast<std::uint32_t>(st.st_uid));
  put32(out, static_cast<std::uint32_t>(st.st_gid));
  put32(out, static_cast<std::uint32_t>(st.st_size));
  out.append(reinterpret_cast<const char*>(u.id.id), GIT_OID_RAWSZ);
  put16(out, static_cast<std::uint16_t>(std::min<std::size_t>(u.path.size(), kNameMask)));
  out += u.path;
  out.append(8 - (kFixedEntrySize + u.path.size()) % 8, '\0');
}

}  // namespace

bool patchIndex(const fs::path& index, const std::vector<std::string>& removed, std::vector<IndexUpdate> updated) {
  // The git directory is opened once and everything below happens in it by
  // single names that are never followed as links: an index swapped for a
  // link, a FIFO or a device is not read, and a link planted as index.lock
  // is never written through.
  const std::string indexName = index.filename().string();
  const std::string lockName = indexName + ".lock";
  std::optional<SafeDir> gitDir;
  std::string data;
  try {
    gitDir.emplace(SafeDir::open(index.parent_path()));
    data = gitDir->readFile(indexName, kMaxIndexBytes + 1);
  } catch (const std::system_error&) {
    return false;
  }
  if (data.size() > kMaxIndexBytes) return false;
  const std::optional<Parsed> parsed = parse(data);
  if (!parsed) return false;

  std::sort(updated.begin(), updated.end(), [](const IndexUpdate& a, const IndexUpdate& b) { return a.path < b.path; });
  std::set<std::string_view> gone(removed.begin(), removed.end());
  for (const auto& u : updated) gone.insert(u.path);

  std::string out;
  out.reserve(data.size() + updated.size() * 128);
  out.append(data, 0, 8);  // signature and version
  put32(out, 0);           // the count, once known
  std::uint32_t count = 0;
  auto next = updated.begin();
  for (const Span& e : parsed->entries) {
    // Git's order: by path, byte by byte.
    for (; next != updated.end() && std::string_view(next->path) < e.path; ++next, ++count) putEntry(out, *next);
    if (gone.contains(e.path)) continue;
    out.append(data, e.offset, e.size);
    ++count;
  }
  for (; next != updated.end(); ++next, ++count) putEntry(out, *next);
  std::string counted;
  put32(counted, count);
  out.replace(8, 4, counted);
  // The cached tree stays, but for the folders of what changed (one that
  // does not parse is dropped: it only ever speeds git up).
  std::string_view cached = parsed->cachedTree;
  if (auto tree = cached.empty() ? std::nullopt : parseCachedTree(cached, 0); tree && cached.empty()) {
    for (const std::string_view path : gone) invalidate(*tree, path);
    std::string extension;
    putCachedTree(extension, *tree);
    out += "TREE";
    put32(out, static_cast<std::uint32_t>(extension.size()));
    out += extension;
  }
  unsigned char sum[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(out.data()), out.size(), sum);
  out.append(reinterpret_cast<const char*>(sum), sizeof sum);

  // As git does: the new file under index.lock, created only where nothing
  // is (a lock another writer holds, or anything planted there, leaves the
  // index to libgit2, which refuses it the same way), then renamed over the
  // old one.
  const int fd = ::openat(gitDir->fd(), lockName.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw GitError(GIT_ERROR, GIT_ERROR_OS, "write " + (index.parent_path() / lockName).string() + ": " + std::strerror(errno));
  }
  std::size_t written = 0;
  int error = 0;
  while (written < out.size()) {
    const ssize_t n = ::write(fd, out.data() + written, out.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::renameat(gitDir->fd(), lockName.c_str(), gitDir->fd(), indexName.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlinkat(gitDir->fd(), lockName.c_str(), 0);
    throw GitError(GIT_ERROR, GIT_ERROR_OS, "write " + index.string() + ": " + std::strerror(error));
  }
  return true;
}

git_index_entry indexEntryFromStat(const struct stat& st, git_filemode_t mode, const git_oid& id, const char* path) {
  git_index_entry entry{};
  entry.ctime.seconds = static_cast<int32_t>(st.st_ctim.tv_sec);
  entry.ctime.nanoseconds = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  entry.mtime.seconds = static_cast<int32_t>(st.st_mtim.tv_sec);
  entry.mtime.nanoseconds = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  entry.dev = static_cast<uint32_t>(st.st_dev);
  entry.ino = static_cast<uint32_t>(st.st_ino);
  entry.mode = mode;
  entry.uid = static_cast<uint32_t>(st.st_uid);
  entry.gid = static_cast<uint32_t>(st.st_gid);
  entry.file_size = static_cast<uint32_t>(st.st_size);
  entry.id = id;
  entry.path = path;
  return entry;
}

}  // namespace hydra::core::git
