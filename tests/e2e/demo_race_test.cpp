// The demo race end to end with the real binary: a project with a real bug,
// a real build, test suite and linter, and three scripted agents. The one that
// fixes the bug and adds a test must win, the one that breaks the build must
// come last, and the sprawling rewrite must lose on diff size. Then the winner
// is merged and the bug is gone from the user's branch. And the demo's
// collaboration: a builder that fixes the bug without a test, a reviewer that
// asks for one and then approves.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>
#include <sys/wait.h>

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

struct CommandRun {
  int code;
  std::string out;
};

CommandRun sh(const std::string& command) {
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, out};
}

class DemoRaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("hydra-demo-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy(fs::path(HYDRA_SOURCE_DIR) / "examples/demo/project", dir, fs::copy_options::recursive);
    ASSERT_EQ(sh("cd " + dir.string() +
                 " && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm demo")
                  .code,
              0);
  }
  void TearDown() override { fs::remove_all(dir); }

  CommandRun hydra(const std::string& args) { return sh("cd " + dir.string() + " && " + std::string(HYDRA_BINARY) + " " + args); }

  fs::path dir;
};

const json::object* rankingOf(const json::array& rankings, std::string_view agent) {
  for (const auto& r : rankings) {
    if (r.at("agentId").as_string() == agent) return &r.as_object();
  }
  return nullptr;
}

