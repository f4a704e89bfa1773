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

#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

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
  void configure() {
    const std::string seen = (repo_.scratch() / "seen").string();
    repo_.writeConfig(
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
  TestRepo repo_;
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

}  // namespace
}  // namespace hydra::test
