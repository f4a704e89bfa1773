#pragma once

// An evaluation's report, schema "hydra.eval/1": every sample (one agent's
// run on one case of the eval set), the statistics they add up to per case
// and per agent (aggregate), and the report as JSON, plain text and Markdown.
// The JSON form uses camelCase names with "schema" first; absent optionals
// are left out; pass@k is an object keyed by k ("1", "5"), null where pass@k
// is undefined.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/conversion.hpp>
#include <boost/json/value.hpp>

#include "core/eval/stats.h"

namespace hydra::core::eval {

inline constexpr std::string_view kReportSchema = "hydra.eval/1";

// One run of one agent on one case.
struct Sample {
  std::string caseId;
  std::string agent;
  int index = 0;                     // which run of this agent on this case, from 0
  bool solved = false;               // what counts towards pass@k
  std::optional<std::string> error;  // why the run failed, when it did
  double score = 0;                  // hydra's score, 0..100
  double forgetestScore = 0;         // forgetestScore(), 0..1
  bool builds = false;
  int testsPassed = 0;
  int testsFailed = 0;
  int lintWarnings = 0;
  std::optional<double> costUsd;  // when the CLI reported it
  std::optional<std::int64_t> inputTokens;
  std::optional<std::int64_t> outputTokens;
  std::int64_t latencyMs = 0;
  std::optional<std::string> commit;  // the commit holding the agent's result
  std::string status;                 // the agent's status word ("completed", "failed", ...)
  // The end of what verify_command printed (the check's own cap, 16 KiB, with
  // secrets masked), so an unsolved sample says why.
  std::optional<std::string> verifyOutput;

  friend bool operator==(const Sample&, const Sample&) = default;
};

// pass@k by k; nullopt where it is undefined (k greater than the samples).
using PassAtK = std::map<int, std::optional<double>>;

// One agent on one case.
struct CaseAgentStats {
  std::string agent;
  int n = 0;  // samples
  int c = 0;  // solved samples
  PassAtK passAtK;
  double meanScore = 0;           // 0..100
  double meanForgetestScore = 0;  // 0..1

  friend bool operator==(const CaseAgentStats&, const CaseAgentStats&) = default;
};

struct CaseStats {
  std::string caseId;
  std::vector<CaseAgentStats> agents;  // in order of first appearance

  friend bool operator==(const CaseStats&, const CaseStats&) = default;
};

// One agent over the whole eval set.
struct AgentStats {
  std::string agent;
  std::string version;  // its CLI's version, from Report::agentVersions; may be empty
  // The mean over the cases it ran of each case's pass@k; nullopt when pass@k
  // is undefined for any of them.
  PassAtK passAtK;
  double compileRate = 0;  // share of samples that built
  // Mean over the samples that ran tests of passed / (passed + failed); 0 when
  // none did.
  double testPassRate = 0;
  double meanScore = 0;           // 0..100
  double meanForgetestScore = 0;  // 0..1
  double totalCostUsd = 0;        // over the samples that reported a cost
  double meanLatencyMs = 0;
  std::int64_t inputTokens = 0;  // over the samples that reported them
  std::int64_t outputTokens = 0;
  Interval passAt1Wilson;  // wilson95(solved, samples)
  int samples = 0;
  int solved = 0;

  friend bool operator==(const AgentStats&, const AgentStats&) = default;
};

struct Report {
  std::string schema = std::string(kReportSchema);
  std::string name;  // the eval set's name
  std::string hydraVersion;
  std::string evalSetHash;
  std::string startedAt;   // ISO 8601; may be empty
  std::string finishedAt;  // ISO 8601; may be empty
  std::vector<int> passK;  // the k of pass@k, in the order the tables show them
  std::map<std::string, std::string> agentVersions;  // agent -> its CLI's version
  std::map<std::string, std::string> baseCommits;    // case id -> the commit it started from
  std::vector<Sample> samples;
  std::vector<CaseStats> cases;    // from samples, by aggregate()
  std::vector<AgentStats> agents;  // from samples, by aggregate()

  friend bool operator==(const Report&, const Report&) = default;
};

// Recomputes `cases` and `agents` from `samples`, `passK` and `agentVersions`:
// cases in the order their first sample appears, and within each case (and in
// `agents`) agents in the order of their first sample. A sample's `solved`
// decides c; every sample counts, whatever its index.
void aggregate(Report& report);

// The report as a terminal shows it, from its `cases` and `agents` as
// aggregate() left them: a table with a row per agent (pass@k, compile rate,
// test pass rate, mean score, cost, mean latency, the pass@1 Wilson
// interval), then a table per case (agent, n, c, pass@k, mean score).
// Undefined pass@k reads "n/a", as do the cost and test pass rate of an agent
// none of whose samples reported a cost or ran tests.
std::string renderText(const Report& report);
// The same tables as GitHub-flavoured Markdown.
std::string renderMarkdown(const Report& report);

// --- tables, for this report and the comparison's ----------------------------

// Rows of cells under a header; every row as long as the header.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // How each column aligns, 'l' (left) or 'r' (right); columns past its end
  // align left when first and right otherwise.
  std::string align;
};

// Columns two spaces apart, each padded to its widest cell; each line starts
// with `indent` and ends with "\n", with no trailing blanks.
std::string tableText(const Table& table, std::string_view indent = "  ");
// A GitHub table: "|" in a cell is escaped and line breaks become blanks.
std::string tableMarkdown(const Table& table);

// --- JSON --------------------------------------------------------------------
// Readers throw JsonFieldError naming the offending field by its path
// ("samples[3].score: expected a number that fits"); Report's rejects any
// schema other than "hydra.eval/1".

void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const Interval& x);
Interval tag_invoke(boost::json::value_to_tag<Interval>, const boost::json::value& v);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const Sample& x);
Sample tag_invoke(boost::json::value_to_tag<Sample>, const boost::json::value& v);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const CaseAgentStats& x);
CaseAgentStats tag_invoke(boost::json::value_to_tag<CaseAgentStats>, const boost::json::value& v);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const CaseStats& x);
CaseStats tag_invoke(boost::json::value_to_tag<CaseStats>, const boost::json::value& v);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const AgentStats& x);
AgentStats tag_invoke(boost::json::value_to_tag<AgentStats>, const boost::json::value& v);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const Report& x);
Report tag_invoke(boost::json::value_to_tag<Report>, const boost::json::value& v);

// A report from its file. Throws std::runtime_error saying which file could
// not be read or why it is not a hydra eval report.
Report readReportFile(const std::filesystem::path& path);

// One number by a printf `spec` ("%.1f"), as the renderings show numbers.
std::string formatted(const char* spec, double x);

}  // namespace hydra::core::eval
