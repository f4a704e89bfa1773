// Collaboration mode end to end: the real `hydra serve` and `hydra collab`
// with scripted builders and reviewers (bash scripts the tests write next to
// the repository, reading HYDRA_PHASE, HYDRA_ITERATION and their prompt in
// HYDRA_TASK), in throwaway repositories (tests/e2e/test_repo.h).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
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
using ::testing::Not;
using Clock = std::chrono::steady_clock;

std::string str(const json::value& v) { return std::string(v.as_string()); }

template <class Pred>
bool eventually(Pred pred, std::chrono::seconds limit = 60s) {
  auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// calc.py with add() still wrong and one comment more per iteration: a
// change that scores below the target (test_add fails).
std::string stillBroken(int iteration) {
  return "# attempt " + std::to_string(iteration) +
         "\ndef add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n";
}

class CollabTest : public ::testing::Test {
 protected:
  void start(json::object capabilities = {}) {
    client_ = std::make_unique<RpcClient>(repo_.root(), std::vector<std::string>{"PYTHONDONTWRITEBYTECODE=1"});
    client_->initialize(repo_.uri(), std::move(capabilities));
  }
  RpcClient& client() { return *client_; }

  fs::path script(const std::string& name, const std::string& body) { return repo_.script(name, body); }
  static std::string agent(const std::string& name, const fs::path& binary) {
    return TestRepo::commandAgent(name, binary);
  }
  // hydra.toml with a builder and a reviewer from these scripts and the test repo's scoring.
  void configure(const std::string& builderBody, const std::string& reviewerBody, const std::string& extra = "") {
    repo_.writeConfig(TestRepo::scoring() + agent("bob", script("builder.sh", builderBody)) +
                      agent("rita", script("reviewer.sh", reviewerBody)) + extra);
  }
  json::object collab(json::object extra = {}) {
    json::object params{{"task", "Fix add() in calc.py"}, {"builder", "bob"}, {"reviewer", "rita"}};
    for (auto& [k, v] : extra) params[k] = v;
    return client().call("hydra/collab", std::move(params)).as_object();
  }
  json::object finished(const std::string& id) {
    return client().notifications()[client().waitFor("hydra/raceFinished", id, 0, 120s)].at("params").as_object();
  }
  std::vector<json::object> iterations(const std::string& id) {
    std::vector<json::object> out;
    for (const auto& m : client().notifications("hydra/iterationFinished")) {
      if (m.at("params").at("raceId").as_string() == id) out.push_back(m.at("params").as_object());
    }
    return out;
  }
  fs::path scratch(const std::string& name) const { return repo_.scratch() / name; }
  // The "<reviewer pid> <its child's pid>" a waiting reviewer wrote to `file`; 0 0 when it never did.
  static std::pair<int, int> pidsIn(const fs::path& file) {
    std::pair<int, int> pids{0, 0};
    if (!eventually([&] { return fs::exists(file) && readFile(file).find(' ') != std::string::npos; })) return pids;
    std::istringstream in(readFile(file));
    in >> pids.first >> pids.second;
    return pids;
  }
  // The reviewer every interruption test uses: it starts a long `sleep` and waits for it.
  static std::string waitingReviewer(const fs::path& pids) {
    return "sleep 300 &\necho \"$$ $!\" > " + shellQuote(pids.string()) + "\nwait\n";
  }
  // What hydra prints on stdout alone (its log lines go to stderr), parsed.
  json::value hydraJson(const std::string& args) {
    return json::parse(sh("(cd " + shellQuote(repo_.root().string()) + " && PYTHONDONTWRITEBYTECODE=1 " +
                          shellQuote(HYDRA_BINARY) + " " + args + " 2>/dev/null)"));
  }
  std::string hydra(const std::string& args) {
    return sh("cd " + shellQuote(repo_.root().string()) + " && PYTHONDONTWRITEBYTECODE=1 " +
              shellQuote(HYDRA_BINARY) + " " + args);
  }

  TestRepo repo_;
  std::unique_ptr<RpcClient> client_;
};

// The builder fixes only what the review asks for: iteration 1 leaves add()
// wrong, the reviewer names it, iteration 2 (given the review) fixes it and
// reaches the target.
TEST_F(CollabTest, ABuilderThatFixesWhatTheReviewAsksForReachesTheTargetInTheSecondIteration) {
  const std::string prompts = scratch("prompt-").string();
  configure("printf '%s' \"$HYDRA_TASK\" > " + shellQuote(prompts) + "\"$HYDRA_ITERATION\"\n"
            "echo \"$HYDRA_PHASE $HYDRA_ITERATION\"\n"
            "case \"$HYDRA_TASK\" in\n"
            "  *'add() subtracts'*) printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) + " > calc.py ;;\n"
            "  *) printf '%s' " + shellQuote(stillBroken(1)) + " > calc.py ;;\n"
            "esac\n",
            "echo 'add() subtracts: it must return a + b'\n"
            "echo 'Nothing else.'\n");
  start(json::object{{"window", json::object{{"workDoneProgress", true}}}});
  json::object started = collab();
  const std::string id = str(started.at("raceId"));
  EXPECT_EQ(started.at("kind").as_string(), "collab");
  ASSERT_EQ(started.at("agents").as_array().size(), 2u);
  EXPECT_EQ(started.at("agents").at(0).at("agentId").as_string(), "builder");
  EXPECT_EQ(started.at("agents").at(0).at("agent").as_string(), "bob");
  EXPECT_EQ(started.at("agents").at(1).at("agentId").as_string(), "reviewer");
  EXPECT_EQ(str(started.at("agents").at(0).at("branch")), "hydra/builder-" + id);
  EXPECT_EQ(started.at("collaboration").at("maxIterations").as_int64(), 3);
  EXPECT_EQ(started.at("collaboration").at("untilScore").as_double(), 85.0);  // auto_merge_minimum
  EXPECT_EQ(started.at("collaboration").at("approveMarker").as_string(), "LGTM");

  json::object done = finished(id);
  EXPECT_EQ(done.at("status").as_string(), "completed");
  EXPECT_EQ(done.at("stopReason").as_string(), "untilScore");
  EXPECT_EQ(done.at("winner").as_string(), "builder@2");
  ASSERT_EQ(done.at("rankings").as_array().size(), 2u);
  EXPECT_EQ(done.at("rankings").at(0).at("agentId").as_string(), "builder@2");
  EXPECT_EQ(done.at("rankings").at(1).at("agentId").as_string(), "builder@1");

  // The order of what happened: build 1, scoring 1, review 1, iteration 1, refine 2, scoring 2, iteration 2, end.
  std::vector<std::string> seen;
  for (const auto& m : client().notifications()) {
    const std::string method = str(m.at("method"));
    const json::object& p = m.at("params").as_object();
    if (!p.contains("raceId") || p.at("raceId").as_string() != id) continue;
    if (method == "hydra/agentStarted" || method == "hydra/agentFinished") {
      seen.push_back(method.substr(6) + " " + str(p.at("agentId")) + " " + str(p.at("phase")) + " " +
                     std::to_string(p.at("iteration").as_int64()));
    } else if (method == "hydra/scoringStarted") {
      seen.push_back("scoringStarted " + std::to_string(p.at("iteration").as_int64()));
    } else if (method == "hydra/iterationFinished") {
      seen.push_back("iterationFinished " + std::to_string(p.at("iteration").as_int64()) + " " + str(p.at("next")));
    } else if (method == "hydra/raceFinished") {
      seen.push_back("raceFinished");
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "agentStarted builder build 1", "agentFinished builder build 1", "scoringStarted 1",
                      "agentStarted reviewer review 1", "agentFinished reviewer review 1",
                      "iterationFinished 1 refine", "agentStarted builder refine 2",
                      "agentFinished builder refine 2", "scoringStarted 2", "iterationFinished 2 stop",
                      "raceFinished"}));

  auto its = iterations(id);
  ASSERT_EQ(its.size(), 2u);
  EXPECT_EQ(its[0].at("review").as_string(), "add() subtracts: it must return a + b\nNothing else.");
  EXPECT_EQ(its[0].at("approved").as_bool(), false);
  EXPECT_LT(its[0].at("score").at("total").as_double(), 85.0);
  EXPECT_EQ(its[0].at("score").at("agentId").as_string(), "builder@1");
  EXPECT_FALSE(its[1].contains("review")) << "the last iteration is not reviewed";
  EXPECT_GE(its[1].at("score").at("total").as_double(), 85.0);
  EXPECT_EQ(its[1].at("stopReason").as_string(), "untilScore");
  EXPECT_NE(its[0].at("commit"), its[1].at("commit"));

  // The refine prompt carried the task, the review, the diff and the failing test's output.
  const std::string refine = readFile(prompts + "2");
  EXPECT_THAT(refine, HasSubstr("Fix add() in calc.py"));
  EXPECT_THAT(refine, HasSubstr("add() subtracts: it must return a + b"));
  EXPECT_THAT(refine, HasSubstr("+# attempt 1"));
  EXPECT_THAT(refine, HasSubstr("test_add"));
  EXPECT_EQ(readFile(prompts + "1"), "Fix add() in calc.py");

  // Work-done progress: begin, the phases, end with the best iteration.
  client().waitFor([](const json::object& m) {
    return m.at("method").as_string() == "$/progress" && m.at("params").at("value").at("kind").as_string() == "end";
  });
  std::vector<std::string> progress;
  for (const auto& m : client().notifications("$/progress")) {
    const json::object& v = m.at("params").at("value").as_object();
    progress.push_back(v.contains("message") ? str(v.at("message")) : std::string(v.at("kind").as_string()));
  }
  ASSERT_FALSE(progress.empty());
  EXPECT_THAT(progress, ::testing::Contains("iteration 1: building"));
  EXPECT_THAT(progress, ::testing::Contains("iteration 1: reviewing"));
  EXPECT_THAT(progress, ::testing::Contains("iteration 2: refining"));
  EXPECT_THAT(progress.back(), HasSubstr("best: builder@2"));

  // Stored with the races: kind, settings, iterations with their reviews and scores.
  json::object record = repo_.raceRecord(id);
  EXPECT_EQ(record.at("kind").as_string(), "collab");
  EXPECT_EQ(record.at("stopReason").as_string(), "untilScore");
  ASSERT_EQ(record.at("iterations").as_array().size(), 2u);
  EXPECT_EQ(record.at("iterations").at(0).at("review"), its[0].at("review"));
  json::object status = client().call("hydra/status", json::object{{"raceId", id}}).as_object();
  const json::object& summary = status.at("races").at(0).as_object();
  EXPECT_EQ(summary.at("winner").as_string(), "builder@2");
  ASSERT_EQ(summary.at("iterations").as_array().size(), 2u);
  EXPECT_EQ(summary.at("iterations").at(1).at("score").as_double(), its[1].at("score").at("total").as_double());
  EXPECT_EQ(summary.at("collaboration").at("stopReason").as_string(), "untilScore");

  // Each iteration's diff, and any iteration merged: iteration 1 is behind the branch's tip.
  json::object diff1 = client().call("hydra/diff", json::object{{"raceId", id}, {"agentId", "builder@1"}}).as_object();
  EXPECT_THAT(str(diff1.at("patch")), HasSubstr("+# attempt 1"));
  json::object diff2 = client().call("hydra/diff", json::object{{"raceId", id}, {"agentId", "builder@2"}}).as_object();
  EXPECT_THAT(str(diff2.at("patch")), Not(HasSubstr("attempt")));
  json::object reviewer = client().callError("hydra/diff", json::object{{"raceId", id}, {"agentId", "reviewer"}});
  EXPECT_THAT(str(reviewer.at("message")), HasSubstr("reviewer's changes are not kept"));
  json::object log = client().call("hydra/log", json::object{{"raceId", id}, {"agentId", "builder@2"}}).as_object();
  EXPECT_THAT(str(log.at("data")), HasSubstr("build 1\n"));
  EXPECT_THAT(str(log.at("data")), HasSubstr("refine 2\n"));

  // Not the best iteration, and its tests fail: merged only with force.
  json::object unsafe = client().callError("hydra/merge", json::object{{"raceId", id}, {"agentId", "builder@1"}});
  EXPECT_EQ(str(unsafe.at("data").at("reason")), "needsForce") << json::serialize(unsafe);
  EXPECT_THAT(json::serialize(unsafe.at("data").at("concerns")), HasSubstr("it is not the winner (builder@2 is"));
  EXPECT_THAT(json::serialize(unsafe.at("data").at("concerns")), HasSubstr("its tests failed (exit 1)"));
  json::object dry = client().call("hydra/merge", json::object{{"raceId", id}, {"agentId", "builder@1"}, {"dryRun", true}})
                         .as_object();
  EXPECT_EQ(dry.at("concerns"), unsafe.at("data").at("concerns"));
  json::object merged =
      client().call("hydra/merge", json::object{{"raceId", id}, {"agentId", "builder@1"}, {"force", true}}).as_object();
  EXPECT_EQ(merged.at("outcome").as_string(), "fastForward");
  EXPECT_EQ(repo_.read("calc.py"), stillBroken(1));
  json::object again = client().callError("hydra/merge", json::object{{"raceId", id}});
  EXPECT_THAT(str(again.at("message")), HasSubstr("builder@1"));
}

