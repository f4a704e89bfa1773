// What running on Slurm costs, on the one-node cluster scripts/slurm-cluster.sh
// starts (SLURM_CONF names it):
//
//  1. An eval run of N no-op samples (one case, an agent that does nothing,
//     verify_command `true`) through the real `hydra eval run`, with
//     --executor local and --executor slurm, interleaved, R rounds: the wall
//     time of each run and per sample.
//  2. Per job: K trivial jobs one after another, interleaved: bare Slurm
//     (sbatch, then squeue every 20 ms until the job has left the queue),
//     and the same `true` through hydra's Slurm executor (from start() to its
//     exit handler). hydra's own overhead per job is the difference of the
//     medians. A local Process running `true` is listed for scale.
//
//   executor_bench [--samples 100] [--rounds 3] [--jobs 20] [--dir DIR]
//
// DIR (default: a new directory under TMPDIR or /tmp) should be on the disk
// being measured, not a RAM file system.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "core/executor/command.h"
#include "core/executor/slurm_executor.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace hydra::core;

namespace {

void shell(const std::string& command) {
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A repository with an agent that does nothing and an eval set of one case.
fs::path makeEvalRepo(const fs::path& dir, int samples) {
  fs::path repo = dir / "repo";
  fs::create_directories(repo / "evals");
  std::ofstream(repo / "README.md") << "# nothing to do\n";
  std::ofstream(repo / ".gitignore") << ".hydra/\n.hydra-workspaces/\n";
  std::ofstream(repo / "hydra.toml") << "[agents.noop]\nadapter = \"command\"\nbinary = \"true\"\n\n"
                                        "[executor]\nslurm_conf = \"" << std::getenv("SLURM_CONF") << "\"\n";
  std::ofstream(repo / "evals" / "noop.toml")
      << "[eval]\nname = \"noop\"\nagents = [\"noop\"]\nsamples = " << samples
      << "\nmax_concurrent_agents = 2\n\n[[cases]]\nid = \"nothing\"\ntask = \"Do nothing\"\nverify_command = \"true\"\n";
  shell("cd '" + repo.string() + "' && git init -q -b main && git add -A && "
        "git -c user.name=bench -c user.email=bench@example.com commit -q -m init");
  return repo;
}

double evalRun(const fs::path& repo, const std::string& executor, int round) {
  const std::string out = (repo.parent_path() / ("report-" + executor + "-" + std::to_string(round) + ".json")).string();
  auto start = Clock::now();
  shell("cd '" + repo.string() + "' && '" HYDRA_BINARY "' eval run evals/noop.toml --executor " + executor +
        " --out '" + out + "' > /dev/null");
  double seconds = secondsSince(start);
  // Every sample ran to its verification: a run that failed early would be quick for nothing.
  shell("test \"$(grep -o '\"status\":\"[a-zA-Z]*\"' '" + out + "' | sort -u)\" = '\"status\":\"completed\"' || "
        "{ echo 'not every sample completed:' >&2; grep -o '\"status\":\"[a-zA-Z]*\"' '" + out + "' | sort | uniq -c >&2; exit 1; }");
  shell("cd '" + repo.string() + "' && '" HYDRA_BINARY "' cleanup > /dev/null");
  return seconds;
}

// sbatch, then squeue until the job has left the queue's live states.
double bareJob() {
  auto start = Clock::now();
  CommandOutput submitted = runCommandSync("sbatch", {"--parsable", "--output=/dev/null", "--wrap=true"}, {},
                                           std::chrono::seconds(60));
  if (!submitted.succeeded()) throw std::runtime_error("sbatch: " + submitted.failure());
  std::string id = submitted.out.substr(0, submitted.out.find_first_of(";\n"));
  while (true) {
    CommandOutput queue = runCommandSync(
        "squeue", {"--noheader", "--jobs=" + id, "--states=PENDING,RUNNING,CONFIGURING,COMPLETING", "--format=%T"}, {},
        std::chrono::seconds(60));
    if (queue.succeeded() && queue.out.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return secondsSince(start);
}

double executorJob(Executor& executor, const fs::path& cwd) {
  boost::asio::io_context io;
  ProcessSpec spec;
  spec.program = "/bin/true";
  spec.cwd = cwd;
  spec.timeout = std::chrono::seconds(60);
  std::optional<ProcessResult> result;
  double seconds = 0;
  auto start = Clock::now();
  auto running = executor.start(
      io, spec, nullptr,
      [&](const ProcessResult& r) {
        seconds = secondsSince(start);  // not io.run()'s end: the queue poll may still be winding down
        result = r;
      },
      JobLabel{"bench", "true", "agent"});
  io.run();
  if (!result || result->exitCode != 0) {
    throw std::runtime_error("the job failed: " + (result ? result->spawnError : std::string("no result")));
  }
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("The Slurm executor against the local one: an eval run of no-op samples, and the cost per job");
  int samples = 100, rounds = 3, jobs = 20;
  std::string dirOption;
  app.add_option("--samples", samples, "No-op samples in the eval run")->capture_default_str();
  app.add_option("--rounds", rounds, "Eval runs per executor, interleaved")->capture_default_str();
  app.add_option("--jobs", jobs, "Trivial jobs per way of running them, interleaved")->capture_default_str();
  app.add_option("--dir", dirOption, "Where the repository and the jobs go (default: a new directory under TMPDIR)");
  CLI11_PARSE(app, argc, argv);
  if (!std::getenv("SLURM_CONF")) {
    std::cerr << "executor_bench: SLURM_CONF is not set: start the cluster with scripts/slurm-cluster.sh start\n";
    return 2;
  }

  fs::path dir;
  if (dirOption.empty()) {
    std::string pattern = (fs::temp_directory_path() / "hydra-executor-bench-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir = pattern;
  } else {
    dir = fs::absolute(dirOption);
    fs::create_directories(dir);
  }

  // --- per job ---------------------------------------------------------------
  SlurmSettings settings;
  settings.runner = HYDRA_BINARY;
  settings.jobsDir = dir / "jobs";
  auto slurm = SlurmExecutor::create(settings);
  LocalExecutor local;
  std::vector<double> bare, viaHydra, here;
  bareJob();  // the first job of a cold controller is not typical
  for (int i = 0; i < jobs; ++i) {
    bare.push_back(bareJob());
    viaHydra.push_back(executorJob(*slurm, dir));
    here.push_back(executorJob(local, dir));
  }
  std::printf("per job, median of %d (seconds):\n", jobs);
  std::printf("  bare Slurm (sbatch, squeue until gone)   %.3f\n", median(bare));
  std::printf("  hydra's Slurm executor (start to exit)   %.3f\n", median(viaHydra));
  std::printf("  hydra's overhead per job                 %.3f\n", median(viaHydra) - median(bare));
  std::printf("  local executor, for scale                %.3f\n", median(here));

  // --- the eval run ----------------------------------------------------------
  fs::path repo = makeEvalRepo(dir, samples);
  std::vector<double> localRuns, slurmRuns;
  for (int r = 0; r < rounds; ++r) {
    localRuns.push_back(evalRun(repo, "local", r));
    shell("sync");
    slurmRuns.push_back(evalRun(repo, "slurm", r));
    shell("sync");
    std::printf("round %d: local %.1f s, slurm %.1f s\n", r + 1, localRuns.back(), slurmRuns.back());
  }
  std::printf("eval run of %d no-op samples, median of %d (seconds):\n", samples, rounds);
  std::printf("  local   %.1f total, %.3f per sample\n", median(localRuns), median(localRuns) / samples);
  std::printf("  slurm   %.1f total, %.3f per sample\n", median(slurmRuns), median(slurmRuns) / samples);
  if (dirOption.empty()) fs::remove_all(dir);
  return 0;
}
