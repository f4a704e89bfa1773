// `hydra status [RACE] [--json]`: the races of this repository, newest first.

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <algorithm>
#include <iostream>

#include "core/workspace/workspace.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"
#include "server/cli/results.h"

namespace hydra::cli {

namespace {

std::string stateColored(const std::string& state, const Style& style, std::size_t width) {
  std::string cell = padRight(plainState(state), width);
  if (state == "completed") return style.green(cell);
  if (state == "notNeeded") return style.dim(cell);
  if (state == "running" || state == "scoring" || state == "queued") return style.yellow(cell);
  return style.red(cell);
}

// A collaboration's rounds under its agents: each iteration's score and the
// first line of its review.
void printIterations(const core::RaceSummary& race, const Style& style) {
  const core::CollabSettings& settings = *race.collaboration;
  std::cout << "    " << style.dim("collaboration: " + settings.builder + " builds, " + settings.reviewer + " reviews, " +
                                   std::to_string(race.iterations.size()) + " of at most " +
                                   std::to_string(settings.maxIterations) + " iteration(s)" +
                                   (race.stopReason ? "; stopped because " + collabStopText(*race.stopReason)
                                                    : std::string()))
            << "\n";
  for (const auto& value : race.iterations) {
    const boost::json::object& it = value.as_object();
    const std::string id = "builder@" + std::to_string(it.at("iteration").to_number<int>());
    std::string score = "--";
    if (const auto* total = it.if_contains("score"); total && total->is_number()) {
      score = fixed1(total->to_number<double>());
    }
    score.insert(0, score.size() < 5 ? 5 - score.size() : 0, ' ');
    std::cout << "    " << padRight("", 3) << padRight(id, 11) << score;
    if (race.winner && *race.winner == id) std::cout << "  " << style.green("best");
    if (race.merged && race.merged->agentId == id) std::cout << "  " << style.green("merged");
    if (const auto* review = it.if_contains("review"); review && review->is_string()) {
      std::string_view review_text = review->get_string();
      const std::string line = oneLine(review_text.substr(0, review_text.find('\n')), 60);
      std::cout << "  " << (it.at("approved").as_bool() ? style.green("approved: ") : std::string()) << style.dim("\"" + line + "\"");
    }
    std::cout << "\n";
  }
}

void printRace(const core::RaceSummary& race, const Style& style, bool details) {
  const std::string task = oneLine(race.task.substr(0, race.task.find('\n')), 60);
  std::cout << style.bold(race.raceId) << "  " << stateColored(race.state, style, 0) << "  " << core::formatTimestamp(race.createdAt)
            << "  \"" << task << "\"\n";
  if (race.winner) {
    std::cout << "    winner " << style.bold(*race.winner);
  } else if (race.allFailed) {
    std::cout << "    " << style.red("no winner: every agent failed");
  }
  if (race.merged) {
    std::cout << (race.winner || race.allFailed ? "  " : "    ") << style.green("merged") << " " << race.merged->agentId;
    if (!race.merged->targetBranch.empty()) std::cout << " into " << race.merged->targetBranch;
    if (race.merged->automatic) std::cout << " (auto-merge)";
    if (race.merged->commit) std::cout << " " << race.merged->commit->substr(0, 10);
  }
  if (race.winner || race.allFailed || race.merged) std::cout << "\n";

  // Ranked agents first, by rank; then the others as they started.
  std::vector<const core::AgentState*> agents;
  for (const auto& a : race.agents) agents.push_back(&a);
  std::stable_sort(agents.begin(), agents.end(), [](const core::AgentState* a, const core::AgentState* b) {
    if (a->rank && b->rank) return *a->rank < *b->rank;
    return a->rank.has_value() && !b->rank.has_value();
  });
  std::size_t idWidth = 5;
  std::size_t stateWidth = 5;
  for (const auto* a : agents) {
    idWidth = std::max(idWidth, a->agentId.size());
    stateWidth = std::max(stateWidth, plainState(a->state).size());
  }
  std::cout << "    " << style.dim(padRight("#", 3) + padRight("agent", idWidth) + "  " + padRight("state", stateWidth) +
                                   "  " + padRight("time", 7) + "  score")
            << "\n";
  for (const auto* a : agents) {
    std::string rank = a->rank ? std::to_string(*a->rank) : "-";
    std::string time = a->elapsedMs > 0 ? formatDuration(std::chrono::milliseconds(a->elapsedMs)) : "-";
    std::string score = a->total ? fixed1(*a->total) : "--";
    score.insert(0, score.size() < 5 ? 5 - score.size() : 0, ' ');
    std::cout << "    " << padRight(rank, 3) << padRight(a->agentId, idWidth) << "  "
              << stateColored(a->state, style, stateWidth) << "  " << padRight(time, 7) << "  " << score;
    if (race.winner && *race.winner == a->agentId) std::cout << "  " << style.green("winner");
    if (race.merged && race.merged->agentId == a->agentId) std::cout << "  " << style.green("merged");
    if (a->exitCode && *a->exitCode != 0) std::cout << "  exit " << *a->exitCode;
    if (details) {
      std::cout << "\n      branch   " << a->branch << "\n      worktree " << a->worktree;
      if (a->commit) std::cout << "\n      commit   " << *a->commit;
      if (a->error) std::cout << "\n      error    " << oneLine(*a->error);
    } else if (a->error) {
      std::cout << "  " << style.dim(oneLine(*a->error));
    }
    std::cout << "\n";
  }
  if (race.collaboration) printIterations(race, style);
}

}  // namespace

int runStatus(const StatusOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  // Status only reads: a race whose hydra died shows as interrupted without
  // being written so (Workspace::status); the commands that start or clean
  // up work recover it.
  std::optional<std::string> raceId;
  if (options.raceId) raceId = workspace.resolveRaceId(*options.raceId);
  auto races = workspace.status(raceId, raceId ? 1 : SIZE_MAX);
  const std::optional<core::PoolStatus> pool = workspace.worktreePool();
  if (options.json) {
    boost::json::object result{{"races", boost::json::value_from(races)}};
    if (pool) result["pool"] = boost::json::value_from(*pool);
    std::cout << jsonLine(result) << "\n";
    return 0;
  }
  Style style{stdoutIsTerminal()};
  if (races.empty()) {
    std::cout << "No races yet. Start one with: hydra race \"TASK\" --agents NAME[,NAME...]\n";
  }
  for (const auto& r : races) printRace(r, style, raceId.has_value());
  if (pool && (pool->size > 0 || pool->worktrees > 0)) {
    std::cout << style.dim("Pool: " + std::to_string(pool->worktrees) + " of " + std::to_string(pool->size) +
                           " worktree(s) kept for reuse, " + formatBytes(pool->bytes) + " on disk" +
                           (pool->worktrees > 0 ? " (hydra cleanup --pool empties it)" : ""))
              << "\n";
  }
  return 0;
}

}  // namespace hydra::cli