TEST_F(CollabTest, AReviewerThatApprovesAtOnceStopsAfterOneIteration) {
  configure("printf '%s' " + shellQuote(stillBroken(1)) + " > calc.py\n", "echo 'Looks right to me. LGTM'\n");
  start();
  const std::string id = str(collab().at("raceId"));
  json::object done = finished(id);
  EXPECT_EQ(done.at("stopReason").as_string(), "approved");
  auto its = iterations(id);
  ASSERT_EQ(its.size(), 1u);
  EXPECT_EQ(its[0].at("approved").as_bool(), true);
  EXPECT_EQ(its[0].at("next").as_string(), "stop");
  EXPECT_EQ(client().notifications("hydra/agentStarted").size(), 2u) << "one build, one review";
}

// A round that reaches the target but changed a protected file is flagged:
// it never ends the loop on its score, so the reviewer sees it.
TEST_F(CollabTest, AFlaggedRoundThatReachesTheTargetIsStillReviewed) {
  std::string scoring = TestRepo::scoring();
  scoring.insert(scoring.size() - 1, "protected_paths = [\"test_calc.py\"]\n");
  repo_.writeConfig(scoring +
                    agent("bob", script("builder.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) +
                                                          " > calc.py\necho '# touched' >> test_calc.py\n")) +
                    agent("rita", script("reviewer.sh", "echo 'The test file was changed. LGTM'\n")));
  start();
  const std::string id = str(collab().at("raceId"));
  json::object done = finished(id);
  EXPECT_EQ(done.at("stopReason").as_string(), "approved") << json::serialize(done);
  auto its = iterations(id);
  ASSERT_EQ(its.size(), 1u);
  EXPECT_THAT(json::serialize(its[0]), HasSubstr("changed protected files: test_calc.py"));
  EXPECT_TRUE(its[0].contains("review")) << json::serialize(its[0]);
  EXPECT_EQ(client().notifications("hydra/agentStarted").size(), 2u) << "the reviewer ran";
}

