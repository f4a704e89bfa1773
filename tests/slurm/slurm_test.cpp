// The Slurm executor against a real one-node Slurm cluster (Debian's
// slurm-wlm and munge, started by scripts/slurm-cluster.sh as this suite's
// CTest fixture), driven through the real `hydra` binary: `hydra serve` over
// pipes, and the terminal commands. Every agent run, setup and check of these
// races is a batch job; the queue itself (squeue) shows it.
//
// SLURM_CONF names the cluster (set by CTest). When the cluster is not there
// the tests fail and say why: they never skip.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
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
using Clock = std::chrono::steady_clock;

std::string str(const json::value& v) { return std::string(v.as_string()); }

template <class Pred>
bool eventually(Pred pred, std::chrono::seconds limit = 60s) {
  auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// A job as the queue lists it.
struct QueuedJob {
  std::string id, name, state, comment;
};

// Every job the queue knows (finished ones too, for MinJobAge) of one race,
// found by the comment hydra gives its jobs.
std::vector<QueuedJob> jobsOf(const std::string& raceId) {
  std::vector<QueuedJob> jobs;
  std::istringstream lines(sh("squeue --noheader --states=all --format='%i|%j|%T|%k'"));
  for (std::string line; std::getline(lines, line);) {
    QueuedJob job;
    std::istringstream fields(line);
    std::getline(fields, job.id, '|');
    std::getline(fields, job.name, '|');
    std::getline(fields, job.state, '|');
    std::getline(fields, job.comment);
    if (job.comment.rfind("hydra:" + raceId + ":", 0) == 0) jobs.push_back(job);
  }
  return jobs;
}

std::vector<std::string> commentsOf(const std::vector<QueuedJob>& jobs) {
  std::vector<std::string> out;
  for (const auto& j : jobs) out.push_back(j.comment);
  return out;
}

bool noneLive(const std::string& raceId) {
  for (const auto& job : jobsOf(raceId)) {
    if (job.state == "PENDING" || job.state == "RUNNING" || job.state == "COMPLETING" ||
        job.state == "CONFIGURING" || job.state == "SUSPENDED") {
      return false;
    }
  }
  return true;
}

// "<pid> <pid of the sleep it started>", written by the scripted agent's `pids` step.
std::vector<int> pidsIn(const fs::path& file) {
  std::vector<int> pids;
  if (!eventually([&] { return fs::exists(file) && !readFile(file).empty(); })) return pids;
  std::istringstream in(readFile(file));
  for (int pid; in >> pid;) pids.push_back(pid);
  return pids;
}

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* conf = std::getenv("SLURM_CONF");
    ASSERT_TRUE(conf && *conf) << "SLURM_CONF is not set: these tests run against the one-node cluster "
                                  "that scripts/slurm-cluster.sh starts (CTest's slurm_cluster fixture)";
    slurmConf_ = conf;
    std::string ping;
    try {
      ping = sh("scontrol ping");
    } catch (const std::exception& e) {
      ping = e.what();
    }
    ASSERT_THAT(ping, HasSubstr("is UP")) << "the Slurm cluster of " << slurmConf_
                                          << " does not answer; see scripts/slurm-cluster.sh start";
  }

  // hydra.toml: `body`, Slurm's configuration named in [executor].
  void configure(const std::string& body, const std::string& executor = "kind = \"local\"\n") {
    repo_.writeConfig(body + "\n[executor]\n" + executor + "slurm_conf = \"" + slurmConf_ + "\"\n");
  }

  RpcClient& client() {
    if (!client_) {
      client_ = std::make_unique<RpcClient>(repo_.root(), std::vector<std::string>{"PYTHONDONTWRITEBYTECODE=1"});
      client_->initialize(repo_.uri());
    }
    return *client_;
  }

  std::string startRace(const std::vector<std::string>& agents, const std::string& executor) {
    json::array names;
    for (const auto& a : agents) names.emplace_back(a);
    json::object params{{"task", "Fix add() in calc.py"}, {"agents", std::move(names)}, {"executor", executor}};
    return str(client().call("hydra/race", std::move(params)).at("raceId"));
  }

  json::object finishedRace(const std::string& raceId) {
    return client().notifications()[client().waitFor("hydra/raceFinished", raceId, 0, 180s)].at("params").as_object();
  }

  json::object agentFinished(const std::string& raceId, const std::string& agentId) {
    std::size_t at = client().waitFor(
        [&](const json::object& m) {
          return m.at("method") == "hydra/agentFinished" && str(m.at("params").at("raceId")) == raceId &&
                 str(m.at("params").at("agentId")) == agentId;
        },
        0, 120s);
    return client().notifications()[at].at("params").as_object();
  }

  // The scores of a finished race, by agent.
  std::map<std::string, json::object> scores(const std::string& raceId) {
    std::map<std::string, json::object> out;
    json::value result = client().call("hydra/scores", json::object{{"raceId", raceId}});
    for (const auto& r : result.at("rankings").as_array()) out[str(r.at("agentId"))] = r.as_object();
    return out;
  }

  // `hydra ARGS` in the repository: exit code and what it printed.
  std::pair<int, std::string> hydra(const std::string& args) {
    const fs::path out = repo_.scratch() / "hydra.out";
    int rc = std::system(("cd " + shellQuote(repo_.root().string()) + " && PYTHONDONTWRITEBYTECODE=1 " +
                          shellQuote(HYDRA_BINARY) + " " + args + " > " + shellQuote(out.string()) + " 2>&1")
                             .c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : 128, readFile(out)};
  }

  TestRepo repo_;
  std::string slurmConf_;
  std::unique_ptr<RpcClient> client_;
};

