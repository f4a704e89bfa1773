// A race of an honest agent beside a heavy one, through the real `hydra race`:
// how long it takes, how much memory hydra needs (its peak resident set,
// VmHWM, as waitpid reports it) and how much the repository's object store
// grows. Cases (--case):
//
//   honest         the honest agent alone (the reference)
//   files          beside an agent writing 200,000 small files (default limits: too large)
//   big-over       beside an agent writing a 5 GB file (default limits: too large)
//   big-committed  the same with max_result_bytes = 8 GiB: committed, checked and scored
//
//   heavy_race_bench --case files [--repetitions R]
//
// Each run is a fresh repository (tests/e2e/test_repo.h: calc.py with a bug,
// its tests, build and test commands) under TMPDIR. The split comes from the
// race's events.jsonl: agents (first agentStarted to last agentFinished: the
// heavy agent writing, then hydra measuring and committing its work) and
// scoring (scoringStarted to raceFinished).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "bench/race_timing.h"
#include "tests/e2e/hydra_process.h"
#include "tests/e2e/test_repo.h"

namespace fs = std::filesystem;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using hydra::bench::epochMs;
using hydra::bench::median;
using hydra::test::TestRepo;

namespace {

std::uintmax_t bytesUnder(const fs::path& dir) {
  std::uintmax_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

const std::map<std::string, std::string> kHeavyScripts = {
    {"files",
     "/usr/bin/python3 - <<'PY'\nimport os\nfor d in range(200):\n    os.makedirs(f'gen/{d}', exist_ok=True)\n"
     "for i in range(200000):\n    with open(f'gen/{i % 200}/f{i}.txt', 'w') as f:\n        f.write(f'file {i}\\n')\nPY\n"},
    {"big-over", "head -c 5G /dev/zero > big.bin\n"},
    {"big-committed", "head -c 5G /dev/zero > big.bin\n"},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a race of an honest agent beside a heavy one, through the real hydra race"};
  int repetitions = 3;
  std::string which = "files";
  app.add_option("--repetitions", repetitions)->check(CLI::PositiveNumber);
  app.add_option("--case", which)->check(CLI::IsMember({"honest", "files", "big-over", "big-committed"}));
  CLI11_PARSE(app, argc, argv);

  std::vector<double> totals, agents, scorings, rss, grown;
  for (int i = 0; i < repetitions; ++i) {
    TestRepo repo;
    std::string config = which == "big-committed" ? "[general]\nmax_result_bytes = 8589934592\n\n" : "";
    config += TestRepo::scoring() + TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()});
    std::string names = "fixer";
    if (which != "honest") {
      config += TestRepo::commandAgent("heavy", repo.script("heavy.sh", kHeavyScripts.at(which)));
      names += ",heavy";
    }
    repo.writeConfig(config);
    const std::uintmax_t objectsBefore = bytesUnder(repo.root() / ".git" / "objects");

    const auto started = Clock::now();
    hydra::test::HydraProcess hydra({"race", "Fix add() in calc.py", "--agents", names}, repo.root(),
                                    {"PYTHONDONTWRITEBYTECODE=1"});
    if (!hydra.waitExit(std::chrono::minutes(10))) {
      std::fprintf(stderr, "the race did not end\n%s", hydra.stderrText().c_str());
      return 1;
    }
    const double total = std::chrono::duration<double, std::milli>(Clock::now() - started).count();

    std::string raceId;
    for (const auto& e : fs::directory_iterator(repo.root() / ".hydra" / "races")) raceId = e.path().filename().string();
    double firstAgent = 1e300, lastAgent = 0, scoring = 0, finished = 0;
    std::ifstream events(repo.root() / ".hydra/races" / raceId / "events.jsonl");
    for (std::string line; std::getline(events, line);) {
      auto e = json::parse(line).as_object();
      const std::string type(e.at("type").as_string());
      const double t = epochMs(std::string(e.at("time").as_string()));
      if (type == "agentStarted") firstAgent = std::min(firstAgent, t);
      if (type == "agentFinished") lastAgent = std::max(lastAgent, t);
      if (type == "scoringStarted") scoring = t;
      if (type == "raceFinished") finished = t;
    }
    const double peakMiB = static_cast<double>(hydra.peakRssKiB().value_or(0)) / 1024.0;
    const double grownKiB = static_cast<double>(bytesUnder(repo.root() / ".git" / "objects") - objectsBefore) / 1024.0;
    totals.push_back(total);
    agents.push_back(lastAgent - firstAgent);
    scorings.push_back(finished - scoring);
    rss.push_back(peakMiB);
    grown.push_back(grownKiB);
    std::printf("run %d: total %.0f ms (agents %.0f, scoring %.0f), hydra peak RSS %.1f MiB, .git/objects +%.1f KiB\n",
                i + 1, total, lastAgent - firstAgent, finished - scoring, peakMiB, grownKiB);
  }
  std::printf("%s, median of %d: total %.0f ms (agents %.0f, scoring %.0f), hydra peak RSS %.1f MiB, "
              ".git/objects +%.1f KiB\n",
              which.c_str(), repetitions, median(totals), median(agents), median(scorings), median(rss), median(grown));
  return 0;
}
