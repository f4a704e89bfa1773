// An agent run against a real worktree and real processes (the scripted agent
// and hydra_test_child), and the workspace's agent slots.

#include "core/run/agent_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <thread>

#include "core/config/config.h"
#include "core/git/git.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::readFile;
using testing::TempRepo;

const fs::path kScriptedAgent = fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "agents" / "scripted_agent.sh";
const fs::path kTestChild = HYDRA_TEST_CHILD;

// --- AgentSlots --------------------------------------------------------------------------

TEST(AgentSlotsTest, HandsOutUpToTheLimitAndTheRestWaitInOrder) {
  int limit = 2;
  AgentSlots slots([&] { return limit; });
  std::vector<int> started;
  for (int i = 1; i <= 4; ++i) slots.acquire([&started, i] { started.push_back(i); });
  EXPECT_THAT(started, ElementsAre(1, 2));
  EXPECT_EQ(slots.running(), 2u);
  EXPECT_EQ(slots.waiting(), 2u);
  slots.release();
  EXPECT_THAT(started, ElementsAre(1, 2, 3));
  slots.release();
  slots.release();
  EXPECT_THAT(started, ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(slots.running(), 1u);
}

TEST(AgentSlotsTest, TheLimitIsReadAgainEachTimeASlotMayBeHandedOut) {
  int limit = 1;
  AgentSlots slots([&] { return limit; });
  std::vector<int> started;
  for (int i = 1; i <= 3; ++i) slots.acquire([&started, i] { started.push_back(i); });
  EXPECT_THAT(started, ElementsAre(1));
  limit = 2;  // hydra.toml changed: the next hand-out uses it
  slots.release();
  EXPECT_THAT(started, ElementsAre(1, 2, 3));
  limit = 0;  // nonsense is read as one
  AgentSlots one([&] { return limit; });
  int ran = 0;
  one.acquire([&] { ++ran; });
  EXPECT_EQ(ran, 1);
}

TEST(AgentSlotsTest, AWithdrawnWaiterNeverStarts) {
  AgentSlots slots([] { return 1; });
  std::vector<int> started;
  slots.acquire([&] { started.push_back(1); });
  auto ticket = slots.acquire([&] { started.push_back(2); });
  slots.acquire([&] { started.push_back(3); });
  EXPECT_TRUE(slots.withdraw(ticket));
  EXPECT_FALSE(slots.withdraw(ticket));
  slots.release();
  EXPECT_THAT(started, ElementsAre(1, 3));
}

// --- AgentRun ----------------------------------------------------------------------------

class AgentRunTest : public ::testing::Test {
 protected:
  AgentRunTest() { repo.isolateLibgit2(); }

  AgentRunSpec spec(const std::string& agentId, std::string binary, std::vector<std::string> args,
                    std::string adapter = "command") {
    AgentRunSpec s;
    s.raceId = "race1";
    s.agentId = agentId;
    s.agent.name = agentId;
    s.agent.adapter = std::move(adapter);
    s.agent.binary = std::move(binary);
    s.agent.args = std::move(args);
    s.prompt = "Do the task";
    s.checkout = worktrees.create(agentId, repo.git("rev-parse HEAD"), "t1");
    s.timeout = 30s;
    s.env = {{"HYDRA_TASK", s.prompt}};
    s.binaryBase = repo.root();
    s.killGrace = 500ms;
    s.commitMessage = "hydra: " + agentId;
    return s;
  }

  std::shared_ptr<AgentRun> start(AgentRunSpec s) {
    return AgentRun::start(context(), std::move(s), [this](const AgentFinished& f) { results.push_back(f); });
  }

  RunContext context() {
    return RunContext{.io = io,
                      .pool = pool,
                      .publish = [this](RaceEventBody e) { events.push_back(std::move(e)); },
                      .slots = slots,
                      .worktrees = worktrees,
                      .redactor = redactor};
  }

  bool runUntil(const std::function<bool()>& done, std::chrono::seconds limit = 60s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io.run_one_for(20ms);
    }
    return true;
  }

  std::vector<std::string> outputLines(OutputStream stream) const {
    std::vector<std::string> out;
    for (const auto& e : events) {
      if (const auto* o = std::get_if<AgentOutput>(&e); o && o->stream == stream && !o->line.empty()) {
        out.push_back(o->line);
      }
    }
    return out;
  }

  git::LibGit2 libgit2;
  TempRepo repo;
  WorktreeManager worktrees{repo.root(), ".hydra-workspaces"};
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  asio::thread_pool pool{2};
  int limit = 4;
  AgentSlots slots{[this] { return limit; }};
  std::shared_ptr<const Redactor> redactor = std::make_shared<Redactor>(std::vector<std::string>{"hunter2-secret-value"});
  std::vector<RaceEventBody> events;
  std::vector<AgentFinished> results;
};

