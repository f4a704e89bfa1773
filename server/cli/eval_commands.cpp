// `hydra eval run SET.toml [--agents a,b] [--samples N] [--pass-k 1,5] [--out R.json]
//                          [--format text|json|markdown] [--resume R.json]`
// `hydra eval compare --baseline A.json --current B.json [--threshold 0.05]
//                     [--fail-on-regression] [--format text|json|markdown]`

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "core/collab/iterations.h"
#include "core/eval/compare.h"
#include "core/eval/eval_set.h"
#include "core/eval/init.h"
#include "core/merge/diff.h"
#include "core/util/atomic_file.h"
#include "core/eval/session.h"
#include "core/events/bus.h"
#include "core/workspace/workspace.h"
#include "hydra/version.h"
#include "server/cli/commands.h"
#include "core/util/terminal_text.h"
#include "server/cli/common.h"
#include "server/cli/live_run.h"

namespace hydra::cli {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

core::eval::Report readReport(const fs::path& path) {
  try {
    return core::eval::readReportFile(path);
  } catch (const std::runtime_error& e) {
    throw CommandError(e.what(), 2);
  }
}

void checkFormat(const std::string& format) {
  if (format != "text" && format != "json" && format != "markdown") {
    throw CommandError("--format must be text, json or markdown, not '" + format + "'", 2);
  }
}

std::string money(const std::optional<double>& usd) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.4f", usd.value_or(0.0));
  return buf;
}

}  // namespace

int runEvalRun(const EvalRunOptions& options) {
  checkFormat(options.format);
  asio::io_context io;
  core::Workspace workspace(io, fs::current_path());
  workspace.recover();
  core::eval::EvalSession session(io, workspace);
  // Made before the run starts, so no sample's end is missed.
  EventFollower events(io, workspace, [&session](const core::RaceEvent& event) { session.handle(event); });

  std::shared_ptr<core::eval::EvalRunner> runner;
  try {
    // Paths on the command line are the shell's, relative to where it is.
    auto absolute = [](const std::optional<fs::path>& p) -> std::optional<fs::path> {
      if (!p) return std::nullopt;
      return fs::absolute(*p);
    };
    runner = session.prepare(core::eval::RunRequest{fs::absolute(options.set), options.agents, options.samples,
                                                    options.passK, absolute(options.out), absolute(options.resume),
                                                    kVersion, options.executor});
  } catch (const core::ConfigError& e) {
    throw CommandError(e.what(), 2);
  } catch (const core::WorkspaceError& e) {
    throw commandError(e);
  }
  const fs::path outPath = runner->options().out;

  const bool terminal = stdoutIsTerminal() && options.format == "text";
  core::eval::EvalProgress progress;
  bool finished = false;
  auto redraw = [&] {
    if (!terminal) return;
    std::cout << "\r\033[2K  samples " << progress.done << "/" << progress.total << " · solved " << progress.solved
              << " · " << money(progress.costUsd) << std::flush;
  };
  core::eval::EvalSession::Listener listener;
  listener.started = [&](const core::eval::EvalStarted& e) {
    if (options.format != "text") return;
    std::cout << "Eval " << e.name << ": " << e.cases << " case(s) x " << e.agents.size() << " agent(s) x "
              << e.samples << " sample(s); the report goes to " << e.report.string() << "\n"
              << std::flush;
  };
  listener.sample = [&](const core::eval::EvalSampleDone& e) {
    progress = e.progress;
    if (options.format != "text") return;
    if (terminal) {
      redraw();
      return;
    }
    const core::eval::Sample& s = e.sample;
    std::cout << "sample " << e.progress.done << "/" << e.progress.total << ": " << oneLine(s.caseId) << " "
              << oneLine(s.agent) << " #" << s.index << " " << (s.solved ? "solved" : "not solved") << " ("
              << oneLine(s.status) << ", score " << fixed1(s.score) << ")\n"
              << std::flush;
  };
  listener.finished = [&](const core::eval::EvalFinished&) {
    finished = true;
    io.stop();
  };
  try {
    session.start(runner, std::move(listener));
  } catch (const core::WorkspaceError& e) {
    throw commandError(e);
  }
  const int interrupts = runUntilStopped(
      io, workspace, [] { return std::optional<std::string>(); },
      [&] {
        if (!runner->finished()) redraw();
      },
      std::chrono::milliseconds(500), "evaluation");
  session.flush();
  if (!finished || interrupts > 0) {
    std::cerr << "\nhydra: evaluation interrupted; its finished samples are in " << outPath.string()
              << "; continue with --resume " << outPath.string() << "\n";
    return 130;
  }
  if (terminal) std::cout << "\n";
  const core::eval::Report& report = runner->report();
  if (options.format == "json") {
    std::cout << jsonLine(boost::json::value_from(report)) << "\n";
  } else if (options.format == "markdown") {
    std::cout << core::terminalSafe(core::eval::renderMarkdown(report));
  } else {
    std::cout << core::terminalSafe(core::eval::renderText(report));
  }
  if (auto failure = runner->recordFailure()) {
    // The results above are whole; what is on disk is not (a full disk, a
    // read-only folder): say so, naming the file, and fail.
    std::cerr << "hydra: evaluation " << core::eval::evalId(runner->options()) << " could not be recorded in full: "
              << *failure << "\n  the report on disk is the last one written whole\n";
    return 1;
  }
  return 0;
}

