// Every operation of the workspace, driven directly as the server and the
// terminal drive it: agents, status, races, record, scores, diff, file, patch,
// log, agent events, cancel, merge and cleanup; hydra.toml changing while a
// race runs; a restart; and secrets that must never leave unmasked.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <variant>

#include "core/records/store.h"
#include "tests/core/workspace/workspace_fixture.h"

namespace hydra::core {
namespace {

namespace json = boost::json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using namespace testing;

class WorkspaceOperationsTest : public WorkspaceTestBase {
 protected:
  // What `fn` throws, as a WorkspaceError; a failure when it throws nothing.
  template <class Fn>
  WorkspaceError refusal(Fn fn) {
    try {
      fn();
    } catch (const WorkspaceError& e) {
      return e;
    }
    ADD_FAILURE() << "no WorkspaceError";
    return WorkspaceError::invalidRequest("none");
  }

  const fs::path claudeStream = fs::path(HYDRA_SOURCE_DIR) / "tests" / "core" / "adapter" / "fixtures" / "claude.stream.jsonl";

  AgentDef claudeReplay() {
    // Claude's adapter reading a captured claude stream, replayed by the scripted agent.
    AgentDef claude = scripted("claude", {"print-file", claudeStream.string(), "write", "hello.txt", "hello", "--"});
    claude.adapter = "claude";
    return claude;
  }
};

// --- agents -------------------------------------------------------------------------------

TEST_F(WorkspaceOperationsTest, AgentNamesAreHydraTomlsThenTheBuiltInAdapters) {
  open({scripted("fixer", {"say", "hi"}), AgentDef{"ghost", "/nonexistent/ghost-agent", {}, std::nullopt, "command", ""}});
  EXPECT_THAT(ws_->agentNames(), ElementsAre("fixer", "ghost", "claude", "codex", "cursor", "gemini", "opencode", "aider",
                                             "claude-acp", "codex-acp", "gemini-acp", "opencode-acp"));

  auto agents = ws_->agents();
  auto find = [&](const std::string& name) {
    auto it = std::find_if(agents.begin(), agents.end(), [&](const AgentInfo& a) { return a.name == name; });
    EXPECT_NE(it, agents.end()) << name;
    return *it;
  };
  AgentInfo fixer = find("fixer");
  EXPECT_TRUE(fixer.available);
  EXPECT_TRUE(fixer.configured);
  EXPECT_EQ(fixer.path, kScriptedAgent.string());
  AgentInfo ghost = find("ghost");
  EXPECT_FALSE(ghost.available);
  EXPECT_THAT(ghost.problem.value_or(""), HasSubstr("/nonexistent/ghost-agent"));
  EXPECT_FALSE(find("cursor").configured);
  EXPECT_EQ(find("cursor").binary, "cursor-agent");
}

// --- status, races, record, scores ---------------------------------------------------------

TEST_F(WorkspaceOperationsTest, StatusListsRunningRacesFirstAndScoredOnesWithTheirWinner) {
  const fs::path go = outside("go");
  open({scripted("slow", {"wait-for", go.string()}), scripted("quick", {"write", "q.txt", "q"})});
  std::string quick = runRace({"quick"}).id;
  std::string slow = start({"slow"}).raceId;
  runUntil([&] { return statusOf(slow, "slow") == AgentStatus::Running; });

  auto races = ws_->status(std::nullopt);
  ASSERT_EQ(races.size(), 2u);
  EXPECT_EQ(races[0].raceId, slow) << "the running race comes first";
  EXPECT_EQ(races[0].state, "running");
  EXPECT_EQ(races[0].agents.at(0).state, "running");
  EXPECT_FALSE(races[0].winner);
  EXPECT_EQ(races[1].raceId, quick);
  EXPECT_EQ(races[1].state, "completed");
  EXPECT_EQ(races[1].winner, "quick");
  EXPECT_EQ(races[1].agents.at(0).rank, 1);
  EXPECT_TRUE(races[1].agents.at(0).total);
  EXPECT_EQ(races[1].baseCommit, git("rev-parse HEAD"));

  auto one = ws_->status(quick);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].raceId, quick);

