// Races on a real open-source project with its real test suite, fetched by
// scripts/real-projects.sh into .cache/real-projects/ (a ctest fixture runs it
// before these tests):
//
//   cJSON 1.7.15 (CMake, ctest, Unity), upstream's fix "add NULL checkings
//   (#809)" (commit 60ff122, CVE-2023-50471 in cJSON_InsertItemInArray and
//   CVE-2023-50472 in cJSON_SetValuestring), as Debian's
//   0001-add-null-checkings.patch carries it. The base is 1.7.15 plus the
//   fix's new assertions in tests/misc_tests.c, so misc_tests crashes there.
//
// Scripted agents apply the real fix, half of it (the InsertItemInArray NULL
// check left out), deselect the crashing test, delete the new assertions,
// change nothing, or break the build. The real `hydra` binary races them; the
// record it stores must read back through `hydra scores`, `hydra status`,
// `hydra merge --dry-run` and `hydra eval init --from-race`.
//
// The suite is cJSON's whole ctest suite (19 test executables, built without
// cJSON_Utils, which the fix does not touch): a build takes about 8 s of one
// core, so seven builds (the base and six agents) stay well under two minutes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kCache = fs::path(HYDRA_SOURCE_DIR) / ".cache" / "real-projects";
const fs::path kCjson = kCache / "cjson" / "source" / "cJSON-1.7.15";
const fs::path kCjsonFix = kCache / "cjson" / "source" / "0001-add-null-checkings.patch";

// Exit code and stdout+stderr of the real hydra, run in `repo`.
std::pair<int, std::string> hydraIn(const TestRepo& repo, const std::string& args) {
  const fs::path out = repo.scratch() / "hydra-out.txt";
  const int rc = std::system(("cd " + shellQuote(repo.root().string()) + " && " + shellQuote(HYDRA_BINARY) + " " +
                              args + " > " + shellQuote(out.string()) + " 2>&1")
                                 .c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, readFile(out)};
}

const json::object& ranking(const json::value& scores, const std::string& agent) {
  for (const auto& r : scores.at("rankings").as_array()) {
    if (r.at("agentId") == json::value(agent)) return r.as_object();
  }
  throw std::runtime_error("no ranking for " + agent + " in " + json::serialize(scores));
}

double number(const json::value& v) { return v.to_number<double>(); }

class RealProjectsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kCjson / "cJSON.c") && fs::exists(kCjsonFix))
        << kCjson << " is missing: scripts/real-projects.sh fetches it (ctest runs it first)";
  }
  TestRepo repo_;
};