TEST_F(SlurmTest, ARaceOnSlurmScoresExactlyAsTheSameRaceRunHere) {
  // Confined on the node as here; speed is left out of the totals, as it is
  // the one score that depends on the machine's load.
  configure("[general]\nsandbox = \"bubblewrap\"\n\n" + TestRepo::scoring() +
            "[scoring.weights]\nspeed = 0\n\n" + TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
            TestRepo::agent("breaker", {"write", "calc.py", "def add(a, b)\n    return a +"}) +
            TestRepo::agent("chatty", {"count", "200", "shout", "done here", "write", "notes.txt", "hello"}));
  const std::vector<std::string> agents = {"fixer", "breaker", "chatty"};

  const std::string local = startRace(agents, "local");
  json::object localFinished = finishedRace(local);
  const std::string slurm = startRace(agents, "slurm");
  json::object slurmFinished = finishedRace(slurm);

  EXPECT_EQ(localFinished.at("winner"), "fixer");
  EXPECT_EQ(slurmFinished.at("winner"), localFinished.at("winner"));
  auto here = scores(local), there = scores(slurm);
  ASSERT_EQ(there.size(), 3u);
  for (const auto& agent : agents) {
    SCOPED_TRACE(agent);
    EXPECT_EQ(there[agent].at("rank"), here[agent].at("rank"));
    EXPECT_EQ(there[agent].at("status"), here[agent].at("status"));
    EXPECT_EQ(there[agent].at("total"), here[agent].at("total"));
    for (const char* part : {"build", "tests", "lint", "diffSize"}) {
      EXPECT_EQ(there[agent].at("breakdown").at(part), here[agent].at("breakdown").at(part)) << part;
    }
    EXPECT_EQ(there[agent].at("diff"), here[agent].at("diff"));
    for (const char* check : {"build", "tests"}) {
      EXPECT_EQ(there[agent].at("checks").at(check).at("exitCode"), here[agent].at("checks").at(check).at("exitCode"))
          << check;
      EXPECT_EQ(there[agent].at("checks").at(check).at("tests"), here[agent].at("checks").at(check).at("tests")) << check;
    }
  }

  // The output came back through the job's files into the same log.
  for (const char* stream : {"stdout", "stderr"}) {
    auto log = [&](const std::string& race) {
      return client().call("hydra/log", json::object{{"raceId", race}, {"agentId", "chatty"}, {"stream", stream}}).at("data");
    };
    EXPECT_EQ(log(slurm), log(local)) << stream;
  }

  // Every agent and every check was a job, and each ended as it should.
  json::object record = repo_.raceRecord(slurm);
  EXPECT_EQ(record.at("executor"), "slurm");
  EXPECT_EQ(repo_.raceRecord(local).at("executor"), "local");
  EXPECT_THAT(jobsOf(local), IsEmpty());
  auto jobs = jobsOf(slurm);
  EXPECT_THAT(commentsOf(jobs), ::testing::IsSupersetOf({
                                    "hydra:" + slurm + ":fixer:agent",
                                    "hydra:" + slurm + ":breaker:agent",
                                    "hydra:" + slurm + ":chatty:agent",
                                    "hydra:" + slurm + ":fixer:build",
                                    "hydra:" + slurm + ":fixer:tests",
                                    "hydra:" + slurm + ":breaker:build",
                                    "hydra:" + slurm + ":chatty:tests",
                                }));
  for (const auto& job : jobs) EXPECT_EQ(job.state, "COMPLETED") << job.comment;
  // The job directories served their purpose.
  EXPECT_FALSE(fs::exists(repo_.root() / ".hydra-workspaces" / "_jobs" / slurm));
}