  writeFile(go, "");
  finish(slow);
  EXPECT_EQ(ws_->status(std::nullopt).at(0).raceId, slow) << "then the newest first";
}

TEST_F(WorkspaceOperationsTest, RacesPageThroughEveryRaceNewestFirst) {
  open({scripted("a", {"say", "hi"})});
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(runRace({"a"}).id);
  RacePage first = ws_->races(0, 2);
  EXPECT_EQ(first.total, 3);
  ASSERT_EQ(first.races.size(), 2u);
  EXPECT_EQ(first.races[0].raceId, ids[2]);
  EXPECT_EQ(first.races[1].raceId, ids[1]);
  EXPECT_EQ(first.nextOffset, 2);
  RacePage last = ws_->races(2, 2);
  ASSERT_EQ(last.races.size(), 1u);
  EXPECT_EQ(last.races[0].raceId, ids[0]);
  EXPECT_FALSE(last.nextOffset);
}

TEST_F(WorkspaceOperationsTest, ScoresOnlyOnceScoredAndUnknownIdsAreRefusedByKind) {
  const fs::path go = outside("go");
  open({scripted("waiter", {"wait-for", go.string(), "write", "w.txt", "w"})});
  std::string id = start({"waiter"}).raceId;
  WorkspaceError running = refusal([&] { ws_->scores(id); });
  EXPECT_EQ(running.kind(), WorkspaceError::Kind::NotScored);
  EXPECT_EQ(running.data().at("state").as_string(), "running");
  EXPECT_THAT(running.what(), HasSubstr("wait until it finishes"));
  EXPECT_THAT(running.what(), Not(HasSubstr("hydra/"))) << "messages name no protocol method";

  writeFile(go, "");
  finish(id);
  auto scores = ws_->scores(id);
  EXPECT_EQ(scores.winner, "waiter");
  EXPECT_EQ(scores.raceId, id);

  EXPECT_EQ(refusal([&] { ws_->scores("20990101-000000-dead"); }).kind(), WorkspaceError::Kind::UnknownRace);
  WorkspaceError bad = refusal([&] { ws_->record("../escape"); });
  EXPECT_EQ(bad.kind(), WorkspaceError::Kind::UnknownRace);
  EXPECT_THAT(bad.what(), HasSubstr("'../escape' is not a race id"));
  WorkspaceError agent = refusal([&] { ws_->agentRecord(id, "nobody"); });
  EXPECT_EQ(agent.kind(), WorkspaceError::Kind::UnknownAgent);
  EXPECT_EQ(agent.data().at("agents"), (json::array{"waiter"}));
}

TEST_F(WorkspaceOperationsTest, TheScoresAreTheRaceFinishedEventsAndTheFilesOnDisk) {
  open({scripted("a", {"write", "a.txt", "a"}), scripted("b", {"write", "b.txt", "b", "write", "c.txt", "c"})});
  auto subscription = ws_->bus().subscribe();
  std::string id = runRace({"a", "b"}).id;
  std::optional<RaceFinished> finished;
  for (auto& event : subscription->drain()) {
    if (auto* f = std::get_if<RaceFinished>(&event.body)) finished = *f;
  }
  ASSERT_TRUE(finished && finished->scores);
  // One JSON form: what the event carries, what scores() answers and what scores.json holds agree.
  json::value fromEvent = json::value_from(*finished->scores);
  EXPECT_EQ(json::value_from(ws_->scores(id)), fromEvent);
  EXPECT_EQ(json::parse(readFile(repo_.root() / ".hydra" / "races" / id / "scores.json")), fromEvent);
}

// --- review -----------------------------------------------------------------------------

