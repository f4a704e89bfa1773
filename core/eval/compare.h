#pragma once

// Two eval reports side by side: which case and agent got better or worse
// between a baseline (say the main branch's run) and a current run, by mean
// score and pass@k, beyond a threshold; as plain text, as Markdown fit for a
// pull-request comment, and as JSON.

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/conversion.hpp>
#include <boost/json/value.hpp>

#include "core/eval/report.h"

namespace hydra::core::eval {

inline constexpr std::string_view kRegression = "regression";
inline constexpr std::string_view kImprovement = "improvement";
inline constexpr std::string_view kUnchanged = "unchanged";

// A move of less than this past the threshold is taken as rounding, so that a
// drop of exactly the threshold (0.70 -> 0.65 at 0.05) is not a regression.
inline constexpr double kThresholdSlack = 1e-9;

// One metric of one agent on one case, in both reports.
struct Change {
  std::string caseId;
  std::string agent;
  std::string metric;  // "pass@K", or "meanScore" (on a 0..1 scale: hydra's score / 100)
  double baseline = 0;
  double current = 0;
  double delta = 0;     // current - baseline
  std::string verdict;  // kRegression, kImprovement or kUnchanged

  friend bool operator==(const Change&, const Change&) = default;
};

struct Comparison {
  double threshold = 0.05;
  // Every metric compared, changed or not: by case and agent in the current
  // report's order, each pair's pass@k by k, then its meanScore.
  std::vector<Change> changes;
  // "case/agent" pairs only one report has, in that report's order; not compared.
  std::vector<std::string> onlyInBaseline;
  std::vector<std::string> onlyInCurrent;
  int regressions = 0;
  int improvements = 0;
};

// Compares the two reports' `cases` (as aggregate() left them) for each case
// and agent both have: the mean score over 100, so that a threshold of 0.05
// means 5 points, and every pass@k both define. A regression is a drop by more
// than `threshold`, an improvement a rise by more; anything else is unchanged.
Comparison compare(const Report& baseline, const Report& current, double threshold = 0.05);

// A summary line ("1 regression, 2 improvements, 5 unchanged (threshold
// 0.05)"), a table of the regressions and improvements, then the pairs only
// one report has.
std::string renderCompareText(const Comparison& comparison);
// The same as Markdown for a pull-request comment: the summary, a GitHub table
// of the changed rows, and "only in baseline/current" lists.
std::string renderCompareMarkdown(const Comparison& comparison);

void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const Change& x);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const Comparison& x);

}  // namespace hydra::core::eval
