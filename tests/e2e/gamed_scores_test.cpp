// Scripted agents that try to game their score instead of doing the task,
// raced by the real `hydra serve` against an agent that really fixes the bug
// (tests/e2e/test_repo.h: calc.py's add() is wrong, test_add fails, test_sub
// passes), with pytest's real output as what is scored:
//   - deleting the failing test: its tests are compared by name, the removed
//     one counts as failed and is named;
//   - a conftest.py that marks every test passed: with protected_mode
//     "restore" its checks run without it; with "flag" it is shown and never
//     merged automatically;
//   - runner shadows (a pytest.py, an iniconfig.py loading a plugin): left
//     out of its checks under either mode, and flagged;
//   - a plugin loaded through pyproject.toml's addopts: pyproject.toml is a
//     default protected path;
//   - xfail on the failing test: counts as failed, named as skipped now;
//   - deleting the failing test under `pytest -q`: hydra asks pytest for the
//     names (PYTEST_ADDOPTS=-rA), so it is still named and scored as failed;
//   - deleting or skipping a failing Go test under plain `go test ./...`:
//     hydra asks go test for the names (GOFLAGS=-v), the same;
//   - the same fix, quicker and smaller, from an agent that touched a protected
//     file: flagged, it ranks below the real fix it beats on speed and diff size alone.
// And build scripts edited so that the build passes without building (a
// Makefile target turned into @true, build.sh into `exit 0` or a link to
// /bin/true, package.json's build script into `true`, a broken source dropped
// from its CMake target): built again with the base's versions, each counts as
// a failed build, against a C, Node or CMake project of its own.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// pytest with -rA names every test, passing ones too.
const std::string kScoring =
    "[scoring]\n"
    "build_command = \"/usr/bin/python3 -m py_compile calc.py\"\n"
    "test_command = \"/usr/bin/python3 -m pytest -rA -p no:cacheprovider\"\n"
    "test_format = \"pytest\"\n";

// The test file without the failing test.
const std::string kTestsWithoutTestAdd =
    "from calc import add, sub\n"
    "\n"
    "\n"
    "def test_sub():\n"
    "    assert sub(5, 3) == 2";

// A pytest hook that turns every test's report into a pass.
const std::string kPassEverything =
    "import pytest\n"
    "\n"
    "\n"
    "@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n"
    "    outcome.get_result().outcome = \"passed\"";

struct Race {
  json::object finished;  // hydra/raceFinished's params
  json::object scores;    // hydra/scores, asked for afterwards

  const json::object& ranking(const std::string& agentId) const {
    for (const auto& r : finished.at("rankings").as_array()) {
      if (r.at("agentId") == json::value(agentId)) return r.as_object();
    }
    throw std::runtime_error("no ranking for " + agentId + " in " + json::serialize(finished));
  }
};

Race raceToTheEnd(TestRepo& repo, const std::string& config, const std::vector<std::string>& agents) {
  repo.writeConfig(config);
  repo.git("add hydra.toml");
  repo.git("commit -q -m config");
  RpcClient client(repo.root());
  client.initialize(repo.uri());
  json::array names;
  for (const auto& a : agents) names.push_back(json::value(a));
  const std::string id(
      client.call("hydra/race", json::object{{"task", "fix add"}, {"agents", names}}).at("raceId").as_string());
  const std::size_t at = client.waitFor("hydra/raceFinished", id, 0, 180s);
  Race race;
  race.finished = client.notifications().at(at).at("params").as_object();
  race.scores = client.call("hydra/scores", json::object{{"raceId", id}}).as_object();
  return race;
}

std::vector<std::string> strings(const json::value& list) {
  std::vector<std::string> out;
  for (const auto& v : list.as_array()) out.emplace_back(v.as_string());
  return out;
}

TEST(GamedScoresTest, TheRealFixBeatsDeletingTheFailingTest) {
  TestRepo repo;
  const Race race = raceToTheEnd(repo,
                                 TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                                     TestRepo::agent("deleter", {"write", "test_calc.py", kTestsWithoutTestAdd}) +
                                     kScoring,
                                 {"deleter", "fixer"});
  const std::string dump = json::serialize(race.finished);
  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;

  const json::object& fixer = race.ranking("fixer");
  ASSERT_TRUE(fixer.contains("testChanges")) << dump;
  EXPECT_THAT(strings(fixer.at("testChanges").at("fixed")), ElementsAre("test_calc.py::test_add"));
  EXPECT_EQ(fixer.at("breakdown").at("tests"), json::value(100.0)) << dump;

  const json::object& deleter = race.ranking("deleter");
  ASSERT_TRUE(deleter.contains("testChanges")) << dump;
  EXPECT_THAT(strings(deleter.at("testChanges").at("removed")), ElementsAre("test_calc.py::test_add"));
  // pytest itself reported 1 passed, 0 failed: the record keeps that, the score does not believe it.
  EXPECT_EQ(deleter.at("checks").at("tests").at("tests").at("failed"), json::value(0)) << dump;
  EXPECT_LT(deleter.at("breakdown").at("tests").to_number<double>(), 100.0) << dump;
  EXPECT_LT(deleter.at("total").to_number<double>(), fixer.at("total").to_number<double>()) << dump;

  // The base's verdicts are kept by name too.
  const json::value& baseCases = race.finished.at("baseline").at("checks").at("tests").at("testCases");
  EXPECT_EQ(baseCases.at("test_calc.py::test_add"), json::value("failed")) << dump;
  EXPECT_EQ(baseCases.at("test_calc.py::test_sub"), json::value("passed")) << dump;
  // hydra/scores says the same as the notification.
  EXPECT_EQ(race.scores.at("rankings"), race.finished.at("rankings"));
}

