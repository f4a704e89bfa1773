// The real agent CLIs (claude, codex, gemini, opencode, at the versions
// scripts/install-agent-clis.sh pins) raced by the real `hydra` binary in
// throwaway git repositories, each CLI talking to a scripted model server on
// 127.0.0.1 (model_server.py). hydra.toml sets nothing but `env` for them, so
// hydra's own default command lines are what runs, under bubblewrap.
//
// Per CLI: a bug fix (its edits stay in its worktree; the events hydra parsed
// are what the scenario made the CLI do; usage, cost, summary, scores), a
// model error, a model that never answers, a cancel; and after each, no
// process it started is left. Then all four in one race.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"
#include "tests/live/agent_clis.h"
#include "tests/live/processes.h"
#include "tests/live/scripted_model.h"

extern char** environ;

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

// Deadlines for waiting on real CLIs, generous for a loaded machine. Nothing is
// asserted about how long anything took.
constexpr auto kRaceLimit = 300s;
// The timeout of runs whose model never answers: long enough for the slowest
// CLI to start and send its first request, however busy the machine.
constexpr int kHangTimeoutSeconds = 30;

constexpr const char* kTask = "Fix add() in calc.py: it should return the sum of a and b.";
constexpr const char* kFinalText =
    "Fixed add() in calc.py: it returned a - b instead of a + b. Both tests pass.";
constexpr const char* kModelErrorMarker = "live-test-400";
// tests/e2e/test_repo.cpp's calc.py, with the scenarios' one-line fix.
constexpr const char* kFixedCalc =
    "def add(a, b):\n"
    "    return a + b\n"
    "\n"
    "\n"
    "def sub(a, b):\n"
    "    return a - b\n";

std::string str(const json::value& v) { return std::string(v.as_string()); }

std::string optionalString(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? str(*v) : std::string();
}

// What one agent of a race did, as `hydra serve` reported it.
struct AgentReport {
  json::object started;
  json::object finished;
  std::vector<json::object> events;  // every event of every agentOutput, in order
  std::vector<std::string> stdoutLines;
  std::vector<std::string> stderrLines;

  std::vector<json::object> ofKind(std::string_view kind) const {
    std::vector<json::object> out;
    for (const auto& e : events) {
      if (e.at("kind").as_string() == kind) out.push_back(e);
    }
    return out;
  }
  std::string status() const { return str(finished.at("status")); }
  std::string error() const { return optionalString(finished, "error"); }
  // All that was printed and parsed, for failure messages.
  std::string transcript() const {
    std::string out = "agentFinished: " + json::serialize(finished) + "\nevents:\n";
    for (const auto& e : events) out += "  " + json::serialize(e) + "\n";
    out += "stderr:\n";
    for (const auto& l : stderrLines) out += "  " + l + "\n";
    return out;
  }
};

AgentReport reportOf(const RpcClient& client, const std::string& raceId,
                     const std::string& agentId) {
  AgentReport r;
  for (const auto& n : client.notifications()) {
    const json::object& p = n.at("params").as_object();
    const json::value* race = p.if_contains("raceId");
    const json::value* agent = p.if_contains("agentId");
    if (!race || str(*race) != raceId || !agent || str(*agent) != agentId) continue;
    std::string method = str(n.at("method"));
    if (method == "hydra/agentStarted") r.started = p;
    if (method == "hydra/agentFinished") r.finished = p;
    if (method != "hydra/agentOutput") continue;
    auto& lines = p.at("stream").as_string() == "stderr" ? r.stderrLines : r.stdoutLines;
    for (const auto& l : p.at("lines").as_array()) lines.push_back(str(l));
    for (const auto& e : p.at("events").as_array()) r.events.push_back(e.as_object());
  }
  return r;
}

// The events a person reads as the story of the run: what was said, and
// which tools were called on what.
std::vector<std::string> storyOf(const AgentReport& r) {
  std::vector<std::string> out;
  for (const auto& e : r.events) {
    std::string kind = str(e.at("kind"));
    if (kind == "text") out.push_back("text: " + str(e.at("text")));
    if (kind == "toolCall") out.push_back("tool: " + str(e.at("tool")));
  }
  return out;
}

// What each CLI, as hydra's adapter reads it, is known to report: the facts
// the assertions depend on, in one place (docs/agents.md, "Tested CLI versions").
struct CliFacts {
  // The names of its read, edit and shell tools in the fix scenario
  // (scenarios/CLI_fix.json), in call order.
  std::vector<std::string> fixTools;
  bool reportsCost = false;  // claude computes one; opencode from the configured price
  std::optional<int> turns;  // the summary's turn count, where the CLI gives one
  // Whether its input tokens count the cached ones too (codex, gemini), or
  // leave them out (claude, as Anthropic's API does; opencode).
  bool inputIncludesCached = true;
  // Whether it prints a tool call when the tool starts (opencode prints it
  // only once the tool has finished).
  bool announcesRunningTools = true;
};

CliFacts factsOf(const std::string& cli) {
  if (cli == "claude") return {{"Read", "Edit", "Bash"}, true, 4, false, true};
  // codex reports its shell and apply_patch as items, named by their kind.
  if (cli == "codex") {
    return {{"command_execution", "file_change", "command_execution"}, false, 1, true, true};
  }
  if (cli == "gemini") {
    return {{"read_file", "replace", "run_shell_command"}, false, std::nullopt, true, true};
  }
  return {{"read", "edit", "bash"}, true, 4, false, false};
}

