// Races on real open-source projects with their real test suites, fetched by
// scripts/real-projects.sh into .cache/real-projects/ (a ctest fixture runs it
// before these tests):
//
//   cJSON 1.7.15 (CMake, ctest, Unity), upstream's fix "add NULL checkings
//   (#809)" (commit 60ff122, CVE-2023-50471 in cJSON_InsertItemInArray and
//   CVE-2023-50472 in cJSON_SetValuestring), as Debian's
//   0001-add-null-checkings.patch carries it. The base is 1.7.15 plus the
//   fix's new assertions in tests/misc_tests.c, so misc_tests crashes there.
//
//   Jinja 3.1.2 (pytest, 849 tests) with Debian's patches up to upstream's
//   "disallow invalid characters in keys to xmlattr filter" (CVE-2024-34064),
//   Debian's 0002-disallow-invalid-characters-in-keys-to-xmlattr-filte.patch.
//   The base has the fix's new test, test_xmlattr_key_invalid, seven cases
//   that fail there.
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
// Jinja's whole suite takes about 8 s a run on two busy cores.

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
const fs::path kJinja = kCache / "jinja2" / "source" / "Jinja2-3.1.2";
const fs::path kJinjaFix =
    kCache / "jinja2" / "source" / "0002-disallow-invalid-characters-in-keys-to-xmlattr-filte.patch";

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
    for (const fs::path& p : {kCjson / "cJSON.c", kCjsonFix, kJinja / "src" / "jinja2" / "filters.py", kJinjaFix}) {
      ASSERT_TRUE(fs::exists(p)) << p << " is missing: scripts/real-projects.sh fetches it (ctest runs it first)";
    }
  }
  // The race's stored record reads back through every command that reads it,
  // and the merge proposed is the real fix, with nothing said against it.
  void expectRecordReadsBack(const std::string& raceId, const std::string& evalName) {
    for (const std::string& args : std::vector<std::string>{"scores latest", "status", "status " + raceId,
                                                            "status " + raceId + " --json"}) {
      auto [rc, out] = hydraIn(repo_, args);
      EXPECT_EQ(rc, 0) << args << ": " << out;
      EXPECT_THAT(out, Not(HasSubstr("unreadable"))) << args;
    }
    auto [dryRc, dryText] = hydraIn(repo_, "merge --dry-run");
    EXPECT_EQ(dryRc, 0) << dryText;
    EXPECT_THAT(dryText, HasSubstr("hydra/fixer-")) << dryText;
    EXPECT_THAT(dryText, Not(HasSubstr("not a safe pick"))) << dryText;
    auto [initRc, initOut] = hydraIn(repo_, "eval init --from-race latest --name " + evalName);
    EXPECT_EQ(initRc, 0) << initOut;
    EXPECT_THAT(initOut, Not(HasSubstr("unreadable")));
    EXPECT_TRUE(fs::exists(repo_.root() / "evals" / evalName / "eval.toml")) << initOut;
  }

  // Replaces the calc project TestRepo starts with by the tree at `source`,
  // committed as `subject`, with `ignored` in .gitignore.
  void commitTree(const fs::path& source, const std::string& ignored, const std::string& subject) {
    repo_.git("rm -q -r .");
    // Not -a: the tarball's owners would make git refuse the repository.
    sh("cp -R --preserve=mode " + shellQuote(source.string() + "/.") + " " + shellQuote(repo_.root().string()));
    repo_.write(".gitignore", ignored);
    repo_.git("add -A");
    repo_.git("commit -q -m " + shellQuote(subject));
  }

  // Applies the part of `patch` in `file` and copies the result to the
  // scratch folder as `copy`, leaving the checkout as it was.
  void keepPatchedCopy(const fs::path& patch, const std::string& file, const std::string& copy) {
    repo_.git("apply --include=" + file + " " + shellQuote(patch.string()));
    sh("cp " + shellQuote((repo_.root() / file).string()) + " " + shellQuote((repo_.scratch() / copy).string()));
    repo_.git("checkout -q -- " + file);
  }

  // The base: cJSON 1.7.15, then the fix's new test assertions on top; the
  // fixed cJSON.c the fixer copies in, made from the upstream patch itself,
  // kept in the scratch folder as cJSON.c.fixed.
  void commitCjsonBase() {
    commitTree(kCjson, "build/\n", "cJSON 1.7.15");
    repo_.git("apply --include=tests/misc_tests.c " + shellQuote(kCjsonFix.string()));
    repo_.git("commit -q -a -m 'tests: NULL checks in cJSON_InsertItemInArray and cJSON_SetValuestring'");
    keepPatchedCopy(kCjsonFix, "cJSON.c", "cJSON.c.fixed");
  }

  // cJSON's own build and ctest suite, its tests protected in `mode`. ctest
  // with --output-on-failure names whole executables; with -V it shows every
  // executable's output, where hydra reads Unity's own test names.
  static std::string cjsonScoring(const std::string& mode,
                                  const std::string& ctestOptions = "--output-on-failure") {
    return "[scoring]\n"
           "build_command = \"cmake -S . -B build -G Ninja -DENABLE_CJSON_TEST=On -DENABLE_CJSON_UTILS=Off "
           ">/dev/null && cmake --build build -j2\"\n"
           "test_command = \"ctest --test-dir build " + ctestOptions + "\"\n"
           "test_format = \"ctest\"\n"
           "protected_paths = [\"tests/\", \"CMakeLists.txt\", \"hydra.toml\"]\n"
           "protected_mode = \"" + mode + "\"\n";
  }

  // Races `agents`, after committing `config` as hydra.toml; hydra scores' JSON.
  json::value race(const std::string& config, const std::string& task, const std::string& agents) {
    repo_.writeConfig(config);
    repo_.git("add hydra.toml");
    repo_.git("commit -q -m 'hydra: race configuration'");
    auto [raceRc, raceOut] = hydraIn(repo_, "race " + shellQuote(task) + " --agents " + agents);
    EXPECT_EQ(raceRc, 0) << raceOut;
    auto [scoresRc, scoresJson] = hydraIn(repo_, "scores latest --json");
    EXPECT_EQ(scoresRc, 0) << scoresJson;
    return json::parse(scoresJson);
  }

  TestRepo repo_;
};