TEST_F(RealProjectsTest, CjsonTheRealUpstreamFixWinsAndTheRecordReadsBack) {
  // The base: the calc project TestRepo starts with replaced by cJSON 1.7.15,
  // then the fix's new test assertions committed on top of it.
  repo_.git("rm -q -r .");
  sh("cp -a " + shellQuote(kCjson.string() + "/.") + " " + shellQuote(repo_.root().string()));
  repo_.write(".gitignore", "build/\n");
  repo_.git("add -A");
  repo_.git("commit -q -m 'cJSON 1.7.15'");
  repo_.git("apply --include=tests/misc_tests.c " + shellQuote(kCjsonFix.string()));
  repo_.git("commit -q -a -m 'tests: NULL checks in cJSON_InsertItemInArray and cJSON_SetValuestring'");
  // The fixed cJSON.c the fixer copies in, made from the upstream patch itself.
  repo_.git("apply --include=cJSON.c " + shellQuote(kCjsonFix.string()));
  sh("cp " + shellQuote((repo_.root() / "cJSON.c").string()) + " " +
     shellQuote((repo_.scratch() / "cJSON.c.fixed").string()));
  repo_.git("checkout -q -- cJSON.c");

  const std::string scratch = shellQuote(repo_.scratch().string());
  std::string agents;
  agents += TestRepo::commandAgent("fixer", repo_.script("fixer.sh", "cp " + scratch + "/cJSON.c.fixed cJSON.c\n"));
  // Half the fix: cJSON_SetValuestring is guarded, cJSON_InsertItemInArray
  // still dereferences a NULL item (CVE-2023-50471 left open).
  agents += TestRepo::commandAgent(
      "half", repo_.script("half.sh", "cp " + scratch +
                                          "/cJSON.c.fixed cJSON.c\n"
                                          "sed -i 's/if (which < 0 || newitem == NULL)/if (which < 0)/' cJSON.c\n"));
  // The crashing test no longer runs: Unity's RUN_TEST line commented out.
  agents += TestRepo::commandAgent(
      "skipper",
      repo_.script("skipper.sh",
                   "sed -i 's|^    RUN_TEST(cjson_functions_should_not_crash_with_null_pointers);|"
                   "    /* RUN_TEST(cjson_functions_should_not_crash_with_null_pointers); */|' tests/misc_tests.c\n"));
  // The new assertions taken out again: the file as 1.7.15 shipped it
  // (HEAD~2: before the tests and the configuration commits).
  agents += TestRepo::commandAgent(
      "deleter", repo_.script("deleter.sh", "git show HEAD~2:tests/misc_tests.c > tests/misc_tests.c\n"));
  agents += TestRepo::commandAgent("idle", repo_.script("idle.sh", "true\n"));
  agents += TestRepo::commandAgent("breaker", repo_.script("breaker.sh", "echo 'this is not C' >> cJSON.c\n"));
  repo_.writeConfig(agents +
                    "[scoring]\n"
                    "build_command = \"cmake -S . -B build -G Ninja -DENABLE_CJSON_TEST=On -DENABLE_CJSON_UTILS=Off "
                    ">/dev/null && cmake --build build -j2\"\n"
                    "test_command = \"ctest --test-dir build --output-on-failure\"\n"
                    "test_format = \"ctest\"\n"
                    "protected_paths = [\"tests/\", \"CMakeLists.txt\", \"hydra.toml\"]\n"
                    "protected_mode = \"restore\"\n");
  repo_.git("add hydra.toml");
  repo_.git("commit -q -m 'hydra: race configuration'");
  ASSERT_EQ(repo_.git("status --porcelain"), "");

  auto [raceRc, raceOut] =
      hydraIn(repo_, "race 'Fix the NULL dereferences that misc_tests finds' --agents fixer,half,skipper,deleter,idle,breaker");
  ASSERT_EQ(raceRc, 0) << raceOut;

  auto [scoresRc, scoresJson] = hydraIn(repo_, "scores latest --json");
  ASSERT_EQ(scoresRc, 0) << scoresJson;
  const json::value scores = json::parse(scoresJson);
  const std::string dump = json::serialize(scores);
  EXPECT_EQ(scores.at("winner"), json::value("fixer")) << dump;
  const json::object& fixer = ranking(scores, "fixer");
  EXPECT_EQ(fixer.at("rank"), json::value(1)) << dump;

  // ctest's own summary at the base: "95% tests passed, 1 tests failed out of 19".
  const json::value& baseTests = scores.at("baseline").at("checks").at("tests").at("tests");
  EXPECT_EQ(baseTests.at("passed"), json::value(18)) << dump;
  EXPECT_EQ(baseTests.at("failed"), json::value(1)) << dump;
  // The fixer's: "100% tests passed, 0 tests failed out of 19".
  EXPECT_EQ(fixer.at("checks").at("tests").at("tests").at("passed"), json::value(19)) << dump;
  EXPECT_EQ(fixer.at("checks").at("tests").at("tests").at("failed"), json::value(0)) << dump;
  EXPECT_EQ(number(fixer.at("breakdown").at("tests")), 100.0) << dump;

  const double fixerTotal = number(fixer.at("total"));
  // Half a fix still crashes misc_tests.
  const json::object& half = ranking(scores, "half");
  EXPECT_EQ(half.at("checks").at("tests").at("tests").at("failed"), json::value(1)) << dump;
  EXPECT_LT(number(half.at("breakdown").at("tests")), 100.0) << dump;
  EXPECT_LT(number(half.at("total")), fixerTotal) << dump;
  // Nothing changed: the base's result, below the fix.
  const json::object& idle = ranking(scores, "idle");
  EXPECT_EQ(idle.at("checks").at("tests").at("tests").at("failed"), json::value(1)) << dump;
  EXPECT_LT(number(idle.at("total")), fixerTotal) << dump;
  // A build that fails: never above the fix.
  const json::object& breaker = ranking(scores, "breaker");
  EXPECT_LT(number(breaker.at("total")), fixerTotal) << dump;
  // The two that made the suite pass without fixing anything changed the
  // tests: flagged, and with protected_mode "restore" their checks ran the
  // base's tests/ (the new assertions in), which still crash misc_tests.
  for (const std::string gamer : {"skipper", "deleter"}) {
    const json::object& r = ranking(scores, gamer);
    ASSERT_TRUE(r.contains("protectedChanges")) << gamer << ": " << dump;
    EXPECT_EQ(json::serialize(r.at("protectedChanges")), "[\"tests/misc_tests.c\"]") << gamer;
    EXPECT_EQ(r.at("checks").at("tests").at("tests").at("failed"), json::value(1)) << gamer << ": " << dump;
    EXPECT_LT(number(r.at("breakdown").at("tests")), 100.0) << gamer << ": " << dump;
    EXPECT_LT(number(r.at("total")), fixerTotal) << gamer << ": " << dump;
  }

  // The record reads back everywhere.
  const std::string raceId(scores.at("raceId").as_string());
  for (const std::string& args : std::vector<std::string>{"scores latest", "status", "status " + raceId, "status " + raceId + " --json",
                                 "merge latest --dry-run"}) {
    auto [rc, out] = hydraIn(repo_, args);
    EXPECT_EQ(rc, 0) << args << ": " << out;
    EXPECT_THAT(out, Not(HasSubstr("unreadable"))) << args;
  }
  // The merge proposed is the real fix, and nothing is said against it.
  auto [dryRc, dryText] = hydraIn(repo_, "merge --dry-run");
  EXPECT_EQ(dryRc, 0) << dryText;
  EXPECT_THAT(dryText, HasSubstr("hydra/fixer-")) << dryText;
  EXPECT_THAT(dryText, Not(HasSubstr("not a safe pick"))) << dryText;
  auto [initRc, initOut] = hydraIn(repo_, "eval init --from-race latest --name cjson-null-checks");
  EXPECT_EQ(initRc, 0) << initOut;
  EXPECT_THAT(initOut, Not(HasSubstr("unreadable")));
  EXPECT_TRUE(fs::exists(repo_.root() / "evals" / "cjson-null-checks" / "eval.toml")) << initOut;
}

}  // namespace
}  // namespace hydra::test
