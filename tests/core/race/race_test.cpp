// The race engine in process, against throwaway git repositories and real
// child processes: the scripted agent (tests/fixtures/agents/scripted_agent.sh)
// and hydra_test_child (tests/support), which can hang, ignore SIGTERM, leave a
// grandchild behind, crash or print a flood.

#include "core/race/race.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "core/config/config.h"
#include "core/events/bus.h"
#include "core/git/git.h"
#include "core/race/store.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::readFile;
using testing::TempRepo;
using testing::writeFile;
using Clock = std::chrono::steady_clock;

const fs::path kFixtures = fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "agents";
const fs::path kScriptedAgent = kFixtures / "scripted_agent.sh";
const fs::path kTestChild = HYDRA_TEST_CHILD;

// ---- hydra.toml for the tests ----

struct AgentDef {
  std::string name;
  std::string binary;
  std::vector<std::string> args;
  std::optional<int> timeoutSeconds;
  std::string adapter = "command";
};

// An agent played by the scripted agent, carrying out `steps`.
AgentDef scripted(std::string name, std::vector<std::string> steps) {
  return AgentDef{std::move(name), kScriptedAgent.string(), std::move(steps), std::nullopt};
}

// An agent played by hydra_test_child with these flags.
AgentDef child(std::string name, std::vector<std::string> flags, std::optional<int> timeoutSeconds = std::nullopt) {
  return AgentDef{std::move(name), kTestChild.string(), std::move(flags), timeoutSeconds};
}

std::string tomlString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string tomlArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& item : items) out += (out.size() > 1 ? ", " : "") + tomlString(item);
  return out + "]";
}

std::string configToml(const std::vector<AgentDef>& agents, int maxConcurrent, const std::string& extra = "") {
  std::string toml = "[general]\nmax_concurrent_agents = " + std::to_string(maxConcurrent) +
                     "\ntimeout_seconds = 120\n";
  for (const auto& a : agents) {
    toml += "\n[agents." + a.name + "]\nadapter = " + tomlString(a.adapter) + "\nbinary = " + tomlString(a.binary) +
            "\nargs = " + tomlArray(a.args) + "\n";
    if (a.timeoutSeconds) toml += "timeout_seconds = " + std::to_string(*a.timeoutSeconds) + "\n";
  }
  return toml + extra;
}

// ---- processes ----

// True once `pid` no longer runs. A killed orphan stays a zombie until init
// reaps it, which is not the test's to wait for: a zombie counts as gone.
bool processGone(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  return close == std::string::npos || (close + 2 < stat.size() && stat[close + 2] == 'Z');
}