TEST_F(SlurmTest, AnEvalRunOnSlurmReportsWhatTheAgentsDid) {
  const fs::path setDir = repo_.scratch() / "evals";
  fs::create_directories(setDir / "hidden");
  std::ofstream(setDir / "hidden" / "test_hidden.py")
      << "from calc import add\n\n\ndef test_add_hidden():\n    assert add(20, 22) == 42\n";
  std::ofstream(setDir / "set.toml")
      << "[eval]\nname = \"on-slurm\"\nagents = [\"fixer\", \"idle\"]\nsamples = 2\npass_k = [1, 2]\n"
         "max_concurrent_agents = 2\n\n[[cases]]\nid = \"add\"\ntask = \"Fix add() in calc.py\"\n"
         "verify_command = \"/usr/bin/python3 -m pytest -q -p no:cacheprovider hidden/test_hidden.py\"\n"
         "hidden_files = [\"hidden/test_hidden.py\"]\n";
  configure(TestRepo::scoring() + TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
            TestRepo::agent("idle", {"say", "nothing to do"}));
  const fs::path report = repo_.scratch() / "report.json";
  auto [code, text] = hydra("eval run " + shellQuote((setDir / "set.toml").string()) + " --executor slurm --out " +
                            shellQuote(report.string()));
  ASSERT_EQ(code, 0) << text;
  EXPECT_THAT(text, HasSubstr("sample 4/4"));

  json::value r = json::parse(readFile(report));
  ASSERT_EQ(r.at("samples").as_array().size(), 4u);
  for (const auto& s : r.at("samples").as_array()) {
    EXPECT_EQ(s.at("solved").as_bool(), s.at("agent") == "fixer") << s;
  }
  // Each sample's agent and checks ran on the cluster.
  int samples = 0;
  for (const auto& entry : fs::directory_iterator(repo_.root() / ".hydra" / "races")) {
    const std::string race = entry.path().filename().string();
    json::object record = repo_.raceRecord(race);
    ASSERT_EQ(record.at("kind"), "sample");
    EXPECT_EQ(record.at("executor"), "slurm");
    const std::string agent = str(record.at("agents").at(0).at("agent"));
    EXPECT_THAT(commentsOf(jobsOf(race)), ::testing::IsSupersetOf({"hydra:" + race + ":" + agent + ":agent",
                                                                    "hydra:" + race + ":" + agent + ":tests"}));
    ++samples;
  }
  EXPECT_EQ(samples, 4);
  for (const auto& a : r.at("agents").as_array()) {
    EXPECT_EQ(a.at("passAtK").at("1").as_double(), a.at("agent") == "fixer" ? 1.0 : 0.0) << a;
  }
}