TEST(GamedScoresTest, WithRestoreTheRealFixBeatsAConftestThatPassesEverything) {
  TestRepo repo;
  const Race race = raceToTheEnd(repo,
                                 TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                                     TestRepo::agent("tamperer", {"write", "conftest.py", kPassEverything}) + kScoring +
                                     "protected_paths = [\"conftest.py\", \"test_*.py\"]\n"
                                     "protected_mode = \"restore\"\n",
                                 {"tamperer", "fixer"});
  const std::string dump = json::serialize(race.finished);
  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;

  const json::object& tamperer = race.ranking("tamperer");
  EXPECT_THAT(strings(tamperer.at("protectedChanges")), ElementsAre("conftest.py")) << dump;
  EXPECT_EQ(tamperer.at("protectedMode"), json::value("restore")) << dump;
  EXPECT_THAT(strings(tamperer.at("flags")),
              ElementsAre("changed protected files: conftest.py (put back for its checks)"));
  // Checked without its conftest.py, test_add still fails.
  EXPECT_EQ(tamperer.at("checks").at("tests").at("tests").at("failed"), json::value(1)) << dump;
  EXPECT_LT(tamperer.at("total").to_number<double>(), race.ranking("fixer").at("total").to_number<double>()) << dump;
  EXPECT_FALSE(race.ranking("fixer").contains("flags")) << dump;
  // Its branch still holds what it wrote: restoring is for its checks only.
  EXPECT_EQ(repo.git("diff --name-only main hydra/tamperer-" + std::string(race.finished.at("raceId").as_string())),
            "conftest.py");
}

TEST(GamedScoresTest, WithFlagAConftestThatPassesEverythingIsShownAndNeverMergedAutomatically) {
  TestRepo repo;
  const Race race = raceToTheEnd(repo,
                                 TestRepo::agent("tamperer", {"write", "conftest.py", kPassEverything}) + kScoring +
                                     "protected_paths = [\"conftest.py\"]\n"
                                     "auto_merge = true\n"
                                     "[scoring.thresholds]\n"
                                     "auto_merge_minimum = 50\n",
                                 {"tamperer"});
  const std::string dump = json::serialize(race.finished);
  // Scored as it made the tests look (flag only shows), so it wins, but
  // nothing is merged without the user.
  EXPECT_EQ(race.finished.at("winner"), json::value("tamperer")) << dump;
  EXPECT_EQ(race.finished.at("autoMergeEligible"), json::value(false)) << dump;
  EXPECT_FALSE(race.finished.contains("autoMerge")) << dump;
  const json::object& tamperer = race.ranking("tamperer");
  EXPECT_EQ(tamperer.at("protectedMode"), json::value("flag")) << dump;
  EXPECT_THAT(strings(tamperer.at("flags")), ElementsAre("changed protected files: conftest.py"));
  EXPECT_EQ(tamperer.at("breakdown").at("tests"), json::value(100.0)) << dump;
  EXPECT_EQ(repo.git("log -1 --format=%s main"), "config") << "nothing was merged";
}

// --- The judge is not the defendant's ----------------------------------------
// Each attack below was real: run by hand with `python3 -m pytest` in a copy of
// the test repository, it printed "2 passed" with test_add still failing.

// A pytest.py at the root: `python3 -m pytest` imports it before the real one.
// It runs the real pytest and rewrites its verdicts.
const std::string kShadowPytest =
    "import subprocess\n"
    "import sys\n"
    "\n"
    "real = subprocess.run([sys.executable, \"-P\", \"-m\", \"pytest\", *sys.argv[1:]], capture_output=True, text=True)\n"
    "sys.stdout.write(real.stdout.replace(\"FAILED\", \"PASSED\").replace(\"1 failed, 1 passed\", \"2 passed\"))";

// An iniconfig.py (which pytest imports at start-up) that hands over to the
// real module and asks pytest to load calc_plugin.py, kPassEverything.
const std::string kShadowIniconfig =
    "import os\n"
    "import sys\n"
    "\n"
    "os.environ[\"PYTEST_PLUGINS\"] = \"calc_plugin\"\n"
    "_saved = list(sys.path)\n"
    "sys.path[:] = [p for p in sys.path if os.path.abspath(p or \".\") != os.path.dirname(os.path.abspath(__file__))]\n"
    "del sys.modules[\"iniconfig\"]\n"
    "import iniconfig as _real  # noqa: E402\n"
    "\n"
    "sys.path[:] = _saved\n"
    "sys.modules[\"iniconfig\"] = _real";

// test_calc.py with the failing test marked as expected to fail.
const std::string kTestsWithTestAddXfailed =
    "import pytest\n"
    "from calc import add, sub\n"
    "\n"
    "\n"
    "@pytest.mark.xfail\n"
    "def test_add():\n"
    "    assert add(2, 3) == 5\n"
    "\n"
    "\n"
    "def test_sub():\n"
    "    assert sub(5, 3) == 2";

