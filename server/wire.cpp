#include "server/wire.h"

#include <algorithm>

namespace hydra::server::wire {

namespace {

std::optional<std::string> nonEmpty(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

std::int64_t millisBetween(core::Timestamp from, core::Timestamp to) {
  return std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count());
}

}  // namespace

std::string eventKind(core::EventKind kind) {
  switch (kind) {
    case core::EventKind::Text:
      return "text";
    case core::EventKind::ToolCall:
      return "toolCall";
    case core::EventKind::ToolResult:
      return "toolResult";
    case core::EventKind::FileChange:
      return "fileChange";
    case core::EventKind::Usage:
      return "usage";
    case core::EventKind::Error:
      return "error";
    case core::EventKind::Summary:
      return "summary";
    case core::EventKind::Raw:
      return "raw";
  }
  return "raw";
}

protocol::Usage toWire(const core::Usage& u) {
  return protocol::Usage{u.inputTokens, u.outputTokens, u.cachedInputTokens, u.costUsd};
}

protocol::AgentEvent toWire(const core::AgentEvent& e) {
  protocol::AgentEvent w;
  w.kind = eventKind(e.kind);
  w.text = nonEmpty(e.text);
  w.tool = nonEmpty(e.tool);
  w.detail = nonEmpty(e.detail);
  w.path = nonEmpty(e.path);
  w.change = nonEmpty(e.change);
  // isError only says something about results, errors and the run's end.
  if (e.isError || e.kind == core::EventKind::ToolResult || e.kind == core::EventKind::Summary)
    w.isError = e.isError;
  if (e.usage) w.usage = toWire(*e.usage);
  w.turns = e.turns;
  if (!e.warnings.empty()) w.warnings = e.warnings;
  return w;
}

protocol::AgentOutputParams toWire(const OutputBatch& b) {
  protocol::AgentOutputParams w;
  w.raceId = b.raceId;
  w.agentId = b.agentId;
  w.stream = std::string(core::toString(b.stream));
  w.lines = b.lines;
  w.events.reserve(b.events.size());
  for (const auto& e : b.events) w.events.push_back(toWire(e));
  if (b.droppedLines > 0) w.droppedLines = b.droppedLines;
  return w;
}

protocol::AgentStartedParams toWire(const core::AgentStarted& e) {
  return protocol::AgentStartedParams{e.raceId, e.agentId, e.agent, e.branch, e.worktree};
}

protocol::AgentFinishedParams toWire(const core::AgentFinished& e) {
  protocol::AgentFinishedParams w;
  w.raceId = e.raceId;
  w.agentId = e.agentId;
  w.status = std::string(core::toString(e.status));
  w.exitCode = e.exitCode;
  w.durationMs = e.durationMs;
  if (e.usage) w.usage = toWire(*e.usage);
  w.error = e.error;
  return w;
}

protocol::RaceResult toWire(const core::RaceRecord& race) {
  protocol::RaceResult w;
  w.raceId = race.id;
  for (const auto& a : race.agents)
    w.agents.push_back(protocol::RaceAgent{a.agentId, a.agent, a.branch, a.worktree});
  return w;
}

protocol::RaceSummary summarize(const core::RaceRecord& race, bool scoring, core::Timestamp now) {
  protocol::RaceSummary w;
  w.raceId = race.id;
  w.task = race.task;
  w.state = scoring ? "scoring" : std::string(core::toString(race.status));
  w.createdAt = core::formatTimestamp(race.createdAt);
  if (race.finishedAt) w.finishedAt = core::formatTimestamp(*race.finishedAt);
  w.baseCommit = race.baseCommit;
  for (const auto& a : race.agents) {
    protocol::AgentState s;
    s.agentId = a.agentId;
    s.agent = a.agent;
    s.state = std::string(core::toString(a.status));
    if (a.durationMs) {
      s.elapsedMs = *a.durationMs;
    } else if (a.startedAt) {
      s.elapsedMs = millisBetween(*a.startedAt, a.finishedAt.value_or(now));
    }
    s.exitCode = a.exitCode;
    s.branch = a.branch;
    s.worktree = a.worktree;
    s.commit = a.commit;
    s.error = a.error;
    w.agents.push_back(std::move(s));
  }
  return w;
}

protocol::CheckResult toWire(const core::scoring::CheckResult& c) {
  protocol::CheckResult w;
  w.command = c.command;
  w.skipped = c.skipped;
  w.exitCode = c.exitCode;
  w.signal = c.signal;
  w.timedOut = c.timedOut;
  w.error = nonEmpty(c.error);
  w.durationMs = c.durationMs;
  w.output = c.output;
  w.outputTruncated = c.outputTruncated;
  if (c.tests) w.tests = protocol::TestCounts{c.tests->passed, c.tests->failed, c.tests->skipped};
  if (c.lint) w.lint = protocol::LintCounts{c.lint->errors, c.lint->warnings};
  w.format = c.format;
  return w;
}

protocol::CheckSet toWire(const core::scoring::CheckSet& checks) {
  protocol::CheckSet w;
  if (checks.build) w.build = toWire(*checks.build);
  if (checks.tests) w.tests = toWire(*checks.tests);
  if (checks.lint) w.lint = toWire(*checks.lint);
  return w;
}

protocol::Ranking toWire(const core::scoring::AgentScore& s) {
  protocol::Ranking w;
  w.rank = s.rank;
  w.agentId = s.agentId;
  w.agent = s.agent;
  w.status = std::string(core::toString(s.status));
  w.total = s.total;
  w.breakdown = protocol::ScoreBreakdown{s.breakdown.build, s.breakdown.tests, s.breakdown.lint,
                                         s.breakdown.diffSize, s.breakdown.speed};
  w.checks = toWire(s.checks);
  w.diff = protocol::DiffStats{s.diff.linesAdded, s.diff.linesRemoved, s.diff.filesChanged};
  w.durationMs = s.durationMs;
  return w;
}

protocol::ScoresResult toWire(const core::scoring::RaceScores& scores) {
  protocol::ScoresResult w;
  w.raceId = scores.raceId;
  for (const auto& a : scores.rankings) w.rankings.push_back(toWire(a));
  w.winner = scores.winner;
  w.baseline = protocol::Baseline{scores.baseline.commit, toWire(scores.baseline.checks),
                                  scores.baseline.fromCache};
  w.autoMergeEligible = scores.autoMergeEligible;
  w.allFailed = scores.allFailed;
  return w;
}

protocol::FileChange toWire(const core::merge::FileChange& c) {
  protocol::FileChange w;
  w.path = c.path;
  w.oldPath = nonEmpty(c.oldPath);
  w.status = c.status;
  w.additions = c.additions;
  w.deletions = c.deletions;
  w.binary = c.binary;
  return w;
}

protocol::AgentInfo toWire(const cli::AgentProbe& p) {
  protocol::AgentInfo w;
  w.name = p.name;
  w.adapter = p.adapter;
  w.binary = p.binary;
  w.configured = p.configured;
  w.available = p.available;
  w.version = nonEmpty(p.version);
  if (p.available) w.path = p.path;
  if (!p.available) w.problem = p.problem;
  return w;
}

}  // namespace hydra::server::wire
