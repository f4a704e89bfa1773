// The hydra/* methods and notifications of the real `hydra serve`, over pipes,
// in throwaway git repositories (tests/e2e/test_repo.h) with scripted agents
// (tests/fixtures/agents/scripted_agent.sh). Exchanges whose ids or timing vary are here;
// the deterministic ones are transcripts (transcripts/hydra/*.rpc).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

// hydra's application error codes (docs/protocol.md).
constexpr std::int64_t kUnknownRace = -32010;
constexpr std::int64_t kUnknownAgent = -32011;
constexpr std::int64_t kUnknownAgentName = -32012;
constexpr std::int64_t kPathOutsideChanges = -32013;
constexpr std::int64_t kDirtyWorkingTree = -32014;
constexpr std::int64_t kMergeRefused = -32015;
constexpr std::int64_t kNotScored = -32016;
constexpr std::int64_t kNoResult = -32017;
constexpr std::int64_t kRaceRunning = -32018;
constexpr std::int64_t kInvalidParams = -32602;

std::string str(const json::value& v) { return std::string(v.as_string()); }

bool methodIs(const json::object& m, std::string_view method) {
  return m.at("method").as_string() == method;
}

// The notifications about one agent of one race, as indexes into `all`.
std::vector<std::size_t> indexesOf(const std::vector<json::object>& all, std::string_view method,
                                   const std::string& agentId) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const json::object& m = all[i];
    if (!methodIs(m, method)) continue;
    const json::value* a = m.at("params").as_object().if_contains("agentId");
    if (a && a->as_string() == agentId) out.push_back(i);
  }
  return out;
}

