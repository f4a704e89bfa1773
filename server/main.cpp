// The hydra binary: `hydra serve` for editors, and the same engine from the terminal.

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <spdlog/spdlog.h>

#include "core/config/executor_kind.h"
#include "core/executor/job_runner.h"
#include "core/git/git.h"
#include "core/process/reaper.h"
#include "core/sandbox/net_jail.h"
#include "core/util/terminal_text.h"
#include "hydra/version.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"
#include "server/logging.h"
#include "server/server.h"

namespace {

struct GlobalOptions {
  std::string logLevel = "info";
  std::optional<std::string> logFile;
};

int serve(const GlobalOptions& global, std::size_t maxMessageBytes) {
  hydra::server::setupLogging(global.logLevel, global.logFile);
  // A client that disappears must turn into a write error, not a dead server.
  ::signal(SIGPIPE, SIG_IGN);
  hydra::server::ServerOptions options;
  options.limits.maxContentLength = maxMessageBytes;
  spdlog::info("hydra {} serving on stdio (pid {})", hydra::kVersion, ::getpid());
  hydra::server::Server server(STDIN_FILENO, STDOUT_FILENO, options);
  int code = server.run();
  spdlog::info("hydra exiting with code {}", code);
  return code;
}

}  // namespace

int runCommand(int argc, char** argv);

// Nothing hydra started outlives it: after the command, whatever is left of
// its descendants (agents' tools that escaped their runs' process groups and
// were adopted by hydra as their subreaper) is ended.
int main(int argc, char** argv) {
  int code = runCommand(argc, argv);
  if (hydra::core::isChildSubreaper()) {
    auto report = hydra::core::killAllDescendants(std::chrono::seconds(2));
    if (!report.killed.empty()) spdlog::info("ended {} leftover processes on exit", report.killed.size());
  }
  return code;
}

// `hydra net-jail [--unshare] [--proxy SOCKET] -- PROGRAM ARGS...`: what an
// agent with network = "none" or "allowlist" starts through (hidden; read
// here, not by CLI11, so that the agent's own arguments are never options).
int netJail(int argc, char** argv) {
  hydra::core::sandbox::NetJailOptions options;
  int i = 2;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--unshare") {
      options.unshare = true;
    } else if (arg == "--proxy" && i + 1 < argc) {
      options.proxySocket = std::filesystem::path(argv[++i]);
    } else {
      std::cerr << "hydra net-jail: unknown option " << hydra::core::terminalSafe(arg) << "\n";
      return 126;
    }
  }
  for (; i < argc; ++i) options.command.emplace_back(argv[i]);
  return hydra::core::sandbox::runNetJail(options);
}