// The process environment every hydra of these tests inherits, and with it
// every agent: the pinned CLIs first on PATH, then the system's own tools
// (not a user's installs or version-manager shims), and none of the
// developer's own credentials or settings for these CLIs.
void sanitizeEnvironment() {
  std::string path = agentCliBin().string() + ":/usr/local/bin:/usr/bin:/bin";
  ::setenv("PATH", path.c_str(), 1);
  std::vector<std::string> drop;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    for (const char* prefix : {"ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_",
                               "OPENCODE_", "XDG_"}) {
      if (name.rfind(prefix, 0) == 0) drop.push_back(name);
    }
  }
  for (const auto& name : drop) ::unsetenv(name.c_str());
  ::setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
}

class LiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sanitizeEnvironment();
    for (const auto& cli : liveClis()) {
      ASSERT_TRUE(fs::exists(agentCliBin() / cli))
          << cli << " is not installed in " << agentCliBin()
          << ": run scripts/install-agent-clis.sh (scripts/test.sh does)";
    }
  }

  void TearDown() override {
    // Whatever a failed test left running is ended here, by pid: every one of
    // them carries the HOME this test gave its agent.
    for (const auto& [agent, home] : homes_) {
      for (const auto& p : processesWithEnvironment("HOME=" + home.string()))
        ::kill(p.pid, SIGKILL);
    }
  }

  fs::path home(const std::string& agent) { return repo_.scratch() / "agents" / agent / "home"; }

  // Starts the scripted model `scenario` for `agent` (a CLI name) and returns
  // its [agents.NAME] table.
  std::string agent(const std::string& name, const std::string& scenario) {
    auto& model = models_[name] =
        std::make_unique<ScriptedModel>(scenario, repo_.scratch() / "models" / name, repo_.root());
    homes_[name] = home(name);
    return agentTable(name, agentEnvironment(name, model->url(), home(name)));
  }

  ScriptedModel& model(const std::string& name) { return *models_.at(name); }

  // Confined, as hydra runs agents by default where bubblewrap works: each
  // CLI with its worktree and its own state directories writable, nothing else.
  static std::string general(int timeoutSeconds) {
    return "[general]\ntimeout_seconds = " + std::to_string(timeoutSeconds) +
           "\nmax_concurrent_agents = 4\nsandbox = \"bubblewrap\"\n\n";
  }

  // What every agent must have left: no process at all. Checked when hydra
  // says the agent finished, which it only does once the agent's process
  // group is gone.
  void expectNothingLeft(const std::string& agent) {
    auto left = processesWithEnvironment("HOME=" + home(agent).string());
    EXPECT_TRUE(left.empty()) << agent << " left processes running after it finished:\n"
                              << describe(left);
  }

  // Every scripted request told the model the CLI works in its worktree, not
  // in the user's checkout.
  void expectModelToldWorktree(const std::string& agent, const std::string& worktree) {
    auto requests = model(agent).scriptedRequests();
    ASSERT_FALSE(requests.empty()) << agent << " never asked the model anything";
    for (const auto& r : requests) {
      EXPECT_EQ(optionalString(r, "cwd"), worktree)
          << agent << " told the model it works elsewhere: " << json::serialize(r);
    }
  }

  void expectCheckoutAsBefore(const std::map<std::string, std::string>& before) {
    auto after = checkoutSnapshot(repo_);
    for (const auto& [what, content] : before) {
      EXPECT_EQ(after[what], content) << "the user's checkout changed: " << what;
    }
    for (const auto& [what, content] : after) {
      EXPECT_TRUE(before.contains(what)) << "the user's checkout gained " << what;
    }
  }

  // The events must hold exactly one summary, and it must be the last.
  json::object summaryOf(const AgentReport& r) {
    auto summaries = r.ofKind("summary");
    EXPECT_EQ(summaries.size(), 1u) << r.transcript();
    if (summaries.empty()) return {};
    EXPECT_EQ(r.events.back().at("kind").as_string(), "summary") << r.transcript();
    return summaries.back();
  }
  TestRepo repo_;
  std::map<std::string, std::unique_ptr<ScriptedModel>> models_;
  std::map<std::string, fs::path> homes_;
};

// --- one agent at a time, through `hydra serve` ------------------------------------

// One agent (GetParam()) raced alone through `hydra serve`.
class LiveSoloTest : public LiveTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // Writes hydra.toml (general settings, scoring and `agentTable`), starts
  // `hydra serve`, starts a race of GetParam() alone; returns its id.
  std::string startSoloRace(const std::string& agentTable, int timeoutSeconds) {
    repo_.writeConfig(general(timeoutSeconds) + TestRepo::scoring() + agentTable);
    before_ = checkoutSnapshot(repo_);
    // hydra is started in the repository as a user's shell starts it there:
    // with PWD naming it too (HydraProcess only changes directory).
    ::setenv("PWD", repo_.root().c_str(), 1);
    client_ = std::make_unique<RpcClient>(repo_.root());
    client_->initialize(repo_.uri());
    json::object started =
        client_->call("hydra/race", json::object{{"task", kTask}, {"agents", json::array{GetParam()}}})
            .as_object();
    worktree_ = str(started.at("agents").at(0).at("worktree"));
    return str(started.at("raceId"));
  }

  AgentReport waitForAgent(const std::string& raceId) {
    client_->waitFor(
        [&](const json::object& m) {
          return m.at("method").as_string() == "hydra/agentFinished" &&
                 str(m.at("params").at("raceId")) == raceId;
        },
        0, kRaceLimit);
    return reportOf(*client_, raceId, GetParam());
  }

  json::object waitForRace(const std::string& raceId) {
    std::size_t at = client_->waitFor("hydra/raceFinished", raceId, 0, kRaceLimit);
    return client_->notifications()[at].at("params").as_object();
  }

  void expectCheckoutUntouched() { expectCheckoutAsBefore(before_); }

  std::unique_ptr<RpcClient> client_;
  std::map<std::string, std::string> before_;
  std::string worktree_;
};