TEST_F(DemoRaceTest, CarefulFixWinsBrokenBuildIsLastSprawlLosesOnDiffSizeAndTheWinnerMerges) {
  CommandRun race = hydra("race 'Fix the open issue in README.md' --agents careful,breaker,sprawler --json");
  ASSERT_EQ(race.code, 0) << race.out;
  json::value doc = json::parse(race.out.substr(race.out.find('{')));
  const json::object& scores = doc.at("scores").as_object();
  const json::array& rankings = scores.at("rankings").as_array();
  ASSERT_EQ(rankings.size(), 3u);
  EXPECT_EQ(rankings[0].at("agentId").as_string(), "careful");
  EXPECT_EQ(rankings[2].at("agentId").as_string(), "breaker");
  EXPECT_EQ(scores.at("winner").as_string(), "careful");

  const auto* careful = rankingOf(rankings, "careful");
  const auto* breaker = rankingOf(rankings, "breaker");
  const auto* sprawler = rankingOf(rankings, "sprawler");
  ASSERT_TRUE(careful && breaker && sprawler);
  // The baseline has one failing test; the careful fix passes them all and adds one.
  const auto& baseTests = scores.at("baseline").at("checks").at("tests").at("tests");
  EXPECT_EQ(baseTests.at("failed").as_int64(), 1);
  const auto& carefulTests = careful->at("checks").at("tests").at("tests");
  EXPECT_EQ(carefulTests.at("failed").as_int64(), 0);
  EXPECT_GT(carefulTests.at("passed").as_int64(), baseTests.at("passed").as_int64());
  EXPECT_EQ(careful->at("breakdown").at("tests").to_number<double>(), 100.0);
  // Compared by name: the test that failed at the base is the one it fixed, nothing broke or went missing.
  const auto& baseCases = scores.at("baseline").at("checks").at("tests").at("testCases").as_object();
  std::vector<std::string> failedAtBase;
  for (const auto& [name, verdict] : baseCases) {
    if (verdict == json::value("failed")) failedAtBase.emplace_back(name);
  }
  ASSERT_EQ(failedAtBase.size(), 1u) << json::serialize(baseCases);
  const auto& changes = careful->at("testChanges");
  EXPECT_EQ(changes.at("fixed"), json::array({json::value(failedAtBase[0])})) << json::serialize(changes);
  EXPECT_TRUE(changes.at("broken").as_array().empty()) << json::serialize(changes);
  EXPECT_TRUE(changes.at("removed").as_array().empty()) << json::serialize(changes);
  EXPECT_FALSE(careful->contains("flags")) << "careful touched no protected file";
  // The broken build short-circuits tests and lint.
  EXPECT_EQ(breaker->at("breakdown").at("build").to_number<double>(), 0.0);
  EXPECT_TRUE(breaker->at("checks").at("tests").at("skipped").as_bool());
  // The sprawling rewrite passes its tests but renamed one the base ran: it
  // counts as removed (failed), and the tests it added do not outweigh it.
  const auto& sprawlerChanges = sprawler->at("testChanges");
  EXPECT_EQ(sprawlerChanges.at("removed").as_array().size(), 1u) << json::serialize(sprawlerChanges);
  EXPECT_EQ(sprawler->at("checks").at("tests").at("tests").at("failed").as_int64(), 0);
  EXPECT_LT(sprawler->at("breakdown").at("tests").to_number<double>(), 100.0);
  EXPECT_LT(sprawler->at("breakdown").at("diffSize").to_number<double>(),
            careful->at("breakdown").at("diffSize").to_number<double>() - 20);
  EXPECT_GT(sprawler->at("diff").at("filesChanged").as_int64(), 15);

  std::string raceId(doc.at("race").at("id").as_string());
  CommandRun table = hydra("scores " + raceId);
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_NE(table.out.find("#1  careful"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("fixed: " + failedAtBase[0]), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("[BUILD: ✗]"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("hydra merge " + raceId + " careful"), std::string::npos) << table.out;

  CommandRun dry = hydra("merge " + raceId + " --dry-run");
  ASSERT_EQ(dry.code, 0) << dry.out;
  EXPECT_NE(dry.out.find("would be merged"), std::string::npos) << dry.out;
  EXPECT_NE(sh("cd " + dir.string() + " && /usr/bin/python3 -m pytest -q tests").code, 0) << "the bug is still there";

  CommandRun merged = hydra("merge " + raceId);
  ASSERT_EQ(merged.code, 0) << merged.out;
  CommandRun tests = sh("cd " + dir.string() + " && /usr/bin/python3 -m pytest -q tests");
  EXPECT_EQ(tests.code, 0) << tests.out;
  EXPECT_EQ(sh("cd " + dir.string() + " && git status --porcelain").out, "");
  // The race's worktrees and branches are gone after the merge.
  EXPECT_EQ(sh("cd " + dir.string() + " && git branch --list 'hydra/*'").out, "");
}

// A round of a collaboration as `hydra collab --json` records it.
const json::object& iteration(const json::value& doc, std::size_t n) {
  return doc.at("race").at("iterations").as_array().at(n - 1).as_object();
}

TEST_F(DemoRaceTest, TheCollaborationDemoAsksForARegressionTestThenApprovesIt) {
  CommandRun collab = hydra("collab 'Fix the open issue in README.md' --json");
  ASSERT_EQ(collab.code, 0) << collab.out;
  json::value doc = json::parse(collab.out.substr(collab.out.find('{')));
  const json::object& race = doc.at("race").as_object();
  ASSERT_EQ(race.at("iterations").as_array().size(), 2u) << collab.out;
  EXPECT_EQ(race.at("stopReason").as_string(), "approved") << collab.out;
  EXPECT_EQ(race.at("collaboration").at("reviewEveryRound"), json::value(true));

  // Round 1 fixed the bug (the base's failing test passes) and scored full
  // marks, yet was reviewed: the review is the reviewer's last paragraph,
  // not the narration before it.
  const json::object& first = iteration(doc, 1);
  EXPECT_FALSE(first.at("approved").as_bool());
  const std::string review1(first.at("review").as_string());
  EXPECT_EQ(review1.rfind("The fix in Cart.apply_coupon looks right", 0), 0u) << review1;
  EXPECT_NE(review1.find("add a regression test"), std::string::npos) << review1;
  EXPECT_EQ(review1.find("reviewer reading"), std::string::npos) << review1;

  // Round 2 answered the review: the test is in, and the reviewer approved.
  const json::object& second = iteration(doc, 2);
  EXPECT_TRUE(second.at("approved").as_bool()) << json::serialize(second);
  EXPECT_EQ(std::string(second.at("review").as_string()).rfind("LGTM.", 0), 0u) << json::serialize(second);
  const std::string raceId(race.at("id").as_string());
  CommandRun diff = hydra("diff " + raceId + " builder@2");
  ASSERT_EQ(diff.code, 0) << diff.out;
  EXPECT_NE(diff.out.find("+def test_code_with_stray_spaces_counts_once"), std::string::npos) << diff.out;
  CommandRun diff1 = hydra("diff " + raceId + " builder@1");
  EXPECT_EQ(diff1.out.find("def test_code_with_stray_spaces_counts_once"), std::string::npos) << diff1.out;

  // Both agents ran, and the terminal says why it stopped in words.
  CommandRun status = hydra("status " + raceId);
  ASSERT_EQ(status.code, 0) << status.out;
  EXPECT_NE(status.out.find("stopped because the reviewer approved"), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find("queued"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("approved: \"LGTM."), std::string::npos) << status.out;
}

TEST_F(DemoRaceTest, AReviewerTheLoopDidNotNeedIsNotNeededNotQueued) {
  // Without review_every_round, the first round's full marks end the loop.
  CommandRun edit = sh("cd " + dir.string() +
                       " && sed -i 's/^review_every_round = true$/review_every_round = false/' hydra.toml"
                       " && git commit -qam 'review on score' && grep -c 'review_every_round = false' hydra.toml");
  ASSERT_EQ(edit.code, 0) << edit.out;
  CommandRun collab = hydra("collab 'Fix the open issue in README.md' --json");
  ASSERT_EQ(collab.code, 0) << collab.out;
  json::value doc = json::parse(collab.out.substr(collab.out.find('{')));
  ASSERT_EQ(doc.at("race").at("iterations").as_array().size(), 1u) << collab.out;
  EXPECT_EQ(doc.at("race").at("stopReason").as_string(), "untilScore");
  const std::string raceId(doc.at("race").at("id").as_string());

  CommandRun json = hydra("status " + raceId + " --json");
  ASSERT_EQ(json.code, 0) << json.out;
  json::value summary = json::parse(json.out);
  const json::object& status = summary.at("races").as_array().at(0).as_object();
  std::string reviewerState;
  for (const auto& a : status.at("agents").as_array()) {
    if (a.at("agentId").as_string() == "reviewer") reviewerState = a.at("state").as_string();
  }
  EXPECT_EQ(reviewerState, "notNeeded") << json.out;

  CommandRun text = hydra("status " + raceId);
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("not needed"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("queued"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("All agents failed"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace hydra::test