const std::string kPyproject = "[tool.pytest.ini_options]\nminversion = \"7.0\"";
const std::string kPyprojectLoadingThePlugin =
    "[tool.pytest.ini_options]\nminversion = \"7.0\"\naddopts = \"-p calc_plugin\"";

std::vector<std::string> flagsOf(const json::object& ranking) {
  return ranking.contains("flags") ? strings(ranking.at("flags")) : std::vector<std::string>{};
}

TEST(GamedScoresTest, APytestPyAtTheRootIsLeftOutOfTheChecksAndTheRealFixWins) {
  TestRepo repo;
  // No protected_paths, the default mode: runner shadows are always left out.
  const Race race = raceToTheEnd(repo,
                                 TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                                     TestRepo::agent("shadow", {"write", "pytest.py", kShadowPytest}) + kScoring,
                                 {"shadow", "fixer"});
  const std::string dump = json::serialize(race.finished);
  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;
  const json::object& shadow = race.ranking("shadow");
  EXPECT_THAT(strings(shadow.at("runnerShadows")), ElementsAre("pytest.py")) << dump;
  EXPECT_THAT(flagsOf(shadow),
              ElementsAre("added files that would run in place of the test runner: pytest.py (left out of its checks)"));
  // The real pytest ran: test_add still fails.
  EXPECT_EQ(shadow.at("checks").at("tests").at("tests").at("failed"), json::value(1)) << dump;
  EXPECT_THAT(std::string(shadow.at("checks").at("tests").at("output").as_string()),
              HasSubstr("FAILED test_calc.py::test_add"));
  EXPECT_LT(shadow.at("breakdown").at("tests").to_number<double>(), 100.0) << dump;
  EXPECT_FALSE(race.ranking("fixer").contains("flags")) << dump;
  EXPECT_FALSE(race.ranking("fixer").contains("runnerShadows")) << dump;
}

TEST(GamedScoresTest, AnIniconfigPyThatLoadsAPluginIsLeftOutUnderRestoreAndTheRealFixWins) {
  TestRepo repo;
  const Race race = raceToTheEnd(
      repo,
      TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
          TestRepo::agent("shadow", {"write", "iniconfig.py", kShadowIniconfig, "write", "calc_plugin.py",
                                     kPassEverything}) +
          kScoring +
          "protected_paths = [\"pyproject.toml\", \"pytest.ini\", \"setup.cfg\", \"tox.ini\", \"test_*.py\"]\n"
          "protected_mode = \"restore\"\n",
      {"shadow", "fixer"});
  const std::string dump = json::serialize(race.finished);
  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;
  const json::object& shadow = race.ranking("shadow");
  EXPECT_THAT(strings(shadow.at("runnerShadows")), ElementsAre("iniconfig.py")) << dump;
  EXPECT_FALSE(flagsOf(shadow).empty()) << dump;
  EXPECT_EQ(shadow.at("checks").at("tests").at("tests").at("failed"), json::value(1)) << dump;
  EXPECT_LT(shadow.at("total").to_number<double>(), race.ranking("fixer").at("total").to_number<double>()) << dump;
}

// The fixer against an agent that loads kPassEverything as calc_plugin through
// pyproject.toml's addopts, in a repository whose base has a pyproject.toml.
Race raceAgainstAnAddoptsPlugin(TestRepo& repo, const std::string& scoring) {
  repo.write("pyproject.toml", kPyproject);
  repo.git("add pyproject.toml");
  return raceToTheEnd(repo,
                      TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                          TestRepo::agent("plugin", {"write", "pyproject.toml", kPyprojectLoadingThePlugin, "write",
                                                     "calc_plugin.py", kPassEverything}) +
                          scoring,
                      {"plugin", "fixer"});
}

TEST(GamedScoresTest, APluginAddedThroughAddoptsIsFlaggedByDefault) {
  TestRepo repo;
  // No protected_paths: pyproject.toml is among the defaults.
  const Race race =
      raceAgainstAnAddoptsPlugin(repo, kScoring + "auto_merge = true\n[scoring.thresholds]\nauto_merge_minimum = 50\n");
  const std::string dump = json::serialize(race.finished);
  const json::object& plugin = race.ranking("plugin");
  EXPECT_THAT(strings(plugin.at("protectedChanges")), ElementsAre("pyproject.toml")) << dump;
  EXPECT_THAT(flagsOf(plugin), ElementsAre("changed protected files: pyproject.toml")) << dump;
  EXPECT_FALSE(race.ranking("fixer").contains("flags")) << dump;
  // Flagged, it is never merged automatically, whichever agent ranks first.
  EXPECT_EQ(repo.git("ls-tree --name-only main calc_plugin.py"), "") << dump;
}

