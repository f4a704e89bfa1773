// Races through the workspace, in process, against throwaway repositories
// (the git CLI checks them) and real agents: the scripted agent and
// hydra_test_child, which can hang, ignore SIGTERM, leave a grandchild behind,
// crash or print a flood.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <set>
#include <variant>

#include "core/records/store.h"
#include "tests/core/workspace/workspace_fixture.h"

namespace hydra::core {
namespace {

namespace json = boost::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing;

class WorkspaceRaceTest : public WorkspaceTestBase {};

// 1. Isolation.
TEST_F(WorkspaceRaceTest, AgentsEditingTheSameFileStayIsolatedAndTheUsersCheckoutIsUntouched) {
  open({scripted("one", {"write", "src/a.txt", "from one"}),
        scripted("two", {"write", "src/a.txt", "from two"})});
  git("add hydra.toml");
  git("commit -qm config");
  // The user has work in progress: an unstaged edit and a staged new file.
  repo_.write("README.md", "# sample, being edited\n");
  repo_.write("draft.txt", "draft\n");
  git("add draft.txt");
  const std::string head = git("rev-parse HEAD");
  const std::string headRef = git("symbolic-ref HEAD");
  const std::string status = git("status --porcelain --untracked-files=all");
  const std::string index = readFile(repo_.root() / ".git" / "index");
  ASSERT_EQ(status, " M README.md\nA  draft.txt");

  RaceRecord race = runRace({"one", "two"});

  ASSERT_EQ(race.status, RaceStatus::Completed);
  const AgentRecord& one = agentOf(race, "one");
  const AgentRecord& two = agentOf(race, "two");
  ASSERT_EQ(one.status, AgentStatus::Completed);
  ASSERT_EQ(two.status, AgentStatus::Completed);
  EXPECT_NE(one.branch, two.branch);
  EXPECT_NE(one.worktree, two.worktree);
  EXPECT_EQ(git("show " + one.branch + ":src/a.txt"), "from one");
  EXPECT_EQ(git("show " + two.branch + ":src/a.txt"), "from two");
  // Agents start from the commit, not from the user's uncommitted work.
  EXPECT_EQ(git("show " + one.branch + ":README.md"), "# sample");
  EXPECT_THROW(git("show " + one.branch + ":draft.txt"), std::runtime_error);

  EXPECT_EQ(git("rev-parse HEAD"), head);
  EXPECT_EQ(git("symbolic-ref HEAD"), headRef);
  EXPECT_EQ(readFile(repo_.root() / ".git" / "index"), index);
  EXPECT_EQ(readFile(repo_.root() / "src" / "a.txt"), "alpha\n");
  EXPECT_EQ(readFile(repo_.root() / "README.md"), "# sample, being edited\n");
  // Neither the worktrees nor hydra's records show up in the user's status.
  EXPECT_EQ(git("status --porcelain --untracked-files=all"), status);
}

// 2. One commit per finished agent.
TEST_F(WorkspaceRaceTest, FinishedAgentLeavesExactlyOneCommitOfEverythingItChanged) {
  open({scripted("editor", {"write", "notes/new.txt", "a new file", "write", "src/a.txt", "alpha, edited",
                                  "delete", "src/b.txt", "write", "debug.log", "ignored by .gitignore"})});
  const std::string base = git("rev-parse HEAD");
  RaceRecord race = runRace({"editor"}, "Tidy up the notes\n\nand the sources");

  const AgentRecord& editor = agentOf(race, "editor");
  ASSERT_EQ(editor.status, AgentStatus::Completed) << editor.error.value_or("");
  ASSERT_TRUE(editor.commit);
  EXPECT_EQ(*editor.commit, git("rev-parse " + editor.branch));
  EXPECT_EQ(git("rev-list --count " + base + ".." + editor.branch), "1");
  EXPECT_EQ(git("rev-parse " + editor.branch + "^"), base);
  EXPECT_EQ(git("log -1 --format=%an " + editor.branch), "hydra");
  EXPECT_EQ(git("log -1 --format=%cn " + editor.branch), "hydra");
  const std::string message = git("log -1 --format=%B " + editor.branch);
  EXPECT_THAT(message, HasSubstr("editor"));
  EXPECT_THAT(message, HasSubstr("Tidy up the notes"));
  EXPECT_THAT(message, HasSubstr("and the sources"));
  EXPECT_THAT(message, HasSubstr(race.id));
  EXPECT_THAT(lines(git("diff --name-status " + base + " " + editor.branch)),
              ElementsAre("A\tnotes/new.txt", "M\tsrc/a.txt", "D\tsrc/b.txt"));
  // Everything the agent left is in the commit: its worktree is clean.
  EXPECT_EQ(TempRepo::gitIn(editor.worktree, "status --porcelain"), "");
}

TEST_F(WorkspaceRaceTest, AgentThatChangesNothingRecordsTheBaseCommitAndAddsNone) {
  open({scripted("idle", {"say", "nothing to do"})});
  const std::string base = git("rev-parse HEAD");
  RaceRecord race = runRace({"idle"});

  const AgentRecord& idle = agentOf(race, "idle");
  EXPECT_EQ(idle.status, AgentStatus::Completed);
  EXPECT_EQ(idle.commit, base);
  EXPECT_EQ(git("rev-parse " + idle.branch), base);
}

// 3. Repeats.
TEST_F(WorkspaceRaceTest, RepeatedAgentGetsNumberedIdsEachWithItsOwnBranchAndWorktree) {
  open({scripted("writer", {"env", "agent-env.txt"})});
  RaceRecord race = runRace({"writer", "writer", "writer"}, "Say who you are");

  std::vector<std::string> ids, branches, worktrees;
  for (const auto& a : race.agents) {
    ids.push_back(a.agentId);
    branches.push_back(a.branch);
    worktrees.push_back(a.worktree);
    EXPECT_EQ(a.agent, "writer");
    EXPECT_EQ(a.status, AgentStatus::Completed) << a.agentId << ": " << a.error.value_or("");
    EXPECT_TRUE(fs::is_directory(a.worktree)) << a.worktree;
    // Each ran in its own worktree, told who it is.
    EXPECT_THAT(lines(git("show " + a.branch + ":agent-env.txt")),
                ElementsAre("cwd=" + a.worktree, "HYDRA_AGENT_ID=" + a.agentId, "HYDRA_RACE_ID=" + race.id,
                            "HYDRA_WORKTREE=" + a.worktree, "HYDRA_TASK=Say who you are"));
  }
  EXPECT_THAT(ids, ElementsAre("writer-1", "writer-2", "writer-3"));
  EXPECT_EQ(std::set<std::string>(branches.begin(), branches.end()).size(), 3u);
  EXPECT_EQ(std::set<std::string>(worktrees.begin(), worktrees.end()).size(), 3u);
  const std::string listed = git("worktree list --porcelain");
  for (const auto& b : branches) EXPECT_THAT(listed, HasSubstr("branch refs/heads/" + b));
}

// 4. Queueing.
TEST_F(WorkspaceRaceTest, AtMostMaxConcurrentAgentsRunAndTheRestWaitTheirTurn) {
  const fs::path marks = outside("marks.txt");
  std::vector<AgentDef> agents;
  std::vector<std::string> names;
  for (int i = 1; i <= 5; ++i) {
    names.push_back("worker" + std::to_string(i));
    agents.push_back(scripted(names.back(), {"mark", marks.string(), "start", "sleep", "0.5", "mark",
                                             marks.string(), "end"}));
  }
  open(agents, /*maxConcurrent=*/2);

  std::string started = start(names).raceId;
  std::size_t mostRunning = 0;
  runUntil([&] {
    mostRunning = std::max(mostRunning, ws_->runningAgents());
    return over(started);
  });
  RaceRecord race = finish(started);

  for (const auto& a : race.agents) EXPECT_EQ(a.status, AgentStatus::Completed) << a.agentId;
  EXPECT_EQ(mostRunning, 2u);
  // The agents' own record of their lives, in the order they happened (appends
  // to one file): never more than two alive at once.
  int alive = 0, most = 0, starts = 0;
  for (const auto& line : lines(readFile(marks))) {
    if (line.starts_with("start ")) {
      ++starts;
      most = std::max(most, ++alive);
    } else if (line.starts_with("end ")) {
      --alive;
    }
  }
  EXPECT_EQ(starts, 5);
  EXPECT_EQ(alive, 0);
  EXPECT_LE(most, 2);
}

// 5. Timeout and cancellation kill whole process groups.
TEST_F(WorkspaceRaceTest, HungAgentIsKilledAtItsTimeoutWithItsGrandchild) {
  const fs::path pidFile = outside("grandchild.pid");
  open({child("hung", {"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile.string(), "--sleep", "60"},
                    /*timeoutSeconds=*/1)});
  RaceRecord race = runRace({"hung"});

  const AgentRecord& hung = agentOf(race, "hung");
  EXPECT_EQ(hung.status, AgentStatus::TimedOut);
  EXPECT_THAT(hung.error.value_or(""), HasSubstr("timed out after 1 s"));
  // It shrugged off SIGTERM, so it took SIGKILL.
  EXPECT_EQ(hung.signal, SIGKILL);
  ASSERT_TRUE(hung.pid);
  ASSERT_TRUE(fs::exists(pidFile));
  EXPECT_TRUE(waitGone(*hung.pid)) << "agent " << *hung.pid << " still runs";
  EXPECT_TRUE(waitGone(readPid(pidFile))) << "its grandchild still runs";
}

TEST_F(WorkspaceRaceTest, CancellingOneAgentKillsItsGroupWhileTheOthersRunOn) {
  const fs::path pidFile = outside("grandchild.pid");
  const fs::path go = outside("go");
  open({child("hung", {"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile.string(), "--sleep", "60"}),
              scripted("steady", {"wait-for", go.string(), "write", "result.txt", "done"})});
  std::string started = start({"hung", "steady"}).raceId;
  ASSERT_TRUE(runUntil([&] {
    return fs::exists(pidFile) && statusOf(started, "steady") == AgentStatus::Running;
  }));

  EXPECT_TRUE(ws_->cancel(started, "hung"));
  ASSERT_TRUE(runUntil([&] { return statusOf(started, "hung") == AgentStatus::Cancelled; }));
  EXPECT_FALSE(ws_->cancel(started, "hung")) << "nothing left to cancel";
  EXPECT_EQ(statusOf(started, "steady"), AgentStatus::Running);
  const AgentRecord hung = agentOf(ws_->record(started), "hung");
  ASSERT_TRUE(hung.pid);
  EXPECT_TRUE(waitGone(*hung.pid));
  EXPECT_TRUE(waitGone(readPid(pidFile)));

  writeFile(go, "");
  RaceRecord race = finish(started);
  EXPECT_EQ(race.status, RaceStatus::Completed);
  EXPECT_EQ(agentOf(race, "hung").status, AgentStatus::Cancelled);
  const AgentRecord& steady = agentOf(race, "steady");
  EXPECT_EQ(steady.status, AgentStatus::Completed);
  EXPECT_EQ(git("show " + steady.branch + ":result.txt"), "done");
}

TEST_F(WorkspaceRaceTest, CancellingTheRaceKillsEveryAgentAndNeverStartsQueuedOnes) {
  const fs::path pid1 = outside("one.pid"), pid2 = outside("two.pid"), marks = outside("marks.txt");
  auto hung = [](std::string name, const fs::path& pidFile) {
    return child(std::move(name),
                 {"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile.string(), "--sleep", "60"});
  };
  open({hung("one", pid1), hung("two", pid2), scripted("late", {"mark", marks.string(), "start"})},
             /*maxConcurrent=*/2);
  std::string started = start({"one", "two", "late"}).raceId;
  ASSERT_TRUE(runUntil([&] { return fs::exists(pid1) && fs::exists(pid2); }));
  EXPECT_EQ(statusOf(started, "late"), AgentStatus::Queued);

  EXPECT_TRUE(ws_->cancel(started));
  RaceRecord race = finish(started);

  EXPECT_EQ(race.status, RaceStatus::Cancelled);
  for (const auto& a : race.agents) EXPECT_EQ(a.status, AgentStatus::Cancelled) << a.agentId;
  EXPECT_FALSE(agentOf(race, "late").pid);
  EXPECT_FALSE(fs::exists(marks)) << "the queued agent was started";
  for (const char* id : {"one", "two"}) {
    ASSERT_TRUE(agentOf(race, id).pid);
    EXPECT_TRUE(waitGone(*agentOf(race, id).pid)) << id;
  }
  EXPECT_TRUE(waitGone(readPid(pid1)));
  EXPECT_TRUE(waitGone(readPid(pid2)));
  EXPECT_FALSE(ws_->cancel(race.id)) << "a finished race has nothing to cancel";
}

TEST_F(WorkspaceRaceTest, CancellingARaceBeforeItsWorktreesExistStartsNoAgent) {
  const fs::path marks = outside("marks.txt");
  open({scripted("one", {"mark", marks.string(), "start"}), scripted("two", {"mark", marks.string(), "start"})});
  std::string started = start({"one", "two"}).raceId;
  // Nothing has run on the io_context yet: the worktrees are still being made.
  EXPECT_TRUE(ws_->cancel(started));
  RaceRecord race = finish(started);

  EXPECT_EQ(race.status, RaceStatus::Cancelled);
  for (const auto& a : race.agents) {
    EXPECT_EQ(a.status, AgentStatus::Cancelled) << a.agentId;
    EXPECT_FALSE(a.pid) << a.agentId;
  }
  EXPECT_FALSE(fs::exists(marks)) << "an agent of a cancelled race was started";
}

TEST_F(WorkspaceRaceTest, DestroyingTheEngineMidRaceKillsItsAgentsAndMarksTheRaceInterrupted) {
  const fs::path pidFile = outside("grandchild.pid");
  open({child("hung", {"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile.string(), "--sleep", "60"}),
              scripted("waiting", {"sleep", "60"})},
             /*maxConcurrent=*/1);
  std::string started = start({"hung", "waiting"}).raceId;
  ASSERT_TRUE(runUntil([&] { return fs::exists(pidFile); }));
  const pid_t agentPid = agentOf(ws_->record(started), "hung").pid.value();

  // What becomes of a workspace whose hydra stops: its destructor interrupts the race.
  ws_.reset();

  EXPECT_TRUE(waitGone(agentPid));
  EXPECT_TRUE(waitGone(readPid(pidFile)));
  auto race = RaceStore(repo_.root()).load(started);
  ASSERT_TRUE(race);
  EXPECT_EQ(race->status, RaceStatus::Interrupted);
  EXPECT_TRUE(race->finishedAt);
  EXPECT_EQ(agentOf(*race, "hung").status, AgentStatus::Interrupted);
  EXPECT_EQ(agentOf(*race, "waiting").status, AgentStatus::Interrupted);
  EXPECT_FALSE(agentOf(*race, "waiting").pid) << "the queued agent never ran";
}

// Recovery removes a worktree only when no record names it and the hydra
// that made it is gone: one made by a live hydra (here, this process) stays.
TEST_F(WorkspaceRaceTest, RecoverRemovesOnlyTheWorktreesWhoseRaceRecordAndHydraAreGone) {
  open({scripted("a", {"write", "a.txt", "a"})});
  RaceRecord forgotten = runRace({"a"});
  RaceRecord forgottenLive = runRace({"a"});
  RaceRecord kept = runRace({"a"});
  const AgentRecord& lost = agentOf(forgotten, "a");
  const AgentRecord& alive = agentOf(forgottenLive, "a");
  const AgentRecord& stays = agentOf(kept, "a");
  ASSERT_TRUE(fs::is_directory(lost.worktree));
  ASSERT_TRUE(RaceStore(repo_.root()).remove(forgotten.id));
  ASSERT_TRUE(RaceStore(repo_.root()).remove(forgottenLive.id));
  // The first was made by a hydra that has gone (its pid now names a later process).
  const fs::path metadata = repo_.root() / ".git/worktrees" / fs::path(lost.worktree).filename() / "hydra";
  ProcessOwner gone = ProcessOwner::self();
  const std::string self = "owner " + toWord(gone);
  gone.startTime += 1;
  std::string text = readFile(metadata);
  ASSERT_NE(text.find(self), std::string::npos) << text;
  writeFile(metadata, text.replace(text.find(self), self.size(), "owner " + toWord(gone)));

  EXPECT_TRUE(ws_->recover().empty()) << "no race was interrupted";

  EXPECT_FALSE(fs::exists(lost.worktree));
  EXPECT_EQ(git("branch --list " + lost.branch), "");
  EXPECT_TRUE(fs::is_directory(alive.worktree)) << "its hydra still runs";
  EXPECT_EQ(git("rev-parse " + alive.branch), alive.commit.value());
  EXPECT_TRUE(fs::is_directory(stays.worktree));
  EXPECT_EQ(git("rev-parse " + stays.branch), stays.commit.value());
}

// 6. Crashes.
TEST_F(WorkspaceRaceTest, CrashingAgentsFailWithTheirExitCodeOrSignalAndTheOthersComplete) {
  open({child("quitter", {"--print", "2", "--exit", "3"}), child("crasher", {"--raise", "9"}),
              scripted("fine", {"write", "ok.txt", "ok"})});
  RaceRecord race = runRace({"quitter", "crasher", "fine"});

  EXPECT_EQ(race.status, RaceStatus::Completed);
  const AgentRecord& quitter = agentOf(race, "quitter");
  EXPECT_EQ(quitter.status, AgentStatus::Failed);
  EXPECT_EQ(quitter.exitCode, 3);
  EXPECT_FALSE(quitter.signal);
  EXPECT_THAT(quitter.error.value_or(""), HasSubstr("exited with code 3"));
  const AgentRecord& crasher = agentOf(race, "crasher");
  EXPECT_EQ(crasher.status, AgentStatus::Failed);
  EXPECT_EQ(crasher.signal, SIGKILL);
  EXPECT_FALSE(crasher.exitCode);
  EXPECT_THAT(crasher.error.value_or(""), HasSubstr("killed by signal 9"));
  const AgentRecord& fine = agentOf(race, "fine");
  EXPECT_EQ(fine.status, AgentStatus::Completed);
  EXPECT_EQ(git("show " + fine.branch + ":ok.txt"), "ok");
}

// 7. A binary that is not there: refused before anything starts, saying where it looked.
TEST_F(WorkspaceRaceTest, AnAgentWhoseBinaryIsMissingIsRefusedBeforeTheRaceStarts) {
  AgentDef ghost{"ghost", "hydra-test-no-such-agent-binary", {}, std::nullopt, "command", ""};
  open({ghost, scripted("fine", {"write", "ok.txt", "ok"})});
  try {
    start({"ghost", "fine"});
    FAIL() << "no WorkspaceError";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.kind(), WorkspaceError::Kind::AgentUnavailable);
    EXPECT_THAT(e.what(), HasSubstr("hydra-test-no-such-agent-binary"));
    EXPECT_THAT(e.what(), HasSubstr("PATH"));
    EXPECT_EQ(e.data().at("agent").as_string(), "ghost");
  }
  EXPECT_TRUE(ws_->races(0, 10).races.empty());
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");
}

// An agent whose adapter needs more than its binary (claude-acp drives the
// installed claude): refused before anything starts, and listed as unavailable.
TEST_F(WorkspaceRaceTest, AnAgentMissingWhatItsAdapterNeedsIsRefusedBeforeTheRaceStarts) {
  AgentDef claudeAcp{"claude-acp", kScriptedAgent.string(), {}, std::nullopt, "claude-acp",
                     "env = { PATH = \"" + outside("no-claude-here").string() + "\" }"};
  open({claudeAcp, scripted("fine", {"write", "ok.txt", "ok"})});
  try {
    start({"claude-acp", "fine"});
    FAIL() << "no WorkspaceError";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.kind(), WorkspaceError::Kind::AgentUnavailable);
    EXPECT_THAT(e.what(), HasSubstr("`claude` is not on PATH"));
    EXPECT_EQ(e.data().at("agent").as_string(), "claude-acp");
  }
  EXPECT_TRUE(ws_->races(0, 10).races.empty());
  auto agents = ws_->agents();
  auto info = std::find_if(agents.begin(), agents.end(), [](const AgentInfo& a) { return a.name == "claude-acp"; });
  ASSERT_NE(info, agents.end());
  EXPECT_FALSE(info->available);
  EXPECT_THAT(info->problem.value_or(""), HasSubstr("CLAUDE_CODE_EXECUTABLE"));
}

// 8. A flood of output.
TEST_F(WorkspaceRaceTest, FloodOfOutputIsLoggedCompletelyWhileMemoryStaysBounded) {
  constexpr long long kBytes = 200LL * 1024 * 1024;
  open({child("flood", {"--print-bytes", std::to_string(kBytes)})});
  // A live view that never reads: the bus must drop lines for it, not hoard them.
  SubscriptionOptions options;
  auto idle = ws_->bus().subscribe(options);

  RaceRecord race = runRace({"flood"});

  EXPECT_EQ(agentOf(race, "flood").status, AgentStatus::Completed);
  const fs::path log = repo_.root() / ".hydra" / "races" / race.id / "flood.log";
  EXPECT_EQ(static_cast<long long>(fs::file_size(log)), kBytes);
  std::ifstream in(log, std::ios::binary);
  in.seekg(-1024, std::ios::end);
  std::string tail(1024, '\0');
  in.read(tail.data(), 1024);
  EXPECT_EQ(tail, std::string(1023, 'x') + "\n");

  rusage usage{};
  ASSERT_EQ(::getrusage(RUSAGE_SELF, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 120L * 1024) << "peak RSS in KiB";
  EXPECT_GT(idle->droppedLines(), 0u);
  EXPECT_LE(idle->queuedBytes(), options.maxBytes + 64 * 1024);
}

// 9. Records on disk.
TEST_F(WorkspaceRaceTest, RaceJsonAndEventLogRecordTheWholeRace) {
  open({scripted("good", {"say", "working", "write", "good.txt", "good"}),
              scripted("bad", {"shout", "bad news", "exit", "5"})});
  RaceRecord finished = runRace({"good", "bad"});
  const fs::path dir = repo_.root() / ".hydra" / "races" / finished.id;
  // Each agent's output, stdout and stderr apart.
  EXPECT_EQ(readFile(dir / "good.log"), "working\n");
  EXPECT_EQ(readFile(dir / "bad.log"), "");
  EXPECT_EQ(readFile(dir / "bad.stderr.log"), "bad news\n");

  json::value doc = json::parse(readFile(dir / "race.json"));
  const json::object& race = doc.as_object();
  EXPECT_EQ(race.at("id").as_string(), finished.id);
  EXPECT_EQ(race.at("status").as_string(), "completed");
  EXPECT_EQ(race.at("baseCommit").as_string(), git("rev-parse HEAD"));
  EXPECT_TRUE(parseTimestamp(race.at("createdAt").as_string()));
  EXPECT_TRUE(parseTimestamp(race.at("finishedAt").as_string()));
  const json::array& agents = race.at("agents").as_array();
  ASSERT_EQ(agents.size(), 2u);
  for (const auto& value : agents) {
    const json::object& a = value.as_object();
    const std::string id(a.at("agentId").as_string());
    SCOPED_TRACE(id);
    EXPECT_EQ(a.at("status").as_string(), id == "good" ? "completed" : "failed");
    EXPECT_EQ(a.at("exitCode").as_int64(), id == "good" ? 0 : 5);
    auto startedAt = parseTimestamp(a.at("startedAt").as_string());
    auto finishedAt = parseTimestamp(a.at("finishedAt").as_string());
    ASSERT_TRUE(startedAt && finishedAt);
    EXPECT_LE(*startedAt, *finishedAt);
    EXPECT_GE(a.at("durationMs").as_int64(), 0);
    EXPECT_GT(a.at("pid").as_int64(), 0);
    EXPECT_EQ(a.at("commit").as_string(), git("rev-parse " + std::string(a.at("branch").as_string())));
  }

  std::vector<std::string> types;
  for (const auto& line : lines(readFile(dir / "events.jsonl"))) {
    const json::object event = json::parse(line).as_object();
    EXPECT_EQ(event.at("raceId").as_string(), finished.id);
    EXPECT_TRUE(parseTimestamp(event.at("time").as_string()));
    types.emplace_back(event.at("type").as_string());
  }
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.front(), "raceStarted");
  EXPECT_EQ(types.back(), "raceFinished");
  EXPECT_EQ(std::count(types.begin(), types.end(), "raceStarted"), 1);
  EXPECT_EQ(std::count(types.begin(), types.end(), "raceFinished"), 1);
  EXPECT_EQ(std::count(types.begin(), types.end(), "agentStarted"), 2);
  EXPECT_EQ(std::count(types.begin(), types.end(), "agentFinished"), 2);
}

// 10. Requests hydra refuses; none of them leaves a race behind.
TEST_F(WorkspaceRaceTest, UnknownAgentIsRefusedListingTheKnownOnes) {
  open({scripted("alpha", {"say", "hi"}), scripted("beta", {"say", "hi"})});
  try {
    start({"alpha", "gamma"});
    FAIL() << "no WorkspaceError";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.kind(), WorkspaceError::Kind::UnknownAgentName);
    EXPECT_THAT(e.what(), HasSubstr("gamma"));
    EXPECT_THAT(e.what(), HasSubstr("alpha"));
    EXPECT_THAT(e.what(), HasSubstr("beta"));
    EXPECT_THAT(e.what(), HasSubstr("claude"));
  }
  const fs::path racesDir = repo_.root() / ".hydra" / "races";
  EXPECT_TRUE(ws_->races(0, 10).races.empty());
  EXPECT_FALSE(fs::exists(racesDir) && !fs::is_empty(racesDir))
      << "a refused race left a directory behind";
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");
}

TEST_F(WorkspaceRaceTest, EmptyTaskIsRefused) {
  open({scripted("alpha", {"say", "hi"})});
  EXPECT_THROW(start({"alpha"}, ""), WorkspaceError);
  EXPECT_THROW(start({"alpha"}, " \n\t "), WorkspaceError);
  EXPECT_THROW(start({}, "a task"), WorkspaceError);
  EXPECT_TRUE(ws_->races(0, 10).races.empty());
}

TEST_F(WorkspaceRaceTest, UnknownBaseRefIsRefusedNamingIt) {
  open({scripted("alpha", {"say", "hi"})});
  try {
    start({"alpha"}, "a task", "no-such-branch");
    FAIL() << "no WorkspaceError";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.kind(), WorkspaceError::Kind::RaceRefused);
    EXPECT_THAT(e.what(), HasSubstr("no-such-branch"));
  }
  EXPECT_TRUE(ws_->races(0, 10).races.empty());
}

// 11. Live events.
TEST_F(WorkspaceRaceTest, SubscriberSeesTheRaceUnfoldInOrderWithParsedAgentEvents) {
  // Claude's adapter reading a captured claude stream, replayed by the scripted
  // agent (which also checks that {task} reached it).
  AgentDef claude = scripted("claude", {"expect-task", "{task}", "print-file", (kFixtures / "claude.stream.jsonl").string()});
  claude.adapter = "claude";
  open({claude});
  auto subscription = ws_->bus().subscribe();
  RaceRecord race = runRace({"claude"}, "Create hello.txt");
  ASSERT_EQ(agentOf(race, "claude").status, AgentStatus::Completed) << agentOf(race, "claude").error.value_or("");

  std::vector<std::string> kinds;
  std::uint64_t lastSeq = 0;
  bool sawToolCall = false, sawSummary = false;
  for (const RaceEvent& event : subscription->drain()) {
    EXPECT_GT(event.seq, lastSeq);
    lastSeq = event.seq;
    std::visit(
        [&](const auto& e) {
          using T = std::decay_t<decltype(e)>;
          EXPECT_EQ(e.raceId, race.id);
          if constexpr (std::is_same_v<T, RaceStarted>) kinds.push_back("RaceStarted");
          if constexpr (std::is_same_v<T, AgentStarted>) kinds.push_back("AgentStarted");
          if constexpr (std::is_same_v<T, AgentFinished>) {
            kinds.push_back("AgentFinished");
            EXPECT_EQ(e.status, AgentStatus::Completed);
            EXPECT_TRUE(e.usage) << "the result line's usage";
          }
          if constexpr (std::is_same_v<T, ScoringStarted>) kinds.push_back("ScoringStarted");
          if constexpr (std::is_same_v<T, RaceFinished>) kinds.push_back("RaceFinished");
          if constexpr (std::is_same_v<T, OutputDropped>) kinds.push_back("OutputDropped");
          if constexpr (std::is_same_v<T, AgentOutput>) {
            if (kinds.empty() || kinds.back() != "AgentOutput") kinds.push_back("AgentOutput");
            for (const auto& ev : e.events) {
              sawToolCall = sawToolCall || ev.kind == EventKind::ToolCall;
              sawSummary = sawSummary || ev.kind == EventKind::Summary;
            }
          }
        },
        event.body);
  }
  EXPECT_THAT(kinds, ElementsAre("RaceStarted", "AgentStarted", "AgentOutput", "AgentFinished", "ScoringStarted",
                                 "RaceFinished"));
  EXPECT_TRUE(sawToolCall);
  EXPECT_TRUE(sawSummary);
  EXPECT_TRUE(agentOf(race, "claude").usage) << "usage reaches the record";
}


// [scoring] auto_merge: the winner is merged into the user's branch by itself,
// only when it is switched on and the winner reaches auto_merge_minimum.
TEST_F(WorkspaceRaceTest, AutoMergeMergesAnEligibleWinnerOnlyWhenSwitchedOn) {
  const std::string scoringOn = "\n[scoring]\nauto_merge = true\n[scoring.thresholds]\nauto_merge_minimum = 50.0\n";
  open({scripted("fixer", {"write", "fixed.txt", "the fix"})}, 4, scoringOn);
  const std::string before = git("rev-parse HEAD");
  RaceRecord race = runRace({"fixer"});
  EXPECT_EQ(race.status, RaceStatus::Completed);
  EXPECT_NE(git("rev-parse HEAD"), before);
  EXPECT_EQ(readFile(repo_.root() / "fixed.txt"), "the fix\n");
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");  // merged, then cleaned up
  ASSERT_TRUE(race.autoMerge);
  EXPECT_EQ(race.autoMerge->agentId, "fixer");
  EXPECT_EQ(race.autoMerge->outcome, "fastForward");
  EXPECT_EQ(race.autoMerge->targetBranch, "main");
  // The race is marked merged, on disk too, and its scores say auto-merge was on.
  ASSERT_TRUE(race.merged);
  EXPECT_EQ(race.merged->agentId, "fixer");
  EXPECT_TRUE(race.merged->automatic);
  EXPECT_EQ(race.merged->commit, git("rev-parse HEAD"));
  ASSERT_TRUE(ws_->record(race.id).merged);
  EXPECT_TRUE(ws_->scores(race.id).autoMergeEnabled);
  EXPECT_THROW(ws_->merge(race.id, std::nullopt, true, false), WorkspaceError) << "a merged race is not merged twice";
}

TEST_F(WorkspaceRaceTest, WithoutAutoMergeTheUsersBranchIsLeftAlone) {
  open({scripted("fixer", {"write", "fixed.txt", "the fix"})});
  const std::string before = git("rev-parse HEAD");
  RaceRecord race = runRace({"fixer"});
  EXPECT_EQ(git("rev-parse HEAD"), before);
  EXPECT_FALSE(fs::exists(repo_.root() / "fixed.txt"));
  EXPECT_NE(git("branch --list 'hydra/*'"), "");
  EXPECT_FALSE(race.merged);
  EXPECT_FALSE(ws_->scores(race.id).autoMergeEnabled);
}

TEST_F(WorkspaceRaceTest, RaceWhereNoAgentCompletesIsFailed) {
  open({child("crasher", {"--exit", "3"})});
  RaceRecord race = runRace({"crasher"});
  EXPECT_EQ(race.status, RaceStatus::Failed);
  EXPECT_TRUE(ws_->scores(race.id).allFailed);
}

}  // namespace
}  // namespace hydra::core