TEST_F(WorkspaceOperationsTest, DiffFileAndPatchShowOnlyWhatTheAgentChanged) {
  open({scripted("editor", {"write", "src/a.txt", "alpha, edited", "write", "notes/new.txt", "new"})});
  std::string id = runRace({"editor"}).id;

  DiffResult diff = ws_->diff(id, "editor");
  ASSERT_EQ(diff.files.size(), 2u);
  EXPECT_EQ(diff.files[0].path, "notes/new.txt");
  EXPECT_EQ(diff.files[0].status, "added");
  EXPECT_EQ(diff.files[1].path, "src/a.txt");
  EXPECT_EQ(diff.files[1].status, "modified");
  EXPECT_THAT(diff.patch, HasSubstr("+alpha, edited"));

  FileContents file = ws_->file(id, "editor", "src/a.txt");
  EXPECT_EQ(file.base, "alpha\n");
  EXPECT_EQ(file.agent, "alpha, edited\n");
  EXPECT_EQ(file.encoding, "utf-8");
  EXPECT_FALSE(ws_->file(id, "editor", "notes/new.txt").base);

  EXPECT_THAT(ws_->patch(id, "editor", std::string("src/a.txt")), HasSubstr("src/a.txt"));
  EXPECT_THAT(ws_->patch(id, "editor", std::string("src/a.txt")), Not(HasSubstr("notes/new.txt")));

  for (std::string path : {"../../etc/passwd", "/etc/passwd", "src/b.txt", "src//a.txt", ""}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(refusal([&] { ws_->file(id, "editor", path); }).kind(), WorkspaceError::Kind::PathOutsideChanges);
  }
}

TEST_F(WorkspaceOperationsTest, AnAgentThatLeftNoCommitHasNoResultToReview) {
  const fs::path go = outside("go");
  open({scripted("holder", {"wait-for", go.string()}), scripted("late", {"write", "x.txt", "x"})}, 1);
  std::string id = start({"holder", "late"}).raceId;
  runUntil([&] { return statusOf(id, "holder") == AgentStatus::Running; });
  EXPECT_TRUE(ws_->cancel(id, "late"));
  writeFile(go, "");
  finish(id);
  EXPECT_EQ(refusal([&] { ws_->diff(id, "late"); }).kind(), WorkspaceError::Kind::NoResult);
  EXPECT_EQ(refusal([&] { ws_->merge(id, std::string("late"), true, false); }).kind(), WorkspaceError::Kind::NoResult);
}

TEST_F(WorkspaceOperationsTest, LogAndAgentEventsHoldEverythingTheAgentPrintedAndItsAdapterRead) {
  open({claudeReplay(), scripted("noisy", {"say", "on stdout", "shout", "on stderr"})});
  std::string id = runRace({"claude", "noisy"}).id;

  LogText out = ws_->log(id, "noisy", OutputStream::Stdout, 0, 0);
  EXPECT_EQ(out.data, "on stdout\n");
  EXPECT_EQ(out.nextOffset, out.totalSize);
  EXPECT_EQ(ws_->log(id, "noisy", OutputStream::Stderr, 0, 0).data, "on stderr\n");
  LogText part = ws_->log(id, "noisy", OutputStream::Stdout, 3, 4);
  EXPECT_EQ(part.data, "stdo");
  EXPECT_EQ(part.nextOffset, 7u);

  AgentEventsResult events = ws_->agentEvents(id, "claude", 0, 1000);
  EXPECT_EQ(events.total, events.events.size());
  std::vector<EventKind> kinds;
  for (const auto& e : events.events) kinds.push_back(e.kind);
  EXPECT_THAT(kinds, Contains(EventKind::ToolCall));
  EXPECT_EQ(kinds.back(), EventKind::Summary);
  AgentEventsResult page = ws_->agentEvents(id, "claude", 1, 2);
  ASSERT_EQ(page.events.size(), 2u);
  EXPECT_EQ(page.nextOffset, 3u);
  EXPECT_EQ(json::value_from(page.events[0]), json::value_from(events.events[1]));

  EXPECT_EQ(refusal([&] { ws_->log(id, "nobody", OutputStream::Stdout, 0, 0); }).kind(),
            WorkspaceError::Kind::UnknownAgent);
}