TEST_F(CollabTest, MaxIterationsStopsALoopThatNeverConverges) {
  configure("printf '%s' \"# attempt $HYDRA_ITERATION\n$(git show HEAD:calc.py)\" > calc.py\n",
            "echo 'add() is still wrong'\n", "[collaboration]\nmax_iterations = 3\n");
  start();
  const std::string id = str(collab().at("raceId"));
  json::object done = finished(id);
  EXPECT_EQ(done.at("status").as_string(), "completed");
  EXPECT_EQ(done.at("stopReason").as_string(), "maxIterations");
  auto its = iterations(id);
  ASSERT_EQ(its.size(), 3u);
  EXPECT_EQ(its[0].at("next").as_string(), "refine");
  EXPECT_EQ(its[1].at("next").as_string(), "refine");
  EXPECT_EQ(its[2].at("next").as_string(), "stop");
  EXPECT_TRUE(its[1].contains("review"));
  EXPECT_FALSE(its[2].contains("review"));
  // Ties go to the later iteration: all three score the same.
  EXPECT_EQ(done.at("rankings").at(0).at("agentId").as_string(), "builder@3");
}

TEST_F(CollabTest, ABuilderThatGetsWorseKeepsTheBestIterationAsTheResult) {
  // Iteration 1 fixes add() with a long comment (a big diff keeps it below
  // 100); iteration 2 breaks sub().
  std::string comment;
  for (int i = 0; i < 150; ++i) comment += "# note " + std::to_string(i) + "\n";
  configure("if [ \"$HYDRA_ITERATION\" = 1 ]; then printf '%s' " + shellQuote(comment + TestRepo::fixedCalc()) +
                " > calc.py; else printf '%s\\n' 'def add(a, b):' '    return a + b' 'def sub(a, b):' '    return 0' "
                "> calc.py; fi\n",
            "echo 'Trim the comment.'\n", "[collaboration]\nmax_iterations = 2\nuntil_score = 100\n");
  start();
  const std::string id = str(collab().at("raceId"));
  json::object done = finished(id);
  auto its = iterations(id);
  ASSERT_EQ(its.size(), 2u);
  EXPECT_GT(its[0].at("score").at("total").as_double(), its[1].at("score").at("total").as_double());
  EXPECT_EQ(done.at("winner").as_string(), "builder@1");
  // With no agent named, the merge takes the best iteration, not the branch's tip.
  json::object merged = client().call("hydra/merge", json::object{{"raceId", id}}).as_object();
  EXPECT_EQ(merged.at("agentId").as_string(), "builder@1");
  EXPECT_THAT(repo_.read("calc.py"), HasSubstr("# note 149"));
}

