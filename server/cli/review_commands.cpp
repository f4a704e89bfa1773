// `hydra scores [RACE]`, `hydra diff [RACE] AGENT [PATH]`, `hydra merge [RACE] [AGENT]`:
// reviewing a finished race and merging its winner. RACE defaults to the
// newest race (`latest`).

#include <signal.h>
#include <stdio.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "core/process/process.h"
#include "core/records/store.h"
#include "core/util/terminal_text.h"
#include "core/workspace/workspace.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"
#include "server/cli/live_run.h"
#include "server/cli/results.h"

namespace hydra::cli {

namespace {

// Splits [RACE] REST...: the first word is the race when it is `latest`,
// names a race here or is the start of exactly one race's id (as git takes
// the start of a commit id); when there are more words than REST takes, it
// is the race whatever it is (an unknown or ambiguous one is reported).
// Otherwise the race is the newest and every word is REST.
std::pair<std::string, std::vector<std::string>> raceAndRest(core::Workspace& workspace,
                                                             const std::vector<std::string>& words,
                                                             std::size_t maxRest) {
  if (!words.empty()) {
    const std::string& first = words.front();
    const std::vector<std::string> rest(words.begin() + 1, words.end());
    if (words.size() > maxRest) return {workspace.resolveRaceId(first), rest};
    try {
      // An agent's name is taken for a race only when it fits one race and no other.
      return {workspace.resolveRaceId(first), rest};
    } catch (const core::WorkspaceError& e) {
      // The start of several races' ids is told as such; anything else is
      // an agent of the newest race (below).
      if (e.data().contains("candidates")) throw;
    }
  }
  return {latestRace(workspace), words};
}

// Where long output goes on a terminal: the pager git would use, with the
// same defaults (less -FRX: quit when it fits, keep colours, leave the text on
// screen). HYDRA_PAGER, then PAGER; "cat" or empty means none.
class Pager {
 public:
  explicit Pager(bool wanted) {
    if (!wanted) return;
    const char* chosen = std::getenv("HYDRA_PAGER");
    if (!chosen) chosen = std::getenv("PAGER");
    std::string command = chosen ? chosen : "less";
    if (command.empty() || command == "cat") return;
    // A pager that is not installed would swallow the diff: print it instead.
    const std::string program = command.substr(0, command.find_first_of(" \t"));
    const char* path = std::getenv("PATH");
    if (!core::findExecutable(program, path ? path : "")) {
      if (chosen) std::cerr << "hydra: pager '" << program << "' not found; printing the diff instead\n";
      return;
    }
    if (!std::getenv("LESS")) ::setenv("LESS", "FRX", 1);
    // A pager the user quits early closes the pipe: that is not an error.
    ::signal(SIGPIPE, SIG_IGN);
    pipe_ = ::popen(command.c_str(), "w");
  }
  ~Pager() {
    if (pipe_) ::pclose(pipe_);
  }
  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;

  void write(const std::string& text) {
    if (!pipe_) {
      std::cout << text << std::flush;
      return;
    }
    std::fwrite(text.data(), 1, text.size(), pipe_);
  }

