// The hostile agents of tests/fixtures/hostile run unconfined (sandbox off,
// or bubblewrap unavailable): what they do to the main repository gets
// through, and the guards must say what it was and put the refs back.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/guard/checkout.h"
#include "core/guard/refs.h"
#include "core/guard/worktree_link.h"
#include "core/process/reaper.h"
#include "tests/support/race_repo.h"

namespace hydra::core::guard {
namespace {

using testing::Confinement;
using ::testing::Contains;
using ::testing::Field;
using testing::FixtureOptions;
using testing::FixtureRun;
using ::testing::IsEmpty;
using testing::RaceRepo;
using ::testing::UnorderedElementsAre;
using namespace std::chrono_literals;

std::string refsByGit(const RaceRepo& repo) {
  return repo.git("for-each-ref --format='%(refname) %(objectname) %(symref)'") + "\nHEAD " +
         repo.git("symbolic-ref HEAD");
}

std::vector<std::string> details(const std::vector<CheckoutChange>& changes) {
  std::vector<std::string> out;
  for (const auto& change : changes) out.push_back(change.detail);
  return out;
}

class EscapeTest : public ::testing::Test {
 protected:
  FixtureRun runUnconfined(const std::string& script, FixtureOptions options = {}) {
    const auto reaper = RunReaper::create();
    options.confinement = Confinement::None;
    options.reaper = reaper;
    FixtureRun run = testing::runFixture(script, repo, options);
    reaper->kill(500ms);
    EXPECT_EQ(run.result->spawnError, "");
    EXPECT_EQ(run.result->exitCode, 0) << run.transcript();
    return run;
  }

  std::set<std::string> ownBranch() const { return {"refs/heads/" + repo.agent().branch}; }

  RaceRepo repo;
};

TEST_F(EscapeTest, MovedMainAndOtherRefsAreReportedAndPutBack) {
  const std::string byGitBefore = refsByGit(repo);
  const std::string main = repo.git("rev-parse main");
  const RefSnapshot atStart = snapshotRefs(repo.root());
  const CheckoutSnapshot checkoutAtStart = snapshotCheckout(repo.root());

  const FixtureRun run = runUnconfined("move_refs.sh");
  const std::string hijack = repo.git("rev-parse " + repo.agent().branch);
  ASSERT_NE(hijack, main) << "the agent committed on its own branch\n" << run.transcript();
  ASSERT_EQ(repo.git("rev-parse refs/heads/main"), hijack) << run.transcript();

  // The agent's own branch moved too, and that is allowed.
  const auto changes = compareRefs(atStart, snapshotRefs(repo.root()), ownBranch());
  EXPECT_THAT(
      changes,
      UnorderedElementsAre(
          RefChange{"HEAD", RefChange::Kind::Moved, RefTarget{"", "refs/heads/main"},
                    RefTarget{"", "refs/heads/planted"}},
          RefChange{"refs/heads/main", RefChange::Kind::Moved, RefTarget{main, ""},
                    RefTarget{hijack, ""}},
          RefChange{"refs/heads/planted", RefChange::Kind::Created, std::nullopt,
                    RefTarget{hijack, ""}},
          RefChange{"refs/tags/v1", RefChange::Kind::Deleted, RefTarget{main, ""}, std::nullopt}));
  // Seen from the checkout, HEAD moved.
  EXPECT_THAT(compareCheckout(checkoutAtStart, snapshotCheckout(repo.root())),
              Contains(Field(&CheckoutChange::kind, CheckoutChange::Kind::Head)));

  const RestoreReport report = restoreRefs(repo.root(), changes);
  EXPECT_THAT(report.failed, IsEmpty());
  EXPECT_EQ(report.restored.size(), 4u);
  EXPECT_THAT(compareRefs(atStart, snapshotRefs(repo.root()), ownBranch()), IsEmpty());
  // Byte for byte as the git CLI sees it, but for the agent's own branch.
  std::string byGitAfter = refsByGit(repo);
  const std::string ownLine = "refs/heads/" + repo.agent().branch + " ";
  EXPECT_NE(byGitAfter.find(ownLine + hijack), std::string::npos);
  byGitAfter.replace(byGitAfter.find(ownLine + hijack), (ownLine + hijack).size(), ownLine + main);
  EXPECT_EQ(byGitAfter, byGitBefore);
  EXPECT_THAT(compareCheckout(checkoutAtStart, snapshotCheckout(repo.root())), IsEmpty());
}

TEST_F(EscapeTest, WritesIntoTheCheckoutAreReported) {
  const CheckoutSnapshot atStart = snapshotCheckout(repo.root());
  runUnconfined("write_checkout_absolute.sh");
  runUnconfined("write_checkout_relative.sh");
  const auto changes = compareCheckout(atStart, snapshotCheckout(repo.root()));
  EXPECT_THAT(details(changes),
              UnorderedElementsAre("the index (staged changes) changed",
                                   "ESCAPE_absolute.txt: was unchanged, now added to the index",
                                   "ESCAPE_relative.txt: was unchanged, now untracked",
                                   "README.md: was unchanged, now modified in the index",
                                   "hydra.toml: was unchanged, now modified in the index",
                                   "notes.txt: was untracked, now added to the index",
                                   "src/a.txt: was modified, now modified in the index, modified"));
}

TEST_F(EscapeTest, WorkingInPwdStaysInTheWorktreeWhenHydraSetsIt) {
  // hydra itself runs in the user's checkout.
  const char* oldPwd = std::getenv("PWD");
  const std::string saved = oldPwd != nullptr ? oldPwd : "";
  ::setenv("PWD", repo.root().c_str(), 1);
  const CheckoutSnapshot atStart = snapshotCheckout(repo.root());
  const FixtureRun run = runUnconfined("write_checkout_pwd.sh");
  EXPECT_THAT(run.out, Contains("working in " + repo.agent().path.string()));
  EXPECT_THAT(compareCheckout(atStart, snapshotCheckout(repo.root())), IsEmpty());
  EXPECT_EQ(testing::readFile(repo.agent().path / "ESCAPE_pwd.txt"), "pwned\n");

  // Had hydra passed its own PWD on, as it once did, the agent would have
  // worked in the user's checkout: the guard reports it.
  FixtureOptions inherited;
  inherited.adjust = [&](ProcessSpec& spec) { spec.env["PWD"] = repo.root().string(); };
  runUnconfined("write_checkout_pwd.sh", inherited);
  EXPECT_THAT(details(compareCheckout(atStart, snapshotCheckout(repo.root()))),
              UnorderedElementsAre("ESCAPE_pwd.txt: was unchanged, now untracked",
                                   "src/b.txt: was unchanged, now modified"));
  ::setenv("PWD", saved.c_str(), 1);
}

TEST_F(EscapeTest, DeletedGitLinkIsDetectedAndWrittenBack) {
  const auto metadata = repo.gitMetadata(repo.agent());
  ASSERT_TRUE(worktreeLinkIntact(repo.agent().path, metadata));
  runUnconfined("delete_git_link.sh");
  EXPECT_FALSE(worktreeLinkIntact(repo.agent().path, metadata));
  restoreWorktreeLink(repo.agent().path, metadata);
  EXPECT_TRUE(worktreeLinkIntact(repo.agent().path, metadata));
  EXPECT_EQ(testing::TempRepo::gitIn(repo.agent().path, "rev-parse --abbrev-ref HEAD"),
            repo.agent().branch);
}

}  // namespace
}  // namespace hydra::core::guard