class LiveAgentTest : public LiveSoloTest {
 protected:
  const std::string& cli() const { return GetParam(); }

  // The CLI alone with `scenario`; the race's id.
  std::string startRace(const std::string& scenario, int timeoutSeconds = 240) {
    return startSoloRace(agent(cli(), scenario), timeoutSeconds);
  }
};

TEST_P(LiveAgentTest, FixesTheBugInItsOwnWorktreeAndReportsWhatItDid) {
  const std::string id = startRace(cli() + "_fix.json");
  AgentReport run = waitForAgent(id);
  expectNothingLeft(cli());
  json::object finished = waitForRace(id);
  const CliFacts expected = factsOf(cli());

  ASSERT_EQ(run.status(), "completed") << run.transcript();
  EXPECT_EQ(run.finished.at("exitCode"), json::value(0));

  // Its edits are in its worktree, on its branch, and nowhere else.
  expectModelToldWorktree(cli(), worktree_);
  EXPECT_EQ(readFile(fs::path(worktree_) / "calc.py"), kFixedCalc);
  EXPECT_EQ(repo_.git("diff --name-only main hydra/" + cli() + "-" + id), "calc.py");
  expectCheckoutUntouched();

  // The story the parsed events tell is the scenario's, turn by turn.
  EXPECT_THAT(storyOf(run),
              ElementsAreArray(std::vector<std::string>{
                  "text: I'll read calc.py first.", "tool: " + expected.fixTools[0],
                  "text: add() subtracts; it should add.", "tool: " + expected.fixTools[1],
                  "text: Running the tests.", "tool: " + expected.fixTools[2],
                  std::string("text: ") + kFinalText}))
      << run.transcript();
  auto calls = run.ofKind("toolCall");
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_THAT(str(calls[0].at("detail")), HasSubstr("calc.py"));
  EXPECT_THAT(str(calls[1].at("detail")), HasSubstr("calc.py"));
  EXPECT_THAT(str(calls[2].at("detail")), HasSubstr("pytest"));
  auto results = run.ofKind("toolResult");
  ASSERT_EQ(results.size(), 3u) << run.transcript();
  for (const auto& r : results) {
    EXPECT_FALSE(r.contains("isError") && r.at("isError").as_bool()) << json::serialize(r);
  }
  EXPECT_THAT(str(results[2].at("detail")), HasSubstr("2 passed")) << run.transcript();
  auto changes = run.ofKind("fileChange");
  ASSERT_EQ(changes.size(), 1u) << run.transcript();
  EXPECT_EQ(str(changes[0].at("path")), (fs::path(worktree_) / "calc.py").string());
  EXPECT_EQ(str(changes[0].at("change")), "update");
  // Every line it printed was read: nothing is left as raw.
  EXPECT_THAT(run.ofKind("raw"), IsEmpty()) << run.transcript();
  EXPECT_THAT(run.ofKind("error"), IsEmpty()) << run.transcript();

  // The summary: the final message, the turns, the usage the model reported.
  json::object summary = summaryOf(run);
  EXPECT_EQ(optionalString(summary, "text"), kFinalText);
  EXPECT_FALSE(summary.contains("isError") && summary.at("isError").as_bool()) << run.transcript();
  EXPECT_FALSE(summary.contains("warnings") && !summary.at("warnings").as_array().empty())
      << run.transcript();
  if (expected.turns) {
    EXPECT_EQ(summary.at("turns"), json::value(*expected.turns)) << run.transcript();
  }
  ScriptedModel::Reported reported = model(cli()).reported();
  EXPECT_EQ(reported.answers, 4);
  ASSERT_TRUE(run.finished.contains("usage")) << run.transcript();
  const json::object& usage = run.finished.at("usage").as_object();
  const std::int64_t input = expected.inputIncludesCached
                                 ? reported.inputTokens
                                 : reported.inputTokens - reported.cachedInputTokens;
  EXPECT_EQ(usage.at("inputTokens"), json::value(input)) << json::serialize(usage);
  EXPECT_EQ(usage.at("outputTokens"), json::value(reported.outputTokens)) << json::serialize(usage);
  EXPECT_EQ(usage.at("cachedInputTokens"), json::value(reported.cachedInputTokens))
      << json::serialize(usage);
  EXPECT_EQ(usage.contains("costUsd"), expected.reportsCost) << json::serialize(usage);
  if (cli() == "opencode") {
    // $3 per million input tokens, $15 per million output tokens, $0.30 per
    // million cache reads (the price in its configuration).
    double cost = (3.0 * static_cast<double>(reported.inputTokens - reported.cachedInputTokens) +
                   15.0 * static_cast<double>(reported.outputTokens) +
                   0.3 * static_cast<double>(reported.cachedInputTokens)) /
                  1e6;
    EXPECT_NEAR(usage.at("costUsd").to_number<double>(), cost, 1e-9) << json::serialize(usage);
  }
  if (cli() == "claude") {
    EXPECT_GT(usage.at("costUsd").to_number<double>(), 0.0);
  }

  // Scored: it builds, both tests pass, one line changed; it wins.
  EXPECT_EQ(str(finished.at("status")), "completed");
  EXPECT_EQ(finished.at("winner"), json::value(cli()));
  const json::object& ranked = finished.at("rankings").at(0).as_object();
  EXPECT_EQ(ranked.at("rank"), json::value(1));
  EXPECT_EQ(ranked.at("breakdown").at("build"), json::value(100.0));
  EXPECT_EQ(ranked.at("breakdown").at("tests"), json::value(100.0));
  EXPECT_EQ(ranked.at("breakdown").at("diffSize"), json::value(100.0));
  EXPECT_EQ(ranked.at("checks").at("tests").at("tests").at("passed"), json::value(2));
  EXPECT_EQ(ranked.at("checks").at("tests").at("tests").at("failed"), json::value(0));
  EXPECT_EQ(ranked.at("diff").at("linesAdded"), json::value(1));
  EXPECT_EQ(ranked.at("diff").at("linesRemoved"), json::value(1));
  EXPECT_EQ(ranked.at("diff").at("filesChanged"), json::value(1));
}