TEST_F(WorkspaceOperationsTest, ARestartedWorkspaceServesAnOldRacesAgentEventsAndLogs) {
  open({claudeReplay()});
  std::string id = runRace({"claude"}).id;
  auto before = ws_->agentEvents(id, "claude", 0, 1000);
  ASSERT_FALSE(before.events.empty());

  reopen();  // a new hydra: nothing of the race is in memory any more
  auto after = ws_->agentEvents(id, "claude", 0, 1000);
  ASSERT_EQ(after.events.size(), before.events.size());
  for (std::size_t i = 0; i < after.events.size(); ++i) {
    EXPECT_EQ(json::value_from(after.events[i]), json::value_from(before.events[i])) << i;
  }
  // The log, as printed (secret-looking values masked).
  LogText log = ws_->log(id, "claude", OutputStream::Stdout, 0, 0);
  EXPECT_EQ(lines(log.data).size(), lines(readFile(claudeStream)).size());
  EXPECT_THAT(log.data, HasSubstr("\"type\":\"result\""));
  EXPECT_EQ(ws_->scores(id).winner, "claude");
}

// --- merge and cleanup -------------------------------------------------------------------

TEST_F(WorkspaceOperationsTest, MergeTakesTheWinnerByDefaultAfterADryRunChangesNothing) {
  open({scripted("fixer", {"write", "fixed.txt", "the fix"}), scripted("idle", {"say", "nothing"})});
  std::string id = runRace({"fixer", "idle"}).id;
  const std::string head = git("rev-parse HEAD");

  MergeReport dry = ws_->merge(id, std::nullopt, true, false);
  EXPECT_EQ(dry.agentId, "fixer");
  EXPECT_EQ(dry.outcome, "fastForward");
  EXPECT_TRUE(dry.dryRun);
  EXPECT_THAT(dry.files, ElementsAre("fixed.txt"));
  EXPECT_EQ(git("rev-parse HEAD"), head);

  MergeReport done = ws_->merge(id, std::nullopt, false, false);
  EXPECT_EQ(done.outcome, "fastForward");
  EXPECT_TRUE(done.cleanedUp);
  EXPECT_EQ(readFile(repo_.root() / "fixed.txt"), "the fix\n");
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");
  // The race shows it was merged, in its record and its status, and is not merged twice.
  const RaceRecord merged = ws_->record(id);
  ASSERT_TRUE(merged.merged);
  EXPECT_EQ(merged.merged->agentId, "fixer");
  EXPECT_EQ(merged.merged->outcome, "fastForward");
  EXPECT_EQ(merged.merged->targetBranch, "main");
  EXPECT_EQ(merged.merged->commit, done.commit);
  EXPECT_FALSE(merged.merged->automatic);
  auto status = ws_->status(id, 1);
  ASSERT_EQ(status.size(), 1u);
  ASSERT_TRUE(status[0].merged);
  EXPECT_EQ(status[0].merged->agentId, "fixer");
  for (bool dryRun : {true, false}) {
    WorkspaceError again = refusal([&] { ws_->merge(id, std::nullopt, dryRun, false); });
    EXPECT_EQ(again.kind(), WorkspaceError::Kind::MergeRefused);
    EXPECT_EQ(again.data().at("reason"), "alreadyMerged");
    EXPECT_THAT(again.what(), HasSubstr("was merged already: fixer into main"));
  }
  EXPECT_EQ(refusal([&] { ws_->merge(id, std::string("idle"), false, false); }).data().at("reason"), "alreadyMerged");
}

TEST_F(WorkspaceOperationsTest, ADirtyWorkingTreeRefusesTheMergeNamingTheFiles) {
  open({scripted("fixer", {"write", "src/a.txt", "theirs"})});
  std::string id = runRace({"fixer"}).id;
  repo_.write("src/a.txt", "mine, uncommitted\n");
  WorkspaceError e = refusal([&] { ws_->merge(id, std::nullopt, false, false); });
  EXPECT_EQ(e.kind(), WorkspaceError::Kind::DirtyWorkingTree);
  EXPECT_EQ(e.data().at("files"), (json::array{"src/a.txt"}));
  // Named once, with what to do said once.
  EXPECT_EQ(std::string(e.what()),
            "merge refused: uncommitted changes would be overwritten by the merge: src/a.txt (commit or stash them first)");
  EXPECT_EQ(readFile(repo_.root() / "src" / "a.txt"), "mine, uncommitted\n");
}

