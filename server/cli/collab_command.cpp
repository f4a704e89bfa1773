// `hydra collab "TASK" [--builder A] [--reviewer B] [--max-iterations N]
//  [--until SCORE] [--base REF] [--json]`

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <iostream>

#include "core/collab/iterations.h"
#include "core/collab/prompts.h"
#include "core/events/bus.h"
#include "core/workspace/workspace.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"
#include "server/cli/live_run.h"
#include "server/cli/results.h"

namespace hydra::cli {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// What an agent event says, in a few words; "" for nothing worth showing.
std::string activity(const core::AgentEvent& e) {
  switch (e.kind) {
    case core::EventKind::Text: return e.text;
    case core::EventKind::ToolCall: return e.tool + (e.detail.empty() ? "" : " " + e.detail);
    case core::EventKind::FileChange: return e.change + " " + e.path;
    case core::EventKind::Error: return "error: " + e.text;
    default: return "";
  }
}

// Shows a collaboration as it runs: each phase on a line of its own, and on a
// terminal one status line below, redrawn, with what the agent does now.
class CollabView {
 public:
  CollabView(const core::RaceSummary& started, bool terminal, bool quiet, Style style)
      : raceId_(started.raceId), terminal_(terminal), quiet_(quiet), style_(style), start_(Clock::now()) {
    if (started.collaboration) settings_ = *started.collaboration;
  }

  void handle(const core::RaceEvent& event) {
    std::visit([this](const auto& e) { on(e); }, event.body);
  }

  void redraw() {
    if (!terminal_ || quiet_ || phase_.empty() || finished_) return;
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - phaseStart_);
    std::cout << "\r\033[2K  " << style_.yellow("●") << " " << phase_ << " " << formatDuration(elapsed) << "  "
              << style_.dim(oneLine(last_, 70)) << std::flush;
    statusShown_ = true;
  }

  bool finished() const { return finished_.has_value(); }
  const std::optional<core::RaceFinished>& result() const { return finished_; }

 private:
  void line(const std::string& text) {
    if (quiet_) return;
    if (statusShown_) std::cout << "\r\033[2K";
    statusShown_ = false;
    auto t = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_);
    std::string elapsed = formatDuration(t);
    std::cout << "[" << std::string(elapsed.size() < 6 ? 6 - elapsed.size() : 0, ' ') << elapsed << "] " << text
              << "\n"
              << std::flush;
  }

  void on(const core::RaceStarted&) {}
  void on(const core::AgentStarted& e) {
    if (e.raceId != raceId_) return;
    const int n = e.phase.iteration.value_or(1);
    const bool reviewer = e.agentId == core::collab::kReviewer;
    const std::string& agent = reviewer ? settings_.reviewer : settings_.builder;
    phase_ = "iteration " + std::to_string(n) + ": " + agent + " " +
             (reviewer ? "reviewing" : e.phase.phase == "refine" ? "refining" : "building");
    phaseStart_ = Clock::now();
    last_.clear();
    line(phase_ + (e.resumed ? " (continuing its session)" : "") + "...");
  }
  void on(const core::AgentOutput& e) {
    if (e.raceId != raceId_) return;
    for (const auto& ev : e.events) {
      std::string d = activity(ev);
      if (d.empty()) continue;
      last_ = d;
      if (!terminal_) line("  " + e.agentId + ": " + oneLine(d, 160));
    }
  }
  void on(const core::AgentFinished& e) {
    if (e.raceId != raceId_) return;
    std::string text = "  " + e.agentId + " " + std::string(core::toString(e.status)) + " after " +
                       formatDuration(std::chrono::milliseconds(e.durationMs));
    if (e.error) text += " (" + oneLine(*e.error, 100) + ")";
    phase_.clear();
    line(e.status == core::AgentStatus::Completed ? text : style_.red(text));
  }
  void on(const core::ScoringStarted& e) {
    if (e.raceId != raceId_ || !e.iteration) return;
    line("iteration " + std::to_string(*e.iteration) + ": scoring (build, tests, lint)...");
  }
  void on(const core::IterationFinished& e) {
    if (e.raceId != raceId_) return;
    const core::IterationResult& it = e.result;
    std::string text = "iteration " + std::to_string(it.iteration) + ": ";
    text += it.score ? "score " + colorScore(style_, it.score->total, fixed1(it.score->total)) : "not scored";
    if (it.review) text += "; review: \"" + oneLine(core::collab::firstLine(*it.review, 80)) + "\"";
    if (it.approved) text += " " + style_.green("(approved)");
    line(text);
    if (!e.refineNext && it.stopReason) line("stopping: " + collabStopText(*it.stopReason));
  }
  void on(const core::RaceFinished& e) {
    if (e.raceId == raceId_) finished_ = e;
  }
  void on(const core::CheckOutput&) {}
  void on(const core::IterationScored&) {}
  void on(const core::OutputDropped&) {}

  std::string raceId_;
  bool terminal_;
  bool quiet_;
  Style style_;
  Clock::time_point start_;
  core::CollabSettings settings_;
  std::string phase_;
  Clock::time_point phaseStart_;
  std::string last_;
  bool statusShown_ = false;
  std::optional<core::RaceFinished> finished_;
};

}  // namespace

