#include "core/checks/protected_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>
#include <system_error>

#include "core/checks/build_script.h"
#include "core/git/git.h"

namespace hydra::core::checks {

namespace fs = std::filesystem;

namespace {

std::vector<std::string_view> segmentsOf(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    std::string_view segment = path.substr(0, slash);
    if (!segment.empty()) out.push_back(segment);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// `*` and `?` within one segment, with the usual backtracking to the last star.
bool matchesSegment(std::string_view pattern, std::string_view name) {
  std::size_t p = 0, n = 0;
  std::size_t star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool matchesSegments(const std::vector<std::string_view>& pattern, std::size_t p,
                     const std::vector<std::string_view>& path, std::size_t n) {
  if (p == pattern.size()) return n == path.size();
  if (pattern[p] == "**") {
    // Zero or more whole segments.
    for (std::size_t skip = n; skip <= path.size(); ++skip) {
      if (matchesSegments(pattern, p + 1, path, skip)) return true;
    }
    return false;
  }
  return n < path.size() && matchesSegment(pattern[p], path[n]) && matchesSegments(pattern, p + 1, path, n + 1);
}

bool safeSegments(const std::vector<std::string_view>& segments) {
  return !segments.empty() && std::none_of(segments.begin(), segments.end(), [](std::string_view s) {
    return s == "." || s == ".." || s == ".git";
  });
}

void fail(const std::string& what, const fs::path& path) {
  throw std::system_error(errno, std::generic_category(), what + " " + path.string());
}

// Makes `dir` a real folder: a symlink or file the agent committed in its
// place is removed first, so nothing is ever written through it.
void ensureRealFolder(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return;
    if (::unlink(dir.c_str()) != 0) fail("cannot remove", dir);
  } else if (errno != ENOENT) {
    fail("cannot inspect", dir);
  }
  if (::mkdir(dir.c_str(), 0755) != 0) fail("cannot create", dir);
}

// Removes whatever is at `path` without following it; false when nothing was there.
bool removeEntry(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    fail("cannot inspect", path);
  }
  if (S_ISDIR(st.st_mode)) {
    fs::remove_all(path);  // removes symlinks inside as links, never their targets
  } else if (::unlink(path.c_str()) != 0) {
    fail("cannot remove", path);
  }
  return true;
}

void writeBlob(const fs::path& path, git_blob* blob, git_filemode_t mode) {
  const char* data = static_cast<const char*>(git_blob_rawcontent(blob));
  const auto size = static_cast<std::size_t>(git_blob_rawsize(blob));
  if (mode == GIT_FILEMODE_LINK) {
    const std::string target(data, size);
    if (::symlink(target.c_str(), path.c_str()) != 0) fail("cannot create the symlink", path);
    return;
  }
  const mode_t perms = mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perms);
  if (fd < 0) fail("cannot create", path);
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, data + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      fail("cannot write", path);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) fail("cannot write", path);
}

}  // namespace

const std::vector<std::string>& defaultProtectedPaths() {
  static const std::vector<std::string> paths = {
      // Python: pytest's, tox's and the linters' configuration, and pytest's hooks.
      "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "conftest.py", ".flake8", "ruff.toml", ".ruff.toml",
      ".pylintrc", "mypy.ini",
      // Node: the scripts `npm test` runs, and the runners' and ESLint's configuration.
      "package.json", ".eslintrc*", "eslint.config.*", "jest.config.*", "vitest.config.*", ".mocharc*",
      // Rust and Go: test settings, and where dependencies come from.
      "Cargo.toml", ".cargo/config.toml", "clippy.toml", "go.mod", ".golangci.*",
      // CMake: which tests ctest registers and runs.
      "CMakeLists.txt", "CTestTestfile.cmake", "CTestCustom.cmake", "*.cmake"};
  return paths;
}

std::vector<std::string> defaultProtectedPathsFor(const std::optional<std::string>& testCommand,
                                                  const std::optional<std::string>& lintCommand) {
  std::vector<std::string> paths = defaultProtectedPaths();
  for (const std::optional<std::string>& command : {testCommand, lintCommand}) {
    if (!command) continue;
    for (std::string& script : buildScriptPatterns(*command)) {
      if (std::find(paths.begin(), paths.end(), script) == paths.end()) paths.push_back(std::move(script));
    }
  }
  return paths;
}