 private:
  FILE* pipe_ = nullptr;
};

// A unified diff with git's colours: headers bold, hunk headers cyan, added
// lines green, removed lines red. What the agent wrote (file names, content)
// is made safe first: the pager gets no sequence but hydra's colours.
std::string colorPatch(const std::string& unsafe) {
  const std::string patch = core::terminalSafe(unsafe);
  std::ostringstream out;
  std::istringstream in(patch);
  std::string line;
  bool inHeader = false;
  while (std::getline(in, line)) {
    const char* code = nullptr;
    if (line.rfind("diff --git ", 0) == 0) {
      inHeader = true;
      code = "1";
    } else if (line.rfind("@@", 0) == 0) {
      inHeader = false;
      code = "36";
    } else if (inHeader) {
      code = "1";
    } else if (!line.empty() && line[0] == '+') {
      code = "32";
    } else if (!line.empty() && line[0] == '-') {
      code = "31";
    }
    if (code) {
      out << "\033[" << code << "m" << line << "\033[0m\n";
    } else {
      out << line << "\n";
    }
  }
  return out.str();
}

}  // namespace

int runScores(const ScoresOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  const std::string raceId = raceAndRest(workspace, options.words, 0).first;
  auto race = workspace.record(raceId);
  auto scores = workspace.scores(raceId);
  if (options.json) {
    std::cout << jsonLine(boost::json::value_from(scores)) << "\n";
  } else {
    const Style style{stdoutIsTerminal()};
    if (race.isCollab()) printIterations(std::cout, race, scores.winner, style);
    printResults(std::cout, race, scores, style);
  }
  return 0;
}

int runDiff(const DiffOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  auto [raceId, rest] = raceAndRest(workspace, options.words, 2);
  if (rest.empty()) throw CommandError("name the agent whose changes to show: hydra diff [RACE] AGENT [PATH]", 2);
  if (rest.size() > 2) throw CommandError("too many arguments: hydra diff [RACE] AGENT [PATH]", 2);
  const std::string& agentId = rest[0];
  std::optional<std::string> path;
  if (rest.size() == 2) path = rest[1];
  const bool terminal = stdoutIsTerminal();
  Style style{terminal || options.color};
  if (options.stat) {
    auto diff = workspace.diff(raceId, agentId);
    // Columns as git's --numstat lines them up: status, +, -, path.
    std::size_t addWidth = 1;
    std::size_t delWidth = 1;
    for (const auto& f : diff.files) {
      addWidth = std::max(addWidth, std::to_string(f.additions).size() + 1);
      delWidth = std::max(delWidth, std::to_string(f.deletions).size() + 1);
    }
    for (const auto& f : diff.files) {
      std::string add = f.binary ? "-" : "+" + std::to_string(f.additions);
      std::string del = f.binary ? "-" : "-" + std::to_string(f.deletions);
      std::string shownPath = oneLine(f.oldPath.empty() || f.oldPath == f.path ? f.path : f.oldPath + " => " + f.path);
      std::cout << "  " << std::left << std::setw(8) << f.status << " " << std::right
                << style.green(std::string(addWidth - std::min(addWidth, add.size()), ' ') + add) << " "
                << style.red(std::string(delWidth - std::min(delWidth, del.size()), ' ') + del) << "  " << shownPath
                << "\n";
    }
    std::cout << diff.files.size() << " file(s) changed, " << diff.additions << " insertion(s), " << diff.deletions
              << " deletion(s)\n";
    return 0;
  }
  std::string patch = workspace.patch(raceId, agentId, path);
  Pager pager(terminal && !options.noPager);
  pager.write(style.enabled ? colorPatch(patch) : core::terminalSafe(patch));
  return 0;
}

int runLog(const LogOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  auto [raceId, rest] = raceAndRest(workspace, options.words, 1);
  if (rest.empty()) throw CommandError("name the agent whose output to show: hydra log [RACE] AGENT", 2);
  if (rest.size() > 1) throw CommandError("too many arguments: hydra log [RACE] AGENT", 2);
  const auto stream = options.stderrStream ? core::OutputStream::Stderr : core::OutputStream::Stdout;
  // The first page before the pager starts: an unknown agent is an error, not an empty pager.
  core::LogText page = workspace.log(raceId, rest[0], stream, 0, core::Workspace::kMaxLogRead);
  Pager pager(stdoutIsTerminal() && !options.noPager);
  // The agent's own words: whatever sequences it printed show as text.
  std::string cut;  // a character split between two pages
  while (true) {
    pager.write(core::terminalSafe(page.data, cut));
    if (page.nextOffset >= page.totalSize || page.nextOffset <= page.offset) break;
    page = workspace.log(raceId, rest[0], stream, page.nextOffset, core::Workspace::kMaxLogRead);
  }
  if (!cut.empty()) pager.write(core::terminalSafe("", cut));
  return 0;
}

namespace {

// The refusal of a merge that is not a safe pick (not the winner, a failed
// check, flagged), which `force` overrides.
bool needsForce(const core::WorkspaceError& e) {
  if (e.kind() != core::WorkspaceError::Kind::MergeRefused) return false;
  const auto* reason = e.data().if_contains("reason");
  return reason && reason->is_string() && reason->as_string() == "needsForce";
}

}  // namespace

int runMerge(const MergeOptions& options) {
  boost::asio::io_context io;
  core::Workspace workspace(io, std::filesystem::current_path());
  auto [raceId, rest] = raceAndRest(workspace, options.words, 1);
  if (rest.size() > 1) throw CommandError("too many arguments: hydra merge [RACE] [AGENT]", 2);
  std::optional<std::string> agentId;
  if (!rest.empty()) agentId = rest[0];
  core::MergeReport r;
  bool force = options.force;
  try {
    try {
      r = workspace.merge(raceId, agentId, options.dryRun, options.keep, force);
    } catch (const core::WorkspaceError& e) {
      if (!needsForce(e)) throw;
      const std::string agent(e.data().at("agentId").as_string());
      std::cerr << "hydra: " << agent << " is not a safe pick:\n";
      for (const auto& c : e.data().at("concerns").as_array()) std::cerr << "  - " << oneLine(c.as_string()) << "\n";
      // The editors ask before such a merge; so does the terminal. Without one
      // to answer on, nothing is merged unless --force said so beforehand.
      if (!stdinIsTerminal()) {
        std::cerr << "Nothing was merged: pass --force to merge " << agent << " anyway.\n";
        return 2;
      }
      std::cerr << "Merge " << agent << " anyway? [y/N] " << std::flush;
      std::string answer;
      std::getline(std::cin, answer);
      if (answer != "y" && answer != "Y" && answer != "yes") {
        std::cerr << "Nothing was merged.\n";
        return 1;
      }
      force = true;
      r = workspace.merge(raceId, agentId, options.dryRun, options.keep, force);
    }
  } catch (const core::WorkspaceError& e) {
    if (e.kind() != core::WorkspaceError::Kind::DirtyWorkingTree && e.kind() != core::WorkspaceError::Kind::MergeRefused)
      throw;
    std::cerr << "hydra: " << core::terminalSafe(e.what()) << "\n";
    if (const auto* files = e.data().if_contains("files")) {
      for (const auto& f : files->as_array()) std::cerr << "  " << oneLine(f.as_string()) << "\n";
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
    for (const auto& f : r.conflicts) std::cout << "  " << oneLine(f) << "\n";
    return 1;
  }
  std::cout << r.branch << " " << what << " merged into " << r.targetBranch << " ("
            << (r.outcome == "fastForward" ? "fast-forward" : "merge commit") << ", " << r.files.size() << " file(s))";
  if (r.commit && !options.dryRun) std::cout << ": " << r.commit->substr(0, 10);
  std::cout << "\n";
  for (const auto& f : r.files) std::cout << "  " << oneLine(f) << "\n";
  if (options.dryRun && !r.concerns.empty()) {
    std::cout << style.yellow("But " + r.agentId + " is not a safe pick:") << "\n";
    for (const auto& c : r.concerns) std::cout << "  - " << oneLine(c) << "\n";
    std::cout << "hydra merge asks before merging it on a terminal; elsewhere it needs --force.\n";
  }
  if (r.cleanedUp) std::cout << "Removed the race's worktrees and branches.\n";
  return 0;
}

}  // namespace hydra::cli
