// How long it takes to give eight agents a worktree each: hydra's
// WorktreeManager against `git worktree add` run eight times in a row, in one
// run and interleaved (each round times every method once, in turn), so a
// disk whose speed drifts, as shared virtual disks do, treats them alike.
//
//   worktree_bench [--files N]... [--rounds R] [--agents A] [--methods git,many,...]
//
// Methods: `git` (`git worktree add` x A); `many` (what a race does:
// WorktreeManager::createMany, checkouts concurrently, hydra's default writer
// threads per checkout), `many1` and `many4` (1 or 4 writers each); `one1`
// and `one4` (create() x A one after another); `warm` (createMany from a warm
// pool: A worktrees of an earlier race released into the pool, then the base
// moved by one commit changing 10 files, untimed; timed, createMany taking
// the pooled worktrees to the new base). Only creation is timed. Between
// samples, untimed, the worktrees are removed and everything is synced, so no
// sample pays for its predecessor's writes or deletions. Prints the median of
// each method per repository size as a Markdown table.
//
// The repositories go under $TMPDIR (default /tmp): leave it unset to measure
// the real disk; TMPDIR=/dev/shm measures the libraries.

#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/git/git.h"
#include "core/git/worktree.h"

namespace {

namespace fs = std::filesystem;
using hydra::core::Worktree;
using hydra::core::WorktreeManager;

constexpr int kFilesPerDirectory = 100;
constexpr const char* kWorkspace = ".hydra-workspaces";

void shell(const std::string& command) {
  const std::string quiet = "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null " + command + " >/dev/null 2>&1";
  if (std::system(quiet.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

// A repository of `files` small files in directories of 100, deleted at exit.
class BenchRepo {
 public:
  explicit BenchRepo(int files) {
    std::string pattern = (fs::temp_directory_path() / "hydra-worktree-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = fs::canonical(pattern);
    root_ = dir_ / "repo";
    for (int d = 0; d * kFilesPerDirectory < files; ++d) {
      const fs::path sub = root_ / "src" / ("module" + std::to_string(d));
      fs::create_directories(sub);
      for (int f = 0; f < kFilesPerDirectory && d * kFilesPerDirectory + f < files; ++f) {
        std::ofstream(sub / ("file" + std::to_string(f) + ".txt"))
            << "module " << d << ", file " << f << "\nsome ordinary text content\n";
      }
    }
    const std::string git = "git -C '" + root_.string() + "' ";
    shell(git + "init -q -b main");
    shell(git + "config user.name bench");
    shell(git + "config user.email bench@localhost");
    shell(git + "add -A");
    shell(git + "commit -q -m 'many files'");
  }
  ~BenchRepo() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  BenchRepo(const BenchRepo&) = delete;
  BenchRepo& operator=(const BenchRepo&) = delete;

  const fs::path& root() const { return root_; }

 private:
  fs::path dir_;
  fs::path root_;
};

struct Method {
  std::string name;
  // Creates the worktrees of round `round` and returns how long that took.
  std::function<double(const BenchRepo&, const std::vector<std::string>& agents, const std::string& round)> run;
  std::vector<double> samples;
};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// HYDRA_CHECKOUT_WRITERS while a method runs; 0 leaves hydra's default.
struct Writers {
  explicit Writers(int n) {
    if (n > 0) ::setenv("HYDRA_CHECKOUT_WRITERS", std::to_string(n).c_str(), 1);
  }
  ~Writers() { ::unsetenv("HYDRA_CHECKOUT_WRITERS"); }
};

std::string writersText(int writers) {
  return writers > 0 ? std::to_string(writers) + " writer(s) per checkout" : "hydra's default writers";
}

Method createMany(int writers) {
  return {"`WorktreeManager::createMany`, " + writersText(writers),
          [writers](const BenchRepo& repo, const std::vector<std::string>& agents, const std::string& round) {
            Writers w(writers);
            WorktreeManager manager(repo.root(), kWorkspace);
            const auto start = std::chrono::steady_clock::now();
            manager.createMany(agents, "HEAD", round);
            return secondsSince(start);
          },
          {}};
}

Method createOneByOne(int writers) {
  return {"`WorktreeManager::create` one after another, " + writersText(writers),
          [writers](const BenchRepo& repo, const std::vector<std::string>& agents, const std::string& round) {
            Writers w(writers);
            WorktreeManager manager(repo.root(), kWorkspace);
            const auto start = std::chrono::steady_clock::now();
            for (const auto& agent : agents) manager.create(agent, "HEAD", round);
            return secondsSince(start);
          },
          {}};
}

Method createFromPool() {
  return {"`WorktreeManager::createMany` from the warm pool, base moved by 10 files",
          [](const BenchRepo& repo, const std::vector<std::string>& agents, const std::string& round) {
            WorktreeManager manager(repo.root(), kWorkspace);
            // Untimed: an earlier race's worktrees in the pool, and a new commit on the base.
            manager.release(manager.createMany(agents, "HEAD", "earlier" + round), true,
                            hydra::core::PoolPolicy{agents.size(), {}});
            for (int f = 0; f < 10; ++f) {
              std::ofstream(repo.root() / "src" / ("module" + std::to_string(f)) / "file0.txt")
                  << "changed in round " << round << "\n";
            }
            shell("git -C '" + repo.root().string() + "' commit -q -am 'ten files'");
            ::sync();
            const auto start = std::chrono::steady_clock::now();
            manager.createMany(agents, "HEAD", round);
            return secondsSince(start);
          },
          {}};
}

Method gitWorktreeAdd() {
  return {"`git worktree add` one after another",
          [](const BenchRepo& repo, const std::vector<std::string>& agents, const std::string& round) {
            WorktreeManager manager(repo.root(), kWorkspace);
            manager.ensureExcluded();
            const std::string git = "git -C '" + repo.root().string() + "' ";
            const auto start = std::chrono::steady_clock::now();
            for (const auto& agent : agents) {
              const std::string name = agent + "-" + round;
              shell(git + "worktree add -q -b hydra/" + name + " '" + (manager.workspaceDir() / name).string() +
                    "' HEAD");
            }
            return secondsSince(start);
          },
          {}};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"8 worktrees: hydra's WorktreeManager against git worktree add, interleaved"};
  std::vector<int> sizes{10000};
  int rounds = 5;
  int agentCount = 8;
  app.add_option("--files", sizes, "Files in the repository (repeat for several sizes)");
  app.add_option("--rounds", rounds, "Samples of each method")->check(CLI::PositiveNumber);
  app.add_option("--agents", agentCount, "Worktrees per sample")->check(CLI::PositiveNumber);
  std::vector<std::string> chosen{"git", "many", "warm"};
  app.add_option("--methods", chosen, "Which methods, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember({"git", "many", "many1", "many4", "one1", "one4", "warm"}));
  CLI11_PARSE(app, argc, argv);

  hydra::core::git::LibGit2 libgit2;
  std::vector<std::string> agents;
  for (int i = 0; i < agentCount; ++i) agents.push_back("agent" + std::to_string(i));
  int serial = 0;
  std::cout << "| files | method | median | samples |\n|---|---|---|---|\n";
  for (int files : sizes) {
    BenchRepo repo(files);
    std::vector<Method> methods;
    for (const auto& m : chosen) {
      if (m == "git") methods.push_back(gitWorktreeAdd());
      if (m == "many") methods.push_back(createMany(0));
      if (m == "many1") methods.push_back(createMany(1));
      if (m == "many4") methods.push_back(createMany(4));
      if (m == "one1") methods.push_back(createOneByOne(1));
      if (m == "one4") methods.push_back(createOneByOne(4));
      if (m == "warm") methods.push_back(createFromPool());
    }
    ::sync();
    for (int round = 0; round < rounds; ++round) {
      for (auto& method : methods) {
        const std::string id = std::to_string(++serial);
        method.samples.push_back(method.run(repo, agents, id));
        // Untimed: remove (the pool too), and let the disk catch up.
        WorktreeManager manager(repo.root(), kWorkspace);
        manager.removeAll(manager.list());
        manager.emptyPool();
        ::sync();
      }
    }
    for (const auto& method : methods) {
      std::string all;
      for (double s : method.samples) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.0f", all.empty() ? "" : ", ", s * 1000);
        all += buf;
      }
      std::printf("| %d | %s | **%.0f ms** | %s |\n", files, method.name.c_str(), median(method.samples) * 1000,
                  all.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