template <class Pred>
bool eventually(Pred pred, std::chrono::seconds limit = 60s) {
  auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class HydraMethodsTest : public ::testing::Test {
 protected:
  void start(json::object capabilities = {}) {
    client_ = std::make_unique<RpcClient>(repo_.root(),
                                          std::vector<std::string>{"PYTHONDONTWRITEBYTECODE=1"});
    initialized_ = client_->initialize(repo_.uri(), std::move(capabilities));
  }

  RpcClient& client() { return *client_; }

  json::object race(const std::vector<std::string>& agents, json::object extra = {}) {
    json::array names;
    for (const auto& a : agents) names.emplace_back(a);
    json::object params{{"task", "Fix add() in calc.py"}, {"agents", std::move(names)}};
    for (auto& [k, v] : extra) params[k] = v;
    return client().call("hydra/race", std::move(params)).as_object();
  }

  // Runs a race to its hydra/raceFinished; returns the race id.
  std::string runRace(const std::vector<std::string>& agents) {
    std::string id = str(race(agents).at("raceId"));
    client().waitFor("hydra/raceFinished", id);
    return id;
  }

  json::object raceFinished(const std::string& raceId) {
    return client()
        .notifications()[client().waitFor("hydra/raceFinished", raceId)]
        .at("params")
        .as_object();
  }

  json::object error(std::string_view method, json::object params) {
    return client().callError(method, std::move(params));
  }

  fs::path scratch(const std::string& name) const { return repo_.scratch() / name; }

  TestRepo repo_;
  std::unique_ptr<RpcClient> client_;
  json::object initialized_;
};

// --- hydra/agents --------------------------------------------------------------

TEST_F(HydraMethodsTest, AgentsTellWhichAreAvailableWhereAndWhyNot) {
  repo_.writeConfig(
      TestRepo::agent("ready", {"say", "hi"}) +
      "[agents.gone]\nadapter = \"command\"\nbinary = \"/nonexistent/hydra-ghost-agent\"\n\n");
  start();
  json::array agents = client().call("hydra/agents").at("agents").as_array();
  auto find = [&](std::string_view name) -> json::object {
    for (const auto& a : agents) {
      if (a.at("name").as_string() == name) return a.as_object();
    }
    throw std::runtime_error("no agent " + std::string(name) + " in " + json::serialize(agents));
  };
  json::object ready = find("ready");
  EXPECT_EQ(ready.at("available").as_bool(), true);
  EXPECT_EQ(ready.at("configured").as_bool(), true);
  EXPECT_EQ(ready.at("adapter").as_string(), "command");
  EXPECT_EQ(str(ready.at("path")), TestRepo::stepsScript().string());
  EXPECT_FALSE(ready.contains("problem"));

  json::object gone = find("gone");
  EXPECT_EQ(gone.at("available").as_bool(), false);
  EXPECT_TRUE(gone.at("version").is_null());
  EXPECT_FALSE(gone.contains("path"));
  EXPECT_THAT(str(gone.at("problem")), HasSubstr("/nonexistent/hydra-ghost-agent"));

  // Built-in adapters are listed too, as not configured.
  EXPECT_EQ(find("claude").at("configured").as_bool(), false);
}

TEST_F(HydraMethodsTest, AgentsOfferTheExecutorsOnlyWhereHydraTomlGivesAChoice) {
  repo_.writeConfig(TestRepo::agent("ready", {"say", "hi"}));
  start();
  EXPECT_EQ(json::serialize(client().call("hydra/agents").at("executors")), R"(["local"])")
      << "nothing speaks of Slurm: local is the only one";
  // Read again when it changed: Slurm prepared, local still the default, first.
  repo_.writeConfig(TestRepo::agent("ready", {"say", "hi"}) + "[executor]\npartition = \"gpu\"\n");
  EXPECT_EQ(json::serialize(client().call("hydra/agents").at("executors")), R"(["local","slurm"])");
  repo_.writeConfig(TestRepo::agent("ready", {"say", "hi"}) + "[executor]\nkind = \"slurm\"\n");
  EXPECT_EQ(json::serialize(client().call("hydra/agents").at("executors")), R"(["slurm","local"])");
}

// --- hydra/race and its notifications --------------------------------------------

TEST_F(HydraMethodsTest, RaceAnswersAtOnceThenNotifiesEachAgentInOrderWithProgress) {
  repo_.writeConfig(
      TestRepo::scoring() +
      TestRepo::agent("fixer", {"say", "looking at calc.py", "shout", "a warning", "write",
                                "calc.py", TestRepo::fixedCalc(), "say", "fixed"}) +
      TestRepo::agent("breaker", {"write", "calc.py", "def add(:", "say", "done"}));
  start(json::object{{"window", json::object{{"workDoneProgress", true}}}});

  json::object started = race({"fixer", "breaker"});
  const std::string id = str(started.at("raceId"));
  json::array agents = started.at("agents").as_array();
  ASSERT_EQ(agents.size(), 2u);
  EXPECT_EQ(agents[0].at("agentId").as_string(), "fixer");
  EXPECT_EQ(agents[0].at("agent").as_string(), "fixer");
  EXPECT_EQ(str(agents[0].at("branch")), "hydra/fixer-" + id);
  EXPECT_TRUE(fs::path(str(agents[0].at("worktree"))).is_absolute());
  EXPECT_EQ(agents[1].at("agentId").as_string(), "breaker");

  json::object finished = raceFinished(id);
  // The progress ends right after raceFinished.
  std::size_t end = client().waitFor([](const json::object& m) {
    return methodIs(m, "$/progress") && m.at("params").at("value").at("kind").as_string() == "end";
  });
  const auto& all = client().notifications();

  // Each agent: started, then its output, then finished; scoring after both; the race last.
  std::size_t scoring = client().waitFor("hydra/scoringStarted", id);
  std::size_t done = client().waitFor("hydra/raceFinished", id);
  for (std::string agent : {"fixer", "breaker"}) {
    SCOPED_TRACE(agent);
    auto startedAt = indexesOf(all, "hydra/agentStarted", agent);
    auto outputs = indexesOf(all, "hydra/agentOutput", agent);
    auto finishedAt = indexesOf(all, "hydra/agentFinished", agent);
    ASSERT_EQ(startedAt.size(), 1u);
    ASSERT_EQ(finishedAt.size(), 1u);
    ASSERT_FALSE(outputs.empty());
    EXPECT_LT(startedAt[0], outputs.front());
    EXPECT_LT(outputs.back(), finishedAt[0]);
    EXPECT_LT(finishedAt[0], scoring);
    const json::object& f = all[finishedAt[0]].at("params").as_object();
    EXPECT_EQ(f.at("status").as_string(), "completed");
    EXPECT_EQ(f.at("exitCode").as_int64(), 0);
    EXPECT_GE(f.at("durationMs").as_int64(), 0);
    EXPECT_EQ(str(all[startedAt[0]].at("params").at("branch")), "hydra/" + agent + "-" + id);
  }
  EXPECT_LT(scoring, done);
  EXPECT_LT(done, end);

  // The fixer's lines, stdout and stderr apart, in order.
  std::vector<std::string> out, err;
  for (auto i : indexesOf(all, "hydra/agentOutput", "fixer")) {
    const json::object& p = all[i].at("params").as_object();
    for (const auto& line : p.at("lines").as_array()) {
      (p.at("stream").as_string() == "stdout" ? out : err).push_back(str(line));
    }
    EXPECT_FALSE(p.contains("droppedLines"));
  }
  EXPECT_EQ(out, (std::vector<std::string>{"looking at calc.py", "fixed"}));
  EXPECT_EQ(err, (std::vector<std::string>{"a warning"}));

  EXPECT_EQ(finished.at("status").as_string(), "completed");
  ASSERT_EQ(finished.at("rankings").as_array().size(), 2u);
  EXPECT_EQ(finished.at("rankings").at(0).at("agentId").as_string(), "fixer");
  EXPECT_EQ(finished.at("winner").as_string(), "fixer");
  EXPECT_EQ(finished.at("allFailed").as_bool(), false);

  // Work-done progress on a token hydra created: begin, a report per agent, scoring, end.
  ASSERT_EQ(client().serverRequests().size(), 1u);
  const json::object& create = client().serverRequests()[0];
  EXPECT_EQ(create.at("method").as_string(), "window/workDoneProgress/create");
  const json::value token = create.at("params").at("token");
  std::vector<json::object> progress;
  for (const auto& m : client().notifications("$/progress")) {
    if (m.at("params").at("token") == token)
      progress.push_back(m.at("params").at("value").as_object());
  }
  ASSERT_EQ(progress.size(), 5u) << json::serialize(json::value_from(progress));
  EXPECT_EQ(progress[0].at("kind").as_string(), "begin");
  EXPECT_EQ(progress[0].at("title").as_string(), "Racing 2 agents");
  EXPECT_EQ(progress[0].at("cancellable").as_bool(), true);
  std::vector<std::string> reports{str(progress[1].at("message")), str(progress[2].at("message"))};
  std::sort(reports.begin(), reports.end());
  EXPECT_EQ(reports, (std::vector<std::string>{"breaker finished (completed)",
                                               "fixer finished (completed)"}));
  EXPECT_EQ(progress[1].at("percentage").as_int64(), 50);
  EXPECT_EQ(progress[2].at("percentage").as_int64(), 100);
  EXPECT_EQ(progress[3].at("message").as_string(), "scoring the results");
  EXPECT_EQ(progress[4].at("kind").as_string(), "end");
  EXPECT_THAT(str(progress[4].at("message")), HasSubstr("winner: fixer"));
}

TEST_F(HydraMethodsTest, AgentOutputCarriesTheEventsTheAdapterParsed) {
  const fs::path stream = fs::path(HYDRA_TEST_DATA_DIR) / "fixtures" / "claude.stream.jsonl";
  repo_.writeConfig(TestRepo::agent("claude", {"print-file", stream.string(), "--"}, "claude"));
  start();
  std::string id = runRace({"claude"});

  std::vector<std::string> kinds;
  for (const auto& m : client().notifications("hydra/agentOutput")) {
    for (const auto& e : m.at("params").at("events").as_array()) kinds.push_back(str(e.at("kind")));
  }
  EXPECT_THAT(kinds, ::testing::Contains("toolCall"));
  EXPECT_THAT(kinds, ::testing::Contains("text"));
  EXPECT_THAT(kinds, ::testing::Contains("summary"));
  for (const auto& k : kinds)
    EXPECT_THAT(k, Not(HasSubstr("_"))) << "kinds are camelCase on the wire";
  auto finished = client().notifications("hydra/agentFinished");
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_TRUE(finished[0].at("params").as_object().contains("usage"));
}

// --- hydra/scores ----------------------------------------------------------------

TEST_F(HydraMethodsTest, ScoresAfterRaceFinishedHoldTheRankingAndEveryCheck) {
  repo_.writeConfig(TestRepo::scoring() +
                    TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                    TestRepo::agent("breaker", {"write", "calc.py", "def add(:"}));
  start();
  std::string id = runRace({"fixer", "breaker"});

  json::object scores = client().call("hydra/scores", json::object{{"raceId", id}}).as_object();
  EXPECT_EQ(scores.at("raceId").as_string(), id);
  EXPECT_EQ(scores.at("winner").as_string(), "fixer");
  EXPECT_EQ(scores.at("allFailed").as_bool(), false);
  json::array rankings = scores.at("rankings").as_array();
  ASSERT_EQ(rankings.size(), 2u);

  const json::object& fixer = rankings[0].as_object();
  EXPECT_EQ(fixer.at("rank").as_int64(), 1);
  EXPECT_EQ(fixer.at("agentId").as_string(), "fixer");
  const json::object& b = fixer.at("breakdown").as_object();
  EXPECT_EQ(b.at("build").to_number<double>(), 100.0);
  EXPECT_EQ(b.at("tests").to_number<double>(), 100.0);
  EXPECT_TRUE(b.at("lint").is_null()) << "no lint command: excluded";
  EXPECT_TRUE(b.at("diffSize").is_number());
  EXPECT_TRUE(b.at("speed").is_number());
  const json::object& tests = fixer.at("checks").at("tests").as_object();
  EXPECT_EQ(tests.at("exitCode").as_int64(), 0);
  EXPECT_EQ(tests.at("tests").at("passed").as_int64(), 2);
  EXPECT_EQ(tests.at("tests").at("failed").as_int64(), 0);
  EXPECT_THAT(str(tests.at("output")), HasSubstr("2 passed"));
  EXPECT_THAT(str(tests.at("command")), HasSubstr("pytest"));
  EXPECT_TRUE(fixer.at("checks").at("lint").is_null());
  EXPECT_EQ(fixer.at("diff").at("linesAdded").as_int64(), 1);
  EXPECT_EQ(fixer.at("diff").at("linesRemoved").as_int64(), 1);
  EXPECT_EQ(fixer.at("diff").at("filesChanged").as_int64(), 1);

  const json::object& breaker = rankings[1].as_object();
  EXPECT_EQ(breaker.at("agentId").as_string(), "breaker");
  EXPECT_EQ(breaker.at("breakdown").at("build").to_number<double>(), 0.0);
  EXPECT_NE(breaker.at("checks").at("build").at("exitCode").as_int64(), 0);
  EXPECT_EQ(breaker.at("checks").at("tests").at("skipped").as_bool(), true);

  const json::object& baseline = scores.at("baseline").as_object();
  EXPECT_EQ(baseline.at("checks").at("tests").at("tests").at("passed").as_int64(), 1);
  EXPECT_EQ(baseline.at("checks").at("tests").at("tests").at("failed").as_int64(), 1);
}

TEST_F(HydraMethodsTest, ScoresOfARaceStillRunningIsNotScoredUntilItFinishes) {
  const fs::path go = scratch("go");
  repo_.writeConfig(TestRepo::agent(
      "waiter", {"wait-for", go.string(), "write", "calc.py", TestRepo::fixedCalc()}));
  start();
  std::string id = str(race({"waiter"}).at("raceId"));
  client().waitFor("hydra/agentStarted", id);

  json::object e = error("hydra/scores", json::object{{"raceId", id}});
  EXPECT_EQ(e.at("code").as_int64(), kNotScored);
  EXPECT_EQ(e.at("data").at("state").as_string(), "running");
  EXPECT_THAT(str(e.at("message")), HasSubstr("still running"));

  repo_.write("../scratch/go", "");
  raceFinished(id);
  EXPECT_EQ(client().call("hydra/scores", json::object{{"raceId", id}}).at("winner").as_string(),
            "waiter");
}

// --- hydra/status, hydra/races ----------------------------------------------------

// A race refused for a broken hydra.toml: the problem is shown once, by
// window/showMessage, and always before the answer, so that a client can tell
// the user has seen it. Repeated: the order must not depend on timing.
TEST_F(HydraMethodsTest, ABrokenConfigIsShownOnceAndBeforeTheRefusal) {
  repo_.writeConfig("[general]\nmax_concurrent_agents = \n");
  start();
  for (int i = 0; i < 5; ++i) {
    json::object refused = error("hydra/race", json::object{{"task", "t"}, {"agents", json::array{"claude"}}});
    EXPECT_EQ(refused.at("data").at("line"), json::value(3)) << json::serialize(refused);
    // Received before the answer: already in the list when callError returned.
    auto shown = client().notifications("window/showMessage");
    ASSERT_EQ(shown.size(), 1u) << "attempt " << i;
    EXPECT_NE(std::string(shown[0].at("params").at("message").as_string()).find("hydra.toml is broken"),
              std::string::npos);
  }
}

TEST_F(HydraMethodsTest, EveryRequestRefusedForABrokenConfigHasItShownFirst) {
  // hydra.toml breaks while hydra runs: whichever request meets it first,
  // the problem reaches the client before the refusal, so it is shown once.
  repo_.writeConfig(TestRepo::agent("quick", {"write", "q.txt", "q"}));
  start();
  for (int i = 0; i < 6; ++i) {
    const std::string method = i % 2 == 0 ? "hydra/agents" : "hydra/cleanup";
    ASSERT_TRUE(client().call("hydra/agents").as_object().contains("agents"));
    // A distinct problem each time (padding moves the column), so each is news.
    repo_.writeConfig("[general]\nmax_concurrent_agents = " + std::string(static_cast<std::size_t>(i), ' ') + "\n");
    json::object refused = error(method, json::object{});
    EXPECT_EQ(refused.at("message").as_string().subview().find("hydra.toml is broken"), 0u)
        << json::serialize(refused);
    auto shown = client().notifications("window/showMessage");
    ASSERT_EQ(shown.size(), static_cast<std::size_t>(i + 1)) << method << ", attempt " << i;
    EXPECT_NE(std::string(shown.back().at("params").at("message").as_string()).find(
                  std::string(refused.at("message").as_string()).substr(std::string("hydra.toml is broken: ").size())),
              std::string::npos)
        << "the message shown is the refusal's";
    repo_.writeConfig(TestRepo::agent("quick", {"write", "q.txt", "q"}));
  }
}

TEST_F(HydraMethodsTest, StatusListsRunningRacesFirstThenTheNewest) {
  const fs::path go = scratch("go");
  repo_.writeConfig(TestRepo::agent("slow", {"wait-for", go.string()}) +
                    TestRepo::agent("quick", {"write", "q.txt", "q"}));
  start();
  std::string slow = str(race({"slow"}).at("raceId"));
  client().waitFor("hydra/agentStarted", slow);
  std::string quick = runRace({"quick"});

  json::array races = client().call("hydra/status").at("races").as_array();
  ASSERT_EQ(races.size(), 2u);
  EXPECT_EQ(races[0].at("raceId").as_string(), slow)
      << "the running race comes first, although it is older";
  EXPECT_EQ(races[0].at("state").as_string(), "running");
  EXPECT_EQ(races[0].at("task").as_string(), "Fix add() in calc.py");
  const json::object& slowAgent = races[0].at("agents").at(0).as_object();
  EXPECT_EQ(slowAgent.at("state").as_string(), "running");
  EXPECT_GE(slowAgent.at("elapsedMs").as_int64(), 0);
  EXPECT_FALSE(slowAgent.contains("exitCode"));
  EXPECT_EQ(str(slowAgent.at("branch")), "hydra/slow-" + slow);

  EXPECT_EQ(races[1].at("raceId").as_string(), quick);
  EXPECT_EQ(races[1].at("state").as_string(), "completed");
  const json::object& quickAgent = races[1].at("agents").at(0).as_object();
  EXPECT_EQ(quickAgent.at("state").as_string(), "completed");
  EXPECT_EQ(quickAgent.at("exitCode").as_int64(), 0);
  EXPECT_EQ(races[1].at("baseCommit").as_string(), repo_.git("rev-parse HEAD"));

  json::array one =
      client().call("hydra/status", json::object{{"raceId", quick}}).at("races").as_array();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].at("raceId").as_string(), quick);

  repo_.write("../scratch/go", "");
  raceFinished(slow);
}

