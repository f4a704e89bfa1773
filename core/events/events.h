#pragma once

// What happens in a workspace, as typed events: every state change of a race
// (and of every mode built on agent runs) is published once on the EventBus,
// and everything else follows from that one event: the record store writes it
// to disk, the server turns it into a notification, the terminal draws it.
//
// Each event has one JSON form (toJson), used for the race's events.jsonl and
// for the protocol's notifications alike; a notification may add members, it
// never renames one.
//
// Everything in an event is already redacted: secrets hydra hands to agents
// never reach a subscriber.

#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/adapter/event.h"
#include "core/config/executor_kind.h"
#include "core/scoring/status.h"
#include "core/process/output_stream.h"
#include "core/scoring/scores.h"
#include "core/util/json_fields.h"
#include "core/util/owner.h"
#include "core/util/timestamp.h"

namespace hydra::core {

// One agent of a race as planned when the race starts.
struct AgentPlan {
  std::string agentId;  // unique within the race, [A-Za-z0-9_-]+
  std::string agent;    // the configured agent name
  std::string adapter;
  std::string branch;
  std::string worktree;
};

// What a collaboration (kind "collab") was asked to do: hydra collab's settings
// as they were when it started.
struct CollabSettings {
  std::string builder;   // the builder's agent name
  std::string reviewer;  // the reviewer's agent name
  int maxIterations = 3;
  double untilScore = 0;
  std::string approveMarker;
  // [collaboration] review_every_round: no score ends the loop, only the
  // reviewer's approval or max_iterations.
  bool reviewEveryRound = false;
  bool operator==(const CollabSettings&) const = default;
};

// What a run is, fixed when it starts: the one header a race, a collaboration
// and an evaluation sample share, embedded in its start event (RaceStarted), its
// record on disk (RaceRecord) and its summary (RaceSummary), so that a field
// added here reaches all three and their JSON forms (putRunHeader,
// readRunHeader) at once.
struct RunHeader {
  RunKind kind = RunKind::Race;
  std::string task;
  std::string baseRef;
  std::string baseCommit;
  std::string repoRoot;
  Timestamp createdAt;
  // The hydra process running the run and its /proc starttime, so that a later
  // hydra can tell a run whose process died; and the host it runs on (empty in
  // records written before hosts were: this host).
  int hydraPid = 0;
  std::uint64_t hydraStartTime = 0;
  std::string hydraHost;
  // How its agents and checks run: "bubblewrap" (confined) or "unconfined";
  // and, when unconfined although confinement was not turned off, why.
  std::string sandbox = "unconfined";
  std::string sandboxWarning;
  // Where its agents and checks run ([executor] kind, or --executor); with
  // Slurm, the SLURM_CONF it used ("" for the environment's), so that a later
  // hydra can end the jobs it left.
  ExecutorKind executor = ExecutorKind::Local;
  std::string slurmConf;
  std::optional<CollabSettings> collaboration;  // kind "collab" only