TEST_F(SlurmTest, CancellingAnAgentCancelsItsRunningJobAndEndsWhatItStarted) {
  const fs::path pids = repo_.scratch() / "pids";
  configure(TestRepo::agent("w", {"count", "3", "pids", pids.string(), "wait-for", (repo_.scratch() / "never").string()}) +
                TestRepo::agent("quick", {"write", "calc.py", TestRepo::fixedCalc()}),
            "kind = \"slurm\"\n");
  const std::string race = startRace({"w", "quick"}, "slurm");
  // Its output streams back while the job runs.
  client().waitFor(
      [&](const json::object& m) {
        if (m.at("method") != "hydra/agentOutput" || str(m.at("params").at("agentId")) != "w") return false;
        const auto& lines = m.at("params").at("lines").as_array();
        return std::find(lines.begin(), lines.end(), json::value("line 3")) != lines.end();
      },
      0, 60s);
  std::vector<int> running = pidsIn(pids);
  ASSERT_EQ(running.size(), 2u);
  auto job = [&] {
    for (const auto& j : jobsOf(race)) {
      if (j.comment == "hydra:" + race + ":w:agent") return j;
    }
    return QueuedJob{};
  };
  EXPECT_EQ(job().state, "RUNNING");

  EXPECT_EQ(client().call("hydra/cancel", json::object{{"raceId", race}, {"agentId", "w"}}).at("cancelled"), true);
  EXPECT_EQ(agentFinished(race, "w").at("status"), "cancelled");
  EXPECT_TRUE(eventually([&] { return job().state == "CANCELLED"; }, 30s)) << job().state;
  for (int pid : running) EXPECT_TRUE(eventually([&] { return processGone(pid); }, 30s)) << pid;
  // The other agent was not touched.
  json::object finished = finishedRace(race);
  EXPECT_EQ(finished.at("winner"), "quick");
  EXPECT_TRUE(noneLive(race));
}

TEST_F(SlurmTest, AnAgentThatOutrunsItsTimeoutIsEndedThereAndReportedAsTimedOut) {
  const fs::path pids = repo_.scratch() / "pids";
  configure("[agents.slow]\nadapter = \"command\"\nbinary = \"" + TestRepo::stepsScript().string() +
                "\"\nargs = [\"pids\", \"" + pids.string() + "\", \"sleep\", \"600\"]\ntimeout_seconds = 2\n",
            "kind = \"slurm\"\n");
  const std::string race = startRace({"slow"}, "slurm");
  std::vector<int> running = pidsIn(pids);
  ASSERT_EQ(running.size(), 2u);
  json::object finished = agentFinished(race, "slow");
  EXPECT_EQ(finished.at("status"), "timedOut");
  EXPECT_EQ(finished.at("error"), "timed out after 2 s");
  // The agent and the sleep it left in the background both ended with it.
  for (int pid : running) EXPECT_TRUE(eventually([&] { return processGone(pid); }, 30s)) << pid;
  EXPECT_TRUE(eventually([&] { return noneLive(race); }, 30s));
  bool cancelled = false;
  for (const auto& j : jobsOf(race)) cancelled |= j.comment == "hydra:" + race + ":slow:agent" && j.state == "CANCELLED";
  EXPECT_TRUE(cancelled) << "hydra ends a job that outruns its timeout with scancel";
}