TEST_F(AgentRunTest, RunsInItsCheckoutToldOnlyAboutItAndCommitsWhatItLeft) {
  auto s = spec("writer", kScriptedAgent.string(), {"env", "env.txt", "write", "out.txt", "done"});
  const Worktree checkout = s.checkout;
  start(std::move(s));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));

  const AgentFinished& f = results.at(0);
  EXPECT_EQ(f.status, AgentStatus::Completed);
  ASSERT_TRUE(f.commit);
  EXPECT_EQ(*f.commit, repo.git("rev-parse " + checkout.branch));
  EXPECT_EQ(repo.git("show " + checkout.branch + ":out.txt"), "done");
  // $PWD is the checkout, not hydra's own directory: CLIs that work in $PWD stay inside.
  EXPECT_EQ(repo.git("show " + checkout.branch + ":env.txt"),
            "cwd=" + checkout.path.string() + "\nHYDRA_AGENT_ID=writer\nHYDRA_RACE_ID=race1\nHYDRA_WORKTREE=" +
                checkout.path.string() + "\nHYDRA_TASK=Do the task");
  // Started, then finished: the same AgentFinished is published and handed back.
  ASSERT_GE(events.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<AgentStarted>(events.front()));
  EXPECT_EQ(std::get<AgentFinished>(events.back()).commit, f.commit);
  EXPECT_EQ(slots.running(), 0u) << "the slot was given back";
}

TEST_F(AgentRunTest, AFailedRunKeepsTheCLIsOwnLastWordsAndTheEndOfItsStderr) {
  start(spec("quitter", kScriptedAgent.string(), {"shout", "warming up", "shout", "model said: quota exceeded", "exit", "3"}));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  const AgentFinished& f = results.at(0);
  EXPECT_EQ(f.status, AgentStatus::Failed);
  EXPECT_EQ(f.exitCode, 3);
  EXPECT_EQ(f.error, "exited with code 3: model said: quota exceeded");
  EXPECT_EQ(f.stderrTail, "warming up\nmodel said: quota exceeded");
}

TEST_F(AgentRunTest, AnAdapterThatCannotCompleteItsEnvironmentFailsTheRunBeforeItStarts) {
  // claude-acp drives the installed `claude`; with none on the agent's PATH it
  // cannot run, and says so instead of starting an agent that would hang.
  auto s = spec("claude-acp", kScriptedAgent.string(), {"write", "ran.txt", "yes"}, "claude-acp");
  s.agent.env = {{"PATH", (repo.outside() / "no-claude-here").string()}};
  start(std::move(s));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  const AgentFinished& f = results.at(0);
  EXPECT_EQ(f.status, AgentStatus::Failed);
  ASSERT_TRUE(f.error);
  EXPECT_THAT(*f.error, HasSubstr("cannot start: "));
  EXPECT_THAT(*f.error, HasSubstr("`claude` is not on PATH"));
  EXPECT_FALSE(f.commit) << "nothing ran, so nothing is committed";
  EXPECT_EQ(slots.running(), 0u) << "the slot was given back";
}