TEST_F(CollabTest, CancelMidReviewLeavesNothingRunningAndKeepsTheIteration) {
  const fs::path pids = scratch("pids");
  configure("printf '%s' " + shellQuote(stillBroken(1)) + " > calc.py\n",
            waitingReviewer(pids));
  start();
  const std::string id = str(collab().at("raceId"));
  auto [reviewerPid, sleeperPid] = pidsIn(pids);
  ASSERT_GT(sleeperPid, 0);

  EXPECT_EQ(client().call("hydra/cancel", json::object{{"raceId", id}}).at("cancelled"), true);
  json::object done = finished(id);
  EXPECT_EQ(done.at("status").as_string(), "cancelled");
  EXPECT_EQ(done.at("stopReason").as_string(), "cancelled");
  EXPECT_TRUE(eventually([&] { return processGone(reviewerPid) && processGone(sleeperPid); }, 10s))
      << "the reviewer or its child outlived the cancel";
  auto its = iterations(id);
  ASSERT_EQ(its.size(), 1u) << "the iteration under review is kept";
  EXPECT_EQ(its[0].at("stopReason").as_string(), "cancelled");
  EXPECT_EQ(done.at("winner").as_string(), "builder@1") << "a cancelled collaboration's iterations can still be merged";
  json::object record = repo_.raceRecord(id);
  EXPECT_EQ(record.at("status").as_string(), "cancelled");
  for (const auto& a : record.at("agents").as_array()) EXPECT_NE(a.at("status").as_string(), "running");
  // The reviewer's throwaway checkout is gone.
  EXPECT_TRUE(eventually([&] { return !fs::exists(str(record.at("agents").at(1).at("worktree"))); }, 10s));
}