TEST_F(HydraMethodsTest, RacesPagesThroughEveryRaceNewestFirst) {
  repo_.writeConfig(TestRepo::agent("quick", {"say", "hi"}));
  start();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(runRace({"quick"}));

  json::object first = client().call("hydra/races", json::object{{"limit", 2}}).as_object();
  EXPECT_EQ(first.at("total").as_int64(), 3);
  ASSERT_EQ(first.at("races").as_array().size(), 2u);
  EXPECT_EQ(first.at("races").at(0).at("raceId").as_string(), ids[2]);
  EXPECT_EQ(first.at("races").at(1).at("raceId").as_string(), ids[1]);
  EXPECT_EQ(first.at("nextOffset").as_int64(), 2);

  json::object last =
      client().call("hydra/races", json::object{{"offset", 2}, {"limit", 2}}).as_object();
  ASSERT_EQ(last.at("races").as_array().size(), 1u);
  EXPECT_EQ(last.at("races").at(0).at("raceId").as_string(), ids[0]);
  EXPECT_FALSE(last.contains("nextOffset"));

  EXPECT_EQ(error("hydra/races", json::object{{"limit", 0}}).at("code").as_int64(), kInvalidParams);
}

// --- hydra/cancel ----------------------------------------------------------------

TEST_F(HydraMethodsTest, CancelStopsOneAgentThenTheWholeRace) {
  const fs::path never = scratch("never");
  repo_.writeConfig(TestRepo::agent("w", {"wait-for", never.string()}));
  start();
  std::string id = str(race({"w", "w", "w"}).at("raceId"));
  for (std::string agent : {"w-1", "w-2", "w-3"}) {
    client().waitFor([&](const json::object& m) {
      return methodIs(m, "hydra/agentStarted") && m.at("params").at("agentId").as_string() == agent;
    });
  }

  EXPECT_EQ(client()
                .call("hydra/cancel", json::object{{"raceId", id}, {"agentId", "w-1"}})
                .at("cancelled"),
            true);
  std::size_t cancelled = client().waitFor([](const json::object& m) {
    return methodIs(m, "hydra/agentFinished") && m.at("params").at("agentId").as_string() == "w-1";
  });
  EXPECT_EQ(client().notifications()[cancelled].at("params").at("status").as_string(), "cancelled");

  json::object unknown = error("hydra/cancel", json::object{{"raceId", id}, {"agentId", "nobody"}});
  EXPECT_EQ(unknown.at("code").as_int64(), kUnknownAgent);
  EXPECT_EQ(unknown.at("data").at("agents"), (json::array{"w-1", "w-2", "w-3"}));

  EXPECT_EQ(client().call("hydra/cancel", json::object{{"raceId", id}}).at("cancelled"), true);
  json::object finished = raceFinished(id);
  EXPECT_EQ(finished.at("status").as_string(), "cancelled");
  EXPECT_TRUE(finished.at("rankings").as_array().empty());
  EXPECT_TRUE(finished.at("winner").is_null());
  json::object record = repo_.raceRecord(id);
  EXPECT_EQ(record.at("status").as_string(), "cancelled");
  for (const auto& a : record.at("agents").as_array())
    EXPECT_EQ(a.at("status").as_string(), "cancelled");

  EXPECT_EQ(client().call("hydra/cancel", json::object{{"raceId", id}}).at("cancelled"), false)
      << "a finished race has nothing to cancel";
  json::object notScored = error("hydra/scores", json::object{{"raceId", id}});
  EXPECT_EQ(notScored.at("code").as_int64(), kNotScored);
  EXPECT_EQ(notScored.at("data").at("state").as_string(), "cancelled");
}