TEST_F(RealProjectsTest, CjsonTheRealUpstreamFixWinsAndTheRecordReadsBack) {
  commitCjsonBase();
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
  const json::value scores = race(agents + cjsonScoring("restore"),
      "Fix the NULL dereferences that misc_tests finds", "fixer,half,skipper,deleter,idle,breaker");
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

  expectRecordReadsBack(std::string(scores.at("raceId").as_string()), "cjson-null-checks");
}

// The default protected_mode, "flag": the deleter's suite passes (ctest
// names only the executable, so the deleted assertions leave no name behind)
// and it is as quick as the fix, yet a flagged agent never outranks an
// unflagged one on speed or diff size alone. Once the user merged the real
// fix, `eval init --from-race` builds its case from that merge, not from the
// deleter's copy of the test file.
TEST_F(RealProjectsTest, CjsonInFlagModeTheDeleterNeverOutranksTheMergedFix) {
  commitCjsonBase();
  const std::string scratch = shellQuote(repo_.scratch().string());
  std::string agents;
  agents += TestRepo::commandAgent("fixer", repo_.script("fixer.sh", "cp " + scratch + "/cJSON.c.fixed cJSON.c\n"));
  agents += TestRepo::commandAgent(
      "deleter", repo_.script("deleter.sh", "git show HEAD~2:tests/misc_tests.c > tests/misc_tests.c\n"));
  const json::value scores =
      race(agents + cjsonScoring("flag"), "Fix the NULL dereferences that misc_tests finds", "fixer,deleter");
  const std::string dump = json::serialize(scores);
  EXPECT_EQ(scores.at("winner"), json::value("fixer")) << dump;
  EXPECT_EQ(ranking(scores, "fixer").at("rank"), json::value(1)) << dump;
  const json::object& deleter = ranking(scores, "deleter");
  EXPECT_EQ(deleter.at("rank"), json::value(2)) << dump;
  EXPECT_EQ(json::serialize(deleter.at("protectedChanges")), "[\"tests/misc_tests.c\"]") << dump;
  // ctest named only executables and the deleter changed the test file: its
  // passing suite proves nothing.
  EXPECT_THAT(json::serialize(deleter.at("flags")), HasSubstr("tests unprovable")) << dump;
  EXPECT_EQ(number(deleter.at("breakdown").at("tests")), 0.0) << dump;

  auto [dryRc, dryText] = hydraIn(repo_, "merge deleter --dry-run");
  EXPECT_EQ(dryRc, 0) << dryText;
  EXPECT_THAT(dryText, HasSubstr("not a safe pick")) << dryText;
  EXPECT_THAT(dryText, HasSubstr("tests/misc_tests.c")) << dryText;

  auto [mergeRc, mergeOut] = hydraIn(repo_, "merge fixer");
  ASSERT_EQ(mergeRc, 0) << mergeOut;
  auto [initRc, initOut] = hydraIn(repo_, "eval init --from-race latest --name cjson-merged");
  ASSERT_EQ(initRc, 0) << initOut;
  // The case comes from the merged fix: no copy of misc_tests.c without the
  // new assertions (the deleter's) is among its hidden files.
  const fs::path set = repo_.root() / "evals" / "cjson-merged";
  const std::string toml = readFile(set / "eval.toml");
  EXPECT_THAT(toml, HasSubstr("the tests fixer\n# added or changed")) << toml;
  EXPECT_EQ(sh("grep -rL --include=misc_tests.c 'corrupted array item3' " + shellQuote(set.string()) + " || true"), "")
      << toml;
}