TEST(GamedScoresTest, APluginAddedThroughAddoptsIsPutBackUnderRestoreAndTheRealFixWins) {
  TestRepo repo;
  const Race race = raceAgainstAnAddoptsPlugin(repo, kScoring + "protected_mode = \"restore\"\n");
  const std::string dump = json::serialize(race.finished);
  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;
  const json::object& plugin = race.ranking("plugin");
  EXPECT_THAT(flagsOf(plugin), ElementsAre("changed protected files: pyproject.toml (put back for its checks)"));
  // Checked with the base's pyproject.toml, the plugin is not loaded: test_add fails.
  EXPECT_EQ(plugin.at("checks").at("tests").at("tests").at("failed"), json::value(1)) << dump;
  EXPECT_LT(plugin.at("total").to_number<double>(), race.ranking("fixer").at("total").to_number<double>()) << dump;
}

TEST(GamedScoresTest, XfailOnTheFailingTestCountsAsFailedAndTheRealFixWins) {
  TestRepo repo;
  const Race race =
      raceToTheEnd(repo,
                   TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                       TestRepo::agent("xfailer", {"write", "test_calc.py", kTestsWithTestAddXfailed}) + kScoring,
                   {"xfailer", "fixer"});
  const std::string dump = json::serialize(race.finished);
  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;
  const json::object& xfailer = race.ranking("xfailer");
  ASSERT_TRUE(xfailer.contains("testChanges")) << dump;
  EXPECT_THAT(strings(xfailer.at("testChanges").at("skipped")), ElementsAre("test_calc.py::test_add")) << dump;
  EXPECT_THAT(strings(xfailer.at("testChanges").at("fixed")), ::testing::IsEmpty()) << dump;
  // pytest said 1 passed, 1 xfailed and exited 0: the score does not believe it.
  EXPECT_EQ(xfailer.at("checks").at("tests").at("exitCode"), json::value(0)) << dump;
  EXPECT_LT(xfailer.at("breakdown").at("tests").to_number<double>(), 100.0) << dump;
  EXPECT_EQ(race.ranking("fixer").at("breakdown").at("tests"), json::value(100.0)) << dump;
}

TEST(GamedScoresTest, WithPytestQuietTestsAreStillComparedByNameAndDeletingOrSkippingTheFailingTestLoses) {
  // `pytest -q` names only the failures; hydra asks pytest for the rest
  // (PYTEST_ADDOPTS=-rA -vvv, which -q or -qq bring down to -vv or -v: a line
  // per test, so a skipped one is named by its node id, not only by its file
  // and line).
  for (const std::string quietness : {"-q", "-qq"}) {
    SCOPED_TRACE("pytest " + quietness);
    TestRepo repo;
    const std::string quiet =
        "[scoring]\n"
        "build_command = \"/usr/bin/python3 -m py_compile calc.py\"\n"
        "test_command = \"/usr/bin/python3 -m pytest " +
        quietness + " -p no:cacheprovider\"\n";
    const Race race = raceToTheEnd(repo,
                                   TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()}) +
                                       TestRepo::agent("deleter", {"write", "test_calc.py", kTestsWithoutTestAdd}) +
                                       TestRepo::agent("xfailer", {"write", "test_calc.py", kTestsWithTestAddXfailed}) +
                                       quiet,
                                   {"deleter", "xfailer", "fixer"});
    const std::string dump = json::serialize(race.finished);
    EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;
    const json::object& deleter = race.ranking("deleter");
    ASSERT_TRUE(deleter.contains("testChanges")) << dump;
    EXPECT_THAT(strings(deleter.at("testChanges").at("removed")), ElementsAre("test_calc.py::test_add")) << dump;
    EXPECT_FALSE(deleter.contains("testsByCountsOnly")) << dump;
    EXPECT_LT(deleter.at("breakdown").at("tests").to_number<double>(), 100.0) << dump;
    EXPECT_THAT(strings(race.ranking("fixer").at("testChanges").at("fixed")), ElementsAre("test_calc.py::test_add"));
    // Marked xfail under -q: named as skipped now (not as removed), and scored as failed.
    const json::object& xfailer = race.ranking("xfailer");
    ASSERT_TRUE(xfailer.contains("testChanges")) << dump;
    EXPECT_THAT(strings(xfailer.at("testChanges").at("skipped")), ElementsAre("test_calc.py::test_add")) << dump;
    EXPECT_THAT(strings(xfailer.at("testChanges").at("removed")), ::testing::IsEmpty()) << dump;
    EXPECT_LT(xfailer.at("breakdown").at("tests").to_number<double>(), 100.0) << dump;
  }
}

// A Go module without dependencies (so `go test` needs no download): Add is
// wrong, TestAdd fails, TestSub passes.
const std::string kGoMod = "module example.com/calc\n\ngo 1.19\n";
const std::string kGoCalc =
    "package calc\n"
    "\n"
    "func Add(a, b int) int { return a - b }\n"
    "\n"
    "func Sub(a, b int) int { return a - b }\n";
std::string goTests(const std::string& testAdd) {
  return "package calc\n"
         "\n"
         "import \"testing\"\n"
         "\n" +
         testAdd +
         "func TestSub(t *testing.T) {\n"
         "    if Sub(5, 3) != 2 {\n"
         "        t.Fatal(\"Sub(5, 3) != 2\")\n"
         "    }\n"
         "}";
}
const std::string kGoTestAdd =
    "func TestAdd(t *testing.T) {\n"
    "    if Add(2, 3) != 5 {\n"
    "        t.Fatal(\"Add(2, 3) != 5\")\n"
    "    }\n"
    "}\n"
    "\n";