TEST_P(LiveAgentTest, AModelErrorEndsTheRunAsFailedWithTheCLIsOwnMessage) {
  const std::string id = startRace("model_error.json");
  AgentReport run = waitForAgent(id);
  expectNothingLeft(cli());
  json::object finished = waitForRace(id);

  // The model was asked, and said no; the CLI gave up without retrying forever.
  EXPECT_TRUE(model(cli()).waitForRequest(
      [](const json::object& r) { return optionalString(r, "action") == "error"; }, 0s));
  EXPECT_EQ(run.status(), "failed") << run.transcript();
  // What the CLI said about it reached the person: in its events or on its
  // stderr, and in the reason hydra gives for the failure.
  bool inEvents = false;
  for (const auto& e : run.events) {
    std::string said = optionalString(e, "text");
    if (const json::value* warnings = e.if_contains("warnings")) said += json::serialize(*warnings);
    if (said.find(kModelErrorMarker) != std::string::npos) inEvents = true;
  }
  bool onStderr = std::any_of(run.stderrLines.begin(), run.stderrLines.end(), [](const auto& l) {
    return l.find(kModelErrorMarker) != std::string::npos;
  });
  EXPECT_TRUE(inEvents || onStderr) << run.transcript();
  EXPECT_THAT(run.error(), HasSubstr(kModelErrorMarker)) << run.transcript();
  json::object summary = summaryOf(run);
  EXPECT_TRUE(summary.contains("isError") && summary.at("isError").as_bool()) << run.transcript();
  EXPECT_THAT(run.ofKind("fileChange"), IsEmpty());

  expectCheckoutUntouched();
  // No agent completed: the race failed. The agent is still listed, marked
  // as one that cannot win, and there is no winner.
  EXPECT_EQ(finished.at("status"), json::value("failed")) << json::serialize(finished);
  ASSERT_EQ(finished.at("rankings").as_array().size(), 1u) << json::serialize(finished);
  const json::object& ranked = finished.at("rankings").at(0).as_object();
  EXPECT_EQ(ranked.at("eligible"), json::value(false)) << json::serialize(finished);
  EXPECT_EQ(ranked.at("ineligible"), json::value("failed")) << json::serialize(finished);
  EXPECT_TRUE(finished.at("winner").is_null()) << json::serialize(finished);
  EXPECT_EQ(finished.at("allFailed"), json::value(true)) << json::serialize(finished);
}

TEST_P(LiveAgentTest, AModelThatNeverAnswersEndsTheRunAsTimedOut) {
  const std::string id = startRace("model_hangs.json", kHangTimeoutSeconds);
  AgentReport run = waitForAgent(id);
  expectNothingLeft(cli());
  waitForRace(id);

  // It was waiting on the model when its time ran out.
  EXPECT_TRUE(model(cli()).waitForRequest(
      [](const json::object& r) { return optionalString(r, "action") == "hang"; }, 0s))
      << cli() << " never reached the model within " << kHangTimeoutSeconds << " s";
  // (Its exit code is the CLI's own answer to SIGTERM: claude exits 143,
  // gemini 0, codex and opencode die of the signal.)
  EXPECT_EQ(run.status(), "timedOut") << run.transcript();
  EXPECT_THAT(run.error(), HasSubstr("timed out")) << run.transcript();
  EXPECT_THAT(run.ofKind("toolCall"), IsEmpty()) << run.transcript();
  EXPECT_THAT(run.ofKind("text"), IsEmpty()) << run.transcript();
  // A run cut short must not read as a finished one: whatever the CLI
  // printed, its summary is an error that says hydra cut it off.
  json::object summary = summaryOf(run);
  EXPECT_TRUE(summary.contains("isError") && summary.at("isError").as_bool()) << run.transcript();
  EXPECT_THAT(json::serialize(summary.at("warnings")), HasSubstr("cut off by hydra: timed out")) << run.transcript();
  expectCheckoutUntouched();
}