bool matchesProtected(std::string_view pattern, std::string_view path) {
  const bool foldersOnly = pattern.ends_with('/');
  while (pattern.ends_with('/')) pattern.remove_suffix(1);
  const bool anchored = pattern.find('/') != std::string_view::npos;
  std::vector<std::string_view> patternSegments = segmentsOf(pattern);
  if (patternSegments.empty()) return false;
  if (!anchored) patternSegments.insert(patternSegments.begin(), "**");
  const std::vector<std::string_view> pathSegments = segmentsOf(path);
  // The file itself, or any folder it lies in.
  const std::size_t longest = foldersOnly ? pathSegments.size() - std::min<std::size_t>(1, pathSegments.size())
                                          : pathSegments.size();
  for (std::size_t length = 1; length <= longest; ++length) {
    const std::vector<std::string_view> prefix(pathSegments.begin(),
                                               pathSegments.begin() + static_cast<std::ptrdiff_t>(length));
    if (matchesSegments(patternSegments, 0, prefix, 0)) return true;
  }
  return false;
}

std::string protectedPatternProblem(std::string_view pattern) {
  std::string_view rest = pattern;
  if (rest.starts_with('/')) rest.remove_prefix(1);
  const std::vector<std::string_view> segments = segmentsOf(rest);
  if (segments.empty()) return "a protected path must name something, found '" + std::string(pattern) + "'";
  if (rest.starts_with('/')) return "a protected path is relative to the repository root, found '" + std::string(pattern) + "'";
  for (std::string_view s : segments) {
    if (s == "." || s == "..") {
      return "a protected path must stay inside the repository (no '.' or '..' segments), found '" +
             std::string(pattern) + "'";
    }
  }
  return {};
}

std::vector<std::string> protectedChanges(const std::vector<merge::FileChange>& changes,
                                          const std::vector<std::string>& patterns) {
  std::set<std::string> found;
  auto consider = [&](const std::string& path) {
    if (path.empty()) return;
    for (const std::string& pattern : patterns) {
      if (matchesProtected(pattern, path)) {
        found.insert(path);
        return;
      }
    }
  };
  for (const merge::FileChange& change : changes) {
    consider(change.path);
    consider(change.oldPath);
  }
  return {found.begin(), found.end()};
}

bool looksLikeTestFile(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  static constexpr std::string_view kPatterns[] = {"test_*",   "*_test.*", "*_tests.*", "*.test.*",
                                                   "*.spec.*", "*_spec.*", "*Test.*",   "*Tests.*"};
  return std::any_of(std::begin(kPatterns), std::end(kPatterns),
                     [name](std::string_view pattern) { return matchesSegment(pattern, name); });
}

std::vector<std::string> restoreProtected(const fs::path& repo, const std::string& baseCommit,
                                          const fs::path& checkout, const std::vector<std::string>& paths) {
  std::vector<std::string> done;
  if (paths.empty()) return done;
  git::RepositoryPtr repository = git::openRepository(repo);
  git::CommitPtr commit = git::lookupCommit(repository.get(), git::oidFromHex(baseCommit));
  git_tree* rawTree = nullptr;
  git::check(git_commit_tree(&rawTree, commit.get()), "cannot read the base commit's tree");
  git::TreePtr tree(rawTree);

  for (const std::string& path : paths) {
    const std::vector<std::string_view> segments = segmentsOf(path);
    if (!safeSegments(segments)) {
      done.push_back("left " + path + " alone (not a path inside the checkout)");
      continue;
    }
    fs::path dir = checkout;
    for (std::size_t i = 0; i + 1 < segments.size(); ++i) {
      dir /= std::string(segments[i]);
      ensureRealFolder(dir);
    }
    const fs::path target = dir / std::string(segments.back());

    git_tree_entry* rawEntry = nullptr;
    const int rc = git_tree_entry_bypath(&rawEntry, tree.get(), path.c_str());
    if (rc == GIT_ENOTFOUND) {
      if (looksLikeTestFile(path)) {
        done.push_back("kept " + path + " (a new test file)");
      } else if (removeEntry(target)) {
        done.push_back("removed " + path + " (new, and not a test file)");
      }
      continue;
    }
    git::check(rc, "cannot look up " + path + " in the base commit");
    std::unique_ptr<git_tree_entry, git::FreeWith<git_tree_entry_free>> entry(rawEntry);
    removeEntry(target);
    const git_filemode_t mode = git_tree_entry_filemode(entry.get());
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) {
      done.push_back("removed " + path + " (the base has a folder there, put back with its files)");
      continue;
    }
    git_blob* rawBlob = nullptr;
    git::check(git_blob_lookup(&rawBlob, repository.get(), git_tree_entry_id(entry.get())),
               "cannot read " + path + " of the base commit");
    git::BlobPtr blob(rawBlob);
    writeBlob(target, blob.get(), mode);
    done.push_back("put back " + path + " as the base commit has it");
  }
  return done;
}

}  // namespace hydra::core::checks
