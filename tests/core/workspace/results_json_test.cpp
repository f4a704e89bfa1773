// The JSON forms of the workspace's results, which the terminal's --json, the
// protocol's results (docs/protocol.md) and the editors read: written member
// for member as they always were, and read back to the same value.

#include "core/workspace/results.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

namespace hydra::core {
namespace {

namespace json = boost::json;

template <class T>
void expectRoundTrip(const T& x, const char* expected) {
  json::value written = json::value_from(x);
  EXPECT_EQ(json::serialize(written), expected);
  EXPECT_EQ(json::value_from(json::value_to<T>(json::parse(json::serialize(written)))), written);
}

TEST(ResultsJsonTest, AnAgentStateLeavesOutWhatItDoesNotHave) {
  AgentState idle;
  idle.agentId = "a1";
  idle.agent = "claude";
  idle.state = "queued";
  expectRoundTrip(idle, R"({"agentId":"a1","agent":"claude","state":"queued","elapsedMs":0,"branch":"","worktree":""})");

  AgentState done = idle;
  done.state = "completed";
  done.exitCode = 0;
  done.commit = "abc";
  done.warnings = {"denied"};
  done.stderrTail = "tail";
  done.deniedToolCalls = 2;
  done.rank = 1;
  done.total = 87.5;
  expectRoundTrip(done,
                  R"({"agentId":"a1","agent":"claude","state":"completed","elapsedMs":0,"exitCode":0,"branch":"",)"
                  R"("worktree":"","commit":"abc","warnings":["denied"],"stderrTail":"tail","deniedToolCalls":2,)"
                  R"("rank":1,"total":8.75E1})");
}

TEST(ResultsJsonTest, AnAgentInfoAlwaysSaysItsVersionEvenWhenUnknown) {
  AgentInfo info{"claude", "claude", "claude", true, false, std::nullopt, std::nullopt, "not found"};
  expectRoundTrip(info, R"({"name":"claude","adapter":"claude","binary":"claude","configured":true,)"
                        R"("available":false,"version":null,"problem":"not found"})");
}

TEST(ResultsJsonTest, FileContentsSayNullForTheSideThatIsMissing) {
  FileContents added{"src/new.cpp", std::nullopt, "int x;\n", false, "utf-8"};
  expectRoundTrip(added, R"({"path":"src/new.cpp","base":null,"agent":"int x;\n","binary":false,"encoding":"utf-8"})");
}

TEST(ResultsJsonTest, AMergeReportListsConcernsOnlyWhenThereAreAny) {
  MergeReport report;
  report.outcome = "fastForward";
  report.agentId = "a1";
  report.branch = "hydra/r/a1";
  report.targetBranch = "main";
  report.files = {"a.txt"};
  expectRoundTrip(report, R"({"outcome":"fastForward","agentId":"a1","branch":"hydra/r/a1","targetBranch":"main",)"
                          R"("dryRun":false,"files":["a.txt"],"conflicts":[],"cleanedUp":false})");
  report.concerns = {"a check failed"};
  EXPECT_EQ(json::value_from(report).as_object().at("concerns"), json::parse(R"(["a check failed"])"));
}

TEST(ResultsJsonTest, ABrokenResultIsRefusedNamingTheFieldsPath) {
  try {
    json::value_to<RacePage>(json::parse(R"({"races":[],"total":1,"nextOffset":"x"})"));
    FAIL() << "expected JsonFieldError";
  } catch (const JsonFieldError& e) {
    EXPECT_STREQ(e.what(), "nextOffset: expected integer, found string");
  }
  try {
    json::value_to<DiffResult>(json::parse(R"({"files":[{"path":"a","status":"added","additions":1}],"additions":1,"deletions":0})"));
    FAIL() << "expected JsonFieldError";
  } catch (const JsonFieldError& e) {
    EXPECT_STREQ(e.what(), "files[0].deletions: missing");
  }
  EXPECT_THROW(json::value_to<LogText>(json::parse(R"({"data":"x","offset":0,"totalSize":1})")), JsonFieldError);
}

}  // namespace
}  // namespace hydra::core