TEST_P(LiveAgentTest, CancelEndsTheRunAndEverythingItStarted) {
  const std::string id = startRace(cli() + "_long_tool.json");
  const std::string homeEntry = "HOME=" + home(cli()).string();
  const bool announcesRunningTools = factsOf(cli()).announcesRunningTools;
  // Cancel once the CLI's shell tool runs the scripted command (and hydra has
  // reported the call, where the CLI prints it before it ends).
  auto toolRunning = [&] {
    for (const auto& p : processesWithEnvironment(homeEntry)) {
      if (p.commandLine.rfind("/usr/bin/python3 -c import time", 0) == 0) return true;
    }
    return false;
  };
  auto reported = [&] {
    return !announcesRunningTools || !reportOf(*client_, id, cli()).ofKind("toolCall").empty();
  };
  auto deadline = Clock::now() + kRaceLimit;
  while (!(toolRunning() && reported())) {
    AgentReport sofar = reportOf(*client_, id, cli());
    ASSERT_TRUE(sofar.finished.empty()) << cli() << " ended before its tool ran\n"
                                        << sofar.transcript();
    ASSERT_LT(Clock::now(), deadline) << cli() << " never ran its tool\n" << sofar.transcript();
    client_->drain(50ms);
  }
  EXPECT_EQ(client_->call("hydra/cancel", json::object{{"raceId", id}, {"agentId", cli()}}),
            json::value(json::object{{"cancelled", true}}));

  AgentReport run = waitForAgent(id);
  expectNothingLeft(cli());
  waitForRace(id);
  EXPECT_EQ(run.status(), "cancelled") << run.transcript();
  EXPECT_THAT(storyOf(run), ::testing::Contains("text: Waiting for the build."))
      << run.transcript();
  auto calls = run.ofKind("toolCall");
  if (announcesRunningTools) {
    ASSERT_EQ(calls.size(), 1u) << run.transcript();
    EXPECT_THAT(str(calls[0].at("detail")), HasSubstr("time.sleep(3600)"));
  }
  EXPECT_THAT(run.ofKind("fileChange"), IsEmpty());
  expectCheckoutUntouched();
}