// Waits for `pid` to be gone; the limit only catches a process that never dies.
bool waitGone(pid_t pid, std::chrono::seconds limit = 15s) {
  auto deadline = Clock::now() + limit;
  while (!processGone(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

pid_t readPid(const fs::path& file) { return static_cast<pid_t>(std::stol(readFile(file))); }

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// ---- the fixture ----

class RaceEngineTest : public ::testing::Test {
 protected:
  RaceEngineTest() { repo_.isolateLibgit2(); }

  RaceEngine& makeEngine(const std::vector<AgentDef>& agents, int maxConcurrent = 4, const std::string& extraToml = "") {
    Config config = parseConfig(configToml(agents, maxConcurrent, extraToml), repo_.root() / "hydra.toml");
    engine_ = std::make_unique<RaceEngine>(io_, repo_.root(), std::move(config), bus_);
    return *engine_;
  }

  // Runs the engine's io_context until `done` holds. The limit only catches hangs.
  bool runUntil(const std::function<bool()>& done, std::chrono::seconds limit = 60s) {
    auto deadline = Clock::now() + limit;
    while (!done()) {
      if (Clock::now() > deadline) {
        ADD_FAILURE() << "gave up waiting after " << limit.count() << " s";
        return false;
      }
      io_.run_one_for(50ms);
    }
    return true;
  }

  RaceRecord start(std::vector<std::string> agents, std::string task = "Fix the parser bug") {
    return engine_->start(RaceRequest{std::move(task), std::move(agents), std::nullopt});
  }

  RaceRecord finish(const RaceRecord& started) {
    runUntil([&] { return !engine_->running(started.id); });
    return engine_->find(started.id).value();
  }

  RaceRecord runRace(std::vector<std::string> agents, std::string task = "Fix the parser bug") {
    return finish(start(std::move(agents), std::move(task)));
  }

  // The agent's status as the engine sees it now.
  AgentStatus statusOf(const std::string& raceId, const std::string& agentId) const {
    return engine_->find(raceId).value().findAgent(agentId)->status;
  }

  std::string git(const std::string& args) const { return repo_.git(args); }

  static const AgentRecord& agentOf(const RaceRecord& race, std::string_view agentId) {
    const AgentRecord* agent = race.findAgent(agentId);
    if (agent == nullptr) throw std::runtime_error("race has no agent " + std::string(agentId));
    return *agent;
  }

  fs::path outside(const std::string& name) const { return repo_.outside() / name; }

  git::LibGit2 libgit2_;
  TempRepo repo_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  EventBus bus_;
  std::unique_ptr<RaceEngine> engine_;  // last: it must go before the io_context and the bus
};

// 1. Isolation.
TEST_F(RaceEngineTest, AgentsEditingTheSameFileStayIsolatedAndTheUsersCheckoutIsUntouched) {
  // The user has work in progress: an unstaged edit and a staged new file.
  repo_.write("README.md", "# sample, being edited\n");
  repo_.write("draft.txt", "draft\n");
  git("add draft.txt");
  const std::string head = git("rev-parse HEAD");
  const std::string headRef = git("symbolic-ref HEAD");
  const std::string status = git("status --porcelain --untracked-files=all");
  const std::string index = readFile(repo_.root() / ".git" / "index");
  ASSERT_EQ(status, " M README.md\nA  draft.txt");

  makeEngine({scripted("one", {"write", "src/a.txt", "from one"}),
              scripted("two", {"write", "src/a.txt", "from two"})});
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
TEST_F(RaceEngineTest, FinishedAgentLeavesExactlyOneCommitOfEverythingItChanged) {
  makeEngine({scripted("editor", {"write", "notes/new.txt", "a new file", "write", "src/a.txt", "alpha, edited",
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

TEST_F(RaceEngineTest, AgentThatChangesNothingRecordsTheBaseCommitAndAddsNone) {
  makeEngine({scripted("idle", {"say", "nothing to do"})});
  const std::string base = git("rev-parse HEAD");
  RaceRecord race = runRace({"idle"});

  const AgentRecord& idle = agentOf(race, "idle");
  EXPECT_EQ(idle.status, AgentStatus::Completed);
  EXPECT_EQ(idle.commit, base);
  EXPECT_EQ(git("rev-parse " + idle.branch), base);
}

// 3. Repeats.
TEST_F(RaceEngineTest, RepeatedAgentGetsNumberedIdsEachWithItsOwnBranchAndWorktree) {
  makeEngine({scripted("writer", {"env", "agent-env.txt"})});
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
TEST_F(RaceEngineTest, AtMostMaxConcurrentAgentsRunAndTheRestWaitTheirTurn) {
  const fs::path marks = outside("marks.txt");
  std::vector<AgentDef> agents;
  std::vector<std::string> names;
  for (int i = 1; i <= 5; ++i) {
    names.push_back("worker" + std::to_string(i));
    agents.push_back(scripted(names.back(), {"mark", marks.string(), "start", "sleep", "0.5", "mark",
                                             marks.string(), "end"}));
  }
  makeEngine(agents, /*maxConcurrent=*/2);

  RaceRecord started = start(names);
  std::size_t mostRunning = 0;
  runUntil([&] {
    mostRunning = std::max(mostRunning, engine_->runningAgents());
    return !engine_->running(started.id);
  });
  RaceRecord race = engine_->find(started.id).value();

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
TEST_F(RaceEngineTest, HungAgentIsKilledAtItsTimeoutWithItsGrandchild) {
  const fs::path pidFile = outside("grandchild.pid");
  makeEngine({child("hung", {"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile.string(), "--sleep", "60"},
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

TEST_F(RaceEngineTest, CancellingOneAgentKillsItsGroupWhileTheOthersRunOn) {
  const fs::path pidFile = outside("grandchild.pid");
  const fs::path go = outside("go");
  makeEngine({child("hung", {"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile.string(), "--sleep", "60"}),
              scripted("steady", {"wait-for", go.string(), "write", "result.txt", "done"})});
  RaceRecord started = start({"hung", "steady"});
  ASSERT_TRUE(runUntil([&] {
    return fs::exists(pidFile) && statusOf(started.id, "steady") == AgentStatus::Running;
  }));

  EXPECT_TRUE(engine_->cancel(started.id, "hung"));
  ASSERT_TRUE(runUntil([&] { return statusOf(started.id, "hung") == AgentStatus::Cancelled; }));
  EXPECT_FALSE(engine_->cancel(started.id, "hung")) << "nothing left to cancel";
  EXPECT_EQ(statusOf(started.id, "steady"), AgentStatus::Running);
  const AgentRecord hung = agentOf(*engine_->find(started.id), "hung");
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

TEST_F(RaceEngineTest, CancellingTheRaceKillsEveryAgentAndNeverStartsQueuedOnes) {
  const fs::path pid1 = outside("one.pid"), pid2 = outside("two.pid"), marks = outside("marks.txt");
  auto hung = [](std::string name, const fs::path& pidFile) {
    return child(std::move(name),
                 {"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile.string(), "--sleep", "60"});
  };
  makeEngine({hung("one", pid1), hung("two", pid2), scripted("late", {"mark", marks.string(), "start"})},
             /*maxConcurrent=*/2);
  RaceRecord started = start({"one", "two", "late"});
  ASSERT_TRUE(runUntil([&] { return fs::exists(pid1) && fs::exists(pid2); }));
  EXPECT_EQ(statusOf(started.id, "late"), AgentStatus::Queued);

  EXPECT_TRUE(engine_->cancel(started.id));
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
  EXPECT_FALSE(engine_->cancel(race.id)) << "a finished race has nothing to cancel";
}

TEST_F(RaceEngineTest, CancellingARaceBeforeItsWorktreesExistStartsNoAgent) {
  const fs::path marks = outside("marks.txt");
  makeEngine({scripted("one", {"mark", marks.string(), "start"}), scripted("two", {"mark", marks.string(), "start"})});
  RaceRecord started = start({"one", "two"});
  // Nothing has run on the io_context yet: the worktrees are still being made.
  EXPECT_TRUE(engine_->cancel(started.id));
  RaceRecord race = finish(started);

  EXPECT_EQ(race.status, RaceStatus::Cancelled);
  for (const auto& a : race.agents) {
    EXPECT_EQ(a.status, AgentStatus::Cancelled) << a.agentId;
    EXPECT_FALSE(a.pid) << a.agentId;
  }
  EXPECT_FALSE(fs::exists(marks)) << "an agent of a cancelled race was started";
}

TEST_F(RaceEngineTest, DestroyingTheEngineMidRaceKillsItsAgentsAndMarksTheRaceInterrupted) {
  const fs::path pidFile = outside("grandchild.pid");
  makeEngine({child("hung", {"--ignore-sigterm", "--spawn-grandchild", "--pid-file", pidFile.string(), "--sleep", "60"}),
              scripted("waiting", {"sleep", "60"})},
             /*maxConcurrent=*/1);
  RaceRecord started = start({"hung", "waiting"});
  ASSERT_TRUE(runUntil([&] { return fs::exists(pidFile); }));
  const pid_t agentPid = agentOf(*engine_->find(started.id), "hung").pid.value();

  // What the server does when its client goes away.
  engine_.reset();

  EXPECT_TRUE(waitGone(agentPid));
  EXPECT_TRUE(waitGone(readPid(pidFile)));
  auto race = RaceStore(repo_.root()).load(started.id);
  ASSERT_TRUE(race);
  EXPECT_EQ(race->status, RaceStatus::Interrupted);
  EXPECT_TRUE(race->finishedAt);
  EXPECT_EQ(agentOf(*race, "hung").status, AgentStatus::Interrupted);
  EXPECT_EQ(agentOf(*race, "waiting").status, AgentStatus::Interrupted);
  EXPECT_FALSE(agentOf(*race, "waiting").pid) << "the queued agent never ran";
}

TEST_F(RaceEngineTest, RecoverRemovesOnlyTheWorktreesWhoseRaceRecordIsGone) {
  makeEngine({scripted("a", {"write", "a.txt", "a"})});
  RaceRecord forgotten = runRace({"a"});
  RaceRecord kept = runRace({"a"});
  const AgentRecord& lost = agentOf(forgotten, "a");
  const AgentRecord& stays = agentOf(kept, "a");
  ASSERT_TRUE(fs::is_directory(lost.worktree));
  ASSERT_TRUE(engine_->store().remove(forgotten.id));

  EXPECT_TRUE(engine_->recover().empty()) << "no race was interrupted";

  EXPECT_FALSE(fs::exists(lost.worktree));
  EXPECT_EQ(git("branch --list " + lost.branch), "");
  EXPECT_TRUE(fs::is_directory(stays.worktree));
  EXPECT_EQ(git("rev-parse " + stays.branch), stays.commit.value());
}

// 6. Crashes.
TEST_F(RaceEngineTest, CrashingAgentsFailWithTheirExitCodeOrSignalAndTheOthersComplete) {
  makeEngine({child("quitter", {"--print", "2", "--exit", "3"}), child("crasher", {"--raise", "9"}),
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

// 7. A binary that is not there.
TEST_F(RaceEngineTest, MissingBinaryFailsThatAgentNamingTheBinaryAndPath) {
  AgentDef ghost{"ghost", "hydra-test-no-such-agent-binary", {}, std::nullopt};
  makeEngine({ghost, scripted("fine", {"write", "ok.txt", "ok"})});
  RaceRecord race = runRace({"ghost", "fine"});

  const AgentRecord& missing = agentOf(race, "ghost");
  EXPECT_EQ(missing.status, AgentStatus::Failed);
  EXPECT_THAT(missing.error.value_or(""), HasSubstr("hydra-test-no-such-agent-binary"));
  EXPECT_THAT(missing.error.value_or(""), HasSubstr("PATH"));
  EXPECT_FALSE(missing.pid);
  EXPECT_EQ(agentOf(race, "fine").status, AgentStatus::Completed);
}

// 8. A flood of output.
TEST_F(RaceEngineTest, FloodOfOutputIsLoggedCompletelyWhileMemoryStaysBounded) {
  constexpr long long kBytes = 200LL * 1024 * 1024;
  makeEngine({child("flood", {"--print-bytes", std::to_string(kBytes)})});
  // A live view that never reads: the bus must drop lines for it, not hoard them.
  SubscriptionOptions options;
  auto idle = bus_.subscribe(options);

  RaceRecord race = runRace({"flood"});

  EXPECT_EQ(agentOf(race, "flood").status, AgentStatus::Completed);
  const fs::path log = engine_->store().raceDir(race.id) / "flood.log";
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
TEST_F(RaceEngineTest, RaceJsonAndEventLogRecordTheWholeRace) {
  makeEngine({scripted("good", {"say", "working", "write", "good.txt", "good"}),
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
TEST_F(RaceEngineTest, UnknownAgentIsRefusedListingTheKnownOnes) {
  makeEngine({scripted("alpha", {"say", "hi"}), scripted("beta", {"say", "hi"})});
  try {
    start({"alpha", "gamma"});
    FAIL() << "no RaceError";
  } catch (const RaceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("gamma"));
    EXPECT_THAT(e.what(), HasSubstr("alpha"));
    EXPECT_THAT(e.what(), HasSubstr("beta"));
    EXPECT_THAT(e.what(), HasSubstr("claude"));
  }
  EXPECT_TRUE(engine_->store().list().empty());
  EXPECT_FALSE(fs::exists(engine_->store().racesDir()) && !fs::is_empty(engine_->store().racesDir()))
      << "a refused race left a directory behind";
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");
}

TEST_F(RaceEngineTest, EmptyTaskIsRefused) {
  makeEngine({scripted("alpha", {"say", "hi"})});
  EXPECT_THROW(start({"alpha"}, ""), RaceError);
  EXPECT_THROW(start({"alpha"}, " \n\t "), RaceError);
  EXPECT_THROW(start({}, "a task"), RaceError);
  EXPECT_TRUE(engine_->store().list().empty());
}

TEST_F(RaceEngineTest, UnknownBaseRefIsRefusedNamingIt) {
  makeEngine({scripted("alpha", {"say", "hi"})});
  try {
    engine_->start(RaceRequest{"a task", {"alpha"}, "no-such-branch"});
    FAIL() << "no RaceError";
  } catch (const RaceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no-such-branch"));
  }
  EXPECT_TRUE(engine_->store().list().empty());
}

// 11. Live events.
TEST_F(RaceEngineTest, SubscriberSeesTheRaceUnfoldInOrderWithParsedAgentEvents) {
  // Claude's adapter reading a captured claude stream, replayed by the scripted
  // agent (which also checks that {task} reached it).
  AgentDef claude = scripted("claude", {"expect-task", "{task}", "print-file", (kFixtures / "claude.stream.jsonl").string()});
  claude.adapter = "claude";
  makeEngine({claude});
  auto subscription = bus_.subscribe();
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

}  // namespace
}  // namespace hydra::core

namespace hydra::core {
namespace {

// [scoring] auto_merge: the winner is merged into the user's branch by itself,
// only when it is switched on and the winner reaches auto_merge_minimum.
TEST_F(RaceEngineTest, AutoMergeMergesAnEligibleWinnerOnlyWhenSwitchedOn) {
  const std::string scoringOn = "\n[scoring]\nauto_merge = true\n[scoring.thresholds]\nauto_merge_minimum = 50.0\n";
  makeEngine({scripted("fixer", {"write", "fixed.txt", "the fix"})}, 4, scoringOn);
  const std::string before = git("rev-parse HEAD");
  RaceRecord race = runRace({"fixer"});
  EXPECT_EQ(race.status, RaceStatus::Completed);
  EXPECT_NE(git("rev-parse HEAD"), before);
  EXPECT_EQ(readFile(repo_.root() / "fixed.txt"), "the fix\n");
  EXPECT_EQ(git("branch --list 'hydra/*'"), "");  // merged, then cleaned up
  bool recorded = false;
  for (const auto& e : engine_->store().readEvents(race.id)) {
    recorded |= e.at("type").as_string() == "autoMerge" && e.at("outcome").as_string() == "fastForward";
  }
  EXPECT_TRUE(recorded);
}

TEST_F(RaceEngineTest, WithoutAutoMergeTheUsersBranchIsLeftAlone) {
  makeEngine({scripted("fixer", {"write", "fixed.txt", "the fix"})});
  const std::string before = git("rev-parse HEAD");
  RaceRecord race = runRace({"fixer"});
  EXPECT_EQ(git("rev-parse HEAD"), before);
  EXPECT_FALSE(fs::exists(repo_.root() / "fixed.txt"));
  EXPECT_NE(git("branch --list 'hydra/*'"), "");
}

TEST_F(RaceEngineTest, RaceWhereNoAgentCompletesIsFailed) {
  makeEngine({child("crasher", {"--exit", "3"})});
  RaceRecord race = runRace({"crasher"});
  EXPECT_EQ(race.status, RaceStatus::Failed);
  auto scores = engine_->scores(race.id);
  ASSERT_TRUE(scores);
  EXPECT_TRUE(scores->allFailed);
}

}  // namespace
}  // namespace hydra::core
