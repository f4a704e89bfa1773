#include "core/records/record.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

namespace hydra::core {
namespace {

namespace json = boost::json;
using namespace std::chrono;
using namespace std::chrono_literals;

Timestamp at(int hour, int minute, int second, int millis) {
  return sys_days{2026y / November / 21} + hours(hour) + minutes(minute) + seconds(second) +
         milliseconds(millis);
}

RaceRecord fullRecord() {
  RaceRecord race;
  race.id = "20261121-110501-a3f9";
  race.task = "Fix the \"off by one\" in\nparser.cpp";
  race.baseRef = "main";
  race.baseCommit = "3f1a2b4c5d6e7f8091a2b3c4d5e6f708192a3b4c";
  race.repoRoot = "/home/dev/project";
  race.createdAt = at(11, 5, 1, 123);
  race.finishedAt = at(11, 9, 59, 7);
  race.status = RaceStatus::Completed;
  race.hydraPid = 4242;
  race.hydraStartTime = 987654321012ull;
  race.hydraHost = "build-7";

  AgentRecord claude;
  claude.agentId = "claude";
  claude.agent = "claude";
  claude.adapter = "claude";
  claude.branch = "hydra/20261121-110501-a3f9/claude";
  claude.worktree = "/home/dev/project/.hydra-workspaces/claude";
  claude.status = AgentStatus::Completed;
  claude.pid = 5001;
  claude.pidStartTime = 123456;
  claude.processGroup = 5001;
  claude.exitCode = 0;
  claude.startedAt = at(11, 5, 2, 0);
  claude.finishedAt = at(11, 8, 0, 999);
  claude.durationMs = 178999;
  claude.commit = "0123456789abcdef0123456789abcdef01234567";
  claude.usage = Usage{1200, 3400, 800, 0.0421};

  AgentRecord codex;
  codex.agentId = "codex-2";
  codex.agent = "codex-fast";
  codex.adapter = "codex";
  codex.branch = "hydra/20261121-110501-a3f9/codex-2";
  codex.worktree = "/home/dev/project/.hydra-workspaces/codex-2";
  codex.status = AgentStatus::TimedOut;
  codex.signal = 9;
  codex.error = "timed out after 600 s";
  codex.usage = Usage{std::nullopt, 10, std::nullopt, std::nullopt};

  race.agents = {claude, codex};
  return race;
}

RaceRecord roundTrip(const RaceRecord& race) {
  std::string text = json::serialize(json::value_from(race));
  return json::value_to<RaceRecord>(json::parse(text));
}

TEST(RecordTest, FullRecordRoundTripsThroughJsonText) {
  RaceRecord race = fullRecord();
  EXPECT_EQ(roundTrip(race), race);
}

// Every member of a run's header set away from its default, so that one the
// event, the record or its JSON form dropped shows.
RunHeader everyHeaderField() {
  RunHeader h;
  h.kind = RunKind::Collab;
  h.task = "Make the parser \"total\"";
  h.baseRef = "release/2";
  h.baseCommit = "3f1a2b4c5d6e7f8091a2b3c4d5e6f708192a3b4c";
  h.repoRoot = "/home/dev/project";
  h.createdAt = at(9, 30, 0, 5);
  h.hydraPid = 777;
  h.hydraStartTime = 55501234ull;
  h.hydraHost = "node-3";
  h.sandbox = "unconfined";
  h.sandboxWarning = "bubblewrap cannot create a user namespace here";
  h.executor = ExecutorKind::Slurm;
  h.slurmConf = "/etc/slurm-test/slurm.conf";
  h.collaboration = CollabSettings{.builder = "claude",
                                   .reviewer = "codex",
                                   .maxIterations = 4,
                                   .untilScore = 92.5,
                                   .approveMarker = "LGTM",
                                   .reviewEveryRound = true};
  return h;
}

TEST(RecordTest, TheRecordHoldsItsRunsWholeHeaderFromItsStartEventToDiskAndBack) {
  const RunHeader header = everyHeaderField();
  RaceStarted started;
  static_cast<RunHeader&>(started) = header;
  started.raceId = "20261129-093000-beef";

  // The start event's JSON form holds the header as the record's does.
  const json::value event = toJson(started);
  EXPECT_EQ(readRunHeader(JsonFields(event)), header) << json::serialize(event);

  RaceRecord race = RaceRecord::started(started);
  EXPECT_EQ(static_cast<const RunHeader&>(race), header);
  EXPECT_EQ(race.id, started.raceId);
  RaceRecord back = roundTrip(race);
  EXPECT_EQ(static_cast<const RunHeader&>(back), header);
  EXPECT_EQ(back, race);
}

TEST(RecordTest, TheHeadersPublicFormLeavesOutWhatOnlyHydraReads) {
  json::object full;
  json::object shown;
  putRunHeader(full, everyHeaderField());
  putRunHeader(shown, everyHeaderField(), RunHeaderForm::Public);
  for (const char* own : {"repoRoot", "hydraPid", "hydraStartTime", "hydraHost", "slurmConf"}) {
    EXPECT_TRUE(full.contains(own)) << own;
    EXPECT_FALSE(shown.contains(own)) << own;
  }
  for (const char* both : {"kind", "task", "baseRef", "baseCommit", "createdAt", "sandbox", "sandboxWarning",
                           "executor", "collaboration"}) {
    EXPECT_EQ(full.at(both), shown.at(both)) << both;
  }
  json::object blank;
  RunHeader noBase = everyHeaderField();
  noBase.baseRef.clear();
  putRunHeader(blank, noBase, RunHeaderForm::Public);
  EXPECT_FALSE(blank.contains("baseRef")) << "an empty base is not shown";
  const json::value shownValue = shown;
  RunHeader read = readRunHeader(JsonFields(shownValue));
  EXPECT_EQ(read.task, everyHeaderField().task);
  EXPECT_EQ(read.collaboration, everyHeaderField().collaboration);
  EXPECT_EQ(read.hydraPid, 0);
}

TEST(RecordTest, MinimalRecordRoundTripsAndLeavesAbsentOptionalsOut) {
  RaceRecord race;
  race.id = "r1";
  race.createdAt = at(0, 0, 0, 0);
  AgentRecord agent;
  agent.agentId = "aider";
  race.agents.push_back(agent);

  json::value value = json::value_from(race);
  const json::object& o = value.as_object();
  EXPECT_FALSE(o.contains("finishedAt"));
  const json::object& a = o.at("agents").as_array().at(0).as_object();
  for (const char* key : {"pid", "pidStartTime", "processGroup", "exitCode", "signal", "startedAt",
                          "finishedAt", "durationMs", "commit", "usage", "error"}) {
    EXPECT_FALSE(a.contains(key)) << key;
  }
  EXPECT_EQ(a.at("status"), "queued");
  EXPECT_EQ(roundTrip(race), race);
}

TEST(RecordTest, JsonUsesCamelCaseNamesStatusWordsAndUtcTimes) {
  json::value value = json::value_from(fullRecord());
  const json::object& o = value.as_object();
  EXPECT_EQ(o.at("baseRef"), "main");
  EXPECT_EQ(o.at("createdAt"), "2026-11-21T11:05:01.123Z");
  EXPECT_EQ(o.at("status"), "completed");
  EXPECT_EQ(o.at("hydraStartTime").to_number<std::uint64_t>(), 987654321012ull);
  EXPECT_EQ(o.at("hydraHost"), "build-7");
  const json::object& codex = o.at("agents").as_array().at(1).as_object();
  EXPECT_EQ(codex.at("agentId"), "codex-2");
  EXPECT_EQ(codex.at("status"), "timedOut");
  EXPECT_EQ(codex.at("usage").as_object().at("outputTokens").to_number<int>(), 10);
  EXPECT_FALSE(codex.at("usage").as_object().contains("inputTokens"));
}

TEST(RecordTest, TimestampsAreIso8601UtcWithMilliseconds) {
  EXPECT_EQ(formatTimestamp(at(11, 5, 1, 123)), "2026-11-21T11:05:01.123Z");
  EXPECT_EQ(formatTimestamp(at(0, 0, 0, 5) + 999us), "2026-11-21T00:00:00.005Z");
  EXPECT_EQ(parseTimestamp("2026-11-21T11:05:01.123Z"), at(11, 5, 1, 123));
  EXPECT_EQ(parseTimestamp("2026-11-21T11:05:01Z"), at(11, 5, 1, 0));
  EXPECT_EQ(parseTimestamp("2026-11-21T11:05:01.5Z"), at(11, 5, 1, 500));
  auto now = recordNow();
  EXPECT_EQ(parseTimestamp(formatTimestamp(now)), now);
}

TEST(RecordTest, MalformedTimestampsAreRejected) {
  for (const char* text : {"", "2026-11-21", "2026-11-21 11:05:01Z", "2026-11-21T11:05:01",
                           "2026-11-21T11:05:01+02:00", "2026-13-01T00:00:00Z",
                           "2026-02-30T00:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T11:05:01.Z",
                           "2026-11-21T11:05:01.1234567890Z", "+026-11-21T11:05:01Z"}) {
    EXPECT_FALSE(parseTimestamp(text)) << text;
  }
}

// Errors name the field by its path, so a damaged race.json can be fixed by hand.
TEST(RecordTest, BadFieldsAreNamedByTheirPath) {
  auto errorFor = [](const std::string& text) -> std::string {
    try {
      json::value_to<RaceRecord>(json::parse(text));
    } catch (const RecordError& e) {
      return e.what();
    }
    return "no error";
  };
  json::value good = json::value_from(fullRecord());

  json::value missingTask = good;
  missingTask.as_object().erase("task");
  EXPECT_EQ(errorFor(json::serialize(missingTask)), "task: missing");

  json::value badStatus = good;
  badStatus.as_object()["agents"].as_array()[1].as_object()["status"] = "sleeping";
  EXPECT_EQ(errorFor(json::serialize(badStatus)), "agents[1].status: unknown value \"sleeping\"");

  json::value badPid = good;
  badPid.as_object()["hydraPid"] = "4242";
  EXPECT_EQ(errorFor(json::serialize(badPid)).rfind("hydraPid: expected a number", 0), 0u);

  json::value negativeStart = good;
  negativeStart.as_object()["hydraStartTime"] = -1;
  EXPECT_EQ(errorFor(json::serialize(negativeStart)).rfind("hydraStartTime: expected a number", 0),
            0u);

  json::value badTime = good;
  badTime.as_object()["agents"].as_array()[0].as_object()["startedAt"] = "yesterday";
  EXPECT_EQ(errorFor(json::serialize(badTime)),
            "agents[0].startedAt: not an ISO 8601 UTC time: yesterday");

  json::value badUsage = good;
  badUsage.as_object()["agents"].as_array()[0].as_object()["usage"].as_object()["costUsd"] = "free";
  EXPECT_NE(errorFor(json::serialize(badUsage)).find("agents[0].usage.costUsd: "),
            std::string::npos);

  json::value badKind = good;
  badKind.as_object()["kind"] = "tournament";
  EXPECT_EQ(errorFor(json::serialize(badKind)), "kind: unknown value \"tournament\"");

  json::value badExecutor = good;
  badExecutor.as_object()["executor"] = "kubernetes";
  EXPECT_EQ(errorFor(json::serialize(badExecutor)), "executor: unknown value \"kubernetes\"");

  EXPECT_EQ(errorFor("[1, 2]"), "expected an object");
}

// The kind is a word on disk and an enum in memory; records written before
// kinds existed are races.
TEST(RecordTest, KindsAreWordsOnDiskAndARecordWithoutOneIsARace) {
  for (const auto& [kind, word] : {std::pair{RunKind::Race, "race"}, std::pair{RunKind::Collab, "collab"},
                                   std::pair{RunKind::Sample, "sample"}}) {
    RaceRecord race = fullRecord();
    race.kind = kind;
    json::value value = json::value_from(race);
    EXPECT_EQ(value.as_object().at("kind"), word);
    EXPECT_EQ(roundTrip(race).kind, kind);
    EXPECT_EQ(race.isCollab(), kind == RunKind::Collab);
  }
  json::value old = json::value_from(fullRecord());
  old.as_object().erase("kind");
  EXPECT_EQ(json::value_to<RaceRecord>(old).kind, RunKind::Race);
}

// Where a race ran is a word on disk too; records written before executors
// existed ran here.
TEST(RecordTest, ExecutorsAreWordsOnDiskAndARecordWithoutOneRanLocally) {
  for (const auto& [kind, word] : {std::pair{ExecutorKind::Local, "local"}, std::pair{ExecutorKind::Slurm, "slurm"}}) {
    RaceRecord race = fullRecord();
    race.executor = kind;
    json::value value = json::value_from(race);
    EXPECT_EQ(value.as_object().at("executor"), word);
    EXPECT_EQ(roundTrip(race).executor, kind);
  }
  json::value old = json::value_from(fullRecord());
  old.as_object().erase("executor");
  EXPECT_EQ(json::value_to<RaceRecord>(old).executor, ExecutorKind::Local);
}

TEST(RecordTest, UnknownFieldsAreIgnored) {
  json::value value = json::value_from(fullRecord());
  value.as_object()["scores"] = json::array{1, 2, 3};
  value.as_object()["agents"].as_array()[0].as_object()["futureField"] = true;
  EXPECT_EQ(json::value_to<RaceRecord>(value), fullRecord());
}

TEST(RecordTest, FindAgentByItsId) {
  RaceRecord race = fullRecord();
  ASSERT_NE(race.findAgent("codex-2"), nullptr);
  EXPECT_EQ(race.findAgent("codex-2")->agent, "codex-fast");
  EXPECT_EQ(race.findAgent("gemini"), nullptr);
  race.findAgent("claude")->status = AgentStatus::Interrupted;
  EXPECT_EQ(race.agents[0].status, AgentStatus::Interrupted);
}

}  // namespace
}  // namespace hydra::core