TEST_F(HydraMethodsTest, CancellingTheRacesProgressCancelsTheRace) {
  const fs::path never = scratch("never");
  repo_.writeConfig(TestRepo::agent("w", {"wait-for", never.string()}));
  start();
  std::string id = str(race({"w"}, json::object{{"workDoneToken", "race-progress"}}).at("raceId"));
  client().waitFor("hydra/agentStarted", id);
  client().notify("window/workDoneProgress/cancel", json::object{{"token", "race-progress"}});
  EXPECT_EQ(raceFinished(id).at("status").as_string(), "cancelled");
  std::size_t end = client().waitFor([](const json::object& m) {
    return methodIs(m, "$/progress") && m.at("params").at("token") == "race-progress" &&
           m.at("params").at("value").at("kind") == "end";
  });
  EXPECT_THAT(str(client().notifications()[end].at("params").at("value").at("message")),
              HasSubstr("cancelled"));
  EXPECT_TRUE(client().serverRequests().empty())
      << "the client's own token needs no window/workDoneProgress/create";
}

// --- hydra/diff ------------------------------------------------------------------

TEST_F(HydraMethodsTest, DiffListsTheChangesWithThePatchAndBothVersionsOfAFile) {
  repo_.writeConfig(TestRepo::agent("a", {"write", "calc.py", TestRepo::fixedCalc(), "write",
                                          "notes/new.txt", "new file", "delete", "README.md"}));
  start();
  std::string id = runRace({"a"});

  json::object diff =
      client().call("hydra/diff", json::object{{"raceId", id}, {"agentId", "a"}}).as_object();
  json::array files = diff.at("files").as_array();
  ASSERT_EQ(files.size(), 3u) << json::serialize(files);
  EXPECT_EQ(files[0].at("path").as_string(), "README.md");
  EXPECT_EQ(files[0].at("status").as_string(), "deleted");
  EXPECT_EQ(files[1].at("path").as_string(), "calc.py");
  EXPECT_EQ(files[1].at("status").as_string(), "modified");
  EXPECT_EQ(files[1].at("additions").as_int64(), 1);
  EXPECT_EQ(files[1].at("deletions").as_int64(), 1);
  EXPECT_EQ(files[1].at("binary").as_bool(), false);
  EXPECT_EQ(files[2].at("path").as_string(), "notes/new.txt");
  EXPECT_EQ(files[2].at("status").as_string(), "added");
  std::string patch = str(diff.at("patch"));
  EXPECT_THAT(patch, HasSubstr("diff --git a/calc.py b/calc.py"));
  EXPECT_THAT(patch, HasSubstr("-    return a - b\n+    return a + b"));

  json::object calc =
      client()
          .call("hydra/diff", json::object{{"raceId", id}, {"agentId", "a"}, {"path", "calc.py"}})
          .as_object();
  EXPECT_EQ(calc.at("path").as_string(), "calc.py");
  EXPECT_EQ(str(calc.at("base")), repo_.read("calc.py"));
  EXPECT_EQ(str(calc.at("agent")), TestRepo::fixedCalc() + "\n");
  EXPECT_EQ(calc.at("binary").as_bool(), false);
  EXPECT_EQ(calc.at("encoding").as_string(), "utf-8");

  json::object added =
      client()
          .call("hydra/diff",
                json::object{{"raceId", id}, {"agentId", "a"}, {"path", "notes/new.txt"}})
          .as_object();
  EXPECT_TRUE(added.at("base").is_null());
  EXPECT_EQ(added.at("agent").as_string(), "new file\n");
  json::object deleted =
      client()
          .call("hydra/diff", json::object{{"raceId", id}, {"agentId", "a"}, {"path", "README.md"}})
          .as_object();
  EXPECT_EQ(deleted.at("base").as_string(), "# calc\n");
  EXPECT_TRUE(deleted.at("agent").is_null());

  EXPECT_EQ(
      error("hydra/diff", json::object{{"raceId", id}, {"agentId", "b"}}).at("code").as_int64(),
      kUnknownAgent);
}

TEST_F(HydraMethodsTest, DiffNeverReadsAnythingOutsideTheAgentsChanges) {
  repo_.writeConfig(
      TestRepo::agent("a", {"write", "calc.py", TestRepo::fixedCalc(), "symlink", "/etc", "escape",
                            "symlink", "/etc/passwd", "passwd-link"}));
  start();
  std::string id = runRace({"a"});
  // It is a real change the agent made: the diff lists it.
  json::array files = client()
                          .call("hydra/diff", json::object{{"raceId", id}, {"agentId", "a"}})
                          .at("files")
                          .as_array();
  EXPECT_EQ(files.size(), 3u) << json::serialize(files);

  for (std::string path :
       {"../calc.py", "/etc/passwd", "escape/passwd", "passwd-link", "escape", "test_calc.py",
        "calc.py/../../../etc/passwd", "./calc.py", "", ".git/config"}) {
    SCOPED_TRACE("path '" + path + "'");
    json::object e =
        error("hydra/diff", json::object{{"raceId", id}, {"agentId", "a"}, {"path", path}});
    EXPECT_EQ(e.at("code").as_int64(), kPathOutsideChanges);
    EXPECT_EQ(e.at("data").at("path").as_string(), path);
    EXPECT_THAT(json::serialize(e), Not(HasSubstr("root:"))) << "the contents of /etc/passwd";
  }
}