void printIterations(std::ostream& out, const core::RaceRecord& race, const std::optional<std::string>& winner,
                     const Style& style) {
  const core::CollabSettings settings = race.collaboration.value_or(core::CollabSettings{});
  out << "\n"
      << style.bold("Collaboration " + race.id) << " " << core::toString(race.status) << ": " << settings.builder
      << " built, " << settings.reviewer << " reviewed";
  if (race.stopReason) out << "; stopped because " << collabStopText(*race.stopReason);
  out << "\n\n";
  if (race.iterations.empty()) {
    out << "  No iteration finished.\n";
    return;
  }
  auto part = [](const std::optional<double>& x) { return x ? fixed1(*x) : std::string("n/a"); };
  out << "  " << padRight("", 2) << padRight("ITERATION", 11) << padRight("SCORE", 7) << padRight("BUILD", 7)
      << padRight("TESTS", 7) << padRight("LINT", 7) << padRight("DIFF", 7) << padRight("SPEED", 7)
      << padRight("BUILDER", 11) << "REVIEW\n";
  for (const auto& it : race.iterations) {
    const std::string id = core::collab::iterationId(it.iteration);
    const bool best = winner && *winner == id;
    std::string score = it.score ? fixed1(it.score->total) : "--";
    out << "  " << (best ? style.green("▶ ") : "  ") << padRight(id, 11)
        << (it.score ? colorScore(style, it.score->total, padRight(score, 7)) : padRight(score, 7));
    if (it.score) {
      const auto& b = it.score->breakdown;
      out << padRight(part(b.build), 7) << padRight(part(b.tests), 7) << padRight(part(b.lint), 7)
          << padRight(part(b.diffSize), 7) << padRight(part(b.speed), 7);
    } else {
      out << std::string(35, ' ');
    }
    out << padRight(std::string(core::toString(it.builderStatus)) + (it.resumed ? "*" : ""), 11);
    if (it.review) {
      out << (it.approved ? style.green("✓ ") : "") << "\"" << oneLine(core::collab::firstLine(*it.review, 60)) << "\"";
    } else if (it.reviewStatus) {
      out << style.red("review " + std::string(core::toString(*it.reviewStatus)));
    } else {
      out << style.dim("(not reviewed)");
    }
    out << "\n";
  }
  if (std::any_of(race.iterations.begin(), race.iterations.end(), [](const auto& it) { return it.resumed; })) {
    out << style.dim("  * the builder continued its CLI session") << "\n";
  }
  out << "\n";
  if (winner) {
    out << "Best: " << style.bold(*winner) << ". ";
    if (!race.merged) out << "Merge it: hydra merge " << race.id << " " << *winner;
    out << "\n";
    out << style.dim("Any iteration: hydra diff " + race.id + " builder@N, hydra merge " + race.id + " builder@N") << "\n";
  }
  if (race.merged) out << style.green("Merged") << ": " << race.merged->agentId << "\n";
}

