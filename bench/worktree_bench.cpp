// How long it takes to give eight agents a worktree each of a 10,000-file
// repository: hydra's WorktreeManager (libgit2; concurrently with createMany,
// and one after another with create) against `git worktree add` run eight
// times in a row. Only creation is timed; removal happens between samples.
//
// Every sample writes 80,000 files, so the file system decides most of the
// result. The repository goes under $TMPDIR: where creating a file is slow
// (about 1 ms on some virtual disks) the run takes many minutes, and
// TMPDIR=/dev/shm measures the libraries rather than the disk in about one.

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/git/git.h"
#include "core/git/worktree.h"

namespace {

namespace fs = std::filesystem;
using hydra::core::Worktree;
using hydra::core::WorktreeManager;

constexpr int kDirectories = 100;
constexpr int kFilesPerDirectory = 100;  // 10,000 files in all
constexpr const char* kWorkspace = ".hydra-workspaces";
const std::vector<std::string> kAgents{"claude",   "codex", "cursor", "gemini",
                                       "opencode", "aider", "cmd-1",  "cmd-2"};

void shell(const std::string& command) {
  const std::string quiet =
      "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null " + command + " >/dev/null 2>&1";
  if (std::system(quiet.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

// The repository every benchmark works on, made once and deleted at exit.
class BenchRepo {
 public:
  BenchRepo() {
    std::string pattern = (fs::temp_directory_path() / "hydra-worktree-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = fs::canonical(pattern);
    root_ = dir_ / "repo";
    for (int d = 0; d < kDirectories; ++d) {
      const fs::path sub = root_ / "src" / ("module" + std::to_string(d));
      fs::create_directories(sub);
      for (int f = 0; f < kFilesPerDirectory; ++f) {
        std::ofstream(sub / ("file" + std::to_string(f) + ".txt"))
            << "module " << d << ", file " << f << "\nsome ordinary text content\n";
      }
    }
    const std::string git = "git -C '" + root_.string() + "' ";
    shell(git + "init -q -b main");
    shell(git + "config user.name bench");
    shell(git + "config user.email bench@localhost");
    shell(git + "add -A");
    shell(git + "commit -q -m 'ten thousand files'");
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

BenchRepo* gRepo = nullptr;
int gRound = 0;  // makes every sample's worktree names unique

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_CreateManyLibgit2(benchmark::State& state) {
  WorktreeManager manager(gRepo->root(), kWorkspace);
  for (auto _ : state) {
    const std::string timestamp = std::to_string(++gRound);
    const auto start = std::chrono::steady_clock::now();
    const auto worktrees = manager.createMany(kAgents, "HEAD", timestamp);
    state.SetIterationTime(secondsSince(start));
    manager.removeAll(worktrees);
  }
}

void BM_CreateOneByOneLibgit2(benchmark::State& state) {
  WorktreeManager manager(gRepo->root(), kWorkspace);
  for (auto _ : state) {
    const std::string timestamp = std::to_string(++gRound);
    std::vector<Worktree> worktrees;
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& agent : kAgents)
      worktrees.push_back(manager.create(agent, "HEAD", timestamp));
    state.SetIterationTime(secondsSince(start));
    manager.removeAll(worktrees);
  }
}

void BM_GitCliWorktreeAddSequential(benchmark::State& state) {
  WorktreeManager manager(gRepo->root(), kWorkspace);
  manager.ensureExcluded();
  const std::string git = "git -C '" + gRepo->root().string() + "' ";
  for (auto _ : state) {
    const std::string timestamp = std::to_string(++gRound);
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& agent : kAgents) {
      const std::string name = agent + "-" + timestamp;
      shell(git + "worktree add -q -b hydra/" + name + " '" +
            (manager.workspaceDir() / name).string() + "' HEAD");
    }
    state.SetIterationTime(secondsSince(start));
    manager.removeAll(manager.list());  // hydra/* branches, so the manager cleans them up too
  }
}

// Each sample takes a second or more, so a few repetitions give a stable median.
BENCHMARK(BM_CreateManyLibgit2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(5);
BENCHMARK(BM_CreateOneByOneLibgit2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(5);
BENCHMARK(BM_GitCliWorktreeAddSequential)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(5);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  hydra::core::git::LibGit2 libgit2;
  BenchRepo repo;
  gRepo = &repo;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  gRepo = nullptr;
  return 0;
}
