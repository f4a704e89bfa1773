#include "core/checks/runner_shadows.h"

#include <filesystem>
#include <string_view>
#include <system_error>

#include "core/git/git.h"

namespace hydra::core::checks {

namespace fs = std::filesystem;

namespace {

// pytest and what it imports before any test: found even when the system's
// Python folders are not where this host keeps them.
constexpr std::string_view kRunnerModules[] = {
    "pytest",   "_pytest",    "py",   "pluggy",   "iniconfig", "packaging", "exceptiongroup",
    "tomli",    "tomllib",    "attr", "attrs",    "colorama",  "xdist",     "pytest_cov",
    "coverage", "hypothesis", "nose", "unittest", "importlib", "site",      "encodings"};

// Folder names projects use for their own tests and documents, which some
// packages install at the top level by mistake: never a shadow.
constexpr std::string_view kProjectFolders[] = {
    "test", "tests", "testing", "doc", "docs", "examples", "scripts", "src", "benchmarks"};

// The module a folder entry provides: "json.py" -> json, "_ssl.cpython-311-x86_64-linux-gnu.so" ->
// _ssl, "pytest/" -> pytest; empty for anything else (metadata, caches).
std::string moduleOf(const fs::directory_entry& entry) {
  const std::string name = entry.path().filename().string();
  std::error_code ec;
  if (entry.is_directory(ec)) {
    if (name.find('.') != std::string::npos || name == "__pycache__") return {};
    return name;
  }
  if (name.ends_with(".py")) return name.substr(0, name.size() - 3);
  if (name.ends_with(".so")) return name.substr(0, name.find('.'));
  return {};
}

void addModulesIn(const fs::path& dir, std::set<std::string>& out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (std::string module = moduleOf(*it); !module.empty()) out.insert(std::move(module));
  }
}

// /usr/lib/python3.11, its lib-dynload, /usr/lib/python3/dist-packages, and
// /usr/local/lib/python3.11/{site,dist}-packages: every python3* folder of both.
void addSystemModules(std::set<std::string>& out) {
  for (const char* root : {"/usr/lib", "/usr/local/lib"}) {
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->path().filename().string().starts_with("python3")) continue;
      const fs::path dir = it->path();
      addModulesIn(dir, out);
      for (const char* sub : {"lib-dynload", "dist-packages", "site-packages"})
        addModulesIn(dir / sub, out);
    }
  }
}

// Where `npx jest` and `npm test` find the runner: node_modules/ at any depth.
bool inNodeModules(std::string_view path) {
  return path.starts_with("node_modules/") || path.find("/node_modules/") != std::string_view::npos;
}

std::string_view fileName(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool isProjectFolder(std::string_view name) {
  for (std::string_view folder : kProjectFolders) {
    if (name == folder) return true;
  }
  return false;
}

bool isShadow(std::string_view path, const std::set<std::string>& baseRootNames,
              const std::set<std::string>& shadowable) {
  const std::string_view name = fileName(path);
  // Run by the interpreter at start-up from any folder on sys.path.
  if (name == "sitecustomize.py" || name == "usercustomize.py" || name.ends_with(".pth"))
    return true;
  if (inNodeModules(path)) return true;
  if (!name.ends_with(".py")) return false;
  // A module at the root, or a file of a package at the root.
  const std::size_t slash = path.find('/');
  const std::string top(slash == std::string_view::npos ? path.substr(0, path.size() - 3)
                                                        : path.substr(0, slash));
  if (baseRootNames.contains(slash == std::string_view::npos ? std::string(path) : top))
    return false;
  if (isProjectFolder(top)) return false;
  return shadowable.contains(top);
}

}  // namespace

const std::set<std::string>& shadowableModules() {
  static const std::set<std::string> modules = [] {
    std::set<std::string> out;
    for (std::string_view m : kRunnerModules) out.emplace(m);
    addSystemModules(out);
    return out;
  }();
  return modules;
}

std::set<std::string> rootNames(const fs::path& repo, const std::string& commit) {
  git::RepositoryPtr repository = git::openRepository(repo);
  git::CommitPtr found = git::lookupCommit(repository.get(), git::oidFromHex(commit));
  git_tree* rawTree = nullptr;
  git::check(git_commit_tree(&rawTree, found.get()), "cannot read the tree of " + commit);
  git::TreePtr tree(rawTree);
  std::set<std::string> names;
  for (std::size_t i = 0; i < git_tree_entrycount(tree.get()); ++i) {
    names.emplace(git_tree_entry_name(git_tree_entry_byindex(tree.get(), i)));
  }
  return names;
}

std::vector<std::string> runnerShadows(const std::vector<merge::FileChange>& changes,
                                       const std::set<std::string>& baseRootNames,
                                       const std::set<std::string>& shadowable) {
  std::set<std::string> found;
  for (const merge::FileChange& change : changes) {
    if (change.status == "deleted") continue;
    // A change to a file the base has is the project's own file (a rename
    // brings a new path): node_modules/ excepted, which is the runner's.
    const bool added = change.status == "added" || change.status == "renamed";
    if (!added && !inNodeModules(change.path)) continue;
    if (isShadow(change.path, baseRootNames, shadowable)) found.insert(change.path);
  }
  return {found.begin(), found.end()};
}

}  // namespace hydra::core::checks
