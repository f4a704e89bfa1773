// Evaluation mode end to end: the real `hydra eval run` and `hydra eval
// compare` on eval sets over the test repository (tests/e2e/test_repo.h),
// with scripted agents (bash scripts in the scratch folder) whose success
// depends on their sample, so the report's numbers are known beforehand.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

std::string str(const json::value& v) { return std::string(v.as_string()); }

// A hidden test of add(): the agents never see it.
constexpr const char* kHiddenTest = "from calc import add\n\n\ndef test_add_hidden():\n    assert add(20, 22) == 42\n";

class EvalTest : public ::testing::Test {
 protected:
  fs::path script(const std::string& name, const std::string& body) { return repo_.script(name, body); }
  static std::string agent(const std::string& name, const fs::path& binary) {
    return TestRepo::commandAgent(name, binary);
  }
  // An eval set next to the repository, with the hidden test beside it.
  fs::path evalSet(const std::string& text) {
    fs::path dir = repo_.scratch() / "evals";
    fs::create_directories(dir / "hidden");
    std::ofstream(dir / "hidden" / "test_hidden.py") << kHiddenTest;
    std::ofstream(dir / "set.toml") << text;
    return dir / "set.toml";
  }
  // Agents: "even" fixes add() on even samples and says where it looked;
  // "never" changes a comment. Both note what they could see.
  void configure() { repo_.writeConfig(agentsConfig()); }
  std::string agentsConfig() {
    const std::string seen = (repo_.scratch() / "seen").string();
    return (
        TestRepo::scoring() +
        agent("even", script("even.sh", "echo \"$HYDRA_CASE_ID $HYDRA_SAMPLE $( [ -e hidden ] && echo saw || echo blind)\" >> " +
                                             shellQuote(seen) + "\n"
                                             "if [ $((HYDRA_SAMPLE % 2)) = 0 ]; then printf '%s\\n' " +
                                             shellQuote(TestRepo::fixedCalc()) + " > calc.py; else echo '# no' >> calc.py; fi\n")) +
        agent("never", script("never.sh", "echo '# looked' >> calc.py\n")));
  }
  static std::string set(int samples, const std::string& extra = "") {
    return "[eval]\nname = \"basics\"\nagents = [\"even\", \"never\"]\nsamples = " + std::to_string(samples) +
           "\npass_k = [1, 2]\nmax_concurrent_agents = 2\n\n[[cases]]\nid = \"add\"\ntask = \"Fix add() in calc.py\"\n"
           "verify_command = \"/usr/bin/python3 -m pytest -q -p no:cacheprovider hidden/test_hidden.py\"\n"
           "hidden_files = [\"hidden/test_hidden.py\"]\n" + extra;
  }
  std::string hydra(const std::string& args) {
    return sh("(cd " + shellQuote(repo_.root().string()) + " && PYTHONDONTWRITEBYTECODE=1 " + shellQuote(HYDRA_BINARY) +
              " " + args + " 2>/dev/null)");
  }
  // Exit code and stdout+stderr.
  std::pair<int, std::string> hydraStatus(const std::string& args) {
    const fs::path out = repo_.scratch() / "out.txt";
    int rc = std::system(("cd " + shellQuote(repo_.root().string()) + " && PYTHONDONTWRITEBYTECODE=1 " +
                          shellQuote(HYDRA_BINARY) + " " + args + " > " + shellQuote(out.string()) + " 2>&1")
                             .c_str());
    return {WEXITSTATUS(rc), readFile(out)};
  }
  static json::object agentStats(const json::value& report, const std::string& name) {
    for (const auto& a : report.at("agents").as_array()) {
      if (a.at("agent").as_string() == name) return a.as_object();
    }
    return {};
  }
  // A `hydra serve` session on the repository.
  RpcClient& client() {
    if (!client_) {
      client_ = std::make_unique<RpcClient>(repo_.root(), std::vector<std::string>{"PYTHONDONTWRITEBYTECODE=1"});
      client_->initialize(repo_.uri());
    }
    return *client_;
  }
  json::object evalFinished(const std::string& evalId) {
    return client()
        .notifications()[client().waitFor(
            [&](const json::object& m) {
              return m.at("method") == "hydra/evalFinished" && str(m.at("params").at("evalId")) == evalId;
            },
            0, 120s)]
        .at("params")
        .as_object();
  }
  // An agent that writes its pid to `pidFile` and waits: for cancels.
  void configureSlow(const fs::path& pidFile) {
    repo_.writeConfig(TestRepo::scoring() +
                      agent("even", script("even.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) + " > calc.py\n")) +
                      agent("slow", script("slow.sh", "echo $$ > " + shellQuote(pidFile.string()) + "\nsleep 300\n")));
  }
  static int pidIn(const fs::path& file) {
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      std::string text = fs::exists(file) ? readFile(file) : "";
      if (!text.empty() && text.back() == '\n') return std::stoi(text);
      std::this_thread::sleep_for(20ms);
    }
    return 0;
  }

  TestRepo repo_;
  std::unique_ptr<RpcClient> client_;
};

TEST_F(EvalTest, AFullRunReportsWhatTheScriptsMadeHappenAndNoAgentSawTheHiddenFiles) {
  configure();
  const fs::path setFile = evalSet(set(4));
  const fs::path report = repo_.scratch() / "report.json";
  const std::string text = hydra("eval run " + shellQuote(setFile.string()) + " --out " + shellQuote(report.string()));
  EXPECT_THAT(text, HasSubstr("Eval basics: 1 case(s) x 2 agent(s) x 4 sample(s)"));
  EXPECT_THAT(text, HasSubstr("sample 8/8"));

  json::value r = json::parse(readFile(report));
  EXPECT_EQ(r.at("schema").as_string(), "hydra.eval/1");
  EXPECT_EQ(r.at("name").as_string(), "basics");
  EXPECT_EQ(r.at("evalSetHash").as_string().size(), 40u);
  EXPECT_EQ(r.at("baseCommits").at("add").as_string(), repo_.git("rev-parse HEAD"));
  ASSERT_EQ(r.at("samples").as_array().size(), 8u);
  for (const auto& s : r.at("samples").as_array()) {
    const bool even = s.at("agent").as_string() == "even" && s.at("index").as_int64() % 2 == 0;
    EXPECT_EQ(s.at("solved").as_bool(), even) << json::serialize(s);
    EXPECT_EQ(s.at("status").as_string(), "completed");
    EXPECT_TRUE(s.as_object().contains("commit"));
  }
  // even: 2 of 4 solved; pass@2 = 1 - C(2,2)/C(4,2) = 5/6. never: none.
  json::object even = agentStats(r, "even");
  EXPECT_DOUBLE_EQ(even.at("passAtK").at("1").as_double(), 0.5);
  EXPECT_NEAR(even.at("passAtK").at("2").as_double(), 5.0 / 6.0, 1e-12);
  EXPECT_EQ(even.at("solved").as_int64(), 2);
  json::object never = agentStats(r, "never");
  EXPECT_DOUBLE_EQ(never.at("passAtK").at("1").as_double(), 0.0);
  const json::object& caseStats = r.at("cases").at(0).as_object();
  EXPECT_EQ(caseStats.at("caseId").as_string(), "add");

  // Every sample's agent had its case and sample, and none could see the hidden test.
  std::string seen = readFile(repo_.scratch() / "seen");
  for (int i = 0; i < 4; ++i) EXPECT_THAT(seen, HasSubstr("add " + std::to_string(i) + " blind\n"));
  EXPECT_THAT(seen, ::testing::Not(HasSubstr("saw")));
  // The samples are not races to list; the user's checkout is as it was.
  json::value status = json::parse(hydra("status --json"));
  EXPECT_TRUE(status.at("races").as_array().empty()) << json::serialize(status);
  EXPECT_FALSE(fs::exists(repo_.root() / "hidden"));
}

// An agent that changes nothing leaves a base that builds and whose checks
// pass: its sample is still not solved and scores 0, as an agent that cannot
// win does, even though its verification would pass.
TEST_F(EvalTest, ASampleThatChangedNothingIsUnsolvedAndScoresNothing) {
  repo_.writeConfig(TestRepo::scoring() + agent("idle", script("idle.sh", "echo 'nothing to do'\n")));
  const fs::path setFile = evalSet(
      "[eval]\nname = \"idle\"\nagents = [\"idle\"]\nsamples = 1\npass_k = [1]\n\n[[cases]]\nid = \"add\"\n"
      "task = \"Fix add() in calc.py\"\nverify_command = \"/bin/true\"\nhidden_files = [\"hidden/test_hidden.py\"]\n");
  const fs::path report = repo_.scratch() / "report.json";
  hydra("eval run " + shellQuote(setFile.string()) + " --out " + shellQuote(report.string()));
  json::value r = json::parse(readFile(report));
  ASSERT_EQ(r.at("samples").as_array().size(), 1u);
  const json::value& s = r.at("samples").at(0);
  EXPECT_FALSE(s.at("solved").as_bool()) << json::serialize(s);
  EXPECT_EQ(s.at("score").to_number<double>(), 0.0) << json::serialize(s);
  EXPECT_EQ(s.at("forgetestScore").to_number<double>(), 0.0) << json::serialize(s);
  EXPECT_EQ(str(s.at("error")), "changed nothing");
  EXPECT_DOUBLE_EQ(agentStats(r, "idle").at("meanScore").to_number<double>(), 0.0);
}

TEST_F(EvalTest, AnInterruptedRunKeepsItsSamplesAndResumeFinishesIt) {
  configure();
  // One sample at a time, each taking a moment: hydra is killed after the first.
  const fs::path slow = script("slow.sh", "sleep 1\nprintf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) + " > calc.py\n");
  repo_.writeConfig(TestRepo::scoring() + agent("even", slow) + agent("never", slow));
  std::string text = set(3);
  text.replace(text.find("max_concurrent_agents = 2"), 25, "max_concurrent_agents = 1");
  const fs::path setFile = evalSet(text);
  const fs::path report = repo_.scratch() / "report.json";
  const std::string pid = sh("cd " + shellQuote(repo_.root().string()) + " && { " + shellQuote(HYDRA_BINARY) +
                             " eval run " + shellQuote(setFile.string()) + " --out " + shellQuote(report.string()) +
                             " > /dev/null 2>&1 & echo $!; }");
  auto samplesIn = [&] {
    try {
      return json::parse(readFile(report)).at("samples").as_array().size();
    } catch (const std::exception&) {
      return std::size_t{0};
    }
  };
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (samplesIn() < 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(50ms);
  ASSERT_GE(samplesIn(), 1u);
  ::kill(std::stoi(pid), SIGKILL);
  std::this_thread::sleep_for(200ms);
  const std::size_t kept = samplesIn();
  ASSERT_LT(kept, 6u) << "killed before the end";
  json::value before = json::parse(readFile(report));

  hydra("eval run " + shellQuote(setFile.string()) + " --resume " + shellQuote(report.string()));
  json::value after = json::parse(readFile(report));
  ASSERT_EQ(after.at("samples").as_array().size(), 6u);
  // The samples done before the kill are kept as they were, and none runs twice.
  for (std::size_t i = 0; i < kept; ++i) EXPECT_EQ(after.at("samples").at(i), before.at("samples").at(i));
  std::set<std::string> ids;
  for (const auto& s : after.at("samples").as_array()) {
    ids.insert(std::string(s.at("agent").as_string()) + "#" + std::to_string(s.at("index").as_int64()));
  }
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_EQ(agentStats(after, "even").at("passAtK").at("1").as_double(), 1.0);
}

TEST_F(EvalTest, CompareFindsTheRegressionAndFailsCIWhenAsked) {
  const fs::path mode = repo_.scratch() / "good";
  std::ofstream(mode) << "yes";
  repo_.writeConfig(TestRepo::scoring() +
                    agent("even", script("toggled.sh", "if [ -e " + shellQuote(mode.string()) + " ]; then printf '%s\\n' " +
                                                           shellQuote(TestRepo::fixedCalc()) + " > calc.py; else echo '# no' >> calc.py; fi\n")) +
                    agent("never", script("never.sh", "echo '# looked' >> calc.py\n")));
  const fs::path setFile = evalSet(set(2));
  const fs::path a = repo_.scratch() / "a.json";
  const fs::path b = repo_.scratch() / "b.json";
  hydra("eval run " + shellQuote(setFile.string()) + " --out " + shellQuote(a.string()));
  fs::remove(mode);
  hydra("eval run " + shellQuote(setFile.string()) + " --out " + shellQuote(b.string()));

  const std::string args = "eval compare --baseline " + shellQuote(a.string()) + " --current " + shellQuote(b.string());
  auto [plain, plainText] = hydraStatus(args);
  EXPECT_EQ(plain, 0) << plainText;
  EXPECT_THAT(plainText, HasSubstr("regression"));
  auto [failing, failingText] = hydraStatus(args + " --fail-on-regression");
  EXPECT_EQ(failing, 1) << failingText;
  auto [same, sameText] = hydraStatus("eval compare --baseline " + shellQuote(a.string()) + " --current " +
                                      shellQuote(a.string()) + " --fail-on-regression");
  EXPECT_EQ(same, 0) << sameText;
  auto [md, mdText] = hydraStatus(args + " --format markdown");
  EXPECT_EQ(md, 0);
  EXPECT_THAT(mdText, HasSubstr("| add |"));
  json::value comparison = json::parse(hydra(args + " --format json"));
  EXPECT_GE(comparison.at("regressions").as_int64(), 1);
}

TEST_F(EvalTest, FailToPassAndPassToPassTestsDecideWithTheVerification) {
  // Both fix add(), which the hidden test checks; "breaksub" also breaks sub().
  repo_.writeConfig(TestRepo::scoring() +
                    agent("fixer", script("fixer.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) + " > calc.py\n")) +
                    agent("breaksub", script("breaksub.sh", "printf '%s\\n' 'def add(a, b):' '    return a + b' "
                                                            "'def sub(a, b):' '    return 0' > calc.py\n")));
  std::string text = set(1);
  text.replace(text.find("agents = [\"even\", \"never\"]"), 26, "agents = [\"fixer\", \"breaksub\"]");
  text += "fail_to_pass = [\"test_add\"]\npass_to_pass = [\"test_sub\"]\n"
          "test_command = \"/usr/bin/python3 -m pytest -q -rA -p no:cacheprovider\"\n";
  const fs::path report = repo_.scratch() / "report.json";
  auto [rc, out] = hydraStatus("eval run " + shellQuote(evalSet(text).string()) + " --out " + shellQuote(report.string()));
  ASSERT_EQ(rc, 0) << out << "\n" << text;
  json::value r = json::parse(readFile(report));
  ASSERT_EQ(r.at("samples").as_array().size(), 2u);
  const json::object& fixer = r.at("samples").at(0).as_object();
  const json::object& breaksub = r.at("samples").at(1).as_object();
  EXPECT_EQ(fixer.at("agent").as_string(), "fixer");
  EXPECT_TRUE(fixer.at("solved").as_bool()) << json::serialize(fixer);
  EXPECT_FALSE(breaksub.at("solved").as_bool()) << "the hidden test passes, but sub() broke";
  EXPECT_EQ(breaksub.at("error").as_string(), "pass_to_pass: test_sub did not pass");
}

TEST_F(EvalTest, ABrokenSetOrReportIsAClearErrorAndRunsNothing) {
  configure();
  fs::path setFile = evalSet("[eval]\nname = \"basics\"\nsampels = 3\n");
  auto [rc, text] = hydraStatus("eval run " + shellQuote(setFile.string()));
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(text, HasSubstr(setFile.string() + ":3:1: unknown key 'sampels' in [eval]; did you mean 'samples'?"));
  std::string unknownAgent = set(1);
  unknownAgent.replace(unknownAgent.find("\"never\""), 7, "\"nevr\"");
  setFile = evalSet(unknownAgent);
  auto [rc2, text2] = hydraStatus("eval run " + shellQuote(setFile.string()));
  EXPECT_NE(rc2, 0);
  EXPECT_THAT(text2, HasSubstr("unknown agent 'nevr'; did you mean 'never'?"));
  std::ofstream(repo_.scratch() / "bad.json") << "{\"schema\": \"other/2\"}";
  auto [rc3, text3] = hydraStatus("eval compare --baseline " + shellQuote((repo_.scratch() / "bad.json").string()) +
                                  " --current " + shellQuote((repo_.scratch() / "bad.json").string()));
  EXPECT_EQ(rc3, 2);
  EXPECT_THAT(text3, HasSubstr("is not a hydra eval report"));
  EXPECT_EQ(json::parse(hydra("status --json")).at("races").as_array().size(), 0u);
}

// examples/eval/shopcart.toml on the demo project, as the README says to try it.
TEST(EvalExampleTest, TheShopcartSetGivesTheNumbersItPromises) {
  char pattern[] = "/tmp/hydra-eval-demo-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  fs::copy(fs::path(HYDRA_SOURCE_DIR) / "examples/demo/project", dir, fs::copy_options::recursive);
  sh("cd " + shellQuote(dir.string()) + " && git init -q -b main && git add -A && git -c user.name=t -c user.email=t@t commit -qm demo");
  const fs::path report = dir / "report.json";
  sh("cd " + shellQuote(dir.string()) + " && PYTHONDONTWRITEBYTECODE=1 " + shellQuote(HYDRA_BINARY) + " eval run " +
     shellQuote((fs::path(HYDRA_SOURCE_DIR) / "examples/eval/shopcart.toml").string()) + " --out " +
     shellQuote(report.string()) + " --format json > /dev/null 2>&1");
  json::value r = json::parse(readFile(report));
  ASSERT_EQ(r.at("samples").as_array().size(), 12u);
  std::map<std::string, std::pair<double, double>> passAt;  // agent -> pass@1, pass@2
  for (const auto& a : r.at("agents").as_array()) {
    passAt[std::string(a.at("agent").as_string())] = {a.at("passAtK").at("1").as_double(),
                                                       a.at("passAtK").at("2").as_double()};
  }
  EXPECT_EQ(passAt["careful"], (std::pair<double, double>{1.0, 1.0}));
  EXPECT_DOUBLE_EQ(passAt["alternating"].first, 0.5);
  EXPECT_NEAR(passAt["alternating"].second, 5.0 / 6.0, 1e-12);
  EXPECT_EQ(passAt["breaker"], (std::pair<double, double>{0.0, 0.0}));
  // In the set's order: careful, alternating, breaker.
  EXPECT_EQ(r.at("agents").at(0).at("agent").as_string(), "careful");
  EXPECT_EQ(r.at("samples").at(1).at("agent").as_string(), "alternating");
  EXPECT_FALSE(fs::exists(dir / "tests/test_hidden_coupon.py")) << "the hidden test stays out of the user's checkout";
  fs::remove_all(dir);
}


// --- the protocol: hydra/evalRun, hydra/evalSample, hydra/evalFinished, hydra/evalReport, hydra/evalCancel

TEST_F(EvalTest, EvalRunAnswersAtOnceNotifiesEverySampleAndTheReportFollows) {
  configure();
  const fs::path setFile = evalSet(set(2));
  json::object started =
      client()
          .call("hydra/evalRun", json::object{{"set", setFile.string()}, {"workDoneToken", "eval-1"}})
          .as_object();
  const std::string evalId = std::string(started.at("evalId").as_string());
  EXPECT_EQ(started.at("name"), "basics");
  EXPECT_EQ(started.at("total"), 4);
  EXPECT_EQ(started.at("done"), 0);
  EXPECT_EQ(started.at("samples"), 2);
  EXPECT_EQ(started.at("cases"), 1);
  EXPECT_EQ(json::serialize(started.at("agents")), R"(["even","never"])");
  const fs::path reportPath = std::string(started.at("report").as_string());
  EXPECT_EQ(reportPath.parent_path(), repo_.root() / ".hydra" / "evals");
  EXPECT_EQ(reportPath.stem().string(), evalId);

  json::object finished = evalFinished(evalId);
  EXPECT_EQ(finished.at("status"), "completed");
  EXPECT_EQ(finished.at("done"), 4);
  EXPECT_EQ(finished.at("solved"), 1) << "even solves sample 0 only, never nothing";
  EXPECT_EQ(finished.at("report").as_string(), reportPath.string());

  // One notification per sample, counting up, each the sample as the report holds it.
  auto samples = client().notifications("hydra/evalSample");
  ASSERT_EQ(samples.size(), 4u);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const json::object& p = samples[i].at("params").as_object();
    EXPECT_EQ(str(p.at("evalId")), evalId);
    EXPECT_EQ(p.at("done"), static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(p.at("total"), 4);
    const json::object& sample = p.at("sample").as_object();
    const bool solves = sample.at("agent") == "even" && sample.at("index") == 0;
    EXPECT_EQ(sample.at("solved").as_bool(), solves) << json::serialize(sample);
  }
  // Progress: begin, a report per sample, end; cancellable.
  std::vector<std::string> kinds;
  for (const auto& m : client().notifications("$/progress")) {
    if (m.at("params").at("token") != "eval-1") continue;
    const json::object& value = m.at("params").at("value").as_object();
    kinds.emplace_back(value.at("kind").as_string());
    if (kinds.size() == 1) {
      EXPECT_EQ(value.at("title"), "Evaluating basics");
      EXPECT_EQ(value.at("cancellable"), true);
    }
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"begin", "report", "report", "report", "report", "end"}));
  // The samples' races are not announced to the client, nor listed.
  for (const char* method : {"hydra/agentStarted", "hydra/agentOutput", "hydra/agentFinished", "hydra/scoringStarted",
                             "hydra/raceFinished"}) {
    EXPECT_TRUE(client().notifications(method).empty()) << method;
  }
  EXPECT_TRUE(client().call("hydra/status", json::object{}).at("races").as_array().empty());

  // The report: by the evaluation's id, by its path, and the newest by default; as text too.
  json::object byId = client().call("hydra/evalReport", json::object{{"evalId", evalId}, {"format", "text"}}).as_object();
  EXPECT_EQ(byId.at("path").as_string(), reportPath.string());
  EXPECT_DOUBLE_EQ(agentStats(byId.at("report"), "even").at("passAtK").at("1").as_double(), 0.5);
  EXPECT_DOUBLE_EQ(agentStats(byId.at("report"), "never").at("passAtK").at("1").as_double(), 0.0);
  EXPECT_THAT(std::string(byId.at("text").as_string()), HasSubstr("even"));
  EXPECT_EQ(byId.at("report"), json::parse(readFile(reportPath)));
  json::object byPath = client()
                            .call("hydra/evalReport", json::object{{"report", ".hydra/evals/" + evalId + ".json"},
                                                                   {"format", "markdown"}})
                            .as_object();
  EXPECT_EQ(byPath.at("report"), byId.at("report"));
  EXPECT_THAT(std::string(byPath.at("text").as_string()), HasSubstr("| even |"));
  json::object newest = client().call("hydra/evalReport", json::object{}).as_object();
  EXPECT_EQ(newest.at("path").as_string(), reportPath.string());
  EXPECT_FALSE(newest.contains("text"));

  // Finished: cancelling it again says so.
  EXPECT_EQ(client().call("hydra/evalCancel", json::object{{"evalId", evalId}}).at("cancelled"), false);
}

TEST_F(EvalTest, EvalCancelEndsTheRunKeepsItsFinishedSamplesAndLeavesNoProcess) {
  const fs::path pidFile = repo_.scratch() / "slow.pid";
  configureSlow(pidFile);
  const fs::path setFile = evalSet(set(2));
  const fs::path report = repo_.scratch() / "cancelled.json";
  json::object started =
      client()
          .call("hydra/evalRun", json::object{{"set", setFile.string()},
                                              {"agents", json::array{"even", "slow"}},
                                              {"out", report.string()}})
          .as_object();
  const std::string evalId = std::string(started.at("evalId").as_string());
  EXPECT_EQ(evalId, "cancelled");
  const int slowPid = pidIn(pidFile);
  ASSERT_GT(slowPid, 0);
  // The first of even's samples is done before the cancel.
  client().waitFor([](const json::object& m) { return m.at("method") == "hydra/evalSample"; }, 0, 60s);

  EXPECT_EQ(client().call("hydra/evalCancel", json::object{{"evalId", evalId}}).at("cancelled"), true);
  json::object finished = evalFinished(evalId);
  EXPECT_EQ(finished.at("status"), "cancelled");
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!processGone(slowPid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(processGone(slowPid)) << "the cancelled sample's agent outlived the cancel";

  json::value r = json::parse(readFile(report));
  EXPECT_EQ(r.at("samples").as_array().size(), static_cast<std::size_t>(finished.at("done").as_int64()));
  for (const auto& s : r.at("samples").as_array()) EXPECT_EQ(s.at("agent"), "even") << "a cancelled sample is left out";
  EXPECT_FALSE(r.as_object().contains("finishedAt")) << "a cancelled run did not finish";
}

TEST_F(EvalTest, CancellingTheProgressCancelsTheEvaluationAndAVanishedClientLeavesNoAgent) {
  const fs::path pidFile = repo_.scratch() / "slow.pid";
  configureSlow(pidFile);
  const fs::path setFile = evalSet(set(1));
  json::object started = client()
                             .call("hydra/evalRun", json::object{{"set", setFile.string()},
                                                                 {"agents", json::array{"slow"}},
                                                                 {"workDoneToken", "eval-2"}})
                             .as_object();
  const std::string evalId = std::string(started.at("evalId").as_string());
  int slowPid = pidIn(pidFile);
  ASSERT_GT(slowPid, 0);
  client().notify("window/workDoneProgress/cancel", json::object{{"token", "eval-2"}});
  EXPECT_EQ(evalFinished(evalId).at("status"), "cancelled");
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!processGone(slowPid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(processGone(slowPid));

  // Again, and this time the editor goes away mid-run.
  fs::remove(pidFile);
  client().call("hydra/evalRun", json::object{{"set", setFile.string()}, {"agents", json::array{"slow"}}});
  slowPid = pidIn(pidFile);
  ASSERT_GT(slowPid, 0);
  client_.reset();
  deadline = std::chrono::steady_clock::now() + 10s;
  while (!processGone(slowPid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(processGone(slowPid)) << "a sample's agent outlived the session";
}

TEST_F(EvalTest, RefusedEvalRequestsSayWhyAndRunNothing) {
  configure();
  // Before any run there is no report to show.
  json::object none = client().callError("hydra/evalReport", json::object{});
  EXPECT_EQ(none.at("code"), -32602);
  EXPECT_THAT(std::string(none.at("message").as_string()), HasSubstr("no eval report yet"));

  const fs::path broken = evalSet("[eval]\nname = \"basics\"\nsampels = 3\n");
  json::object e = client().callError("hydra/evalRun", json::object{{"set", broken.string()}});
  EXPECT_EQ(e.at("code"), -32023);
  EXPECT_EQ(e.at("data").at("file").as_string(), broken.string());
  EXPECT_EQ(e.at("data").at("line"), 3);
  EXPECT_EQ(e.at("data").at("column"), 1);
  EXPECT_THAT(std::string(e.at("message").as_string()), HasSubstr(":3:1: unknown key 'sampels'"));

  json::object missing = client().callError("hydra/evalRun", json::object{{"set", "no/such/set.toml"}});
  EXPECT_EQ(missing.at("code"), -32023);
  EXPECT_EQ(missing.at("data").at("file").as_string(), (repo_.root() / "no/such/set.toml").string());

  const fs::path good = evalSet(set(1));
  json::object unknown =
      client().callError("hydra/evalRun", json::object{{"set", good.string()}, {"agents", json::array{"nevr"}}});
  EXPECT_EQ(unknown.at("code"), -32012);
  EXPECT_EQ(unknown.at("data").at("suggestion"), "never");
  EXPECT_EQ(client().callError("hydra/evalRun", json::object{{"set", good.string()}, {"samples", 0}}).at("code"),
            -32602);
  EXPECT_EQ(client().callError("hydra/evalRun", json::object{{"set", good.string()}, {"passK", json::array{0}}}).at("code"),
            -32602);
  std::ofstream(repo_.scratch() / "other.json")
      << R"({"schema": "hydra.eval/1", "name": "other", "hydraVersion": "", "evalSetHash": "", "passK": [1],)"
      << R"( "agentVersions": {}, "baseCommits": {}, "samples": [], "cases": [], "agents": []})";
  json::object other = client().callError(
      "hydra/evalRun", json::object{{"set", good.string()}, {"resume", (repo_.scratch() / "other.json").string()}});
  EXPECT_EQ(other.at("code"), -32602);
  EXPECT_THAT(std::string(other.at("message").as_string()), HasSubstr("is a report of eval set 'other', not 'basics'"));

  std::ofstream(repo_.scratch() / "bad.json") << "{\"schema\": \"other/2\"}";
  json::object bad =
      client().callError("hydra/evalReport", json::object{{"report", (repo_.scratch() / "bad.json").string()}});
  EXPECT_EQ(bad.at("code"), -32602);
  EXPECT_THAT(std::string(bad.at("message").as_string()), HasSubstr("is not a hydra eval report"));
  EXPECT_EQ(client().callError("hydra/evalCancel", json::object{{"evalId", "nothing"}}).at("code"), -32602);
  EXPECT_EQ(client().callError("hydra/evalReport", json::object{{"evalId", "nothing"}}).at("code"), -32602);
  EXPECT_EQ(client().callError("hydra/evalReport", json::object{{"format", "html"}}).at("code"), -32602);

  EXPECT_TRUE(client().notifications("hydra/evalSample").empty());
  EXPECT_FALSE(fs::exists(repo_.root() / ".hydra" / "evals")) << "a refused run writes no report";
}

// --- hydra eval init --------------------------------------------------------

TEST_F(EvalTest, InitFromARaceTurnsTheWinnersNewTestsIntoHiddenFilesThatDecideTheCase) {
  const std::string moreTests = "from calc import add\n\n\ndef test_add_more():\n    assert add(2, 3) == 5\n";
  repo_.writeConfig(TestRepo::scoring() +
                    agent("fixer", script("fixer.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) +
                                                          " > calc.py\nmkdir -p tests\nprintf '%s' " +
                                                          shellQuote(moreTests) + " > tests/test_more_add.py\n")) +
                    agent("never", script("never.sh", "echo '# looked' >> calc.py\n")));
  const std::string base = repo_.git("rev-parse HEAD");
  hydra("race 'Fix add() in calc.py' --agents fixer,never");

  auto [rc, out] = hydraStatus("eval init --from-race latest --name adds");
  ASSERT_EQ(rc, 0) << out;
  const fs::path setFile = repo_.root() / "evals" / "adds" / "eval.toml";
  const fs::path hiddenCopy = repo_.root() / "evals" / "adds" / "tests" / "test_more_add.py";
  EXPECT_THAT(out, HasSubstr("Wrote " + setFile.string()));
  EXPECT_THAT(out, HasSubstr("hidden: " + hiddenCopy.string()));
  EXPECT_EQ(readFile(hiddenCopy), moreTests) << "the winner's test, as it wrote it";
  const std::string text = readFile(setFile);
  EXPECT_THAT(text, HasSubstr("base = \"" + base + "\""));
  EXPECT_THAT(text, HasSubstr("task = \"Fix add() in calc.py\""));
  EXPECT_THAT(text, HasSubstr("hidden_files = [\"tests/test_more_add.py\"]"));
  EXPECT_THAT(text, HasSubstr("agents = [\"fixer\", \"never\"]"));
  // Verified in a fresh checkout: the build command, then the tests.
  EXPECT_THAT(text, HasSubstr("verify_command = \"(/usr/bin/python3 -m py_compile calc.py) && "
                              "(/usr/bin/python3 -m pytest -q -p no:cacheprovider)\""));

  // The case it wrote decides: the fixer solves it again, the other does not.
  const fs::path report = repo_.scratch() / "adds.json";
  auto [runRc, runOut] = hydraStatus("eval run " + shellQuote(setFile.string()) + " --samples 1 --out " +
                                     shellQuote(report.string()));
  ASSERT_EQ(runRc, 0) << runOut;
  json::value r = json::parse(readFile(report));
  ASSERT_EQ(r.at("samples").as_array().size(), 2u);
  for (const auto& sample : r.at("samples").as_array()) {
    EXPECT_EQ(sample.at("solved").as_bool(), sample.at("agent") == "fixer") << json::serialize(sample);
    // What the verification printed is kept, so an unsolved sample says why.
    ASSERT_TRUE(sample.as_object().contains("verifyOutput")) << json::serialize(sample);
    const std::string printed(sample.at("verifyOutput").as_string());
    if (sample.at("agent") == "fixer") {
      EXPECT_THAT(printed, HasSubstr("passed")) << printed;
    } else {
      EXPECT_THAT(printed, HasSubstr("FAILED tests/test_more_add.py::test_add_more")) << printed;
    }
  }

  // Written once: a second init does not replace it unless told to.
  auto [again, againOut] = hydraStatus("eval init --from-race latest --name adds");
  EXPECT_EQ(again, 2);
  EXPECT_THAT(againOut, HasSubstr("exists; pass --force"));
  EXPECT_EQ(hydraStatus("eval init --from-race latest --name adds --force").first, 0);
  auto [unknown, unknownOut] = hydraStatus("eval init --from-race latest --agent nobody --name other");
  EXPECT_EQ(unknown, 2);
  EXPECT_THAT(unknownOut, HasSubstr("has no agent 'nobody'"));
}

// The agent the user merged is what the case is built from, even when hydra
// ranked another first: the user's pick is the ground truth.
TEST_F(EvalTest, InitFromARaceTakesTheMergedAgentOverTheWinner) {
  const std::string moreTests = "from calc import add\n\n\ndef test_add_more():\n    assert add(2, 3) == 5\n";
  const std::string otherTests = "from calc import add\n\n\ndef test_add_zero():\n    assert add(0, 3) == 3\n";
  repo_.writeConfig(TestRepo::scoring() +
                    agent("fixer", script("fixer.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) +
                                                          " > calc.py\nmkdir -p tests\nprintf '%s' " +
                                                          shellQuote(moreTests) + " > tests/test_more_add.py\n")) +
                    agent("other", script("other.sh", "mkdir -p tests\nprintf '%s' " + shellQuote(otherTests) +
                                                          " > tests/test_add_zero.py\n")));
  hydra("race 'Fix add() in calc.py' --agents fixer,other");

  // Before any merge: the winner.
  auto [before, beforeOut] = hydraStatus("eval init --from-race latest --name winner");
  ASSERT_EQ(before, 0) << beforeOut;
  EXPECT_THAT(beforeOut, HasSubstr("hidden: " + (repo_.root() / "evals" / "winner" / "tests" / "test_more_add.py").string()));

  // The user merged the other one.
  auto [merged, mergedOut] = hydraStatus("merge latest other --force");
  ASSERT_EQ(merged, 0) << mergedOut;
  auto [after, afterOut] = hydraStatus("eval init --from-race latest --name merged");
  ASSERT_EQ(after, 0) << afterOut;
  const fs::path evalDir = repo_.root() / "evals" / "merged";
  EXPECT_THAT(afterOut, HasSubstr("hidden: " + (evalDir / "tests" / "test_add_zero.py").string())) << afterOut;
  EXPECT_FALSE(fs::exists(evalDir / "tests" / "test_more_add.py")) << "the winner's tests are not the merged agent's";
  EXPECT_EQ(readFile(evalDir / "tests" / "test_add_zero.py"), otherTests);
}

TEST_F(EvalTest, ACaseWhoseBaseCommitHoldsAHiddenFileIsRefused) {
  configure();
  // The set lives in the repository and is committed: a case starting from
  // that commit would hand every agent the hidden test.
  fs::create_directories(repo_.root() / "evals" / "hidden");
  std::ofstream(repo_.root() / "evals" / "hidden" / "test_hidden.py") << kHiddenTest;
  std::ofstream(repo_.root() / "evals" / "set.toml") << set(1);
  repo_.git("add evals");
  repo_.git("commit -q -m 'an eval set'");
  auto [rc, out] = hydraStatus("eval run evals/set.toml");
  EXPECT_EQ(rc, 2) << out;
  EXPECT_THAT(out, HasSubstr("case 'add': its hidden file hidden/test_hidden.py is committed at its base"));
  EXPECT_THAT(out, HasSubstr("as evals/hidden/test_hidden.py, where every agent can read it"));
  EXPECT_FALSE(fs::exists(repo_.root() / ".hydra" / "evals")) << "nothing ran";
  // From a commit before the set was added, the same set is fine.
  std::string earlier = set(1);
  earlier.replace(earlier.find("verify_command"), 0, "base = \"HEAD~1\"\n");
  std::ofstream(repo_.root() / "evals" / "set.toml") << earlier;
  auto [ok, okOut] = hydraStatus("eval run evals/set.toml --agents even --out " +
                                 shellQuote((repo_.scratch() / "r.json").string()));
  EXPECT_EQ(ok, 0) << okOut;
}

TEST_F(EvalTest, InitWritesATemplateThatRunsAndSaysWhatItNeeds) {
  configure();
  auto [rc, out] = hydraStatus("eval init --name basics");
  ASSERT_EQ(rc, 0) << out;
  const fs::path setFile = repo_.root() / "evals" / "basics" / "eval.toml";
  EXPECT_THAT(out, HasSubstr("Run it: hydra eval run " + setFile.string()));
  const std::string text = readFile(setFile);
  EXPECT_THAT(text, HasSubstr("agents = [\"even\", \"never\"]")) << "hydra.toml's agents";
  EXPECT_THAT(text, HasSubstr("verify_command = \"/usr/bin/python3 -m pytest -q -p no:cacheprovider\""));
  // As written, it runs: the test suite decides (add() is broken at HEAD).
  const fs::path report = repo_.scratch() / "template.json";
  auto [runRc, runOut] = hydraStatus("eval run " + shellQuote(setFile.string()) + " --samples 1 --out " +
                                     shellQuote(report.string()));
  ASSERT_EQ(runRc, 0) << runOut;
  json::value r = json::parse(readFile(report));
  ASSERT_EQ(r.at("samples").as_array().size(), 2u);
  EXPECT_TRUE(r.at("samples").at(0).at("solved").as_bool()) << "even fixes add() on sample 0";
  EXPECT_FALSE(r.at("samples").at(1).at("solved").as_bool());

  auto [again, againOut] = hydraStatus("eval init --name basics");
  EXPECT_EQ(again, 2);
  EXPECT_THAT(againOut, HasSubstr(setFile.string() + " exists; pass --force to replace it"));
  // Nothing to verify with: it says so rather than writing a set that cannot decide.
  repo_.writeConfig(agent("never", script("never.sh", "true\n")));
  auto [none, noneOut] = hydraStatus("eval init --name other");
  EXPECT_EQ(none, 2);
  EXPECT_THAT(noneOut, HasSubstr("no verify command"));
  EXPECT_EQ(hydraStatus("eval init --name other --verify-command 'make check'").first, 0);
  EXPECT_THAT(readFile(repo_.root() / "evals" / "other" / "eval.toml"), HasSubstr("verify_command = \"make check\""));
  auto [race, raceOut] = hydraStatus("eval init --from-race latest --name third --verify-command true");
  EXPECT_EQ(race, 2);
  EXPECT_THAT(raceOut, HasSubstr("no races yet"));
}

// --- cases in other repositories --------------------------------------------

TEST_F(EvalTest, ACaseInAnotherRepositoryRunsThereAndIsReportedWithTheRest) {
  configure();
  TestRepo other;
  other.writeConfig(agentsConfig());
  const fs::path setFile =
      evalSet(set(2) + "\n[[cases]]\nid = \"elsewhere\"\ntask = \"Fix add() in calc.py\"\nrepo = " +
              "\"" + other.root().string() + "\"\n" +
              "verify_command = \"/usr/bin/python3 -m pytest -q -p no:cacheprovider hidden/test_hidden.py\"\n"
              "hidden_files = [\"hidden/test_hidden.py\"]\n");
  const fs::path report = repo_.scratch() / "two-repos.json";
  auto [rc, out] = hydraStatus("eval run " + shellQuote(setFile.string()) + " --out " + shellQuote(report.string()));
  ASSERT_EQ(rc, 0) << out;
  json::value r = json::parse(readFile(report));
  ASSERT_EQ(r.at("samples").as_array().size(), 8u);
  EXPECT_EQ(r.at("baseCommits").at("elsewhere").as_string(), other.git("rev-parse HEAD"));
  for (const auto& sample : r.at("samples").as_array()) {
    const bool solves = sample.at("agent") == "even" && sample.at("index") == 0;
    EXPECT_EQ(sample.at("solved").as_bool(), solves) << json::serialize(sample);
  }
  // Each case's samples are races of its own repository, recorded there.
  auto racesIn = [](const fs::path& root) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(root / ".hydra" / "races")) ++n;
    return n;
  };
  EXPECT_EQ(racesIn(repo_.root()), 4u);
  EXPECT_EQ(racesIn(other.root()), 4u);
  EXPECT_THAT(readFile(repo_.scratch() / "seen"), HasSubstr("elsewhere 1 blind\n"));

  // The same over the protocol, with the editor's session on this repository.
  json::object started =
      client().call("hydra/evalRun", json::object{{"set", setFile.string()}, {"samples", 1}}).as_object();
  json::object finished = evalFinished(str(started.at("evalId")));
  EXPECT_EQ(finished.at("status"), "completed");
  EXPECT_EQ(finished.at("done"), 4);
  EXPECT_EQ(finished.at("solved"), 2) << "even's sample 0 of each case";
  EXPECT_TRUE(client().notifications("hydra/agentStarted").empty());
  EXPECT_EQ(racesIn(other.root()), 6u);

  // A repo that is no repository is a clear error before anything runs.
  std::string notARepo = set(1) + "\n[[cases]]\nid = \"nowhere\"\ntask = \"t\"\nrepo = \"" +
                         (repo_.scratch() / "evals").string() + "\"\nverify_command = \"true\"\n";
  auto [bad, badOut] = hydraStatus("eval run " + shellQuote(evalSet(notARepo).string()));
  EXPECT_NE(bad, 0);
  EXPECT_THAT(badOut, HasSubstr("not inside a git repository")) << badOut;
}

TEST_F(EvalTest, AnEditorThatGoesAwayLeavesNoAgentRunningInAnotherRepository) {
  const fs::path pidFile = repo_.scratch() / "slow.pid";
  configureSlow(pidFile);
  TestRepo other;
  other.writeConfig(readFile(repo_.root() / "hydra.toml"));
  const fs::path setFile = evalSet("[eval]\nname = \"far\"\nagents = [\"slow\"]\n\n[[cases]]\nid = \"far\"\n"
                                   "task = \"wait\"\nrepo = \"" + other.root().string() +
                                   "\"\nverify_command = \"true\"\n");
  client().call("hydra/evalRun", json::object{{"set", setFile.string()}});
  const int slowPid = pidIn(pidFile);
  ASSERT_GT(slowPid, 0);
  client_.reset();
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!processGone(slowPid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(processGone(slowPid)) << "a sample's agent in the other repository outlived the session";
}

}  // namespace
}  // namespace hydra::test
