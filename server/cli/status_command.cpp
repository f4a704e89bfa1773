// `hydra status [RACE] [--json]`: the races of this repository, newest first.

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <iostream>

#include "core/workspace/workspace.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"

namespace hydra::cli {

namespace {

void printRace(const core::RaceSummary& race, const Style& style, bool details) {
  const std::string& state = race.state;
  std::string colored = state == "completed" ? style.green(state)
                        : state == "running" || state == "scoring" ? style.yellow(state)
                                                                   : style.red(state);
  std::string task = race.task.substr(0, race.task.find('\n'));
  if (task.size() > 60) task = task.substr(0, 57) + "...";
  std::cout << style.bold(race.raceId) << "  " << colored << "  " << race.createdAt << "  \"" << task << "\"\n";
  for (const auto& a : race.agents) {
    std::cout << "    " << a.agentId << "  " << a.state;
    if (a.elapsedMs > 0) std::cout << "  " << formatDuration(std::chrono::milliseconds(a.elapsedMs));
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
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  // A race whose hydra died shows as running until something notices: status
  // must tell the truth, so it notices, and stops the agents left behind.
  workspace.recover();
  auto races = workspace.status(options.raceId, options.raceId ? 1 : SIZE_MAX);
  if (options.json) {
    std::cout << boost::json::serialize(boost::json::object{{"races", boost::json::value_from(races)}}) << "\n";
    return 0;
  }
  if (races.empty()) {
    std::cout << "No races yet. Start one with: hydra race \"TASK\" --agents NAME[,NAME...]\n";
    return 0;
  }
  Style style{stdoutIsTerminal()};
  for (const auto& r : races) printRace(r, style, options.raceId.has_value());
  return 0;
}

}  // namespace hydra::cli
