// The evaluation session driven directly, as hydra serve and hydra eval run
// drive it: eval sets run on a real repository by scripted agents (real
// processes), their sample races' events handed on from the workspace's bus,
// the typed events' JSON as the wire carries it, the refusal of a report
// still being written, cancel, report lookup, and a set made from a race.

#include "core/eval/session.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include "core/eval/init_set.h"
#include "core/eval/report_lookup.h"
#include "core/workspace/errors.h"
#include "hydra/version.h"
#include "tests/core/workspace/workspace_fixture.h"

namespace hydra::core::eval {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::scripted;

class EvalSessionTest : public testing::WorkspaceTestBase {
 protected:
  // Agents: "fixer" writes the answer the hidden check wants, "idle" changes
  // nothing, "slow" waits long enough to be cancelled.
  Workspace& openWithAgents() {
    return open({scripted("fixer", {"write", "answer.txt", "fixed"}), scripted("idle", {"say", "looked"}),
                 scripted("slow", {"sleep", "300"})});
  }

  // An eval set beside the repository: one case, verified by a hidden script.
  fs::path evalSet(const std::vector<std::string>& agents, int samples) {
    const fs::path dir = outside("evals");
    fs::create_directories(dir / "hidden");
    testing::writeFile(dir / "hidden" / "check.sh", "grep -qx fixed answer.txt\n");
    testing::writeFile(dir / "set.toml", "[eval]\nname = \"answers\"\nagents = " + testing::tomlArray(agents) +
                                             "\nsamples = " + std::to_string(samples) +
                                             "\npass_k = [1]\n\n[[cases]]\nid = \"answer\"\n"
                                             "task = \"Write the answer\"\nverify_command = \"sh hidden/check.sh\"\n"
                                             "hidden_files = [\"hidden/check.sh\"]\n");
    return dir / "set.toml";
  }

  RunRequest request(const fs::path& set, std::optional<fs::path> out = std::nullopt) {
    return RunRequest{set, {}, std::nullopt, {}, std::move(out), std::nullopt, kVersion, std::nullopt};
  }

  // The session, fed every event of the workspace's bus as a front end does.
  EvalSession& session() {
    if (!session_) {
      session_ = std::make_unique<EvalSession>(io_, *ws_);
      subscription_ = ws_->bus().subscribe(SubscriptionOptions{.onReady = [this] {
        boost::asio::post(io_, [this] {
          for (auto& event : subscription_->drain()) {
            if (session_->handle(event)) ++sampleEvents_;
          }
        });
      }});
    }
    return *session_;
  }

  // Starts a prepared evaluation, keeping everything it tells.
  EvalStarted start(std::shared_ptr<EvalRunner> runner) {
    std::optional<EvalStarted> started;
    EvalSession::Listener listener;
    listener.started = [&started](const EvalStarted& e) { started = e; };
    listener.sample = [this](const EvalSampleDone& e) { samples_.push_back(e); };
    listener.finished = [this](const EvalFinished& e) { finished_.push_back(e); };
    session().start(std::move(runner), std::move(listener));
    EXPECT_TRUE(started);
    return started.value_or(EvalStarted{});
  }

  std::vector<EvalSampleDone> samples_;
  std::vector<EvalFinished> finished_;
  int sampleEvents_ = 0;
  std::unique_ptr<EvalSession> session_;
  std::shared_ptr<Subscription> subscription_;