  bool isCollab() const { return kind == RunKind::Collab; }
  // The hydra process that runs (or ran) it.
  ProcessOwner hydraOwner() const { return {hydraPid, hydraStartTime, hydraHost}; }
  bool operator==(const RunHeader&) const = default;
};

struct RaceStarted : RunHeader {
  std::string raceId;
  std::vector<AgentPlan> agents;
};

// In a collaboration, what an agent run is for: the builder's first run
// ("build"), the reviewer's ("review"), the builder's later ones ("refine").
// Empty in a race.
struct RunPhase {
  std::string phase;
  std::optional<int> iteration;  // 1-based: the iteration the run builds or reviews
  bool operator==(const RunPhase&) const = default;
};

struct AgentStarted {
  std::string raceId;
  std::string agentId;
  std::string agent;  // the configured agent name
  std::string branch;
  std::string worktree;
  Timestamp startedAt;
  std::optional<int> pid;
  std::optional<int> processGroup;
  std::optional<std::uint64_t> pidStartTime;
  RunPhase phase;
  bool resumed = false;  // a refine that continues the builder's earlier CLI session
};

// One line an agent printed, and what its adapter made of it. `line` is empty
// for events an adapter produces at the end of the stream.
struct AgentOutput {
  std::string raceId;
  std::string agentId;
  OutputStream stream = OutputStream::Stdout;
  std::string line;
  std::vector<AgentEvent> events;
};

// What an agent run leaves: how it ended, what it cost, what its CLI reported,
// and the commit holding its work.
struct AgentFinished {
  std::string raceId;
  std::string agentId;
  AgentStatus status = AgentStatus::Completed;  // completed, failed, timedOut or cancelled
  std::optional<int> exitCode;
  std::optional<int> signal;
  std::int64_t durationMs = 0;
  Timestamp finishedAt;
  std::optional<Usage> usage;
  std::optional<std::string> error;
  std::optional<std::string> commit;
  std::vector<std::string> warnings;  // what the CLI's summary reported (permission denials, model errors)
  std::string stderrTail;             // the last lines the agent wrote to stderr
  int deniedToolCalls = 0;            // tool calls its CLI refused: it cannot be auto-merged
  std::string finalMessage;           // the agent's last word, from its summary
  std::optional<std::string> sessionId;  // for CLIs that can continue a session
  // What it changed outside its worktree that hydra caught (and put back);
  // an agent with escapes can never win or be merged.
  std::vector<std::string> escapes;
  RunPhase phase;
  // Its work was over [general] max_result_files or max_result_bytes and was
  // not committed: ResultSize::describe() ("result too large: ..."). It can
  // never win or be merged.
  std::optional<std::string> tooLarge;
  // Its run went over a per-agent limit and hydra ended it: "killed: over its
  // 4 GiB memory limit" (also its `error`). It can never win or be merged.
  std::optional<std::string> overLimit;
};

// Every agent has finished; their results are being built, tested, linted and scored.
struct ScoringStarted {
  std::string raceId;
  std::optional<int> iteration;  // a collaboration scores each iteration on its own
};

// One line a scoring check printed. `subject` is an agent id, or "baseline".
struct CheckOutput {
  std::string raceId;
  std::string subject;
  std::string check;  // build, tests or lint
  OutputStream stream = OutputStream::Stdout;
  std::string line;
};

// What `[scoring] auto_merge` did with the winner.
struct AutoMergeOutcome {
  std::string agentId;
  std::string outcome;  // fastForward, merged, upToDate, conflict or refused
  std::string targetBranch;  // the branch it went into (empty when refused)
  std::optional<std::string> commit;
  std::vector<std::string> conflicts;
  std::optional<std::string> error;  // why it was refused
};

// One iteration of a collaboration: the builder's round, its score, and the
// review of it. Kept in the record's `iterations`.
struct IterationResult {
  int iteration = 0;                  // 1-based
  std::optional<std::string> commit;  // the builder's commit (none: it never changed anything)
  AgentStatus builderStatus = AgentStatus::Completed;
  bool resumed = false;  // the builder continued its CLI session
  std::optional<std::int64_t> builderDurationMs;
  std::optional<Usage> builderUsage;
  // Scored on its own, as a race of one (agentId "builder@N"); unset when it could not be.
  std::optional<scoring::AgentScore> score;
  // The reviewer's final message; unset when no review ran for it.
  std::optional<std::string> review;
  std::optional<AgentStatus> reviewStatus;
  std::optional<std::int64_t> reviewDurationMs;
  std::optional<Usage> reviewUsage;
  bool approved = false;  // the review contains the approve marker
  // On the last iteration: why the loop stopped (untilScore, approved,
  // maxIterations, unchanged, builderFailed, reviewerFailed).
  std::optional<std::string> stopReason;
};

// An iteration was built and scored and is about to be reviewed: recorded at
// once, so a crash during the review loses nothing (not a notification; its
// IterationFinished follows with the review).
struct IterationScored {
  std::string raceId;
  IterationResult result;
};

struct IterationFinished {
  std::string raceId;
  IterationResult result;
  bool refineNext = false;  // another iteration follows
};

// The race is over: scored (unless it was cancelled or interrupted), and
// auto-merged when hydra.toml asks for it.
struct RaceFinished {
  std::string raceId;
  RaceStatus status = RaceStatus::Completed;
  Timestamp finishedAt;
  std::optional<scoring::RaceScores> scores;
  std::optional<AutoMergeOutcome> autoMerge;
  std::optional<std::string> stopReason;  // a collaboration: why its loop stopped
};

// Made by the bus, never published: `lines` AgentOutput events of this agent
// were dropped for this subscriber because it fell behind. It arrives where the
// gap was: before the agent's next delivered event, or once the queue empties.
struct OutputDropped {
  std::string raceId;
  std::string agentId;
  std::uint64_t lines = 0;
};

using RaceEventBody = std::variant<RaceStarted, AgentStarted, AgentOutput, AgentFinished, ScoringStarted,
                                   CheckOutput, IterationScored, IterationFinished, RaceFinished, OutputDropped>;

struct RaceEvent {
  std::uint64_t seq = 0;  // assigned by the bus, strictly increasing
  std::chrono::system_clock::time_point time;
  RaceEventBody body;
};

// Output is the only kind of event a lagging subscriber may lose.
inline bool isDroppable(const RaceEventBody& body) {
  return std::holds_alternative<AgentOutput>(body) || std::holds_alternative<CheckOutput>(body);
}

const std::string& raceIdOf(const RaceEventBody& body);

// The event's type word: raceStarted, agentStarted, agentOutput, agentFinished,
// scoringStarted, checkOutput, iterationScored, iterationFinished, raceFinished,
// outputDropped.
std::string_view typeOf(const RaceEventBody& body);

// The event's one JSON form, without its type (the members a notification carries).
boost::json::object toJson(const RaceEventBody& body);

void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const AutoMergeOutcome& x);
void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const CollabSettings& x);
void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const IterationResult& x);
// Throw JsonFieldError.
CollabSettings readCollabSettings(const JsonFields& fields);

// A run's header as members of the object that embeds it. `which` says whose
// form: the record's and the event's hold every member; the summary's
// (RunHeaderForm::Public) leaves out what only hydra itself reads (the
// repository, its process, SLURM_CONF).
enum class RunHeaderForm { Full, Public };
void putRunHeader(boost::json::object& out, const RunHeader& header, RunHeaderForm which = RunHeaderForm::Full);
// Throws JsonFieldError naming the member. Members added after the first
// records (kind, hosts, sandbox, executor) read as their defaults when absent.
RunHeader readRunHeader(const JsonFields& fields);
IterationResult readIterationResult(const JsonFields& fields);

}  // namespace hydra::core