int runEvalCompare(const EvalCompareOptions& options) {
  checkFormat(options.format);
  if (!(options.threshold >= 0)) throw CommandError("--threshold must be a number at least 0", 2);
  core::eval::Report baseline = readReport(options.baseline);
  core::eval::Report current = readReport(options.current);
  core::eval::Comparison comparison = core::eval::compare(baseline, current, options.threshold);
  if (options.format == "json") {
    std::cout << jsonLine(boost::json::value_from(comparison)) << "\n";
  } else if (options.format == "markdown") {
    std::cout << core::terminalSafe(core::eval::renderCompareMarkdown(comparison));
  } else {
    std::cout << core::terminalSafe(core::eval::renderCompareText(comparison));
  }
  return options.failOnRegression && comparison.regressions > 0 ? 1 : 0;
}

namespace {

// The commit holding an agent's result: a race's agent, or a collaboration's
// iteration ("builder@2").
std::string resultCommit(const core::RaceRecord& race, const std::string& agentId) {
  if (auto n = core::collab::parseIterationId(agentId)) {
    const core::IterationResult* it = race.findIteration(*n);
    if (!it) throw CommandError("race " + race.id + " has no iteration " + std::to_string(*n), 2);
    if (!it->commit) throw CommandError(agentId + " of race " + race.id + " left no commit", 2);
    return *it->commit;
  }
  const core::AgentRecord* agent = race.findAgent(agentId);
  if (!agent) throw CommandError("race " + race.id + " has no agent '" + agentId + "'", 2);
  if (!agent->commit) throw CommandError(agentId + " of race " + race.id + " left no commit: nothing to take tests from", 2);
  return *agent->commit;
}

// The best-ranked eligible agent without flags, when the race has a winner:
// a flagged winner (changed protected test files, say) is no ground truth.
std::optional<std::string> bestUnflagged(const core::scoring::RaceScores& scores) {
  if (!scores.winner) return std::nullopt;
  for (const auto& a : scores.rankings) {
    if (a.eligible() && a.flags.empty()) return a.agentId;
  }
  return std::nullopt;
}

}  // namespace