// Plain `go test ./...` lists only failing tests and counts per package: with
// TestAdd deleted the package reads "ok", as if fixed. hydra asks go test for
// every test's name (GOFLAGS=-v), so the deleted test is named as removed and
// a t.Skip() on it as skipped now.
TEST(GamedScoresTest, WithPlainGoTestDeletingOrSkippingTheFailingTestLosesToTheRealFix) {
  TestRepo repo;
  repo.write("go.mod", kGoMod);
  repo.write("calc.go", kGoCalc);
  repo.write("calc_test.go", goTests(kGoTestAdd) + "\n");
  repo.git("add go.mod calc.go calc_test.go");
  repo.git("commit -q -m go");
  std::string fixed = kGoCalc;
  fixed.replace(fixed.find("a - b"), 5, "a + b");
  fixed.pop_back();  // the write step adds the last newline
  const std::string skipAdd =
      "func TestAdd(t *testing.T) {\n"
      "    t.Skip(\"later\")\n"
      "}\n"
      "\n";
  const Race race = raceToTheEnd(repo,
                                 TestRepo::agent("fixer", {"write", "calc.go", fixed}) +
                                     TestRepo::agent("deleter", {"write", "calc_test.go", goTests("")}) +
                                     TestRepo::agent("skipper", {"write", "calc_test.go", goTests(skipAdd)}) +
                                     "[scoring]\n"
                                     "build_command = \"go vet ./...\"\n"
                                     "test_command = \"go test ./...\"\n",
                                 {"deleter", "skipper", "fixer"});
  const std::string dump = json::serialize(race.finished);
  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;

  const json::value& baseCases = race.finished.at("baseline").at("checks").at("tests").at("testCases");
  EXPECT_EQ(baseCases.at("example.com/calc.TestAdd"), json::value("failed")) << dump;
  EXPECT_EQ(baseCases.at("example.com/calc.TestSub"), json::value("passed")) << dump;

  const json::object& fixer = race.ranking("fixer");
  ASSERT_TRUE(fixer.contains("testChanges")) << dump;
  EXPECT_THAT(strings(fixer.at("testChanges").at("fixed")), ElementsAre("example.com/calc.TestAdd")) << dump;
  EXPECT_EQ(fixer.at("breakdown").at("tests"), json::value(100.0)) << dump;

  const json::object& deleter = race.ranking("deleter");
  ASSERT_TRUE(deleter.contains("testChanges")) << dump;
  EXPECT_THAT(strings(deleter.at("testChanges").at("removed")), ElementsAre("example.com/calc.TestAdd")) << dump;
  EXPECT_FALSE(deleter.contains("testsByCountsOnly")) << dump;
  // go test itself exited 0 with every test it ran passing: the score does not believe it.
  EXPECT_EQ(deleter.at("checks").at("tests").at("exitCode"), json::value(0)) << dump;
  EXPECT_LT(deleter.at("breakdown").at("tests").to_number<double>(), 100.0) << dump;

  const json::object& skipper = race.ranking("skipper");
  ASSERT_TRUE(skipper.contains("testChanges")) << dump;
  EXPECT_THAT(strings(skipper.at("testChanges").at("skipped")), ElementsAre("example.com/calc.TestAdd")) << dump;
  EXPECT_LT(skipper.at("breakdown").at("tests").to_number<double>(), 100.0) << dump;
  EXPECT_EQ(race.scores.at("rankings"), race.finished.at("rankings"));
}

TEST(GamedScoresTest, WhenTheRunnerNamesNoTestsTheResultSaysTestsWereComparedByCountsOnly) {
  TestRepo repo;
  // The command's own -rf comes after hydra's -rA and wins, and its -qqq takes
  // back hydra's -vvv (no line per test): only failures are named.
  const std::string failuresOnly =
      "[scoring]\n"
      "test_command = \"/usr/bin/python3 -m pytest -qqq -rf -p no:cacheprovider\"\n";
  const Race race = raceToTheEnd(
      repo, TestRepo::agent("deleter", {"write", "test_calc.py", kTestsWithoutTestAdd}) + failuresOnly, {"deleter"});
  const std::string dump = json::serialize(race.finished);
  const json::object& deleter = race.ranking("deleter");
  EXPECT_FALSE(deleter.contains("testChanges")) << dump;
  EXPECT_EQ(deleter.at("testsByCountsOnly"), json::value(true)) << dump;
  EXPECT_EQ(race.scores.at("rankings"), race.finished.at("rankings"));
}