TEST_F(CollabTest, HydraKilledMidLoopIsRecoveredAsInterrupted) {
  const fs::path pids = scratch("pids");
  configure("printf '%s' " + shellQuote(stillBroken(1)) + " > calc.py\n",
            waitingReviewer(pids));
  start();
  const std::string id = str(collab().at("raceId"));
  auto [reviewerPid, sleeperPid] = pidsIn(pids);
  ASSERT_GT(sleeperPid, 0);
  // Killed once the record names the reviewer's process group (the recorder
  // writes it a moment after the reviewer starts): only then can a later
  // hydra end what it left.
  ASSERT_TRUE(eventually([&] { return repo_.raceRecord(id).at("agents").at(1).as_object().contains("processGroup"); }, 10s));

  ::kill(client().process().pid(), SIGKILL);
  ASSERT_TRUE(client().process().waitExit(10s));
  EXPECT_EQ(repo_.raceRecord(id).at("status").as_string(), "running") << "nothing could mark it";

  // The next hydra shows it interrupted, iteration 1 kept; status only reads.
  json::value status = hydraJson("status " + id + " --json");
  const json::object& summary = status.at("races").at(0).as_object();
  EXPECT_EQ(summary.at("state").as_string(), "interrupted");
  EXPECT_EQ(summary.at("kind").as_string(), "collab");
  ASSERT_EQ(summary.at("iterations").as_array().size(), 1u);
  EXPECT_TRUE(summary.at("iterations").at(0).as_object().contains("score"));
  EXPECT_EQ(repo_.raceRecord(id).at("status").as_string(), "running") << "status wrote the record";
  // The next command that starts or cleans up work records it and ends its agents' processes.
  hydra("cleanup");
  EXPECT_EQ(repo_.raceRecord(id).at("status").as_string(), "interrupted");
  EXPECT_TRUE(eventually([&] { return processGone(reviewerPid) && processGone(sleeperPid); }, 10s))
      << "the reviewer outlived hydra";
}