int runEvalInit(const EvalInitOptions& options) {
  asio::io_context io;
  core::Workspace workspace(io, fs::current_path());
  const fs::path root = workspace.root();
  std::shared_ptr<const core::Config> config;
  try {
    config = workspace.config();
  } catch (const core::WorkspaceError& e) {
    throw commandError(e);
  }
  std::optional<std::string> verify = options.verifyCommand ? options.verifyCommand : config->scoring.testCommand;
  // A case from a race is verified in a fresh checkout of an agent's work,
  // where nothing is built yet (no build folder for ctest, say): it builds first.
  const auto& build = config->scoring.buildCommand;
  if (options.fromRace && !options.verifyCommand && verify && !verify->empty() && build && !build->empty()) {
    verify = "(" + *build + ") && (" + *verify + ")";
  }
  if (!verify || verify->empty()) {
    throw CommandError("no verify command: hydra.toml's [scoring] has no test_command; pass --verify-command CMD", 2);
  }

  core::eval::SetHeader header;
  header.agents = options.agents;
  std::optional<core::eval::RaceCase> fromRace;
  std::vector<std::pair<std::string, std::string>> hidden;  // path -> contents
  if (options.fromRace) {
    const std::string raceId = workspace.resolveRaceId(*options.fromRace);
    core::RaceRecord race;
    std::optional<std::string> winner;
    try {
      race = workspace.record(raceId);
      // The user's own pick, when they merged one, is what the case is built
      // from; else the best agent hydra would merge without asking.
      if (!options.agent) winner = race.merged ? race.merged->agentId : bestUnflagged(workspace.scores(raceId));
    } catch (const core::WorkspaceError& e) {
      if (e.kind() == core::WorkspaceError::Kind::NotScored) {
        throw CommandError("race " + raceId + " has no winner (" + e.what() + "); name an agent with --agent", 2);
      }
      throw commandError(e);
    }
    const std::string agentId = options.agent ? *options.agent : winner.value_or("");
    if (agentId.empty()) {
      throw CommandError("race " + raceId + " has no winner without flags; name an agent with --agent", 2);
    }
    const std::string commit = resultCommit(race, agentId);
    core::eval::RaceCase c;
    c.id = core::eval::slugOf(race.task);
    c.task = race.task;
    c.baseCommit = race.baseCommit;
    c.verifyCommand = *verify;
    c.raceId = race.id;
    c.agentId = agentId;
    for (const auto& file : core::merge::diffCommits(root, race.baseCommit, commit).files) {
      if (file.status == "deleted" || !core::eval::isTestPath(file.path)) continue;
      auto versions = core::merge::fileVersions(root, race.baseCommit, commit, file.path);
      if (!versions.agent) continue;
      c.hiddenFiles.push_back(file.path);
      hidden.emplace_back(file.path, *versions.agent);
    }
    if (header.agents.empty()) {
      for (const auto& a : race.agents) {
        if (a.agentId == "reviewer") continue;  // a collaboration's builder is what an eval runs
        if (std::find(header.agents.begin(), header.agents.end(), a.agent) == header.agents.end()) {
          header.agents.push_back(a.agent);
        }
      }
    }
    header.name = options.name.value_or(core::eval::slugOf(race.task));
    fromRace = std::move(c);
  } else {
    if (header.agents.empty()) {
      for (const auto& [name, agent] : config->agents) header.agents.push_back(name);
    }
    if (header.agents.empty()) {
      for (const auto& info : workspace.agents()) {
        if (info.available) header.agents.push_back(info.name);
      }
    }
    header.name = options.name.value_or(core::eval::slugOf(root.filename().string()));
  }
  if (header.name.empty() || header.name.find_first_of("/\\") != std::string::npos) {
    throw CommandError("--name must be a plain name, not '" + header.name + "'", 2);
  }

  const fs::path path = options.path ? fs::absolute(*options.path) : root / "evals" / header.name / "eval.toml";
  if (fs::exists(path) && !options.force) {
    throw CommandError(path.string() + " exists; pass --force to replace it", 2);
  }
  const fs::path folder = path.parent_path();
  fs::create_directories(folder);
  for (const auto& [relative, contents] : hidden) {
    const fs::path target = folder / relative;
    if (fs::exists(target) && !options.force) {
      throw CommandError(target.string() + " exists; pass --force to replace it", 2);
    }
    fs::create_directories(target.parent_path());
    core::writeFileAtomic(target, contents);
  }
  core::writeFileAtomic(path, fromRace ? core::eval::setFromRace(header, *fromRace)
                                       : core::eval::templateSet(header, *verify));
  // What was written reads back as an eval set, or this is hydra's bug.
  core::eval::EvalSet written = core::eval::loadEvalSet(path);

  std::cout << "Wrote " << path.string() << " (eval set '" << written.name << "', " << written.cases.size()
            << " case)\n";
  if (fromRace) {
    if (hidden.empty()) {
      std::cout << "  " << fromRace->agentId << " added or changed no test file: add hidden tests beside the set\n";
    }
    for (const auto& [relative, contents] : hidden) {
      std::cout << "  hidden: " << (folder / relative).string() << "\n";
    }
  } else {
    std::cout << "  fill in the case's task, base and hidden files\n";
  }
  std::cout << "Run it: hydra eval run " << path.string() << "\n";
  return 0;
}

}  // namespace hydra::cli