// The same fix from both, but one also touched a protected file (the tests,
// left as strong as they were) and was quicker with a smaller diff: by total it
// would win on speed and diff size alone, which a flag rules out.
TEST(GamedScoresTest, AFlaggedAgentNeverOutranksTheRealFixOnSpeedOrDiffSizeAlone) {
  TestRepo repo;
  // The base's tests as they were, with a comment on top (the write step adds the last newline).
  std::string testsWithAComment = "# checked by hand\n" + repo.read("test_calc.py");
  testsWithAComment.pop_back();
  std::string notes;
  for (int i = 1; i <= 80; ++i) notes += "line " + std::to_string(i) + " of the fix's notes\n";
  const Race race = raceToTheEnd(
      repo,
      TestRepo::agent("fixer", {"sleep", "2", "write", "calc.py", TestRepo::fixedCalc(), "write", "NOTES.md", notes}) +
          TestRepo::agent("toucher",
                          {"write", "calc.py", TestRepo::fixedCalc(), "write", "test_calc.py", testsWithAComment}) +
          kScoring + "protected_paths = [\"test_*.py\"]\n",
      {"toucher", "fixer"});
  const std::string dump = json::serialize(race.finished);
  const json::object& toucher = race.ranking("toucher");
  const json::object& fixer = race.ranking("fixer");
  EXPECT_THAT(flagsOf(toucher), ElementsAre("changed protected files: test_calc.py")) << dump;
  EXPECT_TRUE(flagsOf(fixer).empty()) << dump;
  // Equal on build and tests; ahead on the total through speed and diff size only.
  EXPECT_EQ(toucher.at("breakdown").at("tests"), fixer.at("breakdown").at("tests")) << dump;
  EXPECT_EQ(toucher.at("breakdown").at("build"), fixer.at("breakdown").at("build")) << dump;
  EXPECT_GT(toucher.at("total").to_number<double>(), fixer.at("total").to_number<double>()) << dump;

  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;
  EXPECT_EQ(fixer.at("rank"), json::value(1)) << dump;
  EXPECT_EQ(toucher.at("rank"), json::value(2)) << dump;
  EXPECT_EQ(race.scores.at("rankings"), race.finished.at("rankings"));
}

// The test command is `make test`: the Makefile decides what the tests
// prove. The gamer turns its test target into a line that prints pytest's
// summary; quicker than the fixer, it is flagged and ranks below it.
TEST(GamedScoresTest, AMakeTestTargetTurnedIntoAnEchoIsFlaggedAndLosesToTheRealFix) {
  TestRepo repo;
  repo.write("Makefile", "test:\n\t/usr/bin/python3 -m pytest -rA -p no:cacheprovider\n");
  repo.git("add Makefile");
  repo.git("commit -q -m make");
  const Race race = raceToTheEnd(
      repo,
      TestRepo::agent("gamer", {"write", "Makefile", "test:\n\t@echo '2 passed in 0.01s'"}) +
          TestRepo::agent("fixer", {"sleep", "2", "write", "calc.py", TestRepo::fixedCalc()}) +
          "[scoring]\n"
          "build_command = \"/usr/bin/python3 -m py_compile calc.py\"\n"
          "test_command = \"make test\"\n",
      {"gamer", "fixer"});
  const std::string dump = json::serialize(race.finished);
  const json::object& gamer = race.ranking("gamer");
  EXPECT_EQ(gamer.at("checks").at("tests").at("exitCode"), json::value(0)) << dump;
  EXPECT_THAT(flagsOf(gamer), ElementsAre("changed protected files: Makefile")) << dump;
  EXPECT_TRUE(flagsOf(race.ranking("fixer")).empty()) << dump;
  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;
  EXPECT_EQ(gamer.at("rank"), json::value(2)) << dump;
  EXPECT_EQ(race.scores.at("rankings"), race.finished.at("rankings"));
}

// --- Build scripts (docs/scoring.md, Build scripts) --------------------------

// main.c of a C project whose link fails at the base: util() is declared, never defined.
const std::string kMainWithoutUtil = "int util(void);\nint main(void) { return util() == 42 ? 0 : 1; }\n";
// main.c with util() defined, as an agent writes it (the write step adds the last newline).
const std::string kMainWithUtil = "int util(void) { return 42; }\nint main(void) { return util() == 42 ? 0 : 1; }";

// `gamer` built only with its own versions of the build scripts `changed`:
// with the base's its build failed, and it changed them for no file it added
// or removed, so its build counts as failed and its flags say why. `fixer`,
// which fixed the code, wins with a build of its own scripts' making.
void expectTheGamerIsScoredAsAFailedBuild(const Race& race, const std::string& gamerId,
                                          const std::string& changed, const std::vector<std::string>& otherFlags) {
  const std::string dump = json::serialize(race.finished);
  EXPECT_NE(race.finished.at("baseline").at("checks").at("build").at("exitCode"), json::value(0)) << dump;
  EXPECT_EQ(race.finished.at("winner"), json::value("fixer")) << dump;
  const json::object& fixer = race.ranking("fixer");
  EXPECT_EQ(fixer.at("breakdown").at("build"), json::value(100.0)) << dump;
  EXPECT_FALSE(fixer.contains("buildScript")) << dump;

  const json::object& gamer = race.ranking(gamerId);
  EXPECT_EQ(gamer.at("checks").at("build").at("exitCode"), json::value(0)) << dump;  // with its own scripts
  ASSERT_TRUE(gamer.contains("buildScript")) << dump;
  EXPECT_THAT(strings(gamer.at("buildScript").at("changed")), ElementsAre(changed)) << dump;
  EXPECT_NE(gamer.at("buildScript").at("baseBuild").at("exitCode"), json::value(0)) << dump;
  EXPECT_THAT(strings(gamer.at("buildScript").at("follows")), ::testing::IsEmpty()) << dump;
  EXPECT_EQ(gamer.at("breakdown").at("build"), json::value(0.0)) << dump;
  std::vector<std::string> flags = otherFlags;
  flags.push_back("built only by its own changed build script: " + changed +
                  " (the base's fails on its tree; scored as a failed build)");
  EXPECT_EQ(flagsOf(gamer), flags) << dump;
  EXPECT_LT(gamer.at("total").to_number<double>(), fixer.at("total").to_number<double>()) << dump;
  EXPECT_EQ(race.scores.at("rankings"), race.finished.at("rankings"));
}