// A hostile reviewer, unconfined: it moves the user's branch through the refs
// its checkout shares with the repository. hydra puts the branch back, charges
// the reviewer with the escape, and the loop ends there: nothing it touched
// reaches the builder.
TEST_F(CollabTest, AReviewerThatEscapesEndsTheLoopAndItsChangeIsPutBack) {
  const std::string mainBefore = repo_.git("rev-parse refs/heads/main");
  configure("printf '%s' " + shellQuote(stillBroken(1)) + " > calc.py\n",
            "git update-ref refs/heads/main HEAD\necho 'All good, LGTM'\n");
  start();
  const std::string id = str(collab().at("raceId"));
  json::object done = finished(id);
  EXPECT_EQ(done.at("stopReason").as_string(), "reviewerFailed");
  EXPECT_EQ(repo_.git("rev-parse refs/heads/main"), mainBefore) << "the moved branch was put back";
  json::object reviewer;
  for (const auto& m : client().notifications("hydra/agentFinished")) {
    if (m.at("params").at("agentId").as_string() == "reviewer") reviewer = m.at("params").as_object();
  }
  ASSERT_TRUE(reviewer.contains("escapes")) << json::serialize(reviewer);
  EXPECT_THAT(str(reviewer.at("escapes").at(0)), HasSubstr("refs/heads/main"));
  auto its = iterations(id);
  ASSERT_EQ(its.size(), 1u);
  EXPECT_FALSE(its[0].at("approved").as_bool()) << "an escaping reviewer's approval counts for nothing";
  EXPECT_EQ(client().notifications("hydra/agentStarted").size(), 2u) << "the builder never ran again";
}

// The same flow from the terminal: live progress, the table, --json, and the
// review commands on an iteration.
TEST_F(CollabTest, TheTerminalRunsACollaborationAndAddressesItsIterations) {
  configure("case \"$HYDRA_TASK\" in\n"
            "  *'add() subtracts'*) printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) + " > calc.py ;;\n"
            "  *) printf '%s' " + shellQuote(stillBroken(1)) + " > calc.py ;;\n"
            "esac\n",
            "echo 'add() subtracts'\n", "[collaboration]\nbuilder = \"bob\"\nreviewer = \"rita\"\n");
  const std::string out = hydra("collab 'Fix add() in calc.py'");
  EXPECT_THAT(out, HasSubstr("bob builds, rita reviews"));
  EXPECT_THAT(out, HasSubstr("iteration 1: bob building..."));
  EXPECT_THAT(out, HasSubstr("iteration 1: rita reviewing..."));
  EXPECT_THAT(out, HasSubstr("iteration 2: bob refining..."));
  EXPECT_THAT(out, HasSubstr("review: \"add() subtracts\""));
  EXPECT_THAT(out, HasSubstr("stopping: an unflagged iteration reached the target score"));
  EXPECT_THAT(out, HasSubstr("▶ builder@2"));
  EXPECT_THAT(out, HasSubstr("Merge it: hydra merge "));

  json::value last = hydraJson("status --json");
  const std::string id = str(last.at("races").at(0).at("raceId"));
  EXPECT_THAT(hydra("diff " + id + " builder@1 --no-pager"), HasSubstr("+# attempt 1"));
  EXPECT_THAT(hydra("diff builder@2 --stat"), HasSubstr("calc.py"));
  EXPECT_THAT(hydra("scores"), HasSubstr("Collaboration Results"));
  EXPECT_EQ(hydra("log " + id + " reviewer"), "add() subtracts");
  const std::string status = hydra("status " + id);
  EXPECT_THAT(status, HasSubstr("collaboration: bob builds, rita reviews, 2 of at most 3 iteration(s); stopped because an unflagged iteration reached the target score"));
  EXPECT_THAT(status, HasSubstr("builder@1"));
  EXPECT_THAT(status, HasSubstr("\"add() subtracts\""));

  json::value record = hydraJson("collab 'Fix add() in calc.py' --max-iterations 1 --json");
  EXPECT_EQ(record.at("race").at("kind").as_string(), "collab");
  ASSERT_EQ(record.at("race").at("iterations").as_array().size(), 1u);
  EXPECT_EQ(record.at("race").at("iterations").at(0).at("stopReason").as_string(), "maxIterations");
  EXPECT_TRUE(record.at("race").at("iterations").at(0).at("score").at("total").is_number());

  EXPECT_THAT(hydra("merge " + id + " builder@2"), HasSubstr("fast-forward"));
  EXPECT_EQ(repo_.read("calc.py"), TestRepo::fixedCalc() + "\n");
}

