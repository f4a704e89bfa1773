#include "server/cli/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hydra::cli {

namespace {

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string padRight(std::string s, std::size_t n) {
  // Width in characters, not bytes: ✓ and ✗ are three bytes each.
  std::size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  if (chars < n) s.append(n - chars, ' ');
  return s;
}

}  // namespace

std::string colorScore(const Style& style, double score, const std::string& text) {
  if (score > 80) return style.green(text);
  if (score >= 50) return style.yellow(text);
  return style.red(text);
}

void printResults(std::ostream& out, const core::RaceRecord& race, const core::scoring::RaceScores& scores,
                  const Style& style) {
  std::string task = race.task.substr(0, race.task.find('\n'));
  if (task.size() > 60) task = task.substr(0, 57) + "...";
  std::string title = "Race Results — Task: \"" + task + "\"";
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
        value = std::to_string(static_cast<int>(std::lround(*score)));
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
    if (const core::AgentRecord* record = race.findAgent(a.agentId)) {
      for (const auto& escape : record->escapes) out << "      " << style.red("escaped: ") << escape << "\n";
    }
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
    const core::AgentRecord* winner = race.findAgent(*scores.winner);
    out << "Winner: " << style.bold(*scores.winner);
    if (winner) out << " (branch: " << winner->branch << ")";
    out << "\n";
    out << "Run `hydra merge " << race.id << " " << *scores.winner << "` to merge into your branch.\n";
    if (scores.autoMergeEligible) out << style.dim("(eligible for auto-merge)") << "\n";
  }
}

}  // namespace hydra::cli