TEST_F(SlurmTest, AHydraKilledMidRaceLeavesNoJobBehindOnceItIsBackAndTheClusterStaysUsable) {
  const fs::path never = repo_.scratch() / "never";
  configure(TestRepo::agent("a", {"pids", (repo_.scratch() / "a").string(), "wait-for", never.string()}) +
                TestRepo::agent("b", {"pids", (repo_.scratch() / "b").string(), "wait-for", never.string()}),
            "kind = \"slurm\"\n");
  const std::string race = startRace({"a", "b"}, "slurm");
  std::vector<int> running = pidsIn(repo_.scratch() / "a");
  for (int pid : pidsIn(repo_.scratch() / "b")) running.push_back(pid);
  ASSERT_EQ(running.size(), 4u);
  ASSERT_TRUE(eventually([&] {
    int n = 0;
    for (const auto& j : jobsOf(race)) n += j.state == "RUNNING";
    return n == 2;
  })) << "both agents run as jobs";

  ::kill(client().process().pid(), SIGKILL);
  client().process().waitExit(10s);
  // The jobs outlive the hydra that started them...
  EXPECT_FALSE(noneLive(race));

  // A hydra that only reads shows the race interrupted and changes nothing:
  // not the record, not the jobs (docs/reliability.md)...
  auto [code, text] = hydra("status " + race);
  EXPECT_EQ(code, 0) << text;
  EXPECT_THAT(text, HasSubstr("interrupted"));
  EXPECT_EQ(repo_.raceRecord(race).at("status"), "running");
  EXPECT_FALSE(noneLive(race));

  // ...until a hydra is back to start or clean up work there.
  auto [cleanupCode, cleanupText] = hydra("cleanup");
  EXPECT_EQ(cleanupCode, 0) << cleanupText;
  EXPECT_TRUE(eventually([&] { return noneLive(race); }, 60s));
  for (const auto& j : jobsOf(race)) EXPECT_EQ(j.state, "CANCELLED") << j.comment;
  for (int pid : running) EXPECT_TRUE(eventually([&] { return processGone(pid); }, 30s)) << pid;
  EXPECT_EQ(repo_.raceRecord(race).at("status"), "interrupted");

  // The next race runs there as before.
  configure(TestRepo::agent("quick", {"write", "calc.py", TestRepo::fixedCalc()}), "kind = \"slurm\"\n");
  client_.reset();
  const std::string next = startRace({"quick"}, "slurm");
  EXPECT_EQ(agentFinished(next, "quick").at("status"), "completed");
}

TEST_F(SlurmTest, AClientThatVanishesTakesItsRacesJobsWithIt) {
  const fs::path pids = repo_.scratch() / "pids";
  configure(TestRepo::agent("w", {"pids", pids.string(), "wait-for", (repo_.scratch() / "never").string()}),
            "kind = \"slurm\"\n");
  const std::string race = startRace({"w"}, "slurm");
  std::vector<int> running = pidsIn(pids);
  ASSERT_EQ(running.size(), 2u);

  // The editor is gone: hydra serve cancels what runs and exits.
  client().process().closeStdin();
  client().process().closeStdout();
  EXPECT_TRUE(client().process().waitExit(60s));
  // hydra waited for the runner's result, so the agent is gone already; the
  // scheduler may still be tidying its job up for a moment.
  for (int pid : running) EXPECT_TRUE(processGone(pid)) << pid;
  EXPECT_TRUE(eventually([&] { return noneLive(race); }, 30s));
  for (const auto& j : jobsOf(race)) EXPECT_EQ(j.state, "CANCELLED") << j.comment;
}

TEST_F(SlurmTest, AJobWhoseRunnerTheNodeCannotStartFailsTheAgentWithTheNodesWords) {
  configure(TestRepo::agent("quick", {"write", "calc.py", TestRepo::fixedCalc()}),
            "kind = \"slurm\"\nhydra_binary = \"/nonexistent/bin/hydra\"\n");
  const std::string race = startRace({"quick"}, "slurm");
  json::object finished = agentFinished(race, "quick");
  EXPECT_EQ(finished.at("status"), "failed");
  const std::string error = str(finished.at("error"));
  EXPECT_THAT(error, ::testing::ContainsRegex("Slurm job [0-9]+ ended as FAILED"));
  EXPECT_THAT(error, HasSubstr("/nonexistent/bin/hydra"));
  EXPECT_THAT(error, HasSubstr("slurm.out"));
  // Its directory stays for a look until cleanup.
  EXPECT_TRUE(fs::exists(repo_.root() / ".hydra-workspaces" / "_jobs" / race));
  finishedRace(race);
  auto [code, text] = hydra("cleanup " + race);
  EXPECT_EQ(code, 0) << text;
  EXPECT_FALSE(fs::exists(repo_.root() / ".hydra-workspaces" / "_jobs" / race));
}