TEST_F(CollabTest, AgentsNameTheDefaultBuilderAndReviewerAndCollabUsesThem) {
  configure("printf '%s' " + shellQuote(stillBroken(1)) + " > calc.py\n", "echo LGTM\n",
            "[collaboration]\nbuilder = \"bob\"\nreviewer = \"rita\"\n");
  start();
  json::object agents = client().call("hydra/agents", json::object{}).as_object();
  EXPECT_EQ(agents.at("collaboration"), (json::object{{"builder", "bob"}, {"reviewer", "rita"}}));
  json::object started = client().call("hydra/collab", json::object{{"task", "Fix add() in calc.py"}}).as_object();
  EXPECT_EQ(started.at("agents").at(0).at("agent").as_string(), "bob");
  EXPECT_EQ(started.at("agents").at(1).at("agent").as_string(), "rita");
  EXPECT_EQ(finished(str(started.at("raceId"))).at("stopReason").as_string(), "approved");
}

TEST_F(CollabTest, AutoMergeTakesTheBestIterationUnderTheRacesRules) {
  // TestRepo::scoring() is a [scoring] table: auto_merge goes into it.
  repo_.writeConfig(TestRepo::scoring().substr(0, TestRepo::scoring().size() - 1) + "auto_merge = true\n\n" +
                    agent("bob", script("builder.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) +
                                                          " > calc.py\n")) +
                    agent("rita", script("reviewer.sh", "echo 'never asked'\n")));
  start();
  const std::string id = str(collab().at("raceId"));
  json::object done = finished(id);
  EXPECT_EQ(done.at("stopReason").as_string(), "untilScore");
  EXPECT_EQ(done.at("autoMergeEnabled").as_bool(), true);
  ASSERT_TRUE(done.contains("autoMerge")) << json::serialize(done);
  EXPECT_EQ(done.at("autoMerge").at("agentId").as_string(), "builder@1");
  EXPECT_EQ(done.at("autoMerge").at("outcome").as_string(), "fastForward");
  EXPECT_EQ(repo_.read("calc.py"), TestRepo::fixedCalc() + "\n");
  EXPECT_EQ(repo_.raceRecord(id).at("merged").at("agentId").as_string(), "builder@1");
}

TEST_F(CollabTest, RefusedRequestsSayWhyAndLeaveNothingBehind) {
  configure("true\n", "echo LGTM\n");
  start();
  json::object noReviewer =
      client().callError("hydra/collab", json::object{{"task", "x"}, {"builder", "bob"}});
  EXPECT_EQ(noReviewer.at("code").as_int64(), -32602);
  EXPECT_THAT(str(noReviewer.at("message")), HasSubstr("no reviewer given"));
  json::object unknown =
      client().callError("hydra/collab", json::object{{"task", "x"}, {"builder", "bobb"}, {"reviewer", "rita"}});
  EXPECT_EQ(unknown.at("code").as_int64(), -32012);
  EXPECT_EQ(unknown.at("data").at("suggestion").as_string(), "bob");
  json::object zero = client().callError(
      "hydra/collab", json::object{{"task", "x"}, {"builder", "bob"}, {"reviewer", "rita"}, {"maxIterations", 0}});
  EXPECT_EQ(zero.at("code").as_int64(), -32602);
  EXPECT_TRUE(client().call("hydra/races", json::object{}).at("races").as_array().empty());
}

}  // namespace
}  // namespace hydra::test
