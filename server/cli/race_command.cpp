// `hydra race "TASK" --agents a,b[,a] [--base REF] [--json]`

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <iostream>
#include <map>

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

// A one-line description of what an agent just did, or "" for nothing worth showing.
std::string describe(const core::AgentEvent& e) {
  switch (e.kind) {
    case core::EventKind::Text: return e.text;
    case core::EventKind::ToolCall: return e.tool + (e.detail.empty() ? "" : " " + e.detail);
    case core::EventKind::ToolResult: return e.isError ? "tool failed: " + e.detail : "";
    case core::EventKind::FileChange: return e.change + " " + e.path;
    case core::EventKind::Error: return "error: " + e.text;
    case core::EventKind::Summary: return e.text.empty() ? "" : "done: " + e.text;
    case core::EventKind::Raw: return e.text;
    case core::EventKind::Usage: return "";
  }
  return "";
}

struct AgentView {
  std::string agentId;
  std::string state = "queued";
  Clock::time_point startedAt;
  std::optional<std::chrono::milliseconds> duration;
  std::string last;
};

// Shows a race as it runs: a live block redrawn in place on a terminal, plain
// lines otherwise, nothing with --json.
class RaceView {
 public:
  RaceView(const core::RaceSummary& race, bool live, bool quiet, Style style)
      : raceId_(race.raceId), live_(live), quiet_(quiet), style_(style), start_(Clock::now()) {
    for (const auto& a : race.agents) {
      order_.push_back(a.agentId);
      agents_[a.agentId].agentId = a.agentId;
    }
  }

  void handle(const core::RaceEvent& event) {
    std::visit([this](const auto& e) { on(e); }, event.body);
  }

  void redraw() {
    if (!live_ || quiet_ || frozen_) return;
    if (drawn_ > 0) std::cout << "\033[" << drawn_ << "A";
    for (const auto& id : order_) {
      const AgentView& a = agents_.at(id);
      auto elapsed = a.duration ? *a.duration
                                : (a.state == "running" ? std::chrono::duration_cast<std::chrono::milliseconds>(
                                                              Clock::now() - a.startedAt)
                                                        : std::chrono::milliseconds(0));
      std::cout << "\033[2K  " << stateMark(a.state) << " " << pad(id, width()) << "  " << pad(a.state, 10) << " "
                << pad(formatDuration(elapsed), 7) << "  " << style_.dim(oneLine(a.last, 80)) << "\n";
    }
    drawn_ = static_cast<int>(order_.size());
    std::cout.flush();
  }

  bool finished() const { return finished_.has_value(); }
  // The race's end, with its scores and what auto-merge did.
  const std::optional<core::RaceFinished>& result() const { return finished_; }

 private:
  void on(const core::RaceStarted&) {}
  void on(const core::AgentStarted& e) {
    if (e.raceId != raceId_) return;
    auto& a = agents_[e.agentId];
    a.state = "running";
    a.startedAt = Clock::now();
    plain(e.agentId, "started in " + e.worktree);
  }
  void on(const core::AgentOutput& e) {
    if (e.raceId != raceId_) return;
    auto& a = agents_[e.agentId];
    for (const auto& ev : e.events) {
      std::string d = describe(ev);
      if (d.empty()) continue;
      a.last = d;
      plain(e.agentId, d);
    }
    if (e.events.empty() && !e.line.empty()) {
      a.last = e.line;
      plain(e.agentId, (e.stream == core::OutputStream::Stderr ? "stderr: " : "") + e.line);
    }
  }
  void on(const core::AgentFinished& e) {
    if (e.raceId != raceId_) return;
    auto& a = agents_[e.agentId];
    a.state = std::string(core::toString(e.status));
    a.duration = std::chrono::milliseconds(e.durationMs);
    if (e.error) a.last = *e.error;
    plain(e.agentId, a.state + (e.exitCode ? ", exit " + std::to_string(*e.exitCode) : "") + " after " +
                         formatDuration(*a.duration) + (e.error ? " (" + *e.error + ")" : ""));
    for (const auto& escape : e.escapes) plain(e.agentId, "escaped: " + escape);
  }
  void on(const core::ScoringStarted& e) {
    if (e.raceId != raceId_ || quiet_) return;
    if (live_) {
      redraw();
      frozen_ = true;  // every agent is done: the block stays as it is, what follows goes below it
    }
    std::cout << "Scoring: build, tests and lint in every worktree and on the base commit...\n";
    std::cout.flush();
  }
  void on(const core::RaceFinished& e) {
    if (e.raceId == raceId_) finished_ = e;
  }
  void on(const core::CheckOutput&) {}
  void on(const core::IterationScored&) {}
  void on(const core::IterationFinished&) {}
  void on(const core::OutputDropped& e) {
    if (e.raceId == raceId_) plain(e.agentId, "(" + std::to_string(e.lines) + " lines not shown; see the log)");
  }