TEST_F(SlurmTest, AClusterThatDoesNotAnswerOrAnAcpAgentRefusesTheRaceSayingWhy) {
  // A slurm.conf naming a controller port where nothing listens.
  const fs::path broken = repo_.scratch() / "slurm.conf";
  std::string conf = readFile(slurmConf_);
  const std::string port = "SlurmctldPort=";
  auto at = conf.find(port);
  ASSERT_NE(at, std::string::npos);
  conf.replace(at, conf.find('\n', at) - at, port + "9");
  std::ofstream(broken) << conf;
  repo_.writeConfig(TestRepo::agent("quick", {"write", "calc.py", TestRepo::fixedCalc()}) + "\n[executor]\nkind = \"slurm\"\nslurm_conf = \"" +
                    broken.string() + "\"\n");
  auto [code, text] = hydra("race 'fix it' -a quick");
  EXPECT_EQ(code, 1) << text;
  EXPECT_THAT(text, HasSubstr("the slurm executor cannot be used: Slurm does not answer"));
  EXPECT_THAT(text, HasSubstr(broken.string()));
  EXPECT_FALSE(fs::exists(repo_.root() / ".hydra" / "races")) << "a refused race leaves nothing behind";

  // A partition whose node is another machine, which cannot see this
  // repository on the local disk (scripts/slurm-cluster.sh defines it).
  repo_.writeConfig(TestRepo::agent("quick", {"write", "calc.py", TestRepo::fixedCalc()}) +
                    "\n[executor]\nkind = \"slurm\"\npartition = \"elsewhere\"\n" +
                    "slurm_conf = \"" + slurmConf_ + "\"\n");
  auto [elsewhereCode, elsewhereText] = hydra("race 'fix it' -a quick");
  EXPECT_EQ(elsewhereCode, 1) << elsewhereText;
  EXPECT_THAT(elsewhereText, HasSubstr("is on a file system of this machine, which the Slurm nodes (hydra-elsewhere) "
                                       "cannot see"));
  EXPECT_THAT(elsewhereText, HasSubstr(repo_.root().string()));
  EXPECT_FALSE(fs::exists(repo_.root() / ".hydra" / "races")) << "nothing started";

  // The command line picks the executor over hydra.toml.
  auto [localCode, localText] = hydra("race 'fix it' -a quick --executor local");
  EXPECT_EQ(localCode, 0) << localText;

  // Agents hydra speaks to over their stdin (ACP, and the CLIs' ACP presets).
  configure("[agents.talker]\nadapter = \"acp\"\nbinary = \"/bin/cat\"\n\n"
            "[agents.preset]\nadapter = \"codex-acp\"\nbinary = \"/bin/cat\"\n",
            "kind = \"slurm\"\n");
  for (const char* agent : {"talker", "preset"}) {
    auto [acpCode, acpText] = hydra(std::string("race 'fix it' -a ") + agent);
    EXPECT_EQ(acpCode, 1) << acpText;
    EXPECT_THAT(acpText, HasSubstr(std::string("agent '") + agent + "' is spoken to over its stdin (ACP)"));
  }
  auto [badCode, badText] = hydra("race 'fix it' -a quick --executor kubernetes");
  EXPECT_NE(badCode, 0);
  EXPECT_THAT(badText, HasSubstr("kubernetes"));
}

}  // namespace
}  // namespace hydra::test