int runCollab(const CollabOptions& options) {
  asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  workspace.recover();

  Style style{stdoutIsTerminal() && !options.json};
  std::optional<core::RaceSummary> collab;
  std::optional<core::WorkspaceError> refused;
  std::unique_ptr<CollabView> view;
  // Subscribed before the run starts, so nothing of it is missed.
  EventFollower events(io, workspace, [&](const core::RaceEvent& event) {
    if (!view) return;
    view->handle(event);
    if (view->finished()) io.stop();
  });

  workspace.startCollab(
      core::CollabRequest{options.task, options.builder, options.reviewer, options.maxIterations, options.until,
                          options.base, core::requestedExecutorKind(options.executor)},
      [&](core::RaceSummary started) {
        collab = started;
        view = std::make_unique<CollabView>(started, stdoutIsTerminal(), options.json, style);
        if (!options.json) {
          const core::CollabSettings s = started.collaboration.value_or(core::CollabSettings{});
          std::cout << style.bold("Collaboration " + started.raceId) << ": " << s.builder << " builds, " << s.reviewer
                    << " reviews; up to " << s.maxIterations << " iteration(s), until "
                    << (s.reviewEveryRound ? "" : fixed1(s.untilScore) + " or ") << "\"" << s.approveMarker
                    << "\"" << (s.reviewEveryRound ? " (every round reviewed)" : "") << "; on " << started.baseCommit.substr(0, 10) << " ("
                    << started.baseRef << ")" << (started.executor == core::ExecutorKind::Local ? "" : ", as " + std::string(toString(started.executor)) + " jobs")
                    << "\n";
          if (!started.sandboxWarning.empty()) std::cout << style.yellow("warning: " + started.sandboxWarning) << "\n";
        }
      },
      [&](core::WorkspaceError error) {
        refused = error;
        io.stop();
      });

  const int interrupts = runUntilStopped(
      io, workspace, [&]() -> std::optional<std::string> { return collab ? std::optional(collab->raceId) : std::nullopt; },
      [&] {
        if (view) view->redraw();
      },
      std::chrono::milliseconds(200), "collaboration");
  if (refused) throw commandError(*refused);
  io.restart();
  io.poll();
  events.drain();
  workspace.flush();

  if (interrupts > 1) {
    std::cerr << "hydra: collaboration " << collab->raceId << " interrupted\n";
    return 130;
  }
  auto record = workspace.record(collab->raceId);
  std::optional<core::scoring::RaceScores> scores;
  std::optional<core::AutoMergeOutcome> autoMerge;
  if (view->result()) {
    scores = view->result()->scores;
    autoMerge = view->result()->autoMerge;
  }
  if (options.json) {
    boost::json::object out{{"race", boost::json::value_from(record)}};
    out["scores"] = scores ? boost::json::value_from(*scores) : boost::json::value(nullptr);
    std::cout << jsonLine(out) << "\n";
  } else {
    printIterations(std::cout, record, scores ? scores->winner : std::nullopt, style);
    if (autoMerge) {
      if (core::isMergedOutcome(autoMerge->outcome)) {
        std::cout << style.green("Auto-merged") << " " << autoMerge->agentId << " (auto_merge = true in hydra.toml).\n";
      } else if (autoMerge->error) {
        std::cout << style.red("Auto-merge refused") << ": " << oneLine(*autoMerge->error) << "\n";
      } else {
        std::cout << "Auto-merge of " << autoMerge->agentId << ": " << autoMerge->outcome << "; nothing was changed.\n";
      }
    }
  }
  if (record.status == core::RaceStatus::Cancelled) return 130;
  if (auto failure = workspace.recordFailure(collab->raceId)) {
    // As for a race: the results above are whole, the record on disk is not.
    std::cerr << "hydra: collaboration " << collab->raceId << " could not be recorded in full: " << *failure
              << "\n  its builder's work is on its branch; the record on disk is the last one written whole\n";
    return 1;
  }
  return scores && scores->winner ? 0 : 1;
}

}  // namespace hydra::cli
