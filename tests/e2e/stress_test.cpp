// Every front end at once on one repository, with the real binary, for a
// bounded number of rounds (docs/reliability.md, "Every front end at once"):
// in each round a race through one `hydra serve`, another through a second
// `hydra serve`, two `hydra race` commands, an `hydra eval run`, and a
// terminal that keeps asking `hydra status` and `hydra scores` and cleans up
// the races of the round before. Each race shape is first run alone for its
// reference scores. Every race's scores must equal its reference but for
// speed, nothing may mention a missing worktree, every record must parse,
// and afterwards git's worktrees and branches, the pool and .hydra hold
// exactly what the finished races that were not cleaned up should.
//
// The repository lives under the build tree, like the other reliability tests.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/cli_run.h"
#include "tests/e2e/comparable_scores.h"
#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

constexpr int kRounds = 3;
constexpr int kPoolSize = 2;
// What a command, a log or a record says when a worktree it used was removed under it.
constexpr const char* kMissing[] = {"No such file", "open repository", "does not exist"};

// calc.py with add() multiplying: it compiles, test_add fails.
std::string brokenCalc() {
  return "def add(a, b):\n    return a * b\n\n\ndef sub(a, b):\n    return a - b\n";
}

// The race shapes: who races whom.
constexpr const char* kServeAgents = "fixer,breaker";
constexpr const char* kSecondServeAgents = "breaker,noter";
constexpr const char* kFirstCliAgents = "fixer,noter";
constexpr const char* kSecondCliAgents = "fixer,breaker,noter";
constexpr const char* kTask = "Fix add() in calc.py";

// A sample of the report, without what depends on speed (its score holds
// the speed part) or names the run.
json::value comparableSamples(const json::object& report) {
  return comparable(report.at("samples"), {"latencyMs", "score", "verifyOutput"});
}

class StressTest : public ::testing::Test {
 protected:
  StressTest() : repo_(HYDRA_TEST_WORK_DIR) {}

  void SetUp() override {
    repo_.writeConfig("[general]\npool_size = " + std::to_string(kPoolSize) + "\n\n" + TestRepo::scoring() +
                      TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                      TestRepo::agent("breaker", {"write", "calc.py", brokenCalc()}) +
                      TestRepo::agent("noter", {"write", "NOTES.md", "notes"}));
    const fs::path evals = repo_.scratch() / "evals";
    fs::create_directories(evals);
    set_ = evals / "set.toml";
    std::ofstream(set_) << "[eval]\nname = \"stress\"\nagents = [\"fixer\", \"breaker\"]\nsamples = 1\npass_k = [1]\n\n"
                           "[[cases]]\nid = \"add\"\ntask = \"Fix add() in calc.py\"\n"
                           "verify_command = \"/usr/bin/python3 -m pytest -q -p no:cacheprovider test_calc.py\"\n";
  }

  std::unique_ptr<RpcClient> serve() {
    auto client = std::make_unique<RpcClient>(repo_.root(), std::vector<std::string>{"PYTHONDONTWRITEBYTECODE=1"});
    client->initialize(repo_.uri());
    return client;
  }

  static std::string startRace(RpcClient& client, const std::string& agents) {
    json::array list;
    for (std::size_t at = 0; at <= agents.size();) {
      const std::size_t comma = std::min(agents.find(',', at), agents.size());
      list.emplace_back(agents.substr(at, comma - at));
      at = comma + 1;
    }
    json::object params{{"task", kTask}, {"agents", std::move(list)}};
    return std::string(client.call("hydra/race", std::move(params)).at("raceId").as_string());
  }

  // Waits for the race to finish; its scores as hydra/scores gives them.
  static json::object finishedScores(RpcClient& client, const std::string& raceId) {
    const json::object finished =
        client.notifications()[client.waitFor("hydra/raceFinished", raceId, 0, 180s)].at("params").as_object();
    EXPECT_EQ(finished.at("status"), "completed") << json::serialize(finished);
    return client.call("hydra/scores", json::object{{"raceId", raceId}}).as_object();
  }

