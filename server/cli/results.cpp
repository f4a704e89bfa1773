#include "server/cli/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace hydra::cli {

namespace {

// What an agent or its tests wrote, made safe for a terminal (see oneLine).
std::string printable(std::string_view text) { return oneLine(text); }

// "a, b, c and 4 more": one line per kind, however many tests a run names.
std::string listed(const std::vector<std::string>& items, std::size_t shown = 8) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < shown; ++i) out += (i ? ", " : "") + printable(items[i]);
  if (items.size() > shown) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

// The last `n` non-empty lines of `text`.
std::vector<std::string> lastLines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return lines;
}

// Under an agent's score line: what the race found (escapes, flags, tests by
// name) and what its CLI said (error, warnings, the end of its stderr).
void printDetails(std::ostream& out, const core::scoring::AgentScore& a, const core::AgentRecord* record,
                  const Style& style) {
  const std::string indent = "      ";
  if (record) {
    for (const auto& escape : record->escapes) out << indent << style.red("escaped: ") << printable(escape) << "\n";
  }
  for (const auto& flag : a.flags) out << indent << style.yellow("not for auto-merge: ") << printable(flag) << "\n";
  if (a.testChanges) {
    if (!a.testChanges->fixed.empty()) out << indent << style.green("fixed: ") << listed(a.testChanges->fixed) << "\n";
    if (!a.testChanges->broken.empty()) out << indent << style.red("broken: ") << listed(a.testChanges->broken) << "\n";
    if (!a.testChanges->removed.empty()) {
      out << indent << style.red("removed: ") << listed(a.testChanges->removed) << style.dim(" (scored as failed)")
          << "\n";
    }
    if (!a.testChanges->skipped.empty()) {
      out << indent << style.red("skipped or xfailed now: ") << listed(a.testChanges->skipped)
          << style.dim(" (ran at the base; scored as failed)") << "\n";
    }
  } else if (a.testsByCountsOnly) {
    out << indent << style.yellow("tests compared by counts only: ")
        << "the test runner did not name each test, so a deleted test reads as a passing one\n";
  }
  // Why a check failed, in its own words: the end of its output (the whole
  // is in .hydra/races/<id>/checks/).
  constexpr std::size_t kCheckLinesShown = 6;
  const std::pair<const char*, const std::optional<core::scoring::CheckResult>*> checks[] = {
      {"build", &a.checks.build}, {"tests", &a.checks.tests}, {"lint", &a.checks.lint}};
  for (const auto& [name, check] : checks) {
    if (!*check || (*check)->skipped || (*check)->passed()) continue;
    const core::scoring::CheckResult& c = **check;
    std::string why = c.timedOut     ? "timed out"
                      : !c.error.empty() ? "could not run: " + c.error
                      : c.exitCode     ? "exit " + std::to_string(*c.exitCode)
                      : c.signal       ? "signal " + std::to_string(*c.signal)
                                       : "failed";
    out << indent << style.red(std::string(name) + " failed") << " (" << printable(why) << "): "
        << style.dim(printable(c.command)) << "\n";
    for (const auto& line : lastLines(c.output, kCheckLinesShown)) out << indent << "  " << style.dim(printable(line)) << "\n";
  }
  if (!record) return;
  if (record->error && a.status != core::AgentStatus::Completed) {
    out << indent << style.red("error: ") << printable(*record->error) << "\n";
  }
  constexpr std::size_t kWarningsShown = 5;
  for (std::size_t i = 0; i < record->warnings.size() && i < kWarningsShown; ++i) {
    out << indent << style.yellow("warning: ") << printable(record->warnings[i]) << "\n";
  }
  if (record->warnings.size() > kWarningsShown) {
    out << indent << style.dim("(" + std::to_string(record->warnings.size() - kWarningsShown) + " more warnings)") << "\n";
  }
  // What a failed CLI last said on stderr is often the only clue to why.
  if (a.status != core::AgentStatus::Completed) {
    for (const auto& line : lastLines(record->stderrTail, 3)) out << indent << style.dim("stderr: " + printable(line)) << "\n";
  }
}

}  // namespace

std::string collabStopText(const std::string& reason) {
  if (reason == "untilScore") return "an unflagged iteration reached the target score";
  if (reason == "approved") return "the reviewer approved";
  if (reason == "maxIterations") return "the last iteration was done";
  if (reason == "unchanged") return "the builder changed nothing in its refinement";
  if (reason == "builderFailed") return "the builder failed";
  if (reason == "reviewerFailed") return "the reviewer failed";
  if (reason == "cancelled") return "it was cancelled";
  if (reason == "interrupted") return "it was interrupted";
  // A word from a newer hydra.
  return "a reason this hydra does not know (" + reason + ")";
}

