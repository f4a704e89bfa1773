// Time from hydra/race to hydra/raceFinished through the real `hydra serve`,
// for 8 agents that do nothing on a 10,000-file repository, split into
// worktree setup, agents, scoring and hydra's own overhead (the rest); and
// the race's start: from sending hydra/race to receiving the last agent's
// hydra/agentStarted.
//
//   race_bench [--repetitions R] [--files N] [--agents A] [--pool]
//
// With --pool, hydra.toml keeps a warm pool of A worktrees: the first race is
// cold, its cleanup fills the pool, and before each later race the base moves
// by one commit changing 10 files (untimed); cold and warm are reported apart.
//
// The split comes from the race's events.jsonl (raceStarted, agentStarted,
// agentFinished, scoringStarted, raceFinished); the total is measured by the
// client, from sending hydra/race to receiving hydra/raceFinished.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/race_timing.h"
#include "tests/e2e/hydra_process.h"

namespace fs = std::filesystem;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using hydra::bench::epochMs;
using hydra::bench::median;

namespace {

void shell(const std::string& command) {
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hydra/race to hydra/raceFinished for no-op agents"};
  int repetitions = 5, files = 10000, agents = 8;
  bool pool = false;
  app.add_option("--repetitions", repetitions)->check(CLI::PositiveNumber);
  app.add_flag("--pool", pool, "Keep a warm pool of worktrees between races");
  app.add_option("--files", files)->check(CLI::PositiveNumber);
  app.add_option("--agents", agents)->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  fs::path repo = fs::temp_directory_path() / ("hydra-race-bench-" + std::to_string(::getpid()));
  fs::create_directories(repo);
  shell("cd " + repo.string() + " && git init -q && for d in $(seq 1 " + std::to_string((files + 99) / 100) +
        "); do mkdir -p src/d$d; for f in $(seq 1 100); do echo \"file $d/$f\" > src/d$d/f$f.txt; done; done"
        " && git add -A && git -c user.name=b -c user.email=b@b commit -qm files");
  std::ofstream(repo / "hydra.toml") << "[general]\nmax_concurrent_agents = " << agents
                                     << "\npool_size = " << (pool ? agents : 0)
                                     << "\n[agents.noop]\nadapter = \"command\"\nbinary = \"/bin/true\"\n";

  hydra::test::HydraProcess hydra({"serve", "--log-level", "warn"}, repo);
  hydra.request(0, "initialize", json::object{{"rootUri", "file://" + repo.string()}, {"capabilities", json::object{}}});
  if (!hydra.responseTo(0)) {
    std::fprintf(stderr, "no answer to initialize\n%s", hydra.stderrText().c_str());
    return 1;
  }

  std::vector<double> totals, starts, setups, runs, scorings, overheads;
  for (int i = 0; i < repetitions; ++i) {
    if (pool && i > 0) {
      // Untimed: the user moves on by one commit of 10 files.
      shell("cd " + repo.string() + " && for d in $(seq 1 10); do echo \"round " + std::to_string(i) +
            "\" > src/d$d/f1.txt; done && git -c user.name=b -c user.email=b@b commit -qam 'ten files'");
      ::sync();
    }
    json::array names;
    for (int a = 0; a < agents; ++a) names.emplace_back("noop");
    auto sent = Clock::now();
    hydra.request(100 + i, "hydra/race", json::object{{"task", "nothing"}, {"agents", names}});
    auto answer = hydra.responseTo(100 + i, std::chrono::minutes(5));
    if (!answer || !answer->contains("result")) {
      std::fprintf(stderr, "hydra/race failed\n%s", hydra.stderrText().c_str());
      return 1;
    }
    std::string raceId(answer->at("result").at("raceId").as_string());
    double start = 0;
    for (;;) {
      auto m = hydra.receive(std::chrono::minutes(5));
      if (!m) {
        std::fprintf(stderr, "no raceFinished\n");
        return 1;
      }
      const json::object* params = m->contains("params") ? m->at("params").if_object() : nullptr;
      const json::value* about = params ? params->if_contains("raceId") : nullptr;
      if (!m->contains("method") || !about || !about->is_string() || about->as_string() != raceId) continue;
      if (m->at("method").as_string() == "hydra/agentStarted") {
        start = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
      }
      if (m->at("method").as_string() == "hydra/raceFinished") break;
    }
    double total = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();

    double raceStarted = 0, firstAgent = 1e300, lastAgent = 0, scoring = 0, finished = 0;
    std::ifstream events(repo / ".hydra/races" / raceId / "events.jsonl");
    for (std::string line; std::getline(events, line);) {
      auto e = json::parse(line).as_object();
      std::string type(e.at("type").as_string());
      double t = epochMs(std::string(e.at("time").as_string()));
      if (type == "raceStarted") raceStarted = t;
      if (type == "agentStarted") firstAgent = std::min(firstAgent, t);
      if (type == "agentFinished") lastAgent = std::max(lastAgent, t);
      if (type == "scoringStarted") scoring = t;
      if (type == "raceFinished") finished = t;
    }
    double setup = firstAgent - raceStarted, run = lastAgent - firstAgent, score = finished - scoring;
    totals.push_back(total);
    starts.push_back(start);
    setups.push_back(setup);
    runs.push_back(run);
    scorings.push_back(score);
    overheads.push_back(total - setup - run - score);
    std::printf("run %d%s: start %.0f ms; total %.0f ms = worktrees %.0f + agents %.0f + scoring %.0f + hydra %.0f\n",
                i + 1, pool ? (i == 0 ? " (cold)" : " (warm)") : "", start, total, setup, run, score,
                total - setup - run - score);
    hydra.request(200 + i, "hydra/cleanup", json::object{{"raceId", raceId}});
    hydra.responseTo(200 + i, std::chrono::minutes(5));
    ::sync();  // untimed: the next run does not pay for this one's writes and deletions
  }
  if (pool && repetitions > 1) {
    // The first race was cold: the medians are of the warm ones.
    for (auto* v : {&starts, &totals, &setups, &runs, &scorings, &overheads}) v->erase(v->begin());
  }
  std::printf(
      "median of %d%s: start %.0f ms; total %.0f ms = worktrees %.0f + agents %.0f + scoring %.0f + hydra %.0f  (%d "
      "agents, %d files)\n",
      static_cast<int>(totals.size()), pool && repetitions > 1 ? " warm races" : "", median(starts), median(totals),
      median(setups), median(runs), median(scorings), median(overheads), agents, files);
  hydra.request(9999, "shutdown", nullptr);
  hydra.responseTo(9999);
  hydra.notify("exit", nullptr);
  hydra.waitExit();
  fs::remove_all(repo);
  return 0;
}