// --- hydra/merge -----------------------------------------------------------------

TEST_F(HydraMethodsTest, MergeDryRunChangesNothingThenMergingTheWinnerFastForwards) {
  repo_.writeConfig(TestRepo::scoring() +
                    TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                    TestRepo::agent("breaker", {"write", "calc.py", "def add(:"}));
  start();
  std::string id = runRace({"fixer", "breaker"});
  const std::string head = repo_.git("rev-parse HEAD");
  const std::string original = repo_.read("calc.py");

  json::object dry =
      client().call("hydra/merge", json::object{{"raceId", id}, {"dryRun", true}}).as_object();
  EXPECT_EQ(dry.at("outcome").as_string(), "fastForward");
  EXPECT_EQ(dry.at("agentId").as_string(), "fixer") << "without agentId, the winner";
  EXPECT_EQ(dry.at("files"), (json::array{"calc.py"}));
  EXPECT_EQ(dry.at("targetBranch").as_string(), "main");
  EXPECT_EQ(dry.at("dryRun").as_bool(), true);
  EXPECT_EQ(repo_.git("rev-parse HEAD"), head);
  EXPECT_EQ(repo_.read("calc.py"), original);

  json::object merged = client().call("hydra/merge", json::object{{"raceId", id}}).as_object();
  EXPECT_EQ(merged.at("outcome").as_string(), "fastForward");
  EXPECT_EQ(str(merged.at("branch")), "hydra/fixer-" + id);
  EXPECT_EQ(str(merged.at("commit")), repo_.git("rev-parse HEAD"));
  EXPECT_EQ(repo_.read("calc.py"), TestRepo::fixedCalc() + "\n");
  EXPECT_EQ(merged.at("cleanedUp").as_bool(), true);
  EXPECT_EQ(repo_.git("branch --list 'hydra/*'"), "");
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=no"), "");
}

TEST_F(HydraMethodsTest, MergeConflictIsAnOutcomeThatLeavesTheRepositoryAsItWas) {
  repo_.writeConfig(TestRepo::agent("a", {"write", "calc.py", TestRepo::fixedCalc()}));
  start();
  std::string id = runRace({"a"});
  // Meanwhile the user changed the same line differently.
  repo_.write("calc.py",
              "def add(a, b):\n    return b + a\n\n\ndef sub(a, b):\n    return a - b\n");
  repo_.git("commit -q -am 'my own fix'");
  const std::string head = repo_.git("rev-parse HEAD");
  std::size_t before = client().notifications().size();

  json::object r =
      client().call("hydra/merge", json::object{{"raceId", id}, {"agentId", "a"}}).as_object();
  EXPECT_EQ(r.at("outcome").as_string(), "conflict");
  EXPECT_EQ(r.at("conflicts"), (json::array{"calc.py"}));
  EXPECT_FALSE(r.contains("commit"));
  EXPECT_EQ(repo_.git("rev-parse HEAD"), head);
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=no"), "");
  EXPECT_FALSE(fs::exists(repo_.root() / ".git" / "MERGE_HEAD"));

  std::size_t shown = client().waitFor(
      [](const json::object& m) { return methodIs(m, "window/showMessage"); }, before);
  const json::object& message = client().notifications()[shown].at("params").as_object();
  EXPECT_EQ(message.at("type").as_int64(), 2);
  EXPECT_THAT(str(message.at("message")), HasSubstr("conflicts in 1 file(s): calc.py"));
}

TEST_F(HydraMethodsTest, MergeIntoADirtyWorkingTreeIsRefusedNamingTheFiles) {
  repo_.writeConfig(TestRepo::agent("a", {"write", "calc.py", TestRepo::fixedCalc()}));
  start();
  std::string id = runRace({"a"});
  repo_.write("calc.py", "# work in progress\n");
  std::size_t before = client().notifications().size();

  json::object e = error("hydra/merge", json::object{{"raceId", id}, {"agentId", "a"}});
  EXPECT_EQ(e.at("code").as_int64(), kDirtyWorkingTree);
  EXPECT_EQ(e.at("data").at("files"), (json::array{"calc.py"}));
  EXPECT_THAT(str(e.at("message")), StartsWith("merge refused: "));
  EXPECT_EQ(repo_.read("calc.py"), "# work in progress\n");

  std::size_t shown = client().waitFor(
      [](const json::object& m) { return methodIs(m, "window/showMessage"); }, before);
  const json::object& message = client().notifications()[shown].at("params").as_object();
  EXPECT_EQ(message.at("type").as_int64(), 1);
  EXPECT_THAT(str(message.at("message")), StartsWith("merge refused: "));
}

TEST_F(HydraMethodsTest, MergeOntoADetachedHeadIsRefusedAndSaysWhy) {
  repo_.writeConfig(TestRepo::agent("a", {"write", "calc.py", TestRepo::fixedCalc()}));
  start();
  std::string id = runRace({"a"});
  repo_.git("checkout -q --detach");
  const std::string head = repo_.git("rev-parse HEAD");
  std::size_t before = client().notifications().size();

  json::object e = error("hydra/merge", json::object{{"raceId", id}, {"agentId", "a"}});
  EXPECT_EQ(e.at("code").as_int64(), kMergeRefused);
  EXPECT_EQ(e.at("data").at("reason").as_string(), "detachedHead");
  EXPECT_EQ(repo_.git("rev-parse HEAD"), head);
  std::size_t shown = client().waitFor(
      [](const json::object& m) { return methodIs(m, "window/showMessage"); }, before);
  EXPECT_EQ(client().notifications()[shown].at("params").at("type").as_int64(), 1);
}

TEST_F(HydraMethodsTest, MergingARaceThatStillRunsIsRefused) {
  const fs::path go = scratch("go");
  repo_.writeConfig(TestRepo::agent("slow", {"wait-for", go.string(), "write", "s.txt", "s"}));
  start();
  std::string id = str(race({"slow"}).at("raceId"));
  client().waitFor("hydra/agentStarted", id);
  json::object e = error("hydra/merge", json::object{{"raceId", id}, {"agentId", "slow"}});
  EXPECT_EQ(e.at("code").as_int64(), kRaceRunning);
  EXPECT_EQ(e.at("data").at("raceId").as_string(), id);
  repo_.write("../scratch/go", "");
  raceFinished(id);
}

// --- hydra/log -------------------------------------------------------------------