std::string plainState(const std::string& state) {
  if (state == "timedOut") return "timed out";
  if (state == "setupFailed") return "setup failed";
  if (state == "notNeeded") return "not needed";
  return state;
}

std::string colorScore(const Style& style, double score, const std::string& text) {
  if (score > 80) return style.green(text);
  if (score >= 50) return style.yellow(text);
  return style.red(text);
}

void printResults(std::ostream& out, const core::RaceRecord& race, const core::scoring::RaceScores& scores,
                  const Style& style) {
  const std::string task = oneLine(race.task.substr(0, race.task.find('\n')), 60);
  std::string title = std::string(race.isCollab() ? "Collaboration" : "Race") + " Results — Task: \"" + task + "\"";
  out << "\n" << style.bold(title) << "\n" << std::string(44, '=') << "\n\n";

  std::size_t nameWidth = 10;
  for (const auto& a : scores.rankings) nameWidth = std::max(nameWidth, a.agentId.size() + 2);

  for (const auto& a : scores.rankings) {
    bool buildFailed = a.checks.build && !a.checks.build->passed();
    auto cell = [&](const char* label, const std::optional<double>& score, bool skipped) {
      std::string value;
      if (!score) {
        value = "n/a";  // not configured
      } else if (skipped) {
        value = "--";
      } else {
        value = wholeScore(*score);
      }
      std::string text = std::string("[") + label + ": " + value + "]";
      // Pad after the colour, so the escape codes never count as width.
      std::string pad(text.size() < std::string(label).size() + 7 ? std::string(label).size() + 7 - text.size() : 0, ' ');
      return (score && !skipped ? colorScore(style, *score, text) : style.dim(text)) + pad;
    };
    std::string build;
    if (a.breakdown.build) {
      std::string mark = a.checks.build && a.checks.build->passed() ? "✓" : "✗";
      std::string text = "[BUILD: " + mark + "]";
      build = a.checks.build && a.checks.build->passed() ? style.green(text) : style.red(text);
    } else {
      build = style.dim("[BUILD: n/a]");
    }
    std::string total = fixed1(a.total);
    total = std::string(total.size() < 5 ? 5 - total.size() : 0, ' ') + total;
    std::string line = cell("TESTS", a.breakdown.tests, buildFailed) + " " + cell("LINT", a.breakdown.lint, buildFailed) +
                       " " + cell("DIFF", a.breakdown.diffSize, false) + " " + cell("SPEED", a.breakdown.speed, false);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << "  #" << a.rank << "  " << padRight(a.agentId, nameWidth) << colorScore(style, a.total, total)
        << " / 100    " << build << " " << line;
    if (!a.eligible()) out << "  " << style.dim("(" + a.ineligible + ": cannot win)");
    out << "\n";
    printDetails(out, a, race.findAgent(a.agentId), style);
  }
  out << "\n";

  if (scores.allFailed) {
    bool anyEligible = std::any_of(scores.rankings.begin(), scores.rankings.end(),
                                   [](const auto& a) { return a.eligible(); });
    out << style.red("All agents failed") << ": "
        << (anyEligible ? "the best total is below the fail threshold"
                        : "none finished with a change that could be merged")
        << ". No winner.\n";
  }
  if (scores.winner) {
    // A collaboration's winner is an iteration of its builder, on the builder's branch.
    const core::AgentRecord* winner =
        race.findAgent(race.isCollab() ? std::string("builder") : *scores.winner);
    out << "Winner: " << style.bold(*scores.winner);
    if (winner) out << " (branch: " << winner->branch << ")";
    out << "\n";
    if (!race.merged) {
      out << "Run `hydra merge " << race.id << " " << *scores.winner << "` to merge into your branch.\n";
    }
    // Only where [scoring] auto_merge is on does eligibility do anything.
    if (!race.merged && scores.autoMergeEnabled && scores.autoMergeEligible) {
      out << style.dim("(eligible for auto-merge)") << "\n";
    }
  }
  if (race.merged) {
    out << style.green("Merged") << ": " << race.merged->agentId;
    if (!race.merged->targetBranch.empty()) out << " into " << race.merged->targetBranch;
    if (race.merged->automatic) out << " (auto-merge)";
    if (race.merged->commit) out << ", " << race.merged->commit->substr(0, 10);
    out << "\n";
  }
}

}  // namespace hydra::cli