TEST_F(WorkspaceOperationsTest, ARunningRaceCannotBeMergedOrCleanedUpAndCleanupRemovesFinishedOnes) {
  const fs::path go = outside("go");
  open({scripted("waiter", {"wait-for", go.string()}), scripted("done", {"write", "d.txt", "d"})});
  std::string finished = runRace({"done"}).id;
  std::string running = start({"waiter"}).raceId;
  // Its worktree is made once the race runs: cleanup must then leave it be.
  ASSERT_TRUE(runUntil([&] { return statusOf(running, "waiter") == AgentStatus::Running; }));
  EXPECT_EQ(refusal([&] { ws_->merge(running, std::nullopt, true, false); }).kind(), WorkspaceError::Kind::RaceRunning);
  EXPECT_EQ(refusal([&] { ws_->cleanup(running, false); }).kind(), WorkspaceError::Kind::RaceRunning);

  CleanupReport report = ws_->cleanup(std::nullopt, false);
  ASSERT_EQ(report.removed.size(), 1u) << "only the finished race's worktree";
  EXPECT_EQ(report.removed[0], agentOf(ws_->record(finished), "done").worktree);
  EXPECT_FALSE(fs::exists(report.removed[0]));
  EXPECT_TRUE(fs::is_directory(agentOf(ws_->record(running), "waiter").worktree));

  writeFile(go, "");
  finish(running);
  EXPECT_EQ(ws_->cleanup(running, true).removed.size(), 1u);
  EXPECT_NE(git("branch --list 'hydra/waiter-*'"), "") << "the branch was kept";
}

// --- hydra.toml while races run ------------------------------------------------------------

TEST_F(WorkspaceOperationsTest, AnEditedHydraTomlTakesEffectWithoutASecondCapOnAgents) {
  const fs::path marks = outside("marks.txt");
  const fs::path go = outside("go");
  auto holder = scripted("holder", {"mark", marks.string(), "start", "wait-for", go.string(), "mark", marks.string(), "end"});
  auto late = scripted("late", {"mark", marks.string(), "start", "mark", marks.string(), "end"});
  open({holder}, /*maxConcurrent=*/1);
  std::string first = start({"holder"}).raceId;
  runUntil([&] { return statusOf(first, "holder") == AgentStatus::Running; });

  // A new agent appears in hydra.toml while the race runs; the cap stays one across both races.
  writeConfig({holder, late}, /*maxConcurrent=*/1);
  std::string second = start({"late"}).raceId;
  runUntil([&] { return !ws_->record(second).agents.at(0).worktree.empty() && fs::exists(ws_->record(second).agents.at(0).worktree); });
  for (int i = 0; i < 20; ++i) io_.run_one_for(20ms);
  EXPECT_EQ(statusOf(second, "late"), AgentStatus::Queued) << "a reload must not bring a second, separate cap";

  writeFile(go, "");
  EXPECT_EQ(finish(first).status, RaceStatus::Completed);
  EXPECT_EQ(finish(second).status, RaceStatus::Completed);
  EXPECT_THAT(lines(readFile(marks)), ElementsAre("start holder", "end holder", "start late", "end late"));
}

TEST_F(WorkspaceOperationsTest, ABrokenHydraTomlRefusesNewRacesWhileARunningOneFinishesUnderItsSettings) {
  const fs::path go = outside("go");
  open({scripted("holder", {"wait-for", go.string(), "write", "h.txt", "h"})});
  std::string id = start({"holder"}).raceId;
  writeFile(repo_.root() / "hydra.toml", "[general\nbroken");
  ConfigState state = ws_->configState();
  ASSERT_TRUE(state.error);
  EXPECT_EQ(state.error->line(), 1);
  WorkspaceError e = refusal([&] { start({"holder"}); });
  EXPECT_EQ(e.kind(), WorkspaceError::Kind::ConfigError);
  EXPECT_EQ(e.data().at("line").as_int64(), 1);

  writeFile(go, "");
  RaceRecord race = finish(id);
  EXPECT_EQ(race.status, RaceStatus::Completed);
  EXPECT_EQ(agentOf(race, "holder").status, AgentStatus::Completed);
}