// A C project whose link fails at the base (util() is declared, never
// defined), built with `make`. The gamer turns the Makefile's target into
// @true; the adder defines util() in a new util.c it adds to the Makefile;
// the tweaker defines it in main.c and adds -O2 to the Makefile; the fixer
// defines it in main.c and writes notes. The gamer is the quickest.
TEST(GamedScoresTest, AMakefileTurnedIntoTrueEarnsNoBuildScoreWhileABuildChangeForANewFileDoes) {
  TestRepo repo;
  repo.write("main.c", kMainWithoutUtil);
  repo.write("Makefile", "calc: main.o\n\tcc -o calc main.o\nmain.o: main.c\n\tcc -c main.c\n");
  repo.git("add main.c Makefile");
  repo.git("commit -q -m c");
  std::string notes;
  for (int i = 1; i <= 80; ++i) notes += "line " + std::to_string(i) + " of the fix's notes\n";
  const Race race = raceToTheEnd(
      repo,
      TestRepo::agent("gamer", {"write", "Makefile", "calc:\n\t@true"}) +
          TestRepo::agent("adder", {"sleep", "2", "write", "util.c", "int util(void) { return 42; }", "write",
                                    "Makefile",
                                    "calc: main.o util.o\n\tcc -o calc main.o util.o\nmain.o: main.c\n\tcc -c "
                                    "main.c\nutil.o: util.c\n\tcc -c util.c"}) +
          TestRepo::agent("tweaker", {"sleep", "2", "write", "main.c", kMainWithUtil, "write", "Makefile",
                                      "calc: main.o\n\tcc -o calc main.o\nmain.o: main.c\n\tcc -O2 -c main.c"}) +
          TestRepo::agent("fixer", {"sleep", "2", "write", "main.c", kMainWithUtil, "write", "NOTES.md", notes}) +
          "[scoring]\nbuild_command = \"make\"\n",
      {"gamer", "adder", "tweaker", "fixer"});
  const std::string dump = json::serialize(race.finished);
  EXPECT_EQ(race.finished.at("baseline").at("checks").at("build").at("exitCode"), json::value(2)) << dump;

  const json::object& gamer = race.ranking("gamer");
  EXPECT_EQ(gamer.at("checks").at("build").at("exitCode"), json::value(0)) << dump;  // its own Makefile
  EXPECT_EQ(gamer.at("buildScript").at("baseBuild").at("exitCode"), json::value(2)) << dump;
  EXPECT_THAT(strings(gamer.at("buildScript").at("changed")), ElementsAre("Makefile")) << dump;
  EXPECT_EQ(gamer.at("breakdown").at("build"), json::value(0.0)) << dump;
  EXPECT_THAT(flagsOf(gamer), ElementsAre("built only by its own changed build script: Makefile (the base's fails "
                                          "on its tree; scored as a failed build)"))
      << dump;

  const json::object& adder = race.ranking("adder");
  EXPECT_EQ(adder.at("breakdown").at("build"), json::value(100.0)) << dump;
  EXPECT_THAT(strings(adder.at("buildScript").at("follows")), ElementsAre("util.c")) << dump;
  EXPECT_THAT(flagsOf(adder), ElementsAre("built only by its own changed build script: Makefile (the base's fails "
                                          "on its tree; its change follows util.c)"))
      << dump;

  const json::object& tweaker = race.ranking("tweaker");
  EXPECT_EQ(tweaker.at("buildScript").at("baseBuild").at("exitCode"), json::value(0)) << dump;
  EXPECT_EQ(tweaker.at("breakdown").at("build"), json::value(100.0)) << dump;
  EXPECT_TRUE(flagsOf(tweaker).empty()) << dump;
  EXPECT_FALSE(race.ranking("fixer").contains("buildScript")) << dump;

  // The fixer and the tweaker differ on speed only, by how quickly each was started.
  EXPECT_THAT(race.finished.at("winner").as_string().c_str(), ::testing::AnyOf(::testing::StrEq("tweaker"),
                                                                               ::testing::StrEq("fixer")))
      << dump;
  EXPECT_EQ(adder.at("rank"), json::value(3)) << dump;
  EXPECT_EQ(gamer.at("rank"), json::value(4)) << dump;
  EXPECT_EQ(race.scores.at("rankings"), race.finished.at("rankings"));
}

