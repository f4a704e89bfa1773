// `hydra eval run SET.toml [--agents a,b] [--samples N] [--pass-k 1,5] [--out R.json]
//                          [--format text|json|markdown] [--resume R.json]`
// `hydra eval compare --baseline A.json --current B.json [--threshold 0.05]
//                     [--fail-on-regression] [--format text|json|markdown]`

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/eval/compare.h"
#include "core/eval/runner.h"
#include "core/events/bus.h"
#include "core/util/timestamp.h"
#include "core/workspace/workspace.h"
#include "hydra/version.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"
#include "server/cli/live_run.h"

namespace hydra::cli {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

core::eval::Report readReport(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CommandError("cannot read the report " + path.string(), 2);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return boost::json::value_to<core::eval::Report>(boost::json::parse(text.str()));
  } catch (const std::exception& e) {
    throw CommandError(path.string() + " is not a hydra eval report: " + e.what(), 2);
  }
}

// 20261126T031500: when a run started, for its report's name.
std::string fileStamp() {
  std::string stamp = core::formatTimestamp(core::recordNow()).substr(0, 19);
  std::string out;
  for (char c : stamp) {
    if (c != '-' && c != ':') out += c;
  }
  return out;
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
  core::eval::EvalSet set;
  try {
    set = core::eval::loadEvalSet(options.set);
  } catch (const core::ConfigError& e) {
    throw CommandError(e.what(), 2);
  }
  asio::io_context io;
  core::Workspace workspace(io, fs::current_path());
  workspace.recover();

  core::eval::RunOptions run;
  run.agents = options.agents.empty() ? set.agents : options.agents;
  run.samples = options.samples.value_or(set.samples);
  run.passK = options.passK.empty() ? set.passK : options.passK;
  run.hydraVersion = kVersion;
  if (options.resume) {
    run.resumeFrom = readReport(*options.resume);
    if (run.resumeFrom->name != set.name) {
      throw CommandError(options.resume->string() + " is a report of eval set '" + run.resumeFrom->name + "', not '" +
                             set.name + "'",
                         2);
    }
  }
  run.out = options.out ? *options.out
                        : options.resume ? *options.resume
                                         : workspace.root() / ".hydra" / "evals" /
                                               (set.name + "-" + fileStamp() + ".json");
  const fs::path outPath = run.out;
  const std::string header = "Eval " + set.name + ": " + std::to_string(set.cases.size()) + " case(s) x " +
                             std::to_string(run.agents.size()) + " agent(s) x " + std::to_string(run.samples) +
                             " sample(s); the report goes to " + outPath.string();
  run.set = std::move(set);

  const bool terminal = stdoutIsTerminal() && options.format == "text";
  int solved = 0;
  double cost = 0;
  int done = 0;
  int total = 0;
  std::optional<core::eval::Report> finished;
  std::shared_ptr<core::eval::EvalRunner> runner;
  EventFollower events(io, workspace, [&](const core::RaceEvent& event) {
    if (runner) runner->handle(event);
  });
  auto progress = [&] {
    if (!terminal) return;
    std::cout << "\r\033[2K  samples " << done << "/" << total << " · solved " << solved << " · " << money(cost)
              << std::flush;
  };
  try {
    runner = core::eval::EvalRunner::start(
        workspace, std::move(run),
        [&](const core::eval::Sample& s, int doneNow, int totalNow) {
          done = doneNow;
          total = totalNow;
          solved += s.solved ? 1 : 0;
          cost += s.costUsd.value_or(0.0);
          if (options.format != "text") return;
          if (terminal) {
            progress();
          } else {
            std::cout << "sample " << doneNow << "/" << totalNow << ": " << s.caseId << " " << s.agent << " #"
                      << s.index << " " << (s.solved ? "solved" : "not solved") << " (" << s.status
                      << ", score " << fixed1(s.score) << ")\n"
                      << std::flush;
          }
        },
        [&](const core::eval::Report& report) {
          finished = report;
          io.stop();
        });
  } catch (const core::WorkspaceError& e) {
    throw commandError(e);
  }
  if (options.format == "text") std::cout << header << "\n" << std::flush;
  const int interrupts = runUntilStopped(
      io, workspace, [] { return std::optional<std::string>(); },
      [&] {
        if (runner && !runner->finished()) progress();
      },
      std::chrono::milliseconds(500), "evaluation");
  workspace.flush();
  if (!finished || interrupts > 0) {
    std::cerr << "\nhydra: evaluation interrupted; its finished samples are in " << outPath.string()
              << "; continue with --resume " << outPath.string() << "\n";
    return 130;
  }
  if (terminal) std::cout << "\n";
  if (options.format == "json") {
    std::cout << boost::json::serialize(boost::json::value_from(*finished)) << "\n";
  } else if (options.format == "markdown") {
    std::cout << core::eval::renderMarkdown(*finished);
  } else {
    std::cout << core::eval::renderText(*finished);
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
    std::cout << boost::json::serialize(boost::json::value_from(comparison)) << "\n";
  } else if (options.format == "markdown") {
    std::cout << core::eval::renderCompareMarkdown(comparison);
  } else {
    std::cout << core::eval::renderCompareText(comparison);
  }
  return options.failOnRegression && comparison.regressions > 0 ? 1 : 0;
}

}  // namespace hydra::cli
