#pragma once

// core's types in the protocol's words: every conversion from what the race
// engine, the scorer and the reviewer produce to hydra/* wire types.

#include <chrono>
#include <string>

#include "core/adapter/event.h"
#include "core/events/race_event.h"
#include "core/merge/diff.h"
#include "core/merge/merge.h"
#include "core/race/record.h"
#include "core/scoring/scores.h"
#include "protocol/hydra.h"
#include "server/cli/agent_probe.h"
#include "server/output_coalescer.h"

namespace hydra::server::wire {

// "toolCall", "fileChange", ...: the protocol's camelCase for an event kind.
std::string eventKind(core::EventKind kind);

protocol::Usage toWire(const core::Usage& usage);
protocol::AgentEvent toWire(const core::AgentEvent& event);
protocol::AgentOutputParams toWire(const OutputBatch& batch);
protocol::AgentStartedParams toWire(const core::AgentStarted& event);
protocol::AgentFinishedParams toWire(const core::AgentFinished& event);

protocol::RaceResult toWire(const core::RaceRecord& race);
// The race as hydra/status shows it at `now`. `scoring`: its results are being
// checked, which the record on disk does not know.
protocol::RaceSummary summarize(const core::RaceRecord& race, bool scoring, core::Timestamp now);

protocol::CheckResult toWire(const core::scoring::CheckResult& check);
protocol::CheckSet toWire(const core::scoring::CheckSet& checks);
protocol::Ranking toWire(const core::scoring::AgentScore& score);
protocol::ScoresResult toWire(const core::scoring::RaceScores& scores);

protocol::FileChange toWire(const core::merge::FileChange& change);
protocol::AgentInfo toWire(const cli::AgentProbe& probe);

}  // namespace hydra::server::wire
