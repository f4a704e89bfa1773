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

#include "core/eval/compare.h"
#include "core/eval/eval_set.h"
#include "core/eval/init_set.h"
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
                                                    kVersion, core::requestedExecutorKind(options.executor)});
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

int runEvalInit(const EvalInitOptions& options) {
  asio::io_context io;
  core::Workspace workspace(io, fs::current_path());
  core::eval::InitResult result;
  try {
    result = core::eval::initSet(workspace, core::eval::InitRequest{options.path, options.fromRace, options.agent,
                                                                    options.name, options.agents,
                                                                    options.verifyCommand, options.force});
  } catch (const core::WorkspaceError& e) {
    throw commandError(e);
  }
  const fs::path folder = result.path.parent_path();
  std::cout << "Wrote " << result.path.string() << " (eval set '" << result.set.name << "', "
            << result.set.cases.size() << " case)\n";
  if (result.fromRace) {
    if (result.fromRace->hidden.empty()) {
      std::cout << "  " << result.fromRace->evalCase.agentId
                << " added or changed no test file: add hidden tests beside the set\n";
    }
    for (const auto& file : result.fromRace->hidden) {
      std::cout << "  hidden: " << (folder / file.path).string() << "\n";
    }
  } else {
    std::cout << "  fill in the case's task, base and hidden files\n";
  }
  std::cout << "Run it: hydra eval run " << result.path.string() << "\n";
  return 0;
}

}  // namespace hydra::cli