// --- secrets ---------------------------------------------------------------------------------

TEST_F(WorkspaceOperationsTest, ASecretPrintedByAnAgentNeverLeavesUnmasked) {
  const std::string secret = "hunter2-very-secret-token";
  AgentDef leaky = scripted("leaky", {"say", "the key is " + secret, "shout", "stderr has " + secret,
                                      "write", "k.txt", "x"});
  leaky.extra = "env = { MY_API_KEY = " + tomlString(secret) + " }\n";
  open({leaky});
  auto subscription = ws_->bus().subscribe();
  std::string id = runRace({"leaky"}, "use the key " + secret).id;

  std::size_t outputs = 0;
  for (auto& event : subscription->drain()) {
    std::string text = json::serialize(toJson(event.body));
    EXPECT_EQ(text.find(secret), std::string::npos) << typeOf(event.body) << ": " << text;
    outputs += std::holds_alternative<AgentOutput>(event.body);
  }
  EXPECT_GE(outputs, 2u);
  const fs::path dir = repo_.root() / ".hydra" / "races" / id;
  for (const char* file : {"leaky.log", "leaky.stderr.log", "race.json", "events.jsonl", "scores.json"}) {
    EXPECT_EQ(readFile(dir / file).find(secret), std::string::npos) << file;
  }
  EXPECT_THAT(readFile(dir / "leaky.log"), HasSubstr("the key is [REDACTED]"));
  EXPECT_EQ(ws_->record(id).task.find(secret), std::string::npos);
}

// --- the base commit's checks ---------------------------------------------------------------------

TEST_F(WorkspaceOperationsTest, TheBaseCommitIsCheckedInAWorktreeOfItsOwnOnceThenTakenFromTheCache) {
  // `check.sh NAME` passes unless FAIL_NAME exists; every run is logged outside the repository.
  const fs::path runs = outside("runs.log");
  repo_.write("check.sh",
              "#!/bin/sh\necho \"$1 $(pwd)\" >> " + runs.string() +
                  "\nif [ -e FAIL_$1 ]; then echo \"$1 failed\"; exit 1; fi\n"
                  "if [ \"$1\" = tests ]; then echo \"3 passed in 0.01s\"; fi\nexit 0\n");
  repo_.commit("a project with checks");
  const std::string scoring =
      "\n[scoring]\nbuild_command = \"sh check.sh build\"\ntest_command = \"sh check.sh tests\"\n";
  open({scripted("a", {"write", "x.txt", "x"})}, 4, scoring);
  // The user's working tree would fail the build; the base commit does not.
  repo_.write("FAIL_build", "work in progress\n");

  std::string first = runRace({"a"}).id;
  auto scores = ws_->scores(first);
  EXPECT_FALSE(scores.baseline.fromCache);
  ASSERT_TRUE(scores.baseline.checks.build);
  EXPECT_TRUE(scores.baseline.checks.build->passed());
  int baselineRuns = 0;
  for (const auto& line : lines(readFile(runs))) {
    EXPECT_NE(line, "build " + repo_.root().string()) << "a check ran in the user's working tree";
    baselineRuns += line.find("_baseline") != std::string::npos;
  }
  EXPECT_EQ(baselineRuns, 2);
  EXPECT_EQ(git("branch --list 'hydra/_baseline*'"), "") << "the baseline's worktree and branch are gone";
  EXPECT_THAT(readFile(repo_.root() / ".hydra" / "races" / first / "checks" / "a.tests.log"),
              HasSubstr("3 passed"));

  std::string second = runRace({"a"}).id;
  EXPECT_TRUE(ws_->scores(second).baseline.fromCache);
  int again = 0;
  for (const auto& line : lines(readFile(runs))) again += line.find("_baseline") != std::string::npos;
  EXPECT_EQ(again, 2) << "the cached baseline ran again";
}

}  // namespace
}  // namespace hydra::core