  // A CLI race: its output (kept for the missing-worktree check), id and scores.
  struct CliRace {
    CommandRun run;
    std::string id;
    json::object scores;
  };
  CliRace cliRace(const std::string& agents) const {
    CliRace r;
    r.run = hydraIn(repo_.root(), std::string("race '") + kTask + "' --agents " + agents + " --json");
    if (r.run.code != 0) return r;
    const json::object doc = jsonOf(r.run);
    r.id = std::string(doc.at("race").at("id").as_string());
    if (doc.at("scores").is_object()) r.scores = doc.at("scores").as_object();
    return r;
  }

  // An evaluation run: its output and report.
  struct EvalRun {
    CommandRun run;
    json::object report;
  };
  EvalRun evalRun(const std::string& name) const {
    EvalRun r;
    const fs::path out = repo_.scratch() / (name + ".json");
    r.run = hydraIn(repo_.root(), "eval run " + shellQuote(set_.string()) + " --out " + shellQuote(out.string()));
    if (r.run.code == 0) r.report = json::parse(readFile(out)).as_object();
    return r;
  }

  std::set<std::string> raceFolders() const {
    std::set<std::string> ids;
    for (const auto& e : fs::directory_iterator(repo_.root() / ".hydra" / "races")) ids.insert(e.path().filename().string());
    return ids;
  }

  // Everything a front end said and hydra wrote: outputs, servers' stderr,
  // every file under .hydra.
  void expectNothingMissing(const std::string& what, const std::string& text) {
    for (const char* missing : kMissing) EXPECT_THAT(text, Not(HasSubstr(missing))) << what;
  }

  TestRepo repo_;
  fs::path set_;
};