TEST_F(HydraMethodsTest, LogReadsAnAgentsWholeOutputPageByPage) {
  repo_.writeConfig(TestRepo::agent("a", {"count", "3000", "shout", "on stderr"}));
  start();
  std::string id = runRace({"a"});

  std::string expected;
  for (int i = 1; i <= 3000; ++i) expected += "line " + std::to_string(i) + "\n";
  std::string read;
  std::uint64_t offset = 0;
  int pages = 0;
  for (;;) {
    json::object page =
        client()
            .call(
                "hydra/log",
                json::object{{"raceId", id}, {"agentId", "a"}, {"offset", offset}, {"limit", 5000}})
            .as_object();
    ++pages;
    EXPECT_EQ(page.at("offset").to_number<std::uint64_t>(), offset);
    EXPECT_EQ(page.at("totalSize").to_number<std::uint64_t>(), expected.size());
    read += str(page.at("data"));
    offset = page.at("nextOffset").to_number<std::uint64_t>();
    if (offset >= page.at("totalSize").to_number<std::uint64_t>() || pages > 100) break;
  }
  EXPECT_EQ(read, expected);
  EXPECT_EQ(pages, static_cast<int>((expected.size() + 4999) / 5000));

  json::object err =
      client()
          .call("hydra/log", json::object{{"raceId", id}, {"agentId", "a"}, {"stream", "stderr"}})
          .as_object();
  EXPECT_EQ(err.at("data").as_string(), "on stderr\n");

  EXPECT_EQ(
      error("hydra/log", json::object{{"raceId", id}, {"agentId", "b"}}).at("code").as_int64(),
      kUnknownAgent);
  json::object badStream =
      error("hydra/log", json::object{{"raceId", id}, {"agentId", "a"}, {"stream", "both"}});
  EXPECT_EQ(badStream.at("code").as_int64(), kInvalidParams);
  EXPECT_EQ(badStream.at("data").at("path").as_string(), "params.stream");
}

// --- hydra/cleanup ---------------------------------------------------------------

TEST_F(HydraMethodsTest, CleanupRemovesTheWorktreesOfFinishedRacesOnly) {
  const fs::path go = scratch("go");
  repo_.writeConfig(TestRepo::agent("slow", {"wait-for", go.string()}) +
                    TestRepo::agent("quick", {"write", "q.txt", "q"}));
  start();
  std::string quick = runRace({"quick"});
  std::string slow = str(race({"slow"}).at("raceId"));
  client().waitFor("hydra/agentStarted", slow);
  const std::string quickTree = str(repo_.raceRecord(quick).at("agents").at(0).at("worktree"));
  const std::string slowTree = str(repo_.raceRecord(slow).at("agents").at(0).at("worktree"));

  json::object running = error("hydra/cleanup", json::object{{"raceId", slow}});
  EXPECT_EQ(running.at("code").as_int64(), kRaceRunning);

  json::object r = client().call("hydra/cleanup").as_object();
  EXPECT_EQ(r.at("removed"), (json::array{json::string(quickTree)}));
  EXPECT_FALSE(fs::exists(quickTree));
  EXPECT_TRUE(fs::is_directory(slowTree));
  EXPECT_EQ(repo_.git("branch --list 'hydra/quick-*'"), "");

  repo_.write("../scratch/go", "");
  EXPECT_EQ(raceFinished(slow).at("status").as_string(), "completed");
}

// --- several races ---------------------------------------------------------------

TEST_F(HydraMethodsTest, RacesRunAtOnceWithinOneAgentLimitAndAnAgentThatNeverRanHasNoResult) {
  const fs::path go = scratch("go");
  const fs::path never = scratch("never");
  repo_.writeConfig("[general]\nmax_concurrent_agents = 1\n\n" +
                    TestRepo::agent("first", {"wait-for", go.string(), "write", "f.txt", "f"}) +
                    TestRepo::agent("stuck", {"wait-for", never.string()}));
  start();
  std::string one = str(race({"first"}).at("raceId"));
  client().waitFor("hydra/agentStarted", one);
  std::string two = str(race({"stuck", "stuck"}).at("raceId"));

  // One agent runs; the second race's wait for the slot.
  json::array races = client().call("hydra/status").at("races").as_array();
  ASSERT_EQ(races.size(), 2u);
  for (const auto& r : races) {
    EXPECT_EQ(r.at("state").as_string(), "running");
    if (r.at("raceId").as_string() != two) continue;
    for (const auto& a : r.at("agents").as_array()) EXPECT_EQ(a.at("state").as_string(), "queued");
  }

  // When the first race ends, stuck-1 takes the slot and stuck-2 still waits.
  repo_.write("../scratch/go", "");
  raceFinished(one);
  std::size_t started = client().waitFor("hydra/agentStarted", two);
  EXPECT_EQ(client().notifications()[started].at("params").at("agentId").as_string(), "stuck-1");
  EXPECT_EQ(client().call("hydra/cancel", json::object{{"raceId", two}}).at("cancelled"), true);
  raceFinished(two);
  EXPECT_EQ(client().notifications("hydra/agentStarted").size(), 2u) << "stuck-2 never ran";

  json::object e = error("hydra/diff", json::object{{"raceId", two}, {"agentId", "stuck-2"}});
  EXPECT_EQ(e.at("code").as_int64(), kNoResult);
  EXPECT_EQ(e.at("data").at("agentId").as_string(), "stuck-2");
}

// --- hydra.toml ------------------------------------------------------------------

TEST_F(HydraMethodsTest, EditsToHydraTomlApplyToTheNextRace) {
  repo_.writeConfig(TestRepo::agent("a", {"say", "a"}));
  start();
  json::object unknown =
      error("hydra/race", json::object{{"task", "t"}, {"agents", json::array{"b"}}});
  EXPECT_EQ(unknown.at("code").as_int64(), kUnknownAgentName);
  EXPECT_THAT(str(unknown.at("message")), HasSubstr("known: a, "));

  repo_.writeConfig(TestRepo::agent("a", {"say", "a"}) + TestRepo::agent("b", {"say", "from b"}));
  std::string id = runRace({"b"});
  auto outputs = client().notifications("hydra/agentOutput");
  ASSERT_FALSE(outputs.empty());
  EXPECT_EQ(outputs[0].at("params").at("lines"), (json::array{"from b"}));
  EXPECT_EQ(repo_.raceRecord(id).at("status").as_string(), "completed");
}

// hydra.toml's problems are diagnostics on the file, which follow it as it is
// edited: a fixed file clears them, with no request needed.
TEST_F(HydraMethodsTest, HydraTomlProblemsAreDiagnosticsThatFollowTheFile) {
  repo_.writeConfig("[general]\nmax_concurrent_agents = \"two\"\n");
  start();
  const std::string uri = repo_.uri() + "/hydra.toml";
  auto diagnosticsOf = [&](std::size_t index) {
    const json::object& params = client().notifications().at(index).at("params").as_object();
    EXPECT_EQ(params.at("uri"), json::value(uri));
    return params.at("diagnostics").as_array();
  };
  auto isDiagnostics = [](const json::object& m) { return m.at("method") == "textDocument/publishDiagnostics"; };
  std::size_t first = client().waitFor(isDiagnostics);
  json::array broken = diagnosticsOf(first);
  ASSERT_EQ(broken.size(), 1u) << json::serialize(broken);
  // 0-based: the file's third line (writeConfig puts a line of its own first), column 25.
  EXPECT_EQ(broken[0].at("range").at("start"), json::parse(R"({"line":2,"character":24})"));
  EXPECT_EQ(broken[0].at("range").at("end"), json::parse(R"({"line":2,"character":29})")) << "over \"two\"";
  EXPECT_EQ(broken[0].at("severity"), json::value(1));
  EXPECT_EQ(broken[0].at("source"), json::value("hydra"));
  EXPECT_THAT(str(broken[0].at("message")), HasSubstr("max_concurrent_agents"));

  // Fixed: the diagnostic is cleared, without a request.
  repo_.writeConfig(TestRepo::agent("a", {"say", "a"}));
  std::size_t cleared = client().waitFor(isDiagnostics, first + 1, 20s);
  EXPECT_THAT(diagnosticsOf(cleared), IsEmpty());
  // Broken elsewhere: a new diagnostic where the new problem is.
  repo_.writeConfig(TestRepo::agent("a", {"say", "a"}) + "[scoring]\nauto_merge = 1\n");
  std::size_t again = client().waitFor(isDiagnostics, cleared + 1, 20s);
  json::array moved = diagnosticsOf(again);
  ASSERT_EQ(moved.size(), 1u) << json::serialize(moved);
  EXPECT_THAT(str(moved[0].at("message")), HasSubstr("auto_merge"));
  // Published once per change: nothing more while the file stays as it is.
  client().drain(std::chrono::milliseconds(4500));
  std::size_t published = 0;
  for (const auto& m : client().notifications()) published += isDiagnostics(m) ? 1 : 0;
  EXPECT_EQ(published, 3u);
}