INSTANTIATE_TEST_SUITE_P(Cli, LiveAgentTest, ::testing::ValuesIn(liveClis()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// --- what a CLI refused to do -------------------------------------------------------

// claude in print mode cannot ask for a permission: a tool call its flags do
// not allow (a web fetch, a write outside its worktree) is denied, it goes
// on, exits 0, and says so only in its result's permission_denials.
class LiveDenialTest : public LiveAgentTest {};

TEST_P(LiveDenialTest, DeniedToolCallsAreCountedShownAndKeepTheWinnerFromAutoMerge) {
  const std::string id = startRace(cli() + "_denied.json");
  AgentReport run = waitForAgent(id);
  json::object finished = waitForRace(id);
  expectNothingLeft(cli());
  expectCheckoutUntouched();

  EXPECT_EQ(run.status(), "completed") << run.transcript();
  ASSERT_TRUE(run.finished.contains("deniedToolCalls")) << run.transcript();
  const auto denied = run.finished.at("deniedToolCalls").to_number<int>();
  EXPECT_GE(denied, 1) << run.transcript();
  EXPECT_THAT(json::serialize(run.finished.at("warnings")), HasSubstr("permission denied")) << run.transcript();

  // It fixed the bug and wins, flagged: a person looks before it is merged.
  EXPECT_EQ(finished.at("winner"), json::value(cli())) << json::serialize(finished);
  EXPECT_EQ(finished.at("autoMergeEligible"), json::value(false)) << json::serialize(finished);
  const json::object& ranked = finished.at("rankings").at(0).as_object();
  EXPECT_EQ(ranked.at("deniedToolCalls"), json::value(denied)) << json::serialize(ranked);
  EXPECT_THAT(json::serialize(ranked.at("flags")), HasSubstr("tool call")) << json::serialize(ranked);
  EXPECT_FALSE(fs::exists("/root/hydra-denied-note.txt")) << "a denied write happened";
}

INSTANTIATE_TEST_SUITE_P(Cli, LiveDenialTest, ::testing::Values("claude"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// --- ACP agents: the same CLIs, driven over the Agent Client Protocol ---------------

// The ACP presets raced alone: "claude-acp" (Zed's claude-agent-acp, running the installed
// claude), "codex-acp" (Zed's codex-acp), "gemini-acp" (`gemini --acp`) and "opencode-acp"
// (`opencode acp`), set up like the plain CLI each is a mode of.
class LiveAcpTest : public LiveSoloTest {
 protected:
  const std::string& preset() const { return GetParam(); }
  std::string cliOf() const { return preset().substr(0, preset().find('-')); }

  // The preset alone, its model scripted by `scenario`; the race's id.
  std::string startRace(const std::string& scenario) {
    auto& model = models_[preset()] =
        std::make_unique<ScriptedModel>(scenario, repo_.scratch() / "models" / preset(), repo_.root());
    homes_[preset()] = home(preset());
    return startSoloRace(agentTable(preset(), agentEnvironment(cliOf(), model->url(), home(preset()))), 240);
  }
};

TEST_P(LiveAcpTest, FixesTheBugOverACPInItsOwnWorktree) {
  const std::string id = startRace(cliOf() + "_fix.json");
  AgentReport run = waitForAgent(id);
  expectNothingLeft(preset());
  json::object finished = waitForRace(id);

  ASSERT_EQ(run.status(), "completed") << run.transcript();
  expectModelToldWorktree(preset(), worktree_);
  EXPECT_EQ(readFile(fs::path(worktree_) / "calc.py"), kFixedCalc) << run.transcript();
  EXPECT_EQ(repo_.git("diff --name-only main hydra/" + preset() + "-" + id), "calc.py");
  expectCheckoutUntouched();

  // What it said and did arrived as events: its messages whole, its tool
  // calls and their results, the edit.
  auto texts = run.ofKind("text");
  EXPECT_TRUE(std::any_of(texts.begin(), texts.end(),
                          [](const json::object& t) { return str(t.at("text")) == kFinalText; }))
      << run.transcript();
  EXPECT_GE(run.ofKind("toolCall").size(), 1u) << run.transcript();
  EXPECT_GE(run.ofKind("toolResult").size(), 1u) << run.transcript();
  EXPECT_THAT(run.ofKind("error"), IsEmpty()) << run.transcript();
  json::object summary = summaryOf(run);
  EXPECT_EQ(optionalString(summary, "text"), kFinalText) << run.transcript();
  EXPECT_FALSE(summary.contains("isError") && summary.at("isError").as_bool()) << run.transcript();

  EXPECT_EQ(finished.at("winner"), json::value(preset())) << json::serialize(finished);
  const json::object& ranked = finished.at("rankings").at(0).as_object();
  EXPECT_EQ(ranked.at("breakdown").at("tests"), json::value(100.0)) << json::serialize(ranked);
}

TEST_P(LiveAcpTest, CancelIsSessionCancelThenTheKillAndNothingIsLeft) {
  const std::string id = startRace(cliOf() + "_long_tool.json");
  const std::string homeEntry = "HOME=" + home(preset()).string();
  auto deadline = Clock::now() + kRaceLimit;
  auto toolRunning = [&] {
    for (const auto& p : processesWithEnvironment(homeEntry)) {
      if (p.commandLine.rfind("/usr/bin/python3 -c import time", 0) == 0) return true;
    }
    return false;
  };
  while (!toolRunning()) {
    AgentReport sofar = reportOf(*client_, id, preset());
    ASSERT_TRUE(sofar.finished.empty()) << preset() << " ended before its tool ran\n" << sofar.transcript();
    ASSERT_LT(Clock::now(), deadline) << preset() << " never ran its tool\n" << sofar.transcript();
    client_->drain(50ms);
  }
  EXPECT_EQ(client_->call("hydra/cancel", json::object{{"raceId", id}, {"agentId", preset()}}),
            json::value(json::object{{"cancelled", true}}));
  AgentReport run = waitForAgent(id);
  expectNothingLeft(preset());
  waitForRace(id);
  EXPECT_EQ(run.status(), "cancelled") << run.transcript();
  EXPECT_THAT(run.ofKind("fileChange"), IsEmpty());
  expectCheckoutUntouched();
}

INSTANTIATE_TEST_SUITE_P(Acp, LiveAcpTest, ::testing::Values("claude-acp", "codex-acp", "gemini-acp", "opencode-acp"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// --- all four at once, through `hydra race` ----------------------------------------

class LiveRaceTest : public LiveTest {};

TEST_F(LiveRaceTest, AllFourCLIsRaceAtOnceAndRankByWhatTheyLeft) {
  // claude fixes the bug; codex fixes it and breaks sub(); gemini reads and
  // gives up; opencode breaks the build. Speed is left out of the score, so
  // the ranking depends on the results alone.
  repo_.writeConfig(general(240) + TestRepo::scoring() +
                    "[scoring.weights]\nbuild = 30\ntests = 30\nlint = 15\ndiff_size = 15\n"
                    "speed = 0\n\n" +
                    agent("claude", "claude_fix.json") + agent("codex", "codex_breaks_sub.json") +
                    agent("gemini", "gemini_gives_up.json") +
                    agent("opencode", "opencode_breaks_build.json"));
  auto before = checkoutSnapshot(repo_);
  const fs::path out = repo_.scratch() / "race.json";
  const fs::path err = repo_.scratch() / "race.stderr";
  int rc =
      ::system(("cd " + shellQuote(repo_.root().string()) + " && " + shellQuote(HYDRA_BINARY) +
                " race " + shellQuote(kTask) + " --agents claude,codex,gemini,opencode --json >" +
                shellQuote(out.string()) + " 2>" + shellQuote(err.string()))
                   .c_str());
  ASSERT_EQ(rc, 0) << readFile(err);
  for (const auto& cli : liveClis()) expectNothingLeft(cli);
  json::object result = json::parse(readFile(out)).as_object();
  const json::object& race = result.at("race").as_object();
  EXPECT_EQ(str(race.at("status")), "completed") << readFile(err);

  // They ran at once: every agent started before any finished.
  std::string firstFinish = "~";
  std::string lastStart;
  for (const auto& a : race.at("agents").as_array()) {
    const json::object& agent = a.as_object();
    SCOPED_TRACE(str(agent.at("agentId")));
    EXPECT_EQ(str(agent.at("status")), "completed") << json::serialize(agent);
    lastStart = std::max(lastStart, str(agent.at("startedAt")));
    firstFinish = std::min(firstFinish, str(agent.at("finishedAt")));
    // Usage as each model reported it.
    const std::string name = str(agent.at("agentId"));
    ScriptedModel::Reported reported = model(name).reported();
    ASSERT_TRUE(agent.contains("usage")) << json::serialize(agent);
    EXPECT_EQ(agent.at("usage").at("inputTokens"),
              json::value(factsOf(name).inputIncludesCached
                              ? reported.inputTokens
                              : reported.inputTokens - reported.cachedInputTokens));
    EXPECT_EQ(agent.at("usage").at("outputTokens"), json::value(reported.outputTokens));
    expectModelToldWorktree(name, str(agent.at("worktree")));
  }
  EXPECT_LT(lastStart, firstFinish);

  // Ranked by their results: build, tests and diff size as the docs define them.
  const json::object& scores = result.at("scores").as_object();
  EXPECT_EQ(scores.at("winner"), json::value("claude"));
  const json::array& rankings = scores.at("rankings").as_array();
  ASSERT_EQ(rankings.size(), 4u);
  struct Expected {
    const char* agent;
    double total, build, tests, diffSize;
    const char* ineligible;  // "" when it can win
  };
  // (30 build + 30 tests + 15 diff) / 75; no lint command, speed weighs 0.
  // gemini changed nothing: it cannot win, so it ranks after every agent that
  // did, whatever its total.
  const Expected expected[] = {{"claude", 100, 100, 100, 100, ""},
                               {"codex", 80, 100, 50, 100, ""},
                               {"opencode", 20, 0, 0, 100, ""},
                               {"gemini", 60, 100, 50, 0, "changed nothing"}};
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(expected[i].agent);
    const json::object& r = rankings[i].as_object();
    EXPECT_EQ(r.at("agentId"), json::value(expected[i].agent));
    EXPECT_EQ(r.at("eligible"), json::value(*expected[i].ineligible == '\0'));
    EXPECT_EQ(optionalString(r, "ineligible"), expected[i].ineligible);
    EXPECT_EQ(r.at("rank"), json::value(static_cast<std::int64_t>(i + 1)));
    EXPECT_DOUBLE_EQ(r.at("total").to_number<double>(), expected[i].total);
    EXPECT_DOUBLE_EQ(r.at("breakdown").at("build").to_number<double>(), expected[i].build);
    EXPECT_DOUBLE_EQ(r.at("breakdown").at("tests").to_number<double>(), expected[i].tests);
    EXPECT_DOUBLE_EQ(r.at("breakdown").at("diffSize").to_number<double>(), expected[i].diffSize);
  }

  // The user's checkout is as it was.
  expectCheckoutAsBefore(before);
}

// --- an evaluation, through `hydra eval run` ------------------------------------------

class LiveEvalTest : public LiveTest {};

TEST_F(LiveEvalTest, TwoCLIsTwiceEachArePassAtKScoredWithTheirModelsUsage) {
  // claude fixes add(); codex fixes it and breaks sub(). The hidden test
  // checks add() and pass_to_pass keeps sub(): claude solves every sample,
  // codex none. The samples run two at a time against the same models.
  repo_.writeConfig(general(240) + TestRepo::scoring() + agent("claude", "claude_fix.json") +
                    agent("codex", "codex_breaks_sub.json"));
  const fs::path sets = repo_.scratch() / "evals";
  fs::create_directories(sets / "hidden");
  std::ofstream(sets / "hidden" / "test_hidden_add.py")
      << "from calc import add\n\n\ndef test_hidden_add():\n    assert add(20, 22) == 42\n";
  std::ofstream(sets / "set.toml")
      << "[eval]\nname = \"live\"\nagents = [\"claude\", \"codex\"]\nsamples = 2\npass_k = [1, 2]\n"
         "max_concurrent_agents = 2\ntimeout_seconds = 240\n\n[[cases]]\nid = \"add\"\ntask = " +
             std::string("\"") + kTask +
             "\"\nverify_command = \"/usr/bin/python3 -m pytest -q -p no:cacheprovider hidden/test_hidden_add.py\"\n"
             "hidden_files = [\"hidden/test_hidden_add.py\"]\npass_to_pass = [\"test_sub\"]\n"
             "test_command = \"/usr/bin/python3 -m pytest -q -rA -p no:cacheprovider\"\n";
  auto before = checkoutSnapshot(repo_);
  const fs::path report = repo_.scratch() / "report.json";
  const fs::path err = repo_.scratch() / "eval.stderr";
  int rc = ::system(("cd " + shellQuote(repo_.root().string()) + " && " + shellQuote(HYDRA_BINARY) + " eval run " +
                     shellQuote((sets / "set.toml").string()) + " --out " + shellQuote(report.string()) +
                     " --format json > /dev/null 2>" + shellQuote(err.string()))
                        .c_str());
  ASSERT_EQ(rc, 0) << readFile(err);
  for (const auto& cli : {"claude", "codex"}) expectNothingLeft(cli);

  json::object r = json::parse(readFile(report)).as_object();
  ASSERT_EQ(r.at("samples").as_array().size(), 4u) << json::serialize(r);
  for (const auto& s : r.at("samples").as_array()) {
    const std::string agent = str(s.at("agent"));
    SCOPED_TRACE(agent + " #" + std::to_string(s.at("index").as_int64()));
    EXPECT_EQ(str(s.at("status")), "completed") << json::serialize(s);
    EXPECT_EQ(s.at("solved").as_bool(), agent == "claude") << json::serialize(s);
    if (agent == "codex") {
      EXPECT_EQ(str(s.at("error")), "pass_to_pass: test_sub did not pass");
    }
  }
  // Each agent's tokens are what its model reported over both samples.
  for (const auto& a : r.at("agents").as_array()) {
    const std::string name = str(a.at("agent"));
    SCOPED_TRACE(name);
    ScriptedModel::Reported reported = model(name).reported();
    EXPECT_EQ(a.at("inputTokens").as_int64(), factsOf(name).inputIncludesCached
                                                   ? reported.inputTokens
                                                   : reported.inputTokens - reported.cachedInputTokens);
    EXPECT_EQ(a.at("outputTokens").as_int64(), reported.outputTokens);
    EXPECT_EQ(a.at("samples").as_int64(), 2);
    EXPECT_DOUBLE_EQ(a.at("passAtK").at("1").to_number<double>(), name == "claude" ? 1.0 : 0.0);
    EXPECT_FALSE(str(a.at("version")).empty()) << "the CLI's version, as hydra probed it";
  }
  expectCheckoutAsBefore(before);
}

// --- a collaboration, through `hydra collab` ----------------------------------------

// The builder is GetParam() (each CLI whose session hydra continues), the
// reviewer codex.
class LiveCollabTest : public LiveTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // [agents.NAME] for codex reviewing with scenarios/codex_review.json; NAME
  // other than "codex" (when codex also builds) says its adapter.
  std::string reviewerTable(const std::string& name) {
    auto& reviewer = models_[name] =
        std::make_unique<ScriptedModel>("codex_review.json", repo_.scratch() / "models" / name, repo_.root());
    homes_[name] = home(name);
    std::string table = agentTable(name, agentEnvironment("codex", reviewer->url(), home(name)));
    if (name != "codex") table.insert(table.find('\n') + 1, "adapter = \"codex\"\n");
    return table;
  }
};

TEST_P(LiveCollabTest, TheBuilderBuildsCodexReviewsAndTheBuilderRefinesInItsOwnSession) {
  // The builder's first round adds one too many, codex's review says so, and
  // the builder's second round (its session continued: the script goes on
  // from the turns it already had) fixes it, reaching until_score.
  const std::string builder = GetParam();
  const std::string reviewerName = builder == "codex" ? "codex-reviewer" : "codex";
  repo_.writeConfig(general(240) + TestRepo::scoring() + "[collaboration]\nuntil_score = 100\nmax_iterations = 3\n\n" +
                    agent(builder, builder + "_collab.json") + reviewerTable(reviewerName));
  auto before = checkoutSnapshot(repo_);
  const fs::path out = repo_.scratch() / "collab.json";
  const fs::path err = repo_.scratch() / "collab.stderr";
  int rc = ::system(("cd " + shellQuote(repo_.root().string()) + " && " + shellQuote(HYDRA_BINARY) + " collab " +
                     shellQuote(kTask) + " --builder " + builder + " --reviewer " + reviewerName + " --json >" + shellQuote(out.string()) +
                     " 2>" + shellQuote(err.string()))
                        .c_str());
  ASSERT_EQ(rc, 0) << readFile(err) << readFile(out);
  for (const auto& name : {builder, reviewerName}) expectNothingLeft(name);
  json::object result = json::parse(readFile(out)).as_object();
  const json::object& record = result.at("race").as_object();
  EXPECT_EQ(str(record.at("kind")), "collab");
  EXPECT_EQ(str(record.at("status")), "completed") << readFile(err);
  EXPECT_EQ(optionalString(record, "stopReason"), "untilScore") << json::serialize(record);

  const json::array& iterations = record.at("iterations").as_array();
  ASSERT_EQ(iterations.size(), 2u) << json::serialize(record);
  const json::object& first = iterations[0].as_object();
  const json::object& second = iterations[1].as_object();
  EXPECT_EQ(str(first.at("builderStatus")), "completed");
  EXPECT_LT(first.at("score").at("total").to_number<double>(), 100.0);
  EXPECT_EQ(str(first.at("reviewStatus")), "completed");
  EXPECT_THAT(optionalString(first, "review"), HasSubstr("one too many"));
  EXPECT_EQ(first.at("approved"), json::value(false));
  EXPECT_EQ(second.at("resumed"), json::value(true)) << builder + "'s refinement did not continue its session";
  EXPECT_DOUBLE_EQ(second.at("score").at("total").to_number<double>(), 100.0);
  EXPECT_EQ(result.at("scores").at("winner"), json::value("builder@2"));
  // Each round's usage as claude's model reported it; the reviewer's as codex's did.
  ASSERT_TRUE(first.contains("reviewUsage"));
  EXPECT_EQ(first.at("reviewUsage").at("outputTokens"), json::value(model(reviewerName).reported().outputTokens));

  // The second round's commit holds the fix, on the builder's branch; the
  // reviewer's checkout is gone and changed nothing.
  const std::string branch = str(record.at("agents").at(0).at("branch"));
  EXPECT_EQ(repo_.git("show " + branch + ":calc.py") + "\n", kFixedCalc);
  EXPECT_EQ(repo_.git("show " + str(first.at("commit")) + ":calc.py").find("a + b + 1") != std::string::npos, true);
  EXPECT_FALSE(fs::exists(str(record.at("agents").at(1).at("worktree"))));

  // The model saw the refinement as the same conversation going on (turns 3
  // to 5), and the reviewer worked in its own checkout.
  int highest = -1;
  for (const auto& r : model(builder).scriptedRequests()) {
    if (r.at("turn").is_int64()) highest = std::max(highest, static_cast<int>(r.at("turn").as_int64()));
  }
  EXPECT_EQ(highest, 5);
  expectModelToldWorktree(reviewerName, str(record.at("agents").at(1).at("worktree")));
  expectCheckoutAsBefore(before);
}

INSTANTIATE_TEST_SUITE_P(Builder, LiveCollabTest, ::testing::Values("claude", "codex", "opencode"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace hydra::test