TEST_F(StressTest, EveryFrontEndAtOnceKeepsEachRacesScoresAndLeavesExactlyTheFinishedRaces) {
  auto first = serve();
  auto second = serve();
  std::vector<std::string> outputs;  // every command's output, for the missing-worktree check

  // Each shape alone: the reference scores.
  const auto referenceStart = Clock::now();
  const std::string serveAloneId = startRace(*first, kServeAgents);
  const json::object serveAlone = finishedScores(*first, serveAloneId);
  const std::string secondAloneId = startRace(*second, kSecondServeAgents);
  const json::object secondAlone = finishedScores(*second, secondAloneId);
  const CliRace firstCliAlone = cliRace(kFirstCliAgents);
  ASSERT_EQ(firstCliAlone.run.code, 0) << firstCliAlone.run.out;
  const CliRace secondCliAlone = cliRace(kSecondCliAgents);
  ASSERT_EQ(secondCliAlone.run.code, 0) << secondCliAlone.run.out;
  const EvalRun evalAlone = evalRun("alone");
  ASSERT_EQ(evalAlone.run.code, 0) << evalAlone.run.out;
  const auto referenceTime = Clock::now() - referenceStart;
  for (const json::object* scores : {&serveAlone, &secondAlone, &firstCliAlone.scores, &secondCliAlone.scores}) {
    expectChecksRan(*scores);
  }
  ASSERT_EQ(evalAlone.report.at("samples").as_array().size(), 2u);
  EXPECT_EQ(evalAlone.report.at("samples").at(0).at("solved"), true) << json::serialize(evalAlone.report);
  EXPECT_EQ(serveAlone.at("winner"), "fixer");
  outputs.push_back(firstCliAlone.run.out);
  outputs.push_back(secondCliAlone.run.out);
  outputs.push_back(evalAlone.run.out);

  // The races to clean up in the next round: those of this one (the reference races at first).
  std::set<std::string> known = raceFolders();
  std::vector<std::string> toClean(known.begin(), known.end());
  std::set<std::string> cleaned;
  int terminalCommands = 0;
  const auto roundsStart = Clock::now();
  for (int round = 1; round <= kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string serveId = startRace(*first, kServeAgents);
    const std::string secondId = startRace(*second, kSecondServeAgents);

    std::mutex failuresMutex;
    std::vector<std::string> failures;  // commands of the terminal that failed
    std::atomic<int> running{3};
    CliRace firstCli;
    CliRace secondCli;
    EvalRun eval;
    std::vector<std::thread> threads;
    threads.emplace_back([&] {
      firstCli = cliRace(kFirstCliAgents);
      --running;
    });
    threads.emplace_back([&] {
      secondCli = cliRace(kSecondCliAgents);
      --running;
    });
    threads.emplace_back([&] {
      eval = evalRun("round-" + std::to_string(round));
      --running;
    });
    // The terminal: status, scores of a finished race and a cleanup of one,
    // for as long as the commands above run.
    std::vector<std::string> terminalOutputs;
    threads.emplace_back([&] {
      std::size_t next = 0;
      int commands = 0;
      do {
        std::vector<std::string> batch{"status", "status --json", "scores " + toClean[next % toClean.size()]};
        if (next < toClean.size()) batch.push_back("cleanup " + toClean[next]);
        ++next;
        for (const std::string& command : batch) {
          const CommandRun r = hydraIn(repo_.root(), command);
          ++commands;
          terminalOutputs.push_back(command + ":\n" + r.out);
          bool ok = r.code == 0;
          if (ok && command == "status --json") {
            try {
              jsonOf(r);
            } catch (const std::exception&) {
              ok = false;
            }
          }
          if (!ok) {
            std::lock_guard lock(failuresMutex);
            failures.push_back(command + " (exit " + std::to_string(r.code) + "): " + r.out);
          }
        }
        std::this_thread::sleep_for(100ms);
      } while ((running > 0 || next < toClean.size()) && commands < 2000);
      terminalCommands += commands;
    });

    const json::object serveScores = finishedScores(*first, serveId);
    const json::object secondScores = finishedScores(*second, secondId);
    for (auto& t : threads) t.join();
    cleaned.insert(toClean.begin(), toClean.end());

    EXPECT_TRUE(failures.empty()) << failures.size() << " terminal command(s) failed, the first: " << failures.front();
    ASSERT_EQ(firstCli.run.code, 0) << firstCli.run.out;
    ASSERT_EQ(secondCli.run.code, 0) << secondCli.run.out;
    ASSERT_EQ(eval.run.code, 0) << eval.run.out;
    outputs.push_back(firstCli.run.out);
    outputs.push_back(secondCli.run.out);
    outputs.push_back(eval.run.out);
    outputs.insert(outputs.end(), terminalOutputs.begin(), terminalOutputs.end());

    const std::map<std::string, std::pair<const json::object*, const json::object*>> compared{
        {"first serve", {&serveScores, &serveAlone}},
        {"second serve", {&secondScores, &secondAlone}},
        {"first CLI race", {&firstCli.scores, &firstCliAlone.scores}},
        {"second CLI race", {&secondCli.scores, &secondCliAlone.scores}},
    };
    for (const auto& [name, pair] : compared) {
      expectChecksRan(*pair.first);
      EXPECT_EQ(json::serialize(comparable(*pair.first)), json::serialize(comparable(*pair.second))) << name;
    }
    EXPECT_EQ(json::serialize(comparableSamples(eval.report)), json::serialize(comparableSamples(evalAlone.report)));

    // This round's races (the eval's samples among them) are cleaned up in the next.
    toClean.clear();
    for (const std::string& id : raceFolders()) {
      if (known.insert(id).second) toClean.push_back(id);
    }
    EXPECT_EQ(toClean.size(), 6u) << "two served races, two CLI races, two samples";
  }
  const auto roundsTime = Clock::now() - roundsStart;
  const auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::cout << "[ measured ] reference races alone " << ms(referenceTime) << " ms; " << kRounds << " rounds of 6 front ends "
            << ms(roundsTime) << " ms; " << terminalCommands << " terminal commands\n";

  // Nothing mentions a missing worktree: not the commands, not the servers, not the records.
  for (const std::string& out : outputs) expectNothingMissing("a command's output", out);
  expectNothingMissing("the first server's stderr", first->process().stderrText());
  expectNothingMissing("the second server's stderr", second->process().stderrText());
  for (const auto& e : fs::recursive_directory_iterator(repo_.root() / ".hydra")) {
    if (e.is_regular_file()) expectNothingMissing(e.path().string(), readFile(e.path()));
  }
  EXPECT_EQ(unreadableRecords(repo_.root() / ".hydra"), "");

  // The inventory: every race has its record, finished; the last round's
  // races (not cleaned up) keep their agents' worktrees and branches; the
  // cleaned ones nothing but the pool's worktrees (at most pool_size).
  std::set<std::string> expectedWorktrees;
  std::set<std::string> expectedBranches;
  for (const std::string& id : known) {
    const json::object record = repo_.raceRecord(id);
    EXPECT_EQ(record.at("status"), "completed") << id;
    if (cleaned.contains(id)) continue;
    for (const auto& agent : record.at("agents").as_array()) {
      const std::string name = std::string(agent.at("agentId").as_string()) + "-" + id;
      expectedWorktrees.insert(name);
      expectedBranches.insert("hydra/" + name);
    }
  }
  EXPECT_EQ(known.size(), 6u * (kRounds + 1));
  std::set<std::string> pooled;
  std::set<std::string> worktrees;
  for (const auto& e : fs::directory_iterator(repo_.root() / ".hydra-workspaces")) {
    const std::string name = e.path().filename().string();
    (name.starts_with("_pool-") ? pooled : worktrees).insert(name);
  }
  EXPECT_EQ(worktrees, expectedWorktrees) << "nothing but the unclean races' agents' worktrees and the pool";
  EXPECT_LE(pooled.size(), static_cast<std::size_t>(kPoolSize));
  std::set<std::string> registered;
  std::set<std::string> detached;
  std::string current;
  std::istringstream porcelain(repo_.git("worktree list --porcelain"));
  for (std::string line; std::getline(porcelain, line);) {
    if (line.starts_with("worktree ")) current = fs::path(line.substr(9)).filename().string();
    if (line == "detached") detached.insert(current);
  }
  std::istringstream list(repo_.git("worktree list --porcelain"));
  for (std::string line; std::getline(list, line);) {
    if (line.starts_with("worktree ") && fs::path(line.substr(9)).parent_path().filename() == ".hydra-workspaces") {
      registered.insert(fs::path(line.substr(9)).filename().string());
    }
  }
  std::set<std::string> onDisk = worktrees;
  onDisk.insert(pooled.begin(), pooled.end());
  EXPECT_EQ(registered, onDisk) << "git knows exactly the worktrees on disk";
  for (const std::string& pool : pooled) EXPECT_TRUE(detached.contains(pool)) << pool << " is on no branch";
  std::set<std::string> branches;
  std::istringstream branchLines(repo_.git("for-each-ref '--format=%(refname:short)' refs/heads/hydra/"));
  for (std::string line; std::getline(branchLines, line);) branches.insert(line);
  EXPECT_EQ(branches, expectedBranches);
  std::cout << "[ measured ] left: " << known.size() << " race records, " << worktrees.size() << " agent worktrees and "
            << branches.size() << " branches of the last round, " << pooled.size() << " pooled worktree(s)\n";
  std::set<std::string> metadata;
  for (const auto& e : fs::directory_iterator(repo_.root() / ".git" / "worktrees")) metadata.insert(e.path().filename().string());
  EXPECT_EQ(metadata.size(), onDisk.size()) << "no worktree metadata left over";
  // .hydra: the race folders (each with its record; no claim left), the
  // hydra-wide files, no evaluation report (they went to --out).
  for (const std::string& id : known) EXPECT_TRUE(fs::exists(repo_.root() / ".hydra" / "races" / id / "race.json")) << id;
  EXPECT_EQ(raceFolders(), known) << "no claim or stray folder";
  std::set<std::string> hydraEntries;
  for (const auto& e : fs::directory_iterator(repo_.root() / ".hydra")) hydraEntries.insert(e.path().filename().string());
  EXPECT_EQ(hydraEntries, std::set<std::string>{"races"});
  EXPECT_EQ(repo_.git("rev-parse main"), repo_.git("rev-parse HEAD"));
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=no"), "") << "the user's checkout is untouched";
}

}  // namespace
}  // namespace hydra::test
