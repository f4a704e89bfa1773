// What confinement costs at the start of every agent and check: /bin/true
// started through Process plainly, under bubblewrap with the smallest layout
// (the system read-only, /dev, /proc), and under the full policy of an agent
// (core/sandbox: private /tmp, the checkout read-only, sibling worktrees and
// records hidden, the worktree and its metadata writable, its own PID
// namespace, no capabilities). Each sample is one process, from start() to
// its exit handler. Also the probe, which runs once per hydra process.

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/git/git.h"
#include "core/git/worktree.h"
#include "core/process/process.h"
#include "core/sandbox/bubblewrap.h"
#include "core/sandbox/policy.h"
#include "core/sandbox/probe.h"

namespace {

namespace fs = std::filesystem;
using namespace hydra::core;

void shell(const std::string& command) {
  const std::string quiet =
      "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null " + command + " >/dev/null 2>&1";
  if (std::system(quiet.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

// A small repository with two agent worktrees, as in a race; made once.
class BenchRepo {
 public:
  BenchRepo() {
    std::string pattern = (fs::temp_directory_path() / "hydra-sandbox-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = fs::canonical(pattern);
    const fs::path root = dir_ / "repo";
    fs::create_directories(root);
    const std::string git = "git -C '" + root.string() + "' ";
    shell(git + "init -q -b main");
    shell("echo hello > '" + (root / "README.md").string() + "'");
    shell(git + "add -A");
    shell(git + "-c user.name=b -c user.email=b@example.com commit -q -m initial");
    fs::create_directories(root / ".hydra");
    WorktreeManager worktrees(root, ".hydra-workspaces");
    agent_ = worktrees.create("agent", "HEAD", "1").path;
    worktrees.create("sibling", "HEAD", "1");
  }
  ~BenchRepo() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& agent() const { return agent_; }

 private:
  fs::path dir_;
  fs::path agent_;
};

// Runs `spec` to its end once; fails the benchmark if it did not exit 0.
void runOnce(benchmark::State& state, const ProcessSpec& spec) {
  boost::asio::io_context io;
  std::optional<ProcessResult> result;
  auto process = Process::start(
      io, spec, [](OutputStream, std::string) {}, [&](const ProcessResult& r) { result = r; });
  io.run();
  if (!result || result->exitCode != 0) {
    state.SkipWithError(result && !result->spawnError.empty() ? result->spawnError.c_str()
                                                              : "the command did not exit 0");
  }
}

ProcessSpec trueSpec() {
  ProcessSpec spec;
  spec.program = "/bin/true";
  return spec;
}

const fs::path& bwrap() {
  static const fs::path path = [] {
    const auto& probe = sandbox::cachedSandboxProbe();
    if (!probe.works()) throw std::runtime_error(probe.describe());
    return probe.bwrap;
  }();
  return path;
}

void BM_Plain(benchmark::State& state) {
  const ProcessSpec spec = trueSpec();
  for (auto _ : state) runOnce(state, spec);
}

void BM_BwrapMinimal(benchmark::State& state) {
  ProcessSpec spec;
  spec.program = bwrap().string();
  spec.args = {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true"};
  for (auto _ : state) runOnce(state, spec);
}

void BM_BwrapAgentPolicy(benchmark::State& state) {
  static hydra::core::git::LibGit2 libgit2;
  static BenchRepo repo;
  const ProcessSpec spec =
      sandbox::confine(trueSpec(), sandbox::policyForWorktree(repo.agent()), bwrap());
  for (auto _ : state) runOnce(state, spec);
}

void BM_Probe(benchmark::State& state) {
  for (auto _ : state) {
    const auto probe = sandbox::probeBubblewrap();
    if (!probe.works()) state.SkipWithError(probe.describe().c_str());
  }
}

BENCHMARK(BM_Plain)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BwrapMinimal)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BwrapAgentPolicy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Probe)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
