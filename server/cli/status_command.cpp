// `hydra status [RACE] [--json]`: the races of this repository, newest first.

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <iostream>

#include "core/process/process.h"
#include "core/race/store.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"

namespace hydra::cli {

namespace {

void printRace(const core::RaceRecord& race, const Style& style, bool details) {
  std::string status(core::toString(race.status));
  std::string colored = race.status == core::RaceStatus::Completed ? style.green(status)
                        : race.status == core::RaceStatus::Running ? style.yellow(status)
                                                                   : style.red(status);
  std::string task = race.task.substr(0, race.task.find('\n'));
  if (task.size() > 60) task = task.substr(0, 57) + "...";
  std::cout << style.bold(race.id) << "  " << colored << "  " << core::formatTimestamp(race.createdAt) << "  \""
            << task << "\"\n";
  for (const auto& a : race.agents) {
    std::cout << "    " << a.agentId << "  " << core::toString(a.status);
    if (a.durationMs) std::cout << "  " << formatDuration(std::chrono::milliseconds(*a.durationMs));
    if (a.exitCode) std::cout << "  exit " << *a.exitCode;
    if (details) {
      std::cout << "\n      branch   " << a.branch << "\n      worktree " << a.worktree;
      if (a.commit) std::cout << "\n      commit   " << *a.commit;
      if (a.error) std::cout << "\n      error    " << *a.error;
    } else if (a.error) {
      std::cout << "  " << style.dim(*a.error);
    }
    std::cout << "\n";
  }
}

}  // namespace

int runStatus(const StatusOptions& options) {
  auto root = findRepositoryRoot(std::filesystem::current_path());
  core::RaceStore store(root);
  // A race whose hydra died shows as running until something notices: status
  // must tell the truth, so it notices, and stops the agents left behind.
  store.recoverInterrupted([](pid_t pgid) { core::killProcessGroup(pgid, std::chrono::seconds(2)); });
  Style style{stdoutIsTerminal() && !options.json};

  if (options.raceId) {
    if (!core::isValidId(*options.raceId)) throw CommandError("'" + *options.raceId + "' is not a race id", 2);
    auto race = store.load(*options.raceId);
    if (!race) throw CommandError("no race '" + *options.raceId + "' in " + store.racesDir().string(), 2);
    if (options.json) {
      std::cout << boost::json::serialize(boost::json::value_from(*race)) << "\n";
    } else {
      printRace(*race, style, true);
    }
    return 0;
  }

  auto races = store.list();
  if (options.json) {
    boost::json::array out;
    for (const auto& r : races) out.push_back(boost::json::value_from(r));
    std::cout << boost::json::serialize(out) << "\n";
    return 0;
  }
  if (races.empty()) {
    std::cout << "No races yet. Start one with: hydra race \"TASK\" --agents NAME[,NAME...]\n";
    return 0;
  }
  for (const auto& r : races) printRace(r, style, false);
  return 0;
}

}  // namespace hydra::cli