  void TearDown() override {
    subscription_.reset();
    session_.reset();
  }
};

TEST_F(EvalSessionTest, AStartTellsWhatRunsThenEverySampleThenTheEndAndTheReportIsFoundAgain) {
  openWithAgents();
  auto runner = session().prepare(request(evalSet({"fixer", "idle"}, 2)));
  const EvalStarted started = start(runner);
  const std::string id = started.evalId;
  EXPECT_EQ(id, runner->options().out.stem().string());
  EXPECT_EQ(runner->options().out.parent_path(), repo_.root() / ".hydra" / "evals");
  EXPECT_EQ(json::serialize(toJson(started)),
            json::serialize(json::object{{"evalId", id},
                                         {"name", "answers"},
                                         {"report", runner->options().out.string()},
                                         {"cases", 1},
                                         {"agents", json::array{"fixer", "idle"}},
                                         {"samples", 2},
                                         {"passK", json::array{1}},
                                         {"total", 4},
                                         {"done", 0}}));

  ASSERT_TRUE(runUntil([&] { return !finished_.empty(); }, 120s));
  ASSERT_EQ(samples_.size(), 4u);
  int solved = 0;
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    const EvalSampleDone& s = samples_[i];
    solved += s.sample.solved ? 1 : 0;
    EXPECT_EQ(s.sample.solved, s.sample.agent == "fixer") << s.sample.agent;
    EXPECT_EQ(s.progress.done, static_cast<int>(i) + 1);
    EXPECT_EQ(s.progress.total, 4);
    EXPECT_EQ(s.progress.solved, solved);
    EXPECT_EQ(json::serialize(toJson(s)), json::serialize(json::object{{"evalId", id},
                                                                        {"done", s.progress.done},
                                                                        {"total", 4},
                                                                        {"solved", solved},
                                                                        {"sample", json::value_from(s.sample)}}));
  }
  // Each sample race started and finished without reaching the front end as a race.
  EXPECT_GE(sampleEvents_, 8);

  ASSERT_EQ(finished_.size(), 1u);
  const EvalFinished& end = finished_.front();
  EXPECT_EQ(end.status, EvalStatus::Completed);
  EXPECT_FALSE(end.recordIncomplete);
  EXPECT_EQ(json::serialize(toJson(end)),
            json::serialize(json::object{{"evalId", id},
                                         {"status", "completed"},
                                         {"report", runner->options().out.string()},
                                         {"done", 4},
                                         {"total", 4},
                                         {"solved", 2}}));
  EXPECT_EQ(end.progress.line(), "4/4 samples · 2 solved · $0.0000");
  EXPECT_EQ(end.progress.percentage(), 100);

  // Finished, it is still the session's: its report, and no more to cancel.
  EXPECT_EQ(session().reportOf(id), runner->options().out);
  EXPECT_FALSE(session().cancel(id));
  // With no path, the newest report on disk: this one, rendered when asked.
  FoundReport found = findReport(repo_.root(), std::nullopt, "markdown");
  EXPECT_EQ(found.path, runner->options().out);
  EXPECT_EQ(found.report.samples.size(), 4u);
  ASSERT_TRUE(found.text);
  EXPECT_EQ(*found.text, renderMarkdown(found.report));
  EXPECT_EQ(toJson(found).at("text").as_string(), *found.text);
  // A path relative to the repository root; json adds no text.
  const fs::path relative = fs::relative(found.path, repo_.root());
  FoundReport again = findReport(repo_.root(), relative, "json");
  EXPECT_EQ(again.path, found.path);
  EXPECT_FALSE(toJson(again).as_object().contains("text"));
}

TEST_F(EvalSessionTest, AReportStillBeingWrittenIsRefusedAndCancelEndsTheRunKeepingItsReport) {
  openWithAgents();
  const fs::path set = evalSet({"slow"}, 1);
  const fs::path out = outside("slow-report.json");
  auto runner = session().prepare(request(set, out));
  const std::string id = start(runner).evalId;
  EXPECT_EQ(id, "slow-report");

  // The same report again while the first still writes it: refused, naming it.
  auto again = session().prepare(request(set, out));
  try {
    start(again);
    ADD_FAILURE() << "a second evaluation of the same report started";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.kind(), WorkspaceError::Kind::InvalidRequest);
    EXPECT_EQ(e.data().at("evalId").as_string(), id);
    EXPECT_NE(std::string(e.what()).find("is already writing " + out.string()), std::string::npos) << e.what();
  }

  EXPECT_TRUE(session().cancel(id));
  ASSERT_TRUE(runUntil([&] { return !finished_.empty(); }, 60s));
  ASSERT_EQ(finished_.size(), 1u);
  EXPECT_EQ(finished_.front().status, EvalStatus::Cancelled);
  EXPECT_EQ(toJson(finished_.front()).at("status").as_string(), "cancelled");
  EXPECT_TRUE(samples_.empty());
  EXPECT_FALSE(session().cancel(id));
  EXPECT_TRUE(fs::exists(out));
  EXPECT_EQ(findReport(repo_.root(), out, "json").report.samples.size(), 0u);

  // Ended, the same report may be written again.
  auto resumed = session().prepare(request(set, out));
  EXPECT_NO_THROW(start(resumed));
  EXPECT_TRUE(session().cancel(id));
  ASSERT_TRUE(runUntil([&] { return finished_.size() == 2; }, 60s));
}