TEST_F(AgentRunTest, SecretsAreMaskedInEverythingItPublishes) {
  start(spec("leaky", kScriptedAgent.string(),
             {"say", "token hunter2-secret-value", "shout", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456"}));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  auto out = outputLines(OutputStream::Stdout);
  auto err = outputLines(OutputStream::Stderr);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(out[0].find("hunter2-secret-value"), std::string::npos) << out[0];
  EXPECT_EQ(err[0].find("abcdefghijklmnopqrstuvwxyz123456"), std::string::npos) << err[0];
  EXPECT_EQ(results.at(0).stderrTail.find("abcdefghijklmnopqrstuvwxyz123456"), std::string::npos);
}

TEST_F(AgentRunTest, APlainTextAgentsFinalMessageIsTheEndOfWhatItPrinted) {
  // A reviewer run as a command says its review on stdout: that is its last word,
  // masked like everything else, and its stderr is not part of it.
  start(spec("reviewer", kScriptedAgent.string(),
             {"say", "", "say", "add() subtracts.", "shout", "thinking", "say", "Key hunter2-secret-value is exposed.",
              "say", ""}));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  EXPECT_EQ(results.at(0).finalMessage, "add() subtracts.\nKey [REDACTED] is exposed.");
  // Its output events are what they were: no summary repeating it.
  for (const auto& e : events) {
    if (const auto* o = std::get_if<AgentOutput>(&e)) {
      for (const auto& ev : o->events) {
        if (ev.kind == EventKind::Summary) {
          EXPECT_EQ(ev.text, "");
        }
      }
    }
  }
}

TEST_F(AgentRunTest, ARunCarriesItsPhaseAndAnAdapterThatCannotResumeStartsAfresh) {
  // The command adapter cannot continue a session: the run starts afresh.
  auto s = spec("builder", kScriptedAgent.string(), {"say", "hi"});
  s.resumeSession = "3098744b-cf4b-491d-b056-cc0c8dfb2b99";
  s.phase = RunPhase{"refine", 2};
  start(std::move(s));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  const auto& started = std::get<AgentStarted>(events.front());
  EXPECT_FALSE(started.resumed);
  EXPECT_EQ(started.phase, (RunPhase{"refine", 2}));
  EXPECT_EQ(results.at(0).phase, (RunPhase{"refine", 2}));
}

TEST_F(AgentRunTest, AHungAgentTimesOutWithItsGrandchild) {
  fs::path pidFile = repo.outside() / "grandchild.pid";
  fs::create_directories(repo.outside());
  auto s = spec("hung", kTestChild.string(),
                {"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile.string(), "--sleep", "60"});
  s.timeout = 1s;
  start(std::move(s));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  EXPECT_EQ(results.at(0).status, AgentStatus::TimedOut);
  EXPECT_EQ(results.at(0).error, "timed out after 1 s");
  pid_t grandchild = std::stoi(readFile(pidFile));
  for (int i = 0; i < 200 && ::kill(grandchild, 0) == 0; ++i) std::this_thread::sleep_for(25ms);
  EXPECT_NE(::kill(grandchild, 0), 0) << "the grandchild outlived the run";
}

// The summary every adapter makes of a stream that hydra ended.
AgentEvent summaryOf(const std::vector<RaceEventBody>& events) {
  for (const auto& e : events) {
    if (const auto* o = std::get_if<AgentOutput>(&e)) {
      for (const auto& event : o->events) {
        if (event.kind == EventKind::Summary) return event;
      }
    }
  }
  ADD_FAILURE() << "no summary was published";
  return {};
}

TEST_F(AgentRunTest, AStreamHydraCutsOffEndsInErrorForEveryAdapter) {
  for (const std::string adapter : {"command", "opencode", "claude"}) {
    SCOPED_TRACE(adapter);
    events.clear();
    results.clear();
    auto s = spec("slow-" + adapter, kScriptedAgent.string(), {"say", R"({"type":"step_start","part":{}})", "sleep", "60"},
                  adapter);
    s.timeout = 1s;
    start(std::move(s));
    ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
    EXPECT_EQ(results.at(0).status, AgentStatus::TimedOut);
    const AgentEvent summary = summaryOf(events);
    EXPECT_TRUE(summary.isError);
    EXPECT_THAT(summary.warnings, ::testing::Contains("cut off by hydra: timed out after 1 s"));
  }
}

TEST_F(AgentRunTest, ToolCallsTheCLIDeniedAreCountedInItsResult) {
  const std::string result =
      R"({"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done",)"
      R"("permission_denials":[{"tool_name":"Write","tool_input":{"file_path":"/etc/x"}},)"
      R"({"tool_name":"Bash","tool_input":{"command":"curl example.invalid"}}]})";
  start(spec("denied", kScriptedAgent.string(), {"say", result, "--"}, "claude"));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  const AgentFinished& f = results.at(0);
  EXPECT_EQ(f.status, AgentStatus::Completed);
  EXPECT_EQ(f.deniedToolCalls, 2);
  EXPECT_THAT(f.warnings, ::testing::Contains(::testing::HasSubstr("permission denied: Write")));
}

TEST_F(AgentRunTest, ACancelledQueuedRunNeverStartsAndARunningOneIsKilled) {
  limit = 1;
  fs::path go = repo.outside() / "go";
  auto running = start(spec("first", kScriptedAgent.string(), {"wait-for", go.string()}));
  auto queued = start(spec("second", kScriptedAgent.string(), {"write", "x.txt", "x"}));
  ASSERT_TRUE(runUntil([&] { return running->running(); }));
  EXPECT_FALSE(queued->running());

  EXPECT_TRUE(queued->cancel());
  EXPECT_FALSE(queued->cancel()) << "already cancelled";
  EXPECT_TRUE(running->cancel());
  ASSERT_TRUE(runUntil([&] { return results.size() == 2; }));
  for (const auto& f : results) EXPECT_EQ(f.status, AgentStatus::Cancelled) << f.agentId;
  const AgentFinished& second = results[0].agentId == "second" ? results[0] : results[1];
  bool secondStarted = false;
  for (const auto& e : events) {
    if (const auto* s = std::get_if<AgentStarted>(&e); s && s->agentId == "second") secondStarted = true;
  }
  EXPECT_FALSE(secondStarted) << "a cancelled queued run started";
  EXPECT_FALSE(second.commit) << "a run that never started leaves no result";
  EXPECT_EQ(slots.running(), 0u);
}

// --- [general] setup_command -----------------------------------------------------------

TEST_F(AgentRunTest, TheSetupRunsInTheCheckoutBeforeTheAgentWithItsEnvironmentAndIntoItsLog) {
  auto s = spec("builder", kScriptedAgent.string(), {"write", "agent.txt", "ran"});
  s.setupCommand = "echo installing; echo \"port=$HYDRA_PORT agent=$HYDRA_AGENT_ID\" > setup.txt; pwd >> setup.txt; echo warn >&2";
  const Worktree checkout = s.checkout;
  start(std::move(s));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  const AgentFinished& f = results.at(0);
  EXPECT_EQ(f.status, AgentStatus::Completed);
  // The setup ran first, in the checkout, with the agent's port and id; what it wrote is the agent's to keep.
  const std::string setup = repo.git("show " + checkout.branch + ":setup.txt");
  EXPECT_THAT(setup, ::testing::MatchesRegex("port=[0-9]+ agent=builder\n" + checkout.path.string()));
  EXPECT_EQ(repo.git("show " + checkout.branch + ":agent.txt"), "ran");
  EXPECT_THAT(outputLines(OutputStream::Stdout), ::testing::Contains("[setup] installing"));
  EXPECT_THAT(outputLines(OutputStream::Stderr), ::testing::Contains("[setup] warn"));
  // Its output came before the agent started; the agent's time is its own.
  std::size_t firstSetupLine = events.size(), started = events.size();
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (const auto* o = std::get_if<AgentOutput>(&events[i]); o && o->line.starts_with("[setup]")) {
      firstSetupLine = std::min(firstSetupLine, i);
    }
    if (std::holds_alternative<AgentStarted>(events[i])) started = i;
  }
  EXPECT_LT(firstSetupLine, started);
}

TEST_F(AgentRunTest, AFailedSetupIsASetupFailureAndTheAgentNeverRuns) {
  auto s = spec("builder", kScriptedAgent.string(), {"write", "agent.txt", "ran"});
  s.setupCommand = "echo resolving; echo 'npm ERR! missing lockfile' >&2; exit 7";
  const Worktree checkout = s.checkout;
  start(std::move(s));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  const AgentFinished& f = results.at(0);
  EXPECT_EQ(f.status, AgentStatus::SetupFailed);
  EXPECT_EQ(f.error, "setup_command exited with code 7: npm ERR! missing lockfile");
  EXPECT_EQ(f.stderrTail, "resolving\nnpm ERR! missing lockfile");
  EXPECT_FALSE(f.commit) << "nothing of the agent's to keep";
  EXPECT_FALSE(fs::exists(checkout.path / "agent.txt"));
  for (const auto& e : events) EXPECT_FALSE(std::holds_alternative<AgentStarted>(e)) << "the agent started";
  EXPECT_EQ(slots.running(), 0u);
}

TEST_F(AgentRunTest, AHungSetupTimesOutAndACancelledOneEndsWithWhatItStarted) {
  auto hung = spec("slow", kScriptedAgent.string(), {"write", "agent.txt", "ran"});
  hung.setupCommand = "sleep 600";
  hung.timeout = 1s;
  start(std::move(hung));
  const fs::path pidFile = repo.outside() / "setup-child.pid";
  fs::create_directories(repo.outside());
  auto cancelled = spec("stopped", kScriptedAgent.string(), {"write", "agent.txt", "ran"});
  // A child that leaves the setup's process group: it must end with the setup all the same.
  cancelled.setupCommand = "setsid sleep 600 & echo $! > '" + pidFile.string() + "'; wait";
  auto run = start(std::move(cancelled));
  ASSERT_TRUE(runUntil([&] { return fs::exists(pidFile) && fs::file_size(pidFile) > 0; }));
  EXPECT_TRUE(run->cancel());
  ASSERT_TRUE(runUntil([&] { return results.size() == 2; }));
  for (const auto& f : results) {
    if (f.agentId == "slow") {
      EXPECT_EQ(f.status, AgentStatus::SetupFailed);
      EXPECT_EQ(f.error, "setup_command timed out after 1 s");
    } else {
      EXPECT_EQ(f.status, AgentStatus::Cancelled);
    }
  }
  const pid_t child = std::stoi(readFile(pidFile));
  EXPECT_TRUE(runUntil([&] { return ::kill(child, 0) != 0; }, 10s)) << "the setup's child outlived it";
  EXPECT_EQ(slots.running(), 0u);
}

TEST_F(AgentRunTest, ARunWithoutACommitMessageLeavesItsCheckoutAsItIs) {
  auto s = spec("reviewer", kScriptedAgent.string(), {"write", "notes.txt", "scratch"});
  s.commitMessage.reset();
  const Worktree checkout = s.checkout;
  start(std::move(s));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  EXPECT_FALSE(results.at(0).commit);
  EXPECT_EQ(repo.git("rev-parse " + checkout.branch), repo.git("rev-parse HEAD"));
  EXPECT_TRUE(fs::exists(checkout.path / "notes.txt"));
}

// An agent that ran to its end but whose work could not be committed (here
// its worktree left its branch; a full object store alike) has no result:
// it is failed, saying why, not completed without a commit.
TEST_F(AgentRunTest, AResultThatCannotBeCommittedFailsTheAgent) {
  auto s = spec("mover", kScriptedAgent.string(), {"write", "out.txt", "done"});
  TempRepo::gitIn(s.checkout.path, "checkout -q -b elsewhere");
  const Worktree checkout = s.checkout;
  start(std::move(s));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  const AgentFinished& f = results.at(0);
  EXPECT_EQ(f.status, AgentStatus::Failed);
  EXPECT_FALSE(f.commit);
  ASSERT_TRUE(f.error);
  EXPECT_THAT(*f.error, ::testing::HasSubstr("committing its work failed: "));
  EXPECT_THAT(*f.error, ::testing::HasSubstr("not on its branch"));
  EXPECT_EQ(repo.git("rev-parse " + checkout.branch), repo.git("rev-parse HEAD"));
}

TEST_F(AgentRunTest, TheAdaptersSummaryGivesUsageWarningsAndTheFinalMessage) {
  fs::path stream = fs::path(HYDRA_SOURCE_DIR) / "tests" / "core" / "adapter" / "fixtures" /
                    "claude.permission-denied.edited.jsonl";
  start(spec("claude", kScriptedAgent.string(), {"print-file", stream.string(), "--"}, "claude"));
  ASSERT_TRUE(runUntil([&] { return !results.empty(); }));
  const AgentFinished& f = results.at(0);
  EXPECT_EQ(f.status, AgentStatus::Completed);
  EXPECT_TRUE(f.usage);
  EXPECT_FALSE(f.warnings.empty()) << "a denied tool call is reported";
}

TEST(ResumableSessionIdTest, OnlyPlainIdsGoBackOnTheCommandLine) {
  for (const char* id : {"3098744b-cf4b-491d-b056-cc0c8dfb2b99", "ses_e0237229cffeR51etvU9oEdfeK", "a.b:c"}) {
    EXPECT_TRUE(isResumableSessionId(id)) << id;
  }
  for (const char* id : {"", "--dangerously-skip-permissions", "-x", "a b", "a;rm -rf /", "a\nb", "{task}", "../x",
                         "_x"}) {
    EXPECT_FALSE(isResumableSessionId(id)) << id;
  }
  EXPECT_FALSE(isResumableSessionId(std::string(129, 'a')));
}

}  // namespace
}  // namespace hydra::core
