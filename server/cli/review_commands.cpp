// `hydra scores RACE`, `hydra diff RACE AGENT [PATH]`, `hydra merge RACE [AGENT]`:
// reviewing a finished race and merging its winner.

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <iostream>

#include "core/workspace/workspace.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"
#include "server/cli/results.h"

namespace hydra::cli {

int runScores(const ScoresOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  auto race = workspace.record(options.raceId);
  auto scores = workspace.scores(options.raceId);
  if (options.json) {
    std::cout << boost::json::serialize(boost::json::value_from(scores)) << "\n";
  } else {
    printResults(std::cout, race, scores, Style{stdoutIsTerminal()});
  }
  return 0;
}

int runDiff(const DiffOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  if (options.stat) {
    auto diff = workspace.diff(options.raceId, options.agentId);
    for (const auto& f : diff.files) {
      std::cout << "  " << f.status << "\t" << (f.binary ? "-" : std::to_string(f.additions)) << "\t"
                << (f.binary ? "-" : std::to_string(f.deletions)) << "\t"
                << (f.oldPath.empty() || f.oldPath == f.path ? f.path : f.oldPath + " => " + f.path) << "\n";
    }
    std::cout << diff.files.size() << " file(s) changed, " << diff.additions << " insertion(s), " << diff.deletions
              << " deletion(s)\n";
    return 0;
  }
  std::cout << workspace.patch(options.raceId, options.agentId, options.path);
  return 0;
}

int runMerge(const MergeOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  core::MergeReport r;
  try {
    r = workspace.merge(options.raceId, options.agentId, options.dryRun, options.keep);
  } catch (const core::WorkspaceError& e) {
    if (e.kind() != core::WorkspaceError::Kind::DirtyWorkingTree && e.kind() != core::WorkspaceError::Kind::MergeRefused)
      throw;
    std::cerr << "hydra: " << e.what() << "\n";
    if (const auto* files = e.data().if_contains("files")) {
      for (const auto& f : files->as_array()) std::cerr << "  " << f.as_string().c_str() << "\n";
    }
    return 2;
  }

  Style style{stdoutIsTerminal()};
  std::string what = options.dryRun ? "would be" : "was";
  if (r.outcome == "upToDate") {
    std::cout << r.targetBranch << " already contains " << r.branch << ": nothing to merge.\n";
    return 0;
  }
  if (r.outcome == "conflict") {
    std::cout << style.red("Conflict") << ": merging " << r.branch << " into " << r.targetBranch << " conflicts in "
              << r.conflicts.size() << " file(s); nothing was changed.\n";
    for (const auto& f : r.conflicts) std::cout << "  " << f << "\n";
    return 1;
  }
  std::cout << r.branch << " " << what << " merged into " << r.targetBranch << " ("
            << (r.outcome == "fastForward" ? "fast-forward" : "merge commit") << ", " << r.files.size() << " file(s))";
  if (r.commit && !options.dryRun) std::cout << ": " << r.commit->substr(0, 10);
  std::cout << "\n";
  for (const auto& f : r.files) std::cout << "  " << f << "\n";
  if (r.cleanedUp) std::cout << "Removed the race's worktrees and branches.\n";
  return 0;
}

}  // namespace hydra::cli