// With `ctest -V` hydra reads the names Unity prints inside misc_tests. At
// the base misc_tests crashes before Unity names a case, so the regression
// test the skipper stopped running cannot show as removed: its changed test
// file makes its tests unprovable instead of "fixed: misc_tests".
TEST_F(RealProjectsTest, CjsonWithCtestVerboseNamesUnitysTestsInsideTheExecutable) {
  commitCjsonBase();
  const std::string scratch = shellQuote(repo_.scratch().string());
  const std::string regression = "misc_tests::cjson_functions_should_not_crash_with_null_pointers";
  std::string agents;
  agents += TestRepo::commandAgent("fixer", repo_.script("fixer.sh", "cp " + scratch + "/cJSON.c.fixed cJSON.c\n"));
  // Unity's TEST_IGNORE after the regression test's declarations (cJSON is
  // C89): it still compiles and misc_tests passes, the case reported IGNORE.
  agents += TestRepo::commandAgent(
      "skipper", repo_.script("skipper.sh",
                              "sed -i '/^static void cjson_functions_should_not_crash_with_null_pointers(void)$/,"
                              "/cJSON_InitHooks(NULL);/ s/^    cJSON_InitHooks(NULL);$/    TEST_IGNORE();\\n&/' "
                              "tests/misc_tests.c\n"));
  const json::value scores = race(agents + cjsonScoring("flag", "-V"),
                                  "Fix the NULL dereferences that misc_tests finds", "fixer,skipper");
  const std::string dump = json::serialize(scores);
  EXPECT_EQ(scores.at("winner"), json::value("fixer")) << dump;
  const json::object& fixer = ranking(scores, "fixer");
  const json::value* regressionVerdict = fixer.at("checks").at("tests").at("testCases").as_object().if_contains(regression);
  ASSERT_NE(regressionVerdict, nullptr) << dump;
  EXPECT_EQ(*regressionVerdict, json::value("passed")) << dump;
  // At the base misc_tests crashed before Unity printed a verdict: it is
  // named whole there, and fixed as a whole.
  EXPECT_EQ(json::serialize(fixer.at("testChanges").at("fixed")), "[\"misc_tests\"]") << dump;
  EXPECT_EQ(number(fixer.at("breakdown").at("tests")), 100.0) << dump;
  // The skipper's run names the regression test as skipped, but with no
  // names from the base inside misc_tests nothing shows that it failed there:
  // a changed test file leaves its tests unprovable.
  const json::object& skipper = ranking(scores, "skipper");
  ASSERT_EQ(skipper.at("breakdown").at("build"), json::value(100.0)) << dump;
  const json::value* ignored = skipper.at("checks").at("tests").at("testCases").as_object().if_contains(regression);
  ASSERT_NE(ignored, nullptr) << dump;
  EXPECT_EQ(*ignored, json::value("skipped")) << dump;
  ASSERT_TRUE(skipper.contains("flags")) << dump;
  EXPECT_THAT(json::serialize(skipper.at("flags")), HasSubstr("tests unprovable")) << dump;
  EXPECT_EQ(number(skipper.at("breakdown").at("tests")), 0.0) << dump;
}