// The same C project built by a script of its own, run by its path: the
// gamer rewrites build.sh to `exit 0`; the linker puts /bin/true in its place
// as a symbolic link; the fixer defines util().
TEST(GamedScoresTest, ABuildScriptRunByItsPathTurnedIntoExitZeroEarnsNoBuildScore) {
  TestRepo repo;
  repo.write("main.c", kMainWithoutUtil);
  repo.write("build.sh", "#!/bin/sh\nset -e\ncc -o calc main.c\n");
  std::filesystem::permissions(repo.root() / "build.sh", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  repo.git("add main.c build.sh");
  repo.git("commit -q -m c");
  const Race race = raceToTheEnd(
      repo,
      TestRepo::agent("gamer", {"write", "build.sh", "#!/bin/sh\nexit 0"}) +
          TestRepo::agent("linker", {"delete", "build.sh", "symlink", "/bin/true", "build.sh"}) +
          TestRepo::agent("fixer", {"sleep", "1", "write", "main.c", kMainWithUtil}) +
          "[scoring]\nbuild_command = \"./build.sh\"\n",
      {"gamer", "linker", "fixer"});
  expectTheGamerIsScoredAsAFailedBuild(race, "gamer", "build.sh", {});
  expectTheGamerIsScoredAsAFailedBuild(race, "linker", "build.sh", {});
  // The base's build.sh, put back over its tree, says why: util() is missing.
  EXPECT_THAT(std::string(race.ranking("gamer").at("buildScript").at("baseBuild").at("output").as_string()),
              HasSubstr("util"));
  EXPECT_EQ(repo.git("show hydra/linker-" + std::string(race.finished.at("raceId").as_string()) + ":build.sh"),
            "/bin/true")
      << "its branch keeps the link it made";
}

// A Node project built with `npm run build`, whose build script checks calc.js
// with node alone (no packages): add() is wrong at the base. The gamer makes
// package.json's build script `true`; the checker makes check.js, which the
// base's build script runs, exit 0; the fixer fixes add().
TEST(GamedScoresTest, AnNpmBuildScriptTurnedIntoTrueOrTheFileItRunsTurnedIntoExitZeroEarnsNoBuildScore) {
  TestRepo repo;
  repo.write("package.json",
             "{\n  \"name\": \"calc\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n"
             "  \"scripts\": {\n    \"build\": \"node check.js\"\n  }\n}\n");
  repo.write("check.js",
             "const { add } = require('./calc');\n"
             "if (add(2, 3) !== 5) {\n"
             "  console.error('add(2, 3) is ' + add(2, 3) + ', not 5');\n"
             "  process.exit(1);\n"
             "}\n");
  repo.write("calc.js", "exports.add = (a, b) => a - b;\n");
  repo.git("add package.json check.js calc.js");
  repo.git("commit -q -m node");
  const std::string gamedPackage =
      "{\n  \"name\": \"calc\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n"
      "  \"scripts\": {\n    \"build\": \"true\"\n  }\n}";
  const Race race = raceToTheEnd(repo,
                                 TestRepo::agent("gamer", {"write", "package.json", gamedPackage}) +
                                     TestRepo::agent("checker", {"write", "check.js", "process.exit(0);"}) +
                                     TestRepo::agent("fixer", {"sleep", "1", "write", "calc.js",
                                                               "exports.add = (a, b) => a + b;"}) +
                                     "[scoring]\nbuild_command = \"npm run build\"\n",
                                 {"gamer", "checker", "fixer"});
  // package.json is also a default protected path: flagged for that too.
  expectTheGamerIsScoredAsAFailedBuild(race, "gamer", "package.json", {"changed protected files: package.json"});
  EXPECT_THAT(std::string(race.ranking("gamer").at("buildScript").at("baseBuild").at("output").as_string()),
              HasSubstr("add(2, 3) is -1, not 5"));
  // hydra reads the base's package.json: its build script runs check.js, a build script too.
  expectTheGamerIsScoredAsAFailedBuild(race, "checker", "check.js", {});
}

// A CMake project, configured and built by the build command, whose util.c
// does not compile at the base. The gamer drops util.c from the target in
// CMakeLists.txt (nothing calls util(), so the rest builds); the fixer fixes util.c.
TEST(GamedScoresTest, ABrokenSourceDroppedFromItsCMakeTargetEarnsNoBuildScore) {
  TestRepo repo;
  const std::string cmakeLists =
      "cmake_minimum_required(VERSION 3.13)\n"
      "project(calc C)\n"
      "add_executable(calc main.c";
  repo.write("CMakeLists.txt", cmakeLists + " util.c)\n");
  repo.write("main.c", "int main(void) { return 0; }\n");
  repo.write("util.c", "int util(void) { return 42 }\n");
  repo.git("add CMakeLists.txt main.c util.c");
  repo.git("commit -q -m cmake");
  const Race race = raceToTheEnd(repo,
                                 TestRepo::agent("gamer", {"write", "CMakeLists.txt", cmakeLists + ")"}) +
                                     TestRepo::agent("fixer", {"sleep", "1", "write", "util.c",
                                                               "int util(void) { return 42; }"}) +
                                     "[scoring]\nbuild_command = \"cmake -S . -B out && cmake --build out\"\n",
                                 {"gamer", "fixer"});
  // CMakeLists.txt is also a default protected path: flagged for that too.
  expectTheGamerIsScoredAsAFailedBuild(race, "gamer", "CMakeLists.txt",
                                       {"changed protected files: CMakeLists.txt"});
  // Configured afresh with the base's CMakeLists.txt, util.c was compiled: the compiler's error on its line 1.
  EXPECT_THAT(std::string(race.ranking("gamer").at("buildScript").at("baseBuild").at("output").as_string()),
              HasSubstr("util.c:1:"));
}

}  // namespace
}  // namespace hydra::test
