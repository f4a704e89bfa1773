#include "tests/core/git/temp_repo.h"

#include <git2.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hydra::core::testing {

namespace fs = std::filesystem;

std::string shellQuote(const std::string& s) {
  std::string quoted = "'";
  for (char c : s) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void writeFile(const fs::path& path, const std::string& content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string run(const std::string& command) {
  // Standard error goes to a file so that it can be shown when the command fails.
  std::string errPath = (fs::temp_directory_path() / "hydra-git-test-stderr-XXXXXX").string();
  const int fd = mkstemp(errPath.data());
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);

  const std::string full = command + " 2>" + shellQuote(errPath);
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  const std::string err = readFile(errPath);
  fs::remove(errPath);
  if (status != 0) {
    throw std::runtime_error("command failed (status " + std::to_string(status) + "): " + command +
                             "\n" + err);
  }
  return out;
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "hydra-git-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = fs::canonical(pattern);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

TempRepo::TempRepo(bool empty) {
  root_ = dir_.path() / "repo";
  fs::create_directories(root_);
  fs::create_directories(outside());
  git("init -q -b main");
  git("config user.name 'Test User'");
  git("config user.email test@example.com");
  git("config commit.gpgsign false");
  if (empty) return;
  write("README.md", "# sample\n");
  write("src/a.txt", "alpha\n");
  write("src/b.txt", "beta\n");
  write(".gitignore", "*.log\nbuild/\n");
  commit("initial");
}

std::string TempRepo::gitIn(const fs::path& dir, const std::string& args) {
  // No system or global config, and no opportunistic index refresh by
  // `git status`, which would change the index file the tests watch.
  std::string out =
      run("GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_OPTIONAL_LOCKS=0 git -C " +
          shellQuote(dir.string()) + " " + args);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void TempRepo::write(const fs::path& relative, const std::string& content) const {
  writeFile(root_ / relative, content);
}

std::string TempRepo::commit(const std::string& message) const {
  git("add -A");
  git("commit -q -m " + shellQuote(message));
  return git("rev-parse HEAD");
}

void TempRepo::isolateLibgit2() const {
  const fs::path none = dir_.path() / "no-config";
  fs::create_directories(none);
  for (int level : {GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_SYSTEM,
                    GIT_CONFIG_LEVEL_PROGRAMDATA}) {
    if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, none.c_str()) < 0) {
      throw std::runtime_error("cannot set libgit2's config search path");
    }
  }
}

}  // namespace hydra::core::testing