// A test command whose output names no tests is a warning on its key (the
// file works; races run), so an editor shows it where the command is written;
// a JUnit report clears it.
TEST_F(HydraMethodsTest, ATestCommandComparedByCountsOnlyIsAWarningDiagnostic) {
  repo_.writeConfig(TestRepo::agent("a", {"say", "a"}) + "[scoring]\ntest_command = \"npx jest --ci\"\n");
  start();
  const std::string uri = repo_.uri() + "/hydra.toml";
  auto isDiagnostics = [](const json::object& m) { return m.at("method") == "textDocument/publishDiagnostics"; };
  std::size_t first = client().waitFor(isDiagnostics);
  const json::object& params = client().notifications().at(first).at("params").as_object();
  EXPECT_EQ(params.at("uri"), json::value(uri));
  const json::array& warned = params.at("diagnostics").as_array();
  ASSERT_EQ(warned.size(), 1u) << json::serialize(warned);
  EXPECT_EQ(warned[0].at("severity"), json::value(2));
  EXPECT_EQ(warned[0].at("source"), json::value("hydra"));
  EXPECT_THAT(str(warned[0].at("message")), HasSubstr("tests will be compared by counts only"));
  // On the key: the line after the agent's table and "[scoring]", column 0.
  const std::string written = repo_.read("hydra.toml");
  const auto keyLine = static_cast<std::int64_t>(
      std::count(written.begin(), written.begin() + static_cast<std::ptrdiff_t>(written.find("test_command")), '\n'));
  EXPECT_EQ(warned[0].at("range").at("start"),
            (json::value{{"line", keyLine}, {"character", 0}}));
  EXPECT_EQ(warned[0].at("range").at("end"), (json::value{{"line", keyLine}, {"character", 12}})) << "over the key";
  // A warning is no broken file: no message pops up, and races still start.
  EXPECT_THAT(client().notifications("window/showMessage"), IsEmpty());

  repo_.writeConfig(TestRepo::agent("a", {"say", "a"}) +
                    "[scoring]\ntest_command = \"npx jest --ci\"\njunit_report = \"junit.xml\"\n");
  std::size_t cleared = client().waitFor(isDiagnostics, first + 1, 20s);
  EXPECT_THAT(client().notifications().at(cleared).at("params").at("diagnostics").as_array(), IsEmpty());
}

// --- a client that reads slowly, or goes away -------------------------------------

TEST_F(HydraMethodsTest, SlowClientNeverStallsAnAgentAndLearnsWhatItMissed) {
  constexpr int kLines = 300'000;  // about 30 MB, far more than hydra queues for a client
  repo_.writeConfig(TestRepo::agent("flood", {"flood", std::to_string(kLines)}));
  start();
  std::string id = str(race({"flood"}).at("raceId"));

  // The client reads nothing more until the agent is done, which the record on disk tells.
  ASSERT_TRUE(eventually([&] {
    std::error_code ec;
    if (!fs::exists(repo_.root() / ".hydra" / "races" / id / "race.json", ec)) return false;
    return repo_.raceRecord(id).at("agents").at(0).at("status").as_string() == "completed";
  }, 180s)) << "the agent did not finish while its client was not reading";
  // A stalled agent never finishes; the bound is generous for a sanitizer build on a busy machine.
  EXPECT_LT(repo_.raceRecord(id).at("agents").at(0).at("durationMs").as_int64(), 180'000);

  json::object finished = raceFinished(id);
  EXPECT_EQ(finished.at("status").as_string(), "completed");
  std::uint64_t lines = 0, dropped = 0;
  for (const auto& m : client().notifications("hydra/agentOutput")) {
    lines += m.at("params").at("lines").as_array().size();
    if (const auto* d = m.at("params").as_object().if_contains("droppedLines"))
      dropped += d->to_number<std::uint64_t>();
  }
  EXPECT_GT(dropped, 0u) << "hydra did not leave anything out for a client that was not reading";
  EXPECT_EQ(lines + dropped, static_cast<std::uint64_t>(kLines))
      << "every line is either sent or counted";
  ASSERT_EQ(client().notifications("hydra/agentFinished").size(), 1u);
  // The log has all of it.
  json::object log =
      client()
          .call("hydra/log", json::object{{"raceId", id}, {"agentId", "flood"}, {"limit", 1}})
          .as_object();
  EXPECT_GE(log.at("totalSize").to_number<std::uint64_t>(),
            static_cast<std::uint64_t>(kLines) * 100);
}

TEST_F(HydraMethodsTest, ClientGoneMidRaceKillsItsAgentsMarksTheRaceInterruptedAndExits) {
  const fs::path pids = scratch("pids");
  const fs::path never = scratch("never");
  repo_.writeConfig(TestRepo::agent("stuck", {"pids", pids.string(), "wait-for", never.string()}));
  start();
  std::string id = str(race({"stuck"}).at("raceId"));
  ASSERT_TRUE(eventually([&] { return fs::exists(pids); }));
  std::istringstream in(readFile(pids));
  int agentPid = 0, sleeperPid = 0;
  in >> agentPid >> sleeperPid;
  ASSERT_GT(agentPid, 0);
  ASSERT_GT(sleeperPid, 0);

  auto closed = Clock::now();
  client().process().closeStdin();
  auto code = client().process().waitExit(3s);
  ASSERT_TRUE(code) << "hydra kept running after its client left; its log:\n"
                    << client().process().stderrText();
  EXPECT_EQ(*code, 1);
  EXPECT_LT(Clock::now() - closed, 3s);

  EXPECT_TRUE(eventually([&] { return processGone(agentPid); }, 5s)) << "the agent outlived hydra";
  EXPECT_TRUE(eventually([&] { return processGone(sleeperPid); }, 5s))
      << "the agent's child outlived hydra";
  json::object record = repo_.raceRecord(id);
  EXPECT_EQ(record.at("status").as_string(), "interrupted");
  EXPECT_EQ(record.at("agents").at(0).at("status").as_string(), "interrupted");
}

TEST_F(HydraMethodsTest, ShutdownEndsTheRacesTheEditorLeavesRunning) {
  const fs::path pids = scratch("pids");
  const fs::path never = scratch("never");
  repo_.writeConfig(TestRepo::agent("stuck", {"pids", pids.string(), "wait-for", never.string()}));
  start();
  std::string id = str(race({"stuck"}).at("raceId"));
  ASSERT_TRUE(eventually([&] { return fs::exists(pids); }));
  int agentPid = std::stoi(readFile(pids));

  EXPECT_TRUE(client().call("shutdown", json::object{}).is_null());
  EXPECT_TRUE(processGone(agentPid) || eventually([&] { return processGone(agentPid); }, 5s));
  EXPECT_EQ(repo_.raceRecord(id).at("status").as_string(), "interrupted");
  client().notify("exit");
  auto code = client().process().waitExit(5s);
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 0);
}