  void plain(const std::string& agentId, const std::string& text) {
    if (live_ || quiet_) return;
    auto t = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_);
    std::string elapsed = formatDuration(t);
    std::cout << "[" << std::string(elapsed.size() < 6 ? 6 - elapsed.size() : 0, ' ') << elapsed << "] " << pad(agentId, width()) << "  " << oneLine(text, 200) << "\n";
    std::cout.flush();
  }

  std::string stateMark(const std::string& state) const {
    if (state == "completed") return style_.green("✓");
    if (state == "running") return style_.yellow("●");
    if (state == "queued") return style_.dim("○");
    return style_.red("✗");
  }
  std::size_t width() const {
    std::size_t w = 8;
    for (const auto& id : order_) w = std::max(w, id.size());
    return w;
  }
  static std::string pad(std::string s, std::size_t n) {
    if (s.size() < n) s.append(n - s.size(), ' ');
    return s;
  }

  std::string raceId_;
  bool live_;
  bool quiet_;
  Style style_;
  Clock::time_point start_;
  std::vector<std::string> order_;
  std::map<std::string, AgentView> agents_;
  int drawn_ = 0;
  bool frozen_ = false;
  std::optional<core::RaceFinished> finished_;
};

// For a race that was not scored (cancelled): what each agent left.
void printSummary(const core::RaceRecord& race, const Style& style) {
  std::cout << "\n" << style.bold("Race " + race.id) << " " << core::toString(race.status) << " — Task: \""
            << oneLine(race.task, 60) << "\"\n";
  for (const auto& a : race.agents) {
    std::string status(core::toString(a.status));
    std::string colored = a.status == core::AgentStatus::Completed ? style.green(status) : style.red(status);
    std::cout << "  " << a.agentId << std::string(a.agentId.size() < 10 ? 10 - a.agentId.size() : 0, ' ') << colored;
    if (a.durationMs) std::cout << "  " << formatDuration(std::chrono::milliseconds(*a.durationMs));
    std::cout << "  (branch " << a.branch << ")";
    if (a.error) std::cout << "  " << style.dim(oneLine(*a.error));
    std::cout << "\n";
  }
}

}  // namespace

int runRace(const RaceOptions& options) {
  asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  workspace.recover();

  Style style{stdoutIsTerminal() && !options.json};
  std::optional<core::RaceSummary> race;
  std::optional<core::WorkspaceError> refused;
  std::unique_ptr<RaceView> view;
  // Subscribed before the run starts, so nothing of it is missed.
  EventFollower events(io, workspace, [&](const core::RaceEvent& event) {
    if (!view) return;
    view->handle(event);
    if (view->finished()) io.stop();
  });

  workspace.startRace(
      core::RaceRequest{.task = options.task, .agents = options.agents, .baseRef = options.base,
                        .executor = core::requestedExecutorKind(options.executor)},
      [&](core::RaceSummary started) {
        race = started;
        view = std::make_unique<RaceView>(started, stdoutIsTerminal(), options.json, style);
        if (!options.json) {
          std::cout << style.bold("Race " + started.raceId) << ": " << started.agents.size() << " agent(s) on "
                    << started.baseCommit.substr(0, 10) << " (" << started.baseRef << ")"
                    << (started.executor == core::ExecutorKind::Local ? "" : ", as " + std::string(toString(started.executor)) + " jobs") << "\n";
          if (!started.sandboxWarning.empty()) std::cout << style.yellow("warning: " + started.sandboxWarning) << "\n";
        }
      },
      [&](core::WorkspaceError error) {
        refused = error;
        io.stop();
      });

  const int interrupts = runUntilStopped(
      io, workspace, [&]() -> std::optional<std::string> { return race ? std::optional(race->raceId) : std::nullopt; },
      [&] {
        if (view) view->redraw();
      },
      std::chrono::milliseconds(100), "race");
  if (refused) throw commandError(*refused);
  io.restart();
  io.poll();
  events.drain();
  if (view) view->redraw();
  workspace.flush();

  if (interrupts > 1) {
    std::cerr << "hydra: race " << race->raceId << " interrupted\n";
    return 130;
  }
  auto record = workspace.record(race->raceId);
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
  } else if (scores) {
    printResults(std::cout, record, *scores, style);
    if (autoMerge) {
      if (autoMerge->outcome == "fastForward" || autoMerge->outcome == "merged") {
        std::cout << style.green("Auto-merged") << " " << autoMerge->agentId << " (auto_merge = true in hydra.toml).\n";
      } else if (autoMerge->error) {
        std::cout << style.red("Auto-merge refused") << ": " << oneLine(*autoMerge->error) << "\n";
      } else {
        std::cout << "Auto-merge of " << autoMerge->agentId << ": " << autoMerge->outcome << "; nothing was changed.\n";
      }
    }
  } else {
    printSummary(record, style);
  }
  if (auto failure = workspace.recordFailure(race->raceId)) {
    // The results above are whole; what is on disk is not (a full disk, a
    // read-only .hydra): say so, naming the file, and fail.
    std::cerr << "hydra: race " << race->raceId << " could not be recorded in full: " << *failure
              << "\n  its agents' work is on their branches; the record on disk is the last one written whole\n";
    return 1;
  }
  if (scores) return scores->allFailed ? 1 : 0;
  return 1;
}

}  // namespace hydra::cli
