// The race's guard over the main repository's refs, on a real repository
// whose refs the git CLI changes as an unconfined agent would.

#include "core/race/escape_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/git/git.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::TempRepo;

class EscapeGuardTest : public ::testing::Test {
 protected:
  EscapeGuardTest() {
    repo_.write("a.txt", "a\n");
    first_ = repo_.commit("first");
    repo_.write("a.txt", "b\n");
    second_ = repo_.commit("second");
    repo_.git("tag v1");
    repo_.git("branch hydra/agent-1");
  }

  git::LibGit2 libgit2_;
  TempRepo repo_;
  std::string first_, second_;
};

TEST_F(EscapeGuardTest, NothingChangedIsNoEscape) {
  EscapeGuard guard(repo_.root());
  guard.started("a");
  EXPECT_THAT(guard.finished("a").escapes, IsEmpty());
}

TEST_F(EscapeGuardTest, HydrasOwnBranchesMayMoveAndAppear) {
  EscapeGuard guard(repo_.root());
  guard.started("a");
  repo_.git("update-ref refs/heads/hydra/agent-1 " + first_);
  repo_.git("branch hydra/agent-2");
  EXPECT_THAT(guard.finished("a").escapes, IsEmpty());
}

TEST_F(EscapeGuardTest, AMovedBranchADeletedTagAndAPlantedRefArePutBackAndCharged) {
  EscapeGuard guard(repo_.root());
  guard.started("evil");
  repo_.git("update-ref refs/heads/main " + first_);
  repo_.git("update-ref -d refs/tags/v1");
  repo_.git("update-ref refs/heads/planted " + first_);
  auto escapes = guard.finished("evil").escapes;
  EXPECT_THAT(escapes, Contains(AllOf(HasSubstr("refs/heads/main"), HasSubstr("put back"))));
  EXPECT_THAT(escapes, Contains(HasSubstr("refs/tags/v1")));
  EXPECT_THAT(escapes, Contains(HasSubstr("refs/heads/planted")));
  EXPECT_EQ(repo_.git("rev-parse main"), second_);
  EXPECT_EQ(repo_.git("rev-parse v1"), second_);
  EXPECT_EQ(repo_.git("branch --list planted"), "");
}

TEST_F(EscapeGuardTest, EveryAgentRunningWhenItHappenedIsChargedAndNoOneElse) {
  EscapeGuard guard(repo_.root());
  guard.started("early");
  EXPECT_THAT(guard.finished("early").escapes, IsEmpty());
  guard.started("a");
  guard.started("b");
  repo_.git("symbolic-ref HEAD refs/heads/hydra/agent-1");
  auto a = guard.finished("a").escapes;
  EXPECT_THAT(a, ElementsAre(HasSubstr("HEAD")));
  EXPECT_EQ(repo_.git("symbolic-ref HEAD"), "refs/heads/main");
  // b was running too: charged when it ends, though the refs are back by then.
  EXPECT_THAT(guard.finished("b").escapes, ElementsAre(HasSubstr("HEAD")));
  // One that starts afterwards is not.
  guard.started("late");
  EXPECT_THAT(guard.finished("late").escapes, IsEmpty());
}

TEST_F(EscapeGuardTest, UnconfinedAChangeInTheCheckoutIsAWarningForWhoeverRanNotAnEscape) {
  EscapeGuard guard(repo_.root(), /*watchCheckout=*/true);
  guard.started("a");
  repo_.write("ESCAPE.txt", "pwned\n");
  repo_.write("a.txt", "changed\n");
  auto found = guard.finished("a");
  EXPECT_THAT(found.escapes, IsEmpty());
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_THAT(found.warnings[0], AllOf(HasSubstr("ESCAPE.txt"), HasSubstr("a.txt"), HasSubstr("cannot tell who")));
  // Told once: the next agent is not warned about the same change.
  guard.started("b");
  EXPECT_THAT(guard.finished("b").warnings, IsEmpty());
}

TEST_F(EscapeGuardTest, ConfinedTheCheckoutIsNotWatched) {
  EscapeGuard guard(repo_.root());
  guard.started("a");
  repo_.write("a.txt", "changed\n");
  EXPECT_THAT(guard.finished("a").warnings, IsEmpty());
}

}  // namespace
}  // namespace hydra::core