TEST_F(HydraMethodsTest, UnknownIdsGetTheirOwnErrors) {
  repo_.writeConfig(TestRepo::agent("a", {"say", "a"}));
  start();
  std::string id = runRace({"a"});
  for (std::string method : {"hydra/diff", "hydra/log"}) {
    SCOPED_TRACE(method);
    json::object e = error(method, json::object{{"raceId", id}, {"agentId", "zed"}});
    EXPECT_EQ(e.at("code").as_int64(), kUnknownAgent);
    EXPECT_EQ(e.at("data").at("agents"), (json::array{"a"}));
    EXPECT_THAT(str(e.at("message")), HasSubstr("its agents: a"));
  }
  json::object merge = error("hydra/merge", json::object{{"raceId", id}, {"agentId", "zed"}});
  EXPECT_EQ(merge.at("code").as_int64(), kUnknownAgent);
  for (std::string method : {"hydra/scores", "hydra/status", "hydra/cleanup"}) {
    SCOPED_TRACE(method);
    EXPECT_EQ(error(method, json::object{{"raceId", "20990101-000000-dead"}}).at("code").as_int64(),
              kUnknownRace);
  }
}

}  // namespace
}  // namespace hydra::test

namespace hydra::test {
namespace {

// What the terminal prints for a command run in the repository: stdout, and the exit code.
std::pair<int, std::string> hydraCli(const fs::path& repo, const std::string& args) {
  std::string command = "cd '" + repo.string() + "' && '" + std::string(HYDRA_BINARY) + "' " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// --- one JSON form per result ---------------------------------------------------------------

TEST_F(HydraMethodsTest, HydraScoresJsonInTheTerminalEqualsTheResultOfHydraScores) {
  repo_.writeConfig(TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                    TestRepo::agent("idle", {"say", "nothing to do"}) + TestRepo::scoring());
  start();
  std::string id = runRace({"fixer", "idle"});
  json::value fromProtocol = client().call("hydra/scores", json::object{{"raceId", id}});

  auto [code, out] = hydraCli(repo_.root(), "scores " + id + " --json");
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(json::parse(out), fromProtocol);
  // And what raceFinished carried is the same result.
  json::object finished = raceFinished(id);
  EXPECT_EQ(finished.at("rankings"), fromProtocol.at("rankings"));
  EXPECT_EQ(finished.at("winner"), fromProtocol.at("winner"));

  auto [statusCode, status] = hydraCli(repo_.root(), "status " + id + " --json");
  ASSERT_EQ(statusCode, 0) << status;
  EXPECT_EQ(json::parse(status), client().call("hydra/status", json::object{{"raceId", id}}));
}

// --- secrets ----------------------------------------------------------------------------

TEST_F(HydraMethodsTest, ASecretAnAgentPrintsNeverReachesANotificationOrTheTerminalUnmasked) {
  const std::string secret = "hunter2-e2e-secret-value";
  repo_.writeConfig(TestRepo::agent("leaky", {"say", "the token is " + secret, "shout", "stderr: " + secret,
                                              "write", "calc.py", TestRepo::fixedCalc()}) +
                    "env = { SERVICE_TOKEN = \"" + secret + "\" }\n\n");
  start();
  std::string id = runRace({"leaky"});
  std::size_t outputs = 0;
  for (const auto& n : client().notifications()) {
    std::string text = json::serialize(n);
    EXPECT_EQ(text.find(secret), std::string::npos) << text;
    outputs += methodIs(n, "hydra/agentOutput");
  }
  EXPECT_GE(outputs, 1u);
  json::value log = client().call("hydra/log", json::object{{"raceId", id}, {"agentId", "leaky"}});
  EXPECT_THAT(str(log.at("data")), HasSubstr("the token is [REDACTED]"));

  // The terminal: a race, its status, its scores and its log.
  auto [code, out] = hydraCli(repo_.root(), "race 'Use the service' --agents leaky");
  EXPECT_EQ(out.find(secret), std::string::npos) << out;
  EXPECT_THAT(out, HasSubstr("[REDACTED]"));
  auto [statusCode, statusJson] = hydraCli(repo_.root(), "status --json");
  ASSERT_EQ(statusCode, 0) << statusJson;
  EXPECT_EQ(statusJson.find(secret), std::string::npos) << statusJson;
  std::string latest = str(json::parse(statusJson).at("races").at(0).at("raceId"));
  for (std::string args : {"scores " + latest + " --json", "scores " + latest, "status " + latest}) {
    auto [c, o] = hydraCli(repo_.root(), args);
    EXPECT_EQ(o.find(secret), std::string::npos) << args << ": " << o;
  }
  (void)code;
}

// --- hydra/agentEvents -----------------------------------------------------------------------

TEST_F(HydraMethodsTest, AgentEventsServesWhatTheAdapterReadEvenAfterARestart) {
  const fs::path stream = fs::path(HYDRA_SOURCE_DIR) / "tests" / "core" / "adapter" / "fixtures" / "claude.stream.jsonl";
  repo_.writeConfig(TestRepo::agent("claude", {"print-file", stream.string(), "write", "calc.py", TestRepo::fixedCalc(), "--"},
                                    "claude"));
  start();
  std::string id = runRace({"claude"});
  json::object live = client().call("hydra/agentEvents", json::object{{"raceId", id}, {"agentId", "claude"}}).as_object();
  const json::array& events = live.at("events").as_array();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(live.at("total").as_int64(), static_cast<std::int64_t>(events.size()));
  EXPECT_EQ(events.back().at("kind").as_string(), "summary");
  bool toolCall = std::any_of(events.begin(), events.end(), [](const json::value& e) { return e.at("kind") == "toolCall"; });
  EXPECT_TRUE(toolCall);
  // Each says which stream it was read from (claude's stream-json: all stdout).
  for (const auto& e : events) EXPECT_EQ(e.at("stream"), json::value("stdout")) << json::serialize(e);

  // A new session, a new hydra: the same events, from disk.
  client().call("shutdown", json::object{});
  client().notify("exit");
  client().process().waitExit(5s);
  start();
  json::object again = client().call("hydra/agentEvents", json::object{{"raceId", id}, {"agentId", "claude"}}).as_object();
  EXPECT_EQ(again.at("events"), live.at("events"));
  json::object page =
      client().call("hydra/agentEvents", json::object{{"raceId", id}, {"agentId", "claude"}, {"offset", 1}, {"limit", 1}})
          .as_object();
  ASSERT_EQ(page.at("events").as_array().size(), 1u);
  EXPECT_EQ(page.at("events").at(0), events[1]);
  EXPECT_EQ(page.at("nextOffset").as_int64(), 2);
  EXPECT_EQ(error("hydra/agentEvents", json::object{{"raceId", id}, {"agentId", "zed"}}).at("code").as_int64(),
            kUnknownAgent);
}

}  // namespace
}  // namespace hydra::test