int runCommand(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "net-jail") return netJail(argc, argv);
  CLI::App app{"hydra: race AI coding agents on the same task, score the results, merge the winner"};
  app.set_version_flag("--version", std::string(hydra::kName) + " " + hydra::kVersion);
  app.require_subcommand(0, 1);
  app.fallthrough();  // global options may follow the subcommand

  GlobalOptions global;
  app.add_option("--log-level", global.logLevel, "Log verbosity")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(hydra::server::kLogLevels),
                                                     std::end(hydra::server::kLogLevels))))
      ->capture_default_str();
  app.add_option("--log-file", global.logFile, "Write logs to this file instead of stderr");
  bool stdio = false;
  app.add_flag("--stdio", stdio, "Run the JSON-RPC server on stdin/stdout (same as `hydra serve`)");

  std::size_t maxMessageBytes = hydra::protocol::kDefaultMaxMessageBytes;
  CLI::App* serveCmd = app.add_subcommand("serve", "Run the JSON-RPC server on stdin/stdout for an editor");
  serveCmd->add_option("--max-message-size", maxMessageBytes, "Largest accepted message body, in bytes")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 32))
      ->capture_default_str();

  hydra::cli::RaceOptions race;
  CLI::App* raceCmd = app.add_subcommand("race", "Give TASK to several agents at once, each in its own worktree");
  raceCmd->add_option("task", race.task, "What the agents should do")->required();
  raceCmd->add_option("-a,--agents", race.agents, "Agents to race, comma-separated; a name may repeat")
      ->required()
      ->delimiter(',');
  raceCmd->add_option("--base", race.base, "Commit or ref the worktrees start from (default: HEAD)");
  raceCmd->add_flag("--json", race.json, "Print the race record as JSON at the end instead of live progress");
  const std::vector<std::string> executorKinds(hydra::core::executorKindWords().begin(), hydra::core::executorKindWords().end());
  raceCmd->add_option("--executor", race.executor, "Where agents and checks run: local or slurm (default: [executor] kind)")
      ->check(CLI::IsMember(executorKinds));

  hydra::cli::CollabOptions collab;
  CLI::App* collabCmd = app.add_subcommand(
      "collab", "Give TASK to a builder agent, have a reviewer review each result, and let the builder refine it");
  collabCmd->add_option("task", collab.task, "What the builder should do")->required();
  collabCmd->add_option("-b,--builder", collab.builder, "The agent that builds (default: [collaboration] builder)");
  collabCmd->add_option("-r,--reviewer", collab.reviewer,
                        "The agent that reviews (default: [collaboration] reviewer)");
  collabCmd->add_option("-n,--max-iterations", collab.maxIterations,
                        "Builder rounds at most (default: [collaboration] max_iterations)")
      ->check(CLI::Range(1, 1000));
  collabCmd->add_option("--until", collab.until,
                        "Stop once an iteration scores this much (default: [collaboration] until_score)")
      ->check(CLI::Range(0.0, 100.0));
  collabCmd->add_option("--base", collab.base, "Commit or ref the worktree starts from (default: HEAD)");
  collabCmd->add_flag("--json", collab.json, "Print the record (with its iterations) as JSON at the end");
  collabCmd->add_option("--executor", collab.executor, "Where agents and checks run: local or slurm (default: [executor] kind)")
      ->check(CLI::IsMember(executorKinds));

  hydra::cli::StatusOptions status;
  CLI::App* statusCmd = app.add_subcommand("status", "Show the races of this repository, or one race");
  statusCmd->add_option("race", status.raceId, "A race id");
  statusCmd->add_flag("--json", status.json, "Print JSON");

  hydra::cli::AgentsOptions agents;
  CLI::App* agentsCmd = app.add_subcommand("agents", "List the agents hydra can run, and whether they are installed");
  agentsCmd->add_flag("--json", agents.json, "Print JSON");

  hydra::cli::SandboxOptions sandbox;
  CLI::App* sandboxCmd = app.add_subcommand("sandbox", "Say whether agents run confined here (bubblewrap), and if not, why, and which limits hold them");
  sandboxCmd->add_flag("--json", sandbox.json, "Print JSON");

  hydra::cli::InitOptions init;
  CLI::App* initCmd = app.add_subcommand("init", "Write a commented hydra.toml for this repository");
  initCmd->add_flag("--force", init.force, "Overwrite an existing hydra.toml");

  hydra::cli::CleanupOptions cleanup;
  CLI::App* cleanupCmd = app.add_subcommand("cleanup", "Remove the worktrees and branches of finished races");
  cleanupCmd->add_option("race", cleanup.raceId, "Only this race");
  cleanupCmd->add_flag("--keep-branches", cleanup.keepBranches, "Remove the worktrees but keep the branches");
  cleanupCmd->add_flag("--pool", cleanup.pool, "Also empty the warm pool of worktrees kept for reuse");

  hydra::cli::ScoresOptions scores;
  CLI::App* scoresCmd = app.add_subcommand("scores", "Show a race's results table: ranks, totals, every dimension");
  scoresCmd->add_option("race", scores.words, "A race id, or latest (default)")->expected(0, 1);
  scoresCmd->add_flag("--json", scores.json, "Print JSON");

  hydra::cli::DiffOptions diff;
  CLI::App* diffCmd = app.add_subcommand("diff", "Show what an agent changed, against the race's base commit");
  diffCmd->add_option("args", diff.words, "[RACE] AGENT [PATH]: a race id or latest (default), an agent id of that race, only this file")
      ->required()
      ->expected(1, 3);
  diffCmd->add_flag("--stat", diff.stat, "List the changed files with their line counts");
  diffCmd->add_flag("--color", diff.color, "Colour the diff even when the output is not a terminal");
  diffCmd->add_flag("--no-pager", diff.noPager, "Print to the terminal instead of a pager");

  hydra::cli::EvalRunOptions evalRun;
  hydra::cli::EvalCompareOptions evalCompare;
  CLI::App* evalCmd = app.add_subcommand("eval", "Run eval sets many times per agent: pass@k, scores, regressions");
  evalCmd->require_subcommand(1);
  CLI::App* evalRunCmd = evalCmd->add_subcommand("run", "Run every case of SET x agent x sample and write the report");
  evalRunCmd->add_option("set", evalRun.set, "The eval set (TOML)")->required();
  evalRunCmd->add_option("-a,--agents", evalRun.agents, "Agents to run, comma-separated (default: the set's)")
      ->delimiter(',');
  evalRunCmd->add_option("-n,--samples", evalRun.samples, "Samples per case and agent (default: the set's)")
      ->check(CLI::Range(1, 100000));
  evalRunCmd->add_option("--pass-k", evalRun.passK, "The k of pass@k, comma-separated (default: the set's)")
      ->delimiter(',')
      ->check(CLI::Range(1, 100000));
  evalRunCmd->add_option("-o,--out", evalRun.out, "Where the report goes (default: .hydra/evals/NAME-TIME.json)");
  evalRunCmd->add_option("--format", evalRun.format, "How the report is printed at the end: text, json or markdown")
      ->capture_default_str();
  evalRunCmd->add_option("--resume", evalRun.resume, "Continue an interrupted run from its report");
  evalRunCmd->add_option("--executor", evalRun.executor, "Where samples and checks run: local or slurm (default: [executor] kind)")
      ->check(CLI::IsMember(executorKinds));
  std::filesystem::path jobDir;
  CLI::App* runJobCmd = app.add_subcommand("run-job", "Run a cluster job's command on this node (what hydra submits)");
  runJobCmd->add_option("dir", jobDir, "The job's directory")->required();
  runJobCmd->group("");
  hydra::cli::EvalInitOptions evalInit;
  CLI::App* evalInitCmd = evalCmd->add_subcommand(
      "init", "Write a commented eval set: a template, or a case from a race with its winner's tests hidden");
  evalInitCmd->add_option("path", evalInit.path, "Where the set goes (default: evals/NAME/eval.toml)");
  evalInitCmd->add_option("--from-race", evalInit.fromRace, "A race (or latest) whose task and base make the case");
  evalInitCmd->add_option("--agent", evalInit.agent, "Whose new or changed tests become hidden files (default: the winner)");
  evalInitCmd->add_option("--name", evalInit.name, "The set's name (default: from the race's task or the repository)");
  evalInitCmd->add_option("-a,--agents", evalInit.agents, "The set's agents, comma-separated (default: the race's)")
      ->delimiter(',');
  evalInitCmd->add_option("--verify-command", evalInit.verifyCommand,
                          "What decides a case is solved (default: [scoring] test_command)");
  evalInitCmd->add_flag("-f,--force", evalInit.force, "Replace an existing set and its hidden files");
  CLI::App* evalCompareCmd =
      evalCmd->add_subcommand("compare", "Compare two reports: regressions and improvements per case and agent");
  evalCompareCmd->add_option("--baseline", evalCompare.baseline, "The report to compare against")->required();
  evalCompareCmd->add_option("--current", evalCompare.current, "The new report")->required();
  evalCompareCmd->add_option("--threshold", evalCompare.threshold, "A change counts beyond this (0.05 = 5 points)")
      ->capture_default_str();
  evalCompareCmd->add_flag("--fail-on-regression", evalCompare.failOnRegression, "Exit 1 when anything regressed");
  evalCompareCmd->add_option("--format", evalCompare.format, "text, json or markdown")->capture_default_str();

  hydra::cli::LogOptions log;
  CLI::App* logCmd = app.add_subcommand("log", "Show everything an agent printed (a collaboration's builder: every round)");
  logCmd->add_option("args", log.words, "[RACE] AGENT: a race id or latest (default), an agent id of that race")
      ->required()
      ->expected(1, 2);
  logCmd->add_flag("--stderr", log.stderrStream, "What it wrote on stderr instead of stdout");
  logCmd->add_flag("--no-pager", log.noPager, "Print to the terminal instead of a pager");

  hydra::cli::MergeOptions merge;
  CLI::App* mergeCmd = app.add_subcommand("merge", "Merge an agent's result (default: the winner) into your branch");
  mergeCmd->add_option("args", merge.words, "[RACE] [AGENT]: a race id or latest (default), an agent id of that race (default: the winner)")
      ->expected(0, 2);
  mergeCmd->add_flag("--dry-run", merge.dryRun, "Report what would happen, change nothing");
  mergeCmd->add_flag("--keep", merge.keep, "Keep the race's worktrees and branches after merging");
  mergeCmd->add_flag("--force", merge.force,
                     "Merge an agent that is not the winner, failed a check or is flagged without asking");

  CLI11_PARSE(app, argc, argv);

  hydra::core::git::LibGit2 libgit2;
  try {
    if (stdio || serveCmd->parsed()) return serve(global, maxMessageBytes);
    hydra::server::setupLogging(global.logLevel == "info" ? "warn" : global.logLevel, global.logFile);
    if (raceCmd->parsed()) return hydra::cli::runRace(race);
    if (collabCmd->parsed()) return hydra::cli::runCollab(collab);
    if (statusCmd->parsed()) return hydra::cli::runStatus(status);
    if (agentsCmd->parsed()) return hydra::cli::runAgents(agents);
    if (sandboxCmd->parsed()) return hydra::cli::runSandbox(sandbox);
    if (initCmd->parsed()) return hydra::cli::runInit(init);
    if (cleanupCmd->parsed()) return hydra::cli::runCleanup(cleanup);
    if (scoresCmd->parsed()) return hydra::cli::runScores(scores);
    if (diffCmd->parsed()) return hydra::cli::runDiff(diff);
    if (mergeCmd->parsed()) return hydra::cli::runMerge(merge);
    if (logCmd->parsed()) return hydra::cli::runLog(log);
    if (evalRunCmd->parsed()) return hydra::cli::runEvalRun(evalRun);
    if (evalCompareCmd->parsed()) return hydra::cli::runEvalCompare(evalCompare);
    if (evalInitCmd->parsed()) return hydra::cli::runEvalInit(evalInit);
    if (runJobCmd->parsed()) return hydra::core::runJob(jobDir);
    std::cout << app.help();
    return 0;
  } catch (const hydra::cli::CommandError& e) {
    std::cerr << "hydra: " << hydra::core::terminalSafe(e.what()) << "\n";
    return e.code();
  } catch (const hydra::core::WorkspaceError& e) {
    std::cerr << "hydra: " << hydra::core::terminalSafe(e.what()) << "\n";
    return hydra::cli::commandError(e).code();
  } catch (const std::exception& e) {
    std::cerr << "hydra: " << hydra::core::terminalSafe(e.what()) << "\n";
    return 1;
  }
}
