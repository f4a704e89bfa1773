#include "core/collab/iterations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include "core/records/record.h"

namespace hydra::core::collab {
namespace {

TEST(IterationIdTest, NamesAndReadsBuilderAtN) {
  EXPECT_EQ(iterationId(2), "builder@2");
  EXPECT_EQ(parseIterationId("builder@1"), 1);
  EXPECT_EQ(parseIterationId("builder@12"), 12);
  for (const char* bad : {"builder", "builder@", "builder@0", "builder@01", "builder@-1", "builder@1x",
                          "reviewer@1", "builder@9999999", "x@1", "builder@ 1"}) {
    EXPECT_EQ(parseIterationId(bad), std::nullopt) << bad;
  }
}

IterationResult scored(int n, double total, std::string ineligible = "") {
  IterationResult it;
  it.iteration = n;
  it.commit = std::string(40, static_cast<char>('0' + n));
  scoring::AgentScore s;
  s.agentId = iterationId(n);
  s.total = total;
  s.diff = scoring::DiffStats{2, 1, 1};
  s.ineligible = std::move(ineligible);
  it.score = s;
  return it;
}

TEST(RankIterationsTest, TheBestWinsAndTiesGoToTheLaterIteration) {
  ScoringConfig config;
  config.autoMerge = true;
  auto scores = rankIterations("r", {scored(1, 70), scored(2, 91), scored(3, 91)}, {}, config);
  ASSERT_EQ(scores.rankings.size(), 3u);
  EXPECT_EQ(scores.rankings[0].agentId, "builder@3");
  EXPECT_EQ(scores.rankings[1].agentId, "builder@2");
  EXPECT_EQ(scores.rankings[2].agentId, "builder@1");
  EXPECT_EQ(scores.rankings[0].rank, 1);
  EXPECT_EQ(scores.rankings[2].rank, 3);
  EXPECT_EQ(scores.winner, "builder@3");
  EXPECT_TRUE(scores.autoMergeEligible);
  EXPECT_TRUE(scores.autoMergeEnabled);
  EXPECT_FALSE(scores.allFailed);
}

TEST(RankIterationsTest, AnIneligibleIterationNeverWinsAndAWorseOneStaysBehind) {
  ScoringConfig config;
  auto scores = rankIterations("r", {scored(1, 80), scored(2, 99, "escaped"), scored(3, 40)}, {}, config);
  EXPECT_EQ(scores.winner, "builder@1");
  EXPECT_EQ(scores.rankings.back().agentId, "builder@2");
  EXPECT_FALSE(scores.autoMergeEligible) << "80 is below auto_merge_minimum";
}

TEST(RankIterationsTest, NoWinnerWhenEvenTheBestIsBelowFailMaximumOrNothingWasScored) {
  ScoringConfig config;
  EXPECT_TRUE(rankIterations("r", {scored(1, 10)}, {}, config).allFailed);
  IterationResult unscored;
  unscored.iteration = 1;
  auto none = rankIterations("r", {unscored}, {}, config);
  EXPECT_TRUE(none.rankings.empty());
  EXPECT_EQ(none.winner, std::nullopt);
}

TEST(CollabRecordTest, IterationsAndSettingsSurviveTheRoundTrip) {
  RaceStarted started;
  started.raceId = "20261126-010000-abcd";
  started.kind = RunKind::Collab;
  started.collaboration = CollabSettings{"claude", "codex", 3, 85, "LGTM"};
  RaceRecord record = RaceRecord::started(started);
  IterationResult first = scored(1, 62.5);
  first.review = "add() subtracts";
  first.reviewStatus = AgentStatus::Completed;
  first.resumed = false;
  record.apply(IterationScored{started.raceId, scored(1, 62.5)});
  ASSERT_EQ(record.iterations.size(), 1u);
  EXPECT_EQ(record.iterations[0].review, std::nullopt);
  record.apply(IterationFinished{started.raceId, first, true});
  ASSERT_EQ(record.iterations.size(), 1u) << "the finished iteration replaces the scored one";
  IterationResult second = scored(2, 97);
  second.resumed = true;
  second.stopReason = "untilScore";
  record.apply(IterationFinished{started.raceId, second, false});
  RaceFinished finished;
  finished.raceId = started.raceId;
  finished.stopReason = "untilScore";
  record.apply(finished);

  RaceRecord back = boost::json::value_to<RaceRecord>(boost::json::value_from(record));
  EXPECT_EQ(back, record) << boost::json::serialize(boost::json::value_from(back)) << "\n"
                          << boost::json::serialize(boost::json::value_from(record));
  EXPECT_TRUE(back.isCollab());
  EXPECT_EQ(back.collaboration->reviewer, "codex");
  EXPECT_EQ(back.stopReason, "untilScore");
  ASSERT_EQ(back.iterations.size(), 2u);
  EXPECT_EQ(back.iterations[0].review, "add() subtracts");
  EXPECT_TRUE(back.iterations[1].resumed);
  EXPECT_EQ(back.findIteration(2)->score->total, 97);
  EXPECT_EQ(back.findIteration(3), nullptr);
}

TEST(CollabRecordTest, ARaceRecordHasNoIterations) {
  RaceStarted started;
  started.raceId = "20261126-010000-abcd";
  RaceRecord record = RaceRecord::started(started);
  boost::json::value json = boost::json::value_from(record);
  EXPECT_FALSE(json.as_object().contains("iterations"));
  EXPECT_FALSE(json.as_object().contains("collaboration"));
}

}  // namespace
}  // namespace hydra::core::collab