TEST_F(RealProjectsTest, JinjaTheRealUpstreamFixWinsAndTheRecordReadsBack) {
  commitTree(kJinja, "__pycache__/\n", "Jinja 3.1.2 with Debian's patches before CVE-2024-34064's fix");
  repo_.git("apply --include=tests/test_filters.py " + shellQuote(kJinjaFix.string()));
  repo_.git("commit -q -a -m 'tests: xmlattr rejects keys with characters that end an attribute name'");
  keepPatchedCopy(kJinjaFix, "src/jinja2/filters.py", "filters.py.fixed");

  const std::string scratch = shellQuote(repo_.scratch().string());
  std::string agents;
  agents += TestRepo::commandAgent("fixer",
                                   repo_.script("fixer.sh", "cp " + scratch + "/filters.py.fixed src/jinja2/filters.py\n"));
  // Half the fix: '=' is still allowed in a key.
  agents += TestRepo::commandAgent(
      "half", repo_.script("half.sh", "cp " + scratch + "/filters.py.fixed src/jinja2/filters.py\n"
                                      "sed -i 's|\\[\\\\s/>=\\]|[\\\\s/>]|' src/jinja2/filters.py\n"
                                      "grep -q '\\[\\\\s/>\\]' src/jinja2/filters.py\n"));
  agents += TestRepo::commandAgent(
      "skipper", repo_.script("skipper.sh", "sed -i 's|^    @pytest.mark.parametrize(\"sep\"|    @pytest.mark.skip\\n&|' "
                                            "tests/test_filters.py\n"));
  agents += TestRepo::commandAgent(
      "deleter", repo_.script("deleter.sh", "sed -i '/@pytest.mark.parametrize(\"sep\"/,/^            )$/d' "
                                            "tests/test_filters.py\n"));
  agents += TestRepo::commandAgent("idle", repo_.script("idle.sh", "true\n"));
  agents += TestRepo::commandAgent("breaker",
                                   repo_.script("breaker.sh", "echo 'def broken(:' >> src/jinja2/filters.py\n"));
  // protected_paths is left to its defaults (tests/ is not among them): the
  // skipped and deleted tests are caught by name.
  const json::value scores = race(agents +
                                      "[scoring]\n"
                                      "build_command = \"/usr/bin/python3 -m compileall -q src\"\n"
                                      "test_command = \"env PYTHONPATH=src /usr/bin/python3 -m pytest -rA -p no:cacheprovider "
                                      "tests\"\n"
                                      "test_format = \"pytest\"\n",
                                  "Reject xmlattr keys that end an attribute name", "fixer,half,skipper,deleter,idle,breaker");
  const std::string dump = json::serialize(scores);
  EXPECT_EQ(scores.at("winner"), json::value("fixer")) << dump;
  const json::object& fixer = ranking(scores, "fixer");
  EXPECT_EQ(fixer.at("rank"), json::value(1)) << dump;

  // pytest's own summary at the base: "7 failed, 842 passed".
  const json::value& baseTests = scores.at("baseline").at("checks").at("tests").at("tests");
  EXPECT_EQ(baseTests.at("passed"), json::value(842)) << dump;
  EXPECT_EQ(baseTests.at("failed"), json::value(7)) << dump;
  // The fixer's: "849 passed", the seven named, a space and a tab among them.
  EXPECT_EQ(fixer.at("checks").at("tests").at("tests").at("passed"), json::value(849)) << dump;
  EXPECT_EQ(fixer.at("checks").at("tests").at("tests").at("failed"), json::value(0)) << dump;
  const std::string invalid = "tests/test_filters.py::TestFilter::test_xmlattr_key_invalid";
  EXPECT_EQ(fixer.at("testChanges").at("fixed").as_array().size(), 7u) << dump;
  for (const std::string sep : {"[ ]", "[/]", "[>]", "[=]", "[\\t]", "[\\n]", "[\\x0c]"}) {
    EXPECT_THAT(json::serialize(fixer.at("testChanges").at("fixed")), HasSubstr(json::serialize(json::value(invalid + sep))))
        << dump;
  }
  EXPECT_EQ(number(fixer.at("breakdown").at("tests")), 100.0) << dump;
  const double fixerTotal = number(fixer.at("total"));

  // Half the fix: "1 failed, 848 passed", the '=' case still failing.
  const json::object& half = ranking(scores, "half");
  EXPECT_EQ(half.at("checks").at("tests").at("tests").at("passed"), json::value(848)) << dump;
  EXPECT_EQ(half.at("checks").at("tests").at("tests").at("failed"), json::value(1)) << dump;
  EXPECT_EQ(half.at("checks").at("tests").at("testCases").at(invalid + "[=]"), json::value("failed")) << dump;
  EXPECT_LT(number(half.at("total")), fixerTotal) << dump;
  // The skipped and the deleted cases count as failed, named.
  const json::object& skipper = ranking(scores, "skipper");
  // pytest's summary: "842 passed, 7 skipped". Its -rA report names skips only
  // by where they are ("SKIPPED [7] tests/test_filters.py:477"); the -v line
  // hydra asks for names each by node id, so the seven are named as skipped.
  EXPECT_EQ(skipper.at("checks").at("tests").at("tests").at("passed"), json::value(842)) << dump;
  EXPECT_EQ(skipper.at("checks").at("tests").at("tests").at("skipped"), json::value(7)) << dump;
  EXPECT_EQ(skipper.at("testChanges").at("skipped").as_array().size(), 7u) << dump;
  EXPECT_EQ(skipper.at("testChanges").at("removed").as_array().size(), 0u) << dump;
  EXPECT_LT(number(skipper.at("breakdown").at("tests")), 100.0) << dump;
  EXPECT_LT(number(skipper.at("total")), fixerTotal) << dump;
  const json::object& deleter = ranking(scores, "deleter");
  EXPECT_EQ(deleter.at("testChanges").at("removed").as_array().size(), 7u) << dump;
  EXPECT_LT(number(deleter.at("breakdown").at("tests")), 100.0) << dump;
  EXPECT_LT(number(deleter.at("total")), fixerTotal) << dump;
  EXPECT_LT(number(ranking(scores, "idle").at("total")), fixerTotal) << dump;
  EXPECT_LT(number(ranking(scores, "breaker").at("total")), fixerTotal) << dump;

  expectRecordReadsBack(std::string(scores.at("raceId").as_string()), "jinja-xmlattr-keys");
}

}  // namespace
}  // namespace hydra::test
