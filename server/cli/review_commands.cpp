// `hydra scores RACE`, `hydra diff RACE AGENT [PATH]`, `hydra merge RACE [AGENT]`:
// reviewing a finished race and merging its winner.

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/git/git.h"
#include "core/race/review.h"
#include "core/race/store.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"
#include "server/cli/results.h"

namespace hydra::cli {

namespace json = boost::json;

namespace {

core::RaceRecord loadRace(const core::RaceStore& store, const std::string& raceId) {
  if (!core::isValidId(raceId)) throw CommandError("'" + raceId + "' is not a race id", 2);
  auto race = store.load(raceId);
  if (!race) throw CommandError("no race '" + raceId + "' (see `hydra status`)", 2);
  return *race;
}

std::optional<core::scoring::RaceScores> loadScores(const core::RaceStore& store, const std::string& raceId) {
  try {
    return core::scoring::readScores(store.scoresPath(raceId));
  } catch (const std::exception& e) {
    throw CommandError("the scores of race " + raceId + " are unreadable: " + e.what());
  }
}

// Review errors are the user's to fix: exit code 2.
template <class Fn>
auto reviewing(Fn fn) {
  try {
    return fn();
  } catch (const core::ReviewError& e) {
    throw CommandError(e.what(), 2);
  }
}

}  // namespace

int runScores(const ScoresOptions& options) {
  auto root = findRepositoryRoot(std::filesystem::current_path());
  core::RaceStore store(root);
  auto race = loadRace(store, options.raceId);
  auto scores = loadScores(store, options.raceId);
  if (!scores) {
    throw CommandError("race " + race.id + " has no scores" +
                           (race.status == core::RaceStatus::Running ? " yet: it is still running"
                                                                     : ": it was " + std::string(core::toString(race.status))),
                       2);
  }
  if (options.json) {
    std::cout << json::serialize(json::value_from(*scores)) << "\n";
  } else {
    printResults(std::cout, race, *scores, Style{stdoutIsTerminal()});
  }
  return 0;
}

int runDiff(const DiffOptions& options) {
  auto root = findRepositoryRoot(std::filesystem::current_path());
  core::RaceStore store(root);
  auto race = loadRace(store, options.raceId);
  const auto& agent = reviewing([&]() -> const core::AgentRecord& { return core::resultOf(race, options.agentId); });
  if (options.stat) {
    auto summary = core::merge::diffCommits(root, race.baseCommit, *agent.commit);
    for (const auto& f : summary.files) {
      std::cout << "  " << f.status << "\t" << (f.binary ? "-" : std::to_string(f.additions)) << "\t"
                << (f.binary ? "-" : std::to_string(f.deletions)) << "\t"
                << (f.oldPath.empty() || f.oldPath == f.path ? f.path : f.oldPath + " => " + f.path) << "\n";
    }
    std::cout << summary.files.size() << " file(s) changed, " << summary.additions << " insertion(s), "
              << summary.deletions << " deletion(s)\n";
    return 0;
  }
  std::optional<std::string> path;
  if (options.path) path = *options.path;
  try {
    std::cout << core::merge::unifiedPatch(root, race.baseCommit, *agent.commit, path);
  } catch (const std::invalid_argument& e) {
    throw CommandError(e.what(), 2);
  }
  return 0;
}

int runMerge(const MergeOptions& options) {
  auto root = findRepositoryRoot(std::filesystem::current_path());
  auto config = loadRepositoryConfig(root);
  core::RaceStore store(root);
  auto race = loadRace(store, options.raceId);
  auto scores = loadScores(store, options.raceId);
  std::string agentId = reviewing([&] { return core::chooseAgent(race, scores, options.agentId); });

  core::RaceMerge merged;
  try {
    merged = reviewing([&] { return core::mergeRaceAgent(root, config, race, agentId, options.dryRun, options.keep); });
  } catch (const core::merge::MergeRefused& e) {
    std::cerr << "hydra: merge refused: " << e.what() << "\n";
    for (const auto& f : e.files()) std::cerr << "  " << f << "\n";
    return 2;
  }

  Style style{stdoutIsTerminal()};
  const auto& r = merged.result;
  std::string what = options.dryRun ? "would be" : "was";
  switch (r.outcome) {
    case core::merge::MergeOutcome::UpToDate:
      std::cout << r.targetBranch << " already contains " << merged.branch << ": nothing to merge.\n";
      return 0;
    case core::merge::MergeOutcome::Conflict:
      std::cout << style.red("Conflict") << ": merging " << merged.branch << " into " << r.targetBranch
                << " conflicts in " << r.conflicts.size() << " file(s); nothing was changed.\n";
      for (const auto& f : r.conflicts) std::cout << "  " << f << "\n";
      return 1;
    case core::merge::MergeOutcome::FastForward:
    case core::merge::MergeOutcome::Merged:
      std::cout << merged.branch << " " << what << " merged into " << r.targetBranch << " ("
                << (r.outcome == core::merge::MergeOutcome::FastForward ? "fast-forward" : "merge commit") << ", "
                << r.files.size() << " file(s))";
      if (r.commit && !options.dryRun) std::cout << ": " << r.commit->substr(0, 10);
      std::cout << "\n";
      for (const auto& f : r.files) std::cout << "  " << f << "\n";
      if (merged.cleanedUp) std::cout << "Removed the race's worktrees and branches.\n";
      return 0;
  }
  return 0;
}

}  // namespace hydra::cli