TEST_F(EvalSessionTest, UnknownEvaluationsAndMissingOrBrokenReportsAreClearErrors) {
  openWithAgents();
  for (auto call : {std::function<void()>([&] { session().cancel("nope"); }),
                    std::function<void()>([&] { session().reportOf("nope"); })}) {
    try {
      call();
      ADD_FAILURE() << "an unknown evaluation was found";
    } catch (const WorkspaceError& e) {
      EXPECT_EQ(e.kind(), WorkspaceError::Kind::InvalidRequest);
      EXPECT_EQ(std::string(e.what()), "no evaluation 'nope' in this session");
      EXPECT_EQ(e.data().at("evalId").as_string(), "nope");
    }
  }
  try {
    findReport(repo_.root(), std::nullopt, "json");
    ADD_FAILURE() << "a report was found where there is none";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.kind(), WorkspaceError::Kind::InvalidRequest);
    EXPECT_NE(std::string(e.what()).find("no eval report yet in"), std::string::npos) << e.what();
    EXPECT_TRUE(e.data().empty());
  }
  const fs::path broken = outside("broken.json");
  testing::writeFile(broken, "{\"schema\": \"something else\"}");
  try {
    findReport(repo_.root(), broken, "json");
    ADD_FAILURE() << "a broken report was read";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.data().at("path").as_string(), broken.string());
  }
  // A broken set is the set's error, with its place.
  const fs::path set = outside("bad-set.toml");
  testing::writeFile(set, "[eval]\nname = \"x\"\nsampels = 2\n");
  EXPECT_THROW(session().prepare(request(set)), ConfigError);
}

TEST_F(EvalSessionTest, ASetFromARaceTakesTheAgentsNewTestsAsHiddenFilesBesideIt) {
  Workspace& ws = open({scripted("tester", {"write", "tests/test_answer.sh", "grep -qx fixed answer.txt", "write",
                                            "answer.txt", "fixed"})},
                       4, "\n[scoring]\ntest_command = \"true\"\n");
  const RaceRecord race = runRace({"tester"}, "Write the answer and its test");
  ASSERT_EQ(agentOf(race, "tester").status, AgentStatus::Completed);

  InitRequest init;
  init.fromRace = race.id;
  init.agent = "tester";
  init.path = outside("from-race") / "eval.toml";
  const InitResult result = initSet(ws, init);
  EXPECT_EQ(result.path, *init.path);
  ASSERT_TRUE(result.fromRace);
  EXPECT_EQ(result.fromRace->evalCase.hiddenFiles, std::vector<std::string>{"tests/test_answer.sh"});
  EXPECT_EQ(result.fromRace->evalCase.baseCommit, race.baseCommit);
  EXPECT_EQ(result.fromRace->agents, std::vector<std::string>{"tester"});
  EXPECT_EQ(testing::readFile(init.path->parent_path() / "tests" / "test_answer.sh"), "grep -qx fixed answer.txt\n");
  // It reads back as a set of that one case, its name from the task.
  EXPECT_EQ(result.set.name, "write-the-answer-and-its-test");
  ASSERT_EQ(result.set.cases.size(), 1u);
  EXPECT_EQ(result.set.cases.front().hiddenFiles, std::vector<std::string>{"tests/test_answer.sh"});
  EXPECT_EQ(result.set.cases.front().verifyCommand, "true");

  // Made again, it refuses to replace what is there unless forced.
  try {
    initSet(ws, init);
    ADD_FAILURE() << "an existing set was replaced";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.kind(), WorkspaceError::Kind::InvalidRequest);
    EXPECT_NE(std::string(e.what()).find("exists; pass --force"), std::string::npos) << e.what();
  }
  init.force = true;
  EXPECT_NO_THROW(initSet(ws, init));

  // An agent the race does not have is named in the refusal.
  init.agent = "nobody";
  try {
    initSet(ws, init);
    ADD_FAILURE() << "a set was made from an agent the race does not have";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(std::string(e.what()), "race " + race.id + " has no agent 'nobody'");
  }
}

}  // namespace
}  // namespace hydra::core::eval
