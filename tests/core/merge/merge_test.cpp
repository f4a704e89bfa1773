#include "core/merge/merge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/git/git.h"
#include "core/util/owner.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::merge {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::readFile;
using testing::TempRepo;
using Reason = MergeRefused::Reason;

// Path -> new contents; nullopt deletes the file.
using Edits = std::map<std::string, std::optional<std::string>>;

std::string numberedLines(int count) {
  std::string text;
  for (int i = 1; i <= count; ++i) text += "note " + std::to_string(i) + "\n";
  return text;
}

std::string withLine(std::string text, int line, const std::string& replacement) {
  const std::string old = "note " + std::to_string(line) + "\n";
  text.replace(text.find(old), old.size(), replacement + "\n");
  return text;
}

// Everything an observer could see of a repository: the branch, the index
// file byte for byte, what `git status` says, and every file and directory
// below the root, .git included (so a MERGE_HEAD, a new loose object or a
// rewritten reflog all show).
struct Snapshot {
  std::string head;
  std::string index;
  std::string status;
  std::map<std::string, std::string> files;

  bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot(const TempRepo& repo) {
  Snapshot shot;
  shot.head = repo.git("rev-parse HEAD");
  shot.index = readFile(repo.root() / ".git" / "index");
  shot.status = repo.git("status --porcelain=v2 --branch --untracked-files=all");
  for (const auto& entry : fs::recursive_directory_iterator(repo.root())) {
    const std::string path = fs::relative(entry.path(), repo.root()).string();
    if (entry.is_symlink()) {
      shot.files[path] = "-> " + fs::read_symlink(entry.path()).string();
    } else if (entry.is_directory()) {
      shot.files[path + "/"] = "";
    } else {
      shot.files[path] = readFile(entry.path());
    }
  }
  return shot;
}

// Names what differs, so that a failure says more than "not equal".
std::vector<std::string> differences(const Snapshot& before, const Snapshot& after) {
  std::vector<std::string> diffs;
  if (before.head != after.head) diffs.push_back("HEAD " + before.head + " -> " + after.head);
  if (before.index != after.index) diffs.push_back(".git/index bytes");
  if (before.status != after.status) {
    diffs.push_back("status:\n" + before.status + "\n->\n" + after.status);
  }
  for (const auto& [path, content] : before.files) {
    const auto it = after.files.find(path);
    if (it == after.files.end()) {
      diffs.push_back("removed " + path);
    } else if (it->second != content) {
      diffs.push_back("changed " + path);
    }
  }
  for (const auto& [path, content] : after.files) {
    if (!before.files.contains(path)) diffs.push_back("added " + path);
  }
  return diffs;
}

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.isolateLibgit2();
    apply({{"notes.txt", numberedLines(10)}});
    repo_.commit("notes");
  }

  void apply(const Edits& edits) const {
    for (const auto& [path, content] : edits) {
      if (content) {
        repo_.write(path, *content);
      } else {
        fs::remove(repo_.root() / path);
      }
    }
  }

  // Commits `edits` on a new branch forked from `from`; HEAD returns to main.
  std::string commitOnBranch(const std::string& branch, const Edits& edits,
                             const std::string& from = "main") const {
    repo_.git("checkout -q -b " + branch + " " + from);
    apply(edits);
    const std::string id = repo_.commit("work on " + branch);
    repo_.git("checkout -q main");
    return id;
  }

  std::string commitOnMain(const Edits& edits) const {
    apply(edits);
    return repo_.commit("work on main");
  }

  // main and the agent's branch change different files.
  void divergeCleanly() const {
    commitOnBranch(kAgent, {{"src/a.txt", "alpha from the agent\n"},
                            {"notes.txt", withLine(numberedLines(10), 2, "agent's note")}});
    commitOnMain({{"src/b.txt", "beta from main\n"},
                  {"notes.txt", withLine(numberedLines(10), 9, "main's note")}});
  }

  // Both change the first line of src/a.txt; notes.txt alone would merge.
  void divergeWithConflict() const {
    commitOnBranch(kAgent, {{"src/a.txt", "alpha by the agent\n"},
                            {"notes.txt", withLine(numberedLines(10), 2, "agent's note")},
                            {"src/new.txt", "added by the agent\n"}});
    commitOnMain({{"src/a.txt", "alpha on main\n"},
                  {"notes.txt", withLine(numberedLines(10), 9, "main's note")}});
  }

  MergeResult merge(bool dryRun = false, const std::string& message = "") const {
    return mergeBranch(repo_.root(), MergeRequest{kAgent, dryRun, message, std::nullopt, "", false});
  }

  // Runs `attempt`, which must throw MergeRefused, and returns the exception.
  template <typename F>
  MergeRefused refusal(F attempt) const {
    try {
      attempt();
    } catch (const MergeRefused& refused) {
      return refused;
    }
    ADD_FAILURE() << "the merge was not refused";
    return MergeRefused(Reason::MergeInProgress, "not refused");
  }

  std::string content(const std::string& path) const { return readFile(repo_.root() / path); }

  static constexpr const char* kAgent = "hydra/claude-20261121-101500";

  git::LibGit2 libgit2_;
  TempRepo repo_;
};

TEST_F(MergeTest, OutcomeAndReasonNamesAreTheWireNames) {
  EXPECT_EQ(toString(MergeOutcome::FastForward), "fastForward");
  EXPECT_EQ(toString(MergeOutcome::Merged), "merged");
  EXPECT_EQ(toString(MergeOutcome::Conflict), "conflict");
  EXPECT_EQ(toString(MergeOutcome::UpToDate), "upToDate");
  EXPECT_EQ(toString(Reason::MergeInProgress), "mergeInProgress");
  EXPECT_EQ(toString(Reason::DetachedHead), "detachedHead");
  EXPECT_EQ(toString(Reason::DirtyWorkingTree), "dirtyWorkingTree");
  EXPECT_EQ(toString(Reason::UnbornHead), "unbornHead");
}

TEST_F(MergeTest, FastForwardMovesTheBranchAndChecksOutItsFiles) {
  const std::string agent = commitOnBranch(
      kAgent, {{"src/a.txt", "alpha 2\n"}, {"src/b.txt", std::nullopt}, {"src/c.txt", "gamma\n"}});

  const MergeResult result = merge();

  EXPECT_EQ(result.outcome, MergeOutcome::FastForward);
  EXPECT_EQ(result.targetBranch, "main");
  EXPECT_THAT(result.files, ElementsAre("src/a.txt", "src/b.txt", "src/c.txt"));
  EXPECT_TRUE(result.conflicts.empty());
  EXPECT_EQ(result.commit, agent);
  EXPECT_EQ(repo_.git("rev-parse main"), agent);
  EXPECT_EQ(repo_.git("symbolic-ref HEAD"), "refs/heads/main");
  EXPECT_EQ(content("src/a.txt"), "alpha 2\n");
  EXPECT_EQ(content("src/c.txt"), "gamma\n");
  EXPECT_FALSE(fs::exists(repo_.root() / "src/b.txt"));
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"), "");
  EXPECT_THAT(repo_.git("reflog -1 main"), HasSubstr("Fast-forward"));
}

TEST_F(MergeTest, MergeCommitHasBothParentsAndBothSidesContent) {
  divergeCleanly();
  const std::string main = repo_.git("rev-parse main");
  const std::string agent = repo_.git(std::string("rev-parse ") + kAgent);

  const MergeResult result = merge();

  EXPECT_EQ(result.outcome, MergeOutcome::Merged);
  EXPECT_THAT(result.files, ElementsAre("notes.txt", "src/a.txt"));
  EXPECT_TRUE(result.conflicts.empty());
  ASSERT_TRUE(result.commit);
  EXPECT_EQ(repo_.git("rev-parse HEAD"), *result.commit);
  EXPECT_EQ(repo_.git("rev-list --parents -n 1 HEAD"), *result.commit + " " + main + " " + agent);
  EXPECT_EQ(repo_.git("log -1 --format=%an%n%ae%n%cn%n%s"),
            std::string("Test User\ntest@example.com\nTest User\nMerge ") + kAgent);
  // Both sides, in the commit and on disk.
  EXPECT_EQ(content("src/a.txt"), "alpha from the agent\n");
  EXPECT_EQ(content("src/b.txt"), "beta from main\n");
  std::string notes = withLine(numberedLines(10), 2, "agent's note");
  notes = withLine(notes, 9, "main's note");
  EXPECT_EQ(content("notes.txt"), notes);
  EXPECT_EQ(repo_.git("show HEAD:notes.txt") + "\n", notes);
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"), "");
  EXPECT_FALSE(fs::exists(repo_.root() / ".git/MERGE_HEAD"));
  repo_.git("fsck --no-dangling");
}

TEST_F(MergeTest, MergeCommitUsesTheGivenMessage) {
  divergeCleanly();
  merge(false, "Merge the winner of race 7");
  EXPECT_EQ(repo_.git("log -1 --format=%B"), "Merge the winner of race 7");
}

TEST_F(MergeTest, MergeCommitFallsBackToHydraAsAuthorWithoutAnIdentity) {
  divergeCleanly();
  repo_.git("config --unset user.name");
  repo_.git("config --unset user.email");
  merge();
  EXPECT_EQ(repo_.git("log -1 --format=%an%n%ae"), "hydra\nhydra@localhost");
}

TEST_F(MergeTest, ConflictIsReportedAndLeavesTheRepositoryExactlyAsItWas) {
  divergeWithConflict();
  // Some of the user's own work, which must not move either.
  repo_.write("README.md", "# edited, not committed\n");
  repo_.write("scratch.txt", "untracked\n");
  const Snapshot before = snapshot(repo_);

  const MergeResult result = merge();

  EXPECT_EQ(result.outcome, MergeOutcome::Conflict);
  EXPECT_THAT(result.conflicts, ElementsAre("src/a.txt"));
  EXPECT_THAT(result.files, ElementsAre("notes.txt", "src/a.txt", "src/new.txt"));
  EXPECT_EQ(result.commit, std::nullopt);
  EXPECT_EQ(result.targetBranch, "main");
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
  EXPECT_FALSE(fs::exists(repo_.root() / ".git/MERGE_HEAD"));
  EXPECT_EQ(content("src/a.txt"), "alpha on main\n");  // no conflict markers
}

TEST_F(MergeTest, DryRunOfAFastForwardChangesNothing) {
  commitOnBranch(kAgent, {{"src/a.txt", "alpha 2\n"}, {"src/c.txt", "gamma\n"}});
  const Snapshot before = snapshot(repo_);

  const MergeResult result = merge(/*dryRun=*/true);

  EXPECT_EQ(result.outcome, MergeOutcome::FastForward);
  EXPECT_THAT(result.files, ElementsAre("src/a.txt", "src/c.txt"));
  EXPECT_EQ(result.commit, std::nullopt);
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
}

TEST_F(MergeTest, DryRunOfAMergeChangesNothingNotEvenTheObjectStore) {
  divergeCleanly();
  const Snapshot before = snapshot(repo_);

  const MergeResult result = merge(/*dryRun=*/true);

  EXPECT_EQ(result.outcome, MergeOutcome::Merged);
  EXPECT_THAT(result.files, ElementsAre("notes.txt", "src/a.txt"));
  EXPECT_EQ(result.commit, std::nullopt);
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
  // The real merge afterwards reports the same and does it.
  const MergeResult real = merge();
  EXPECT_EQ(real.outcome, MergeOutcome::Merged);
  EXPECT_EQ(real.files, result.files);
  EXPECT_NE(repo_.git("rev-parse HEAD"), before.head);
}

TEST_F(MergeTest, DryRunOfAConflictChangesNothing) {
  divergeWithConflict();
  const Snapshot before = snapshot(repo_);

  const MergeResult result = merge(/*dryRun=*/true);

  EXPECT_EQ(result.outcome, MergeOutcome::Conflict);
  EXPECT_THAT(result.conflicts, ElementsAre("src/a.txt"));
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
}

TEST_F(MergeTest, BranchAlreadyContainedIsUpToDateAndChangesNothing) {
  commitOnBranch(kAgent, {{"src/a.txt", "alpha 2\n"}});
  repo_.git(std::string("merge -q --ff-only ") + kAgent);
  commitOnMain({{"src/b.txt", "beta 2\n"}});
  const Snapshot before = snapshot(repo_);

  for (const bool dryRun : {true, false}) {
    const MergeResult result = merge(dryRun);
    EXPECT_EQ(result.outcome, MergeOutcome::UpToDate);
    EXPECT_TRUE(result.files.empty());
    EXPECT_EQ(result.commit, std::nullopt);
  }
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
}

TEST_F(MergeTest, RefusesWhenAFileTheMergeChangesIsModified) {
  commitOnBranch(kAgent, {{"src/a.txt", "alpha 2\n"}, {"src/c.txt", "gamma\n"}});
  repo_.write("src/a.txt", "my unsaved work\n");
  const Snapshot before = snapshot(repo_);

  for (const bool dryRun : {true, false}) {
    const MergeRefused refused = refusal([&] { merge(dryRun); });
    EXPECT_EQ(refused.reason(), Reason::DirtyWorkingTree);
    EXPECT_THAT(refused.files(), ElementsAre("src/a.txt"));
    EXPECT_THAT(refused.what(), HasSubstr("src/a.txt"));
  }
  EXPECT_EQ(content("src/a.txt"), "my unsaved work\n");
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
}

TEST_F(MergeTest, RefusesWhenAFileTheMergeChangesIsStaged) {
  divergeCleanly();
  repo_.write("notes.txt", "staged rewrite\n");
  repo_.git("add notes.txt");
  const Snapshot before = snapshot(repo_);

  const MergeRefused refused = refusal([&] { merge(); });

  EXPECT_EQ(refused.reason(), Reason::DirtyWorkingTree);
  EXPECT_THAT(refused.files(), ElementsAre("notes.txt"));
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
}

TEST_F(MergeTest, RefusesWhenAnUntrackedFileIsInTheWay) {
  commitOnBranch(kAgent, {{"src/c.txt", "gamma\n"}, {"docs", "a file named docs\n"}});
  repo_.write("src/c.txt", "my own c\n");
  repo_.write("docs/draft.md", "a directory where the merge wants a file\n");
  repo_.write("elsewhere.txt", "untracked, not in the way\n");
  const Snapshot before = snapshot(repo_);

  const MergeRefused refused = refusal([&] { merge(); });

  EXPECT_EQ(refused.reason(), Reason::DirtyWorkingTree);
  EXPECT_THAT(refused.files(), ElementsAre("docs/draft.md", "src/c.txt"));
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
}

TEST_F(MergeTest, UncommittedWorkInOtherFilesSurvivesAMerge) {
  divergeCleanly();
  repo_.write("README.md", "# my unsaved edit\n");
  repo_.write(".gitignore", "*.log\nbuild/\nstaged-ignore/\n");
  repo_.git("add .gitignore");
  repo_.write("scratch.txt", "untracked\n");
  const std::string staged = repo_.git("diff --cached");
  const std::string unstaged = repo_.git("diff");

  const MergeResult result = merge();

  ASSERT_EQ(result.outcome, MergeOutcome::Merged);
  EXPECT_EQ(content("README.md"), "# my unsaved edit\n");
  EXPECT_EQ(content("scratch.txt"), "untracked\n");
  EXPECT_EQ(repo_.git("diff --cached"), staged);  // still staged, still only that
  EXPECT_EQ(repo_.git("diff"), unstaged);
  // ...and none of it went into the merge commit.
  EXPECT_EQ(repo_.git("show HEAD:README.md"), "# sample");
  EXPECT_EQ(repo_.git("show HEAD:.gitignore"), "*.log\nbuild/");
  EXPECT_EQ(content("src/a.txt"), "alpha from the agent\n");
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"),
            "M  .gitignore\n M README.md\n?? scratch.txt");
}

TEST_F(MergeTest, UncommittedWorkInOtherFilesSurvivesAFastForward) {
  commitOnBranch(kAgent, {{"src/a.txt", "alpha 2\n"}});
  repo_.write("src/b.txt", "my unsaved beta\n");

  const MergeResult result = merge();

  ASSERT_EQ(result.outcome, MergeOutcome::FastForward);
  EXPECT_EQ(content("src/a.txt"), "alpha 2\n");
  EXPECT_EQ(content("src/b.txt"), "my unsaved beta\n");
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"), " M src/b.txt");
}

TEST_F(MergeTest, RefusesWhileAMergeIsInProgress) {
  divergeWithConflict();
  commitOnBranch("other", {{"src/b.txt", "beta elsewhere\n"}});
  // git's own merge stops at the conflict and leaves MERGE_HEAD behind.
  repo_.git(std::string("merge -q ") + kAgent + " || true");
  ASSERT_TRUE(fs::exists(repo_.root() / ".git/MERGE_HEAD"));
  const Snapshot before = snapshot(repo_);

  const MergeRefused refused = refusal([&] {
    mergeBranch(repo_.root(), MergeRequest{"other", false, "", std::nullopt, "", false});
  });

  EXPECT_EQ(refused.reason(), Reason::MergeInProgress);
  EXPECT_THAT(refused.what(), HasSubstr("merge is in progress"));
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
}

TEST_F(MergeTest, RefusesWhileACherryPickIsInProgress) {
  divergeWithConflict();
  repo_.git(std::string("cherry-pick ") + kAgent + " >/dev/null 2>&1 || true");
  ASSERT_TRUE(fs::exists(repo_.root() / ".git/CHERRY_PICK_HEAD"));

  const MergeRefused refused = refusal([&] { merge(true); });

  EXPECT_EQ(refused.reason(), Reason::MergeInProgress);
  EXPECT_THAT(refused.what(), HasSubstr("cherry-pick"));
}

TEST_F(MergeTest, RefusesADetachedHead) {
  commitOnBranch(kAgent, {{"src/a.txt", "alpha 2\n"}});
  repo_.git("checkout -q --detach main");
  const Snapshot before = snapshot(repo_);

  const MergeRefused refused = refusal([&] { merge(); });

  EXPECT_EQ(refused.reason(), Reason::DetachedHead);
  EXPECT_TRUE(refused.files().empty());
  const Snapshot after = snapshot(repo_);
  EXPECT_TRUE(after == before) << ::testing::PrintToString(differences(before, after));
}

TEST_F(MergeTest, RefusesABranchWithoutCommits) {
  commitOnBranch(kAgent, {{"src/a.txt", "alpha 2\n"}});
  repo_.git("checkout -q --orphan fresh");

  const MergeRefused refused = refusal([&] { merge(); });

  EXPECT_EQ(refused.reason(), Reason::UnbornHead);
  EXPECT_THAT(refused.what(), HasSubstr("fresh"));
}

TEST_F(MergeTest, UnknownBranchIsAGitErrorThatChangesNothing) {
  const Snapshot before = snapshot(repo_);
  EXPECT_THROW(mergeBranch(repo_.root(), MergeRequest{"hydra/nobody", false, "", std::nullopt, "", false}), git::GitError);
  EXPECT_TRUE(snapshot(repo_) == before);
}

TEST_F(MergeTest, MergeFfFalseMakesAMergeCommitInsteadOfFastForwarding) {
  const std::string agent = commitOnBranch(kAgent, {{"src/a.txt", "alpha 2\n"}});
  const std::string main = repo_.git("rev-parse main");
  repo_.git("config merge.ff false");

  const MergeResult result = merge();

  EXPECT_EQ(result.outcome, MergeOutcome::Merged);
  ASSERT_TRUE(result.commit);
  EXPECT_EQ(repo_.git("rev-list --parents -n 1 HEAD"), *result.commit + " " + main + " " + agent);
  EXPECT_EQ(content("src/a.txt"), "alpha 2\n");
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"), "");
}

// A merge cut short after its files were checked out and before its branch
// moved: the merge made for real with its journal kept, then the branch put
// back, and the journal's owner a process that no longer runs (pid 1 with
// another start time).
class InterruptedMergeTest : public MergeTest {
 protected:
  std::string halfDone() {
    divergeCleanly();
    before_ = repo_.git("rev-parse main");
    MergeRequest request{kAgent, false, "", std::nullopt, "", false};
    request.journalNote = "race-1 claude manual";
    request.keepJournal = true;
    const MergeResult result = mergeBranch(repo_.root(), request);
    repo_.git("update-ref refs/heads/main " + before_);
    const fs::path journal = repo_.root() / ".git" / "hydra-merge.json";
    boost::json::object j = boost::json::parse(readFile(journal)).as_object();
    j["owner"] = toWord(ProcessOwner{1, 1, ProcessOwner::self().host});
    testing::writeFile(journal, boost::json::serialize(j));
    return *result.commit;
  }
  std::string before_;
};

TEST_F(InterruptedMergeTest, ADeadOwnersMergeIsFinished) {
  const std::string merged = halfDone();
  ASSERT_NE(repo_.git("status --porcelain --untracked-files=all"), "") << "not half done";

  const std::optional<InterruptedMerge> found = finishInterruptedMerge(repo_.root());

  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->outcome, InterruptedMerge::Outcome::Completed);
  EXPECT_EQ(found->note, "race-1 claude manual");
  EXPECT_EQ(found->outcomeOfMerge, "merged");
  EXPECT_EQ(found->targetBranch, "main");
  EXPECT_EQ(found->commit, merged);
  EXPECT_EQ(repo_.git("rev-parse main"), merged);
  EXPECT_EQ(repo_.git("status --porcelain --untracked-files=all"), "");
  EXPECT_FALSE(fs::exists(repo_.root() / ".git" / "hydra-merge.json"));
  EXPECT_FALSE(finishInterruptedMerge(repo_.root()).has_value()) << "nothing left to finish";
}

TEST_F(InterruptedMergeTest, AFileTheUserChangedSinceBlocksItAndIsKept) {
  halfDone();
  repo_.write("src/a.txt", "the user's own edit\n");
  // Older than the journal: not what the killed merge was writing.
  ::utimensat(AT_FDCWD, (repo_.root() / "src/a.txt").c_str(),
              std::array<timespec, 2>{timespec{1, 0}, timespec{1, 0}}.data(), 0);

  const std::optional<InterruptedMerge> found = finishInterruptedMerge(repo_.root());

  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->outcome, InterruptedMerge::Outcome::Blocked);
  EXPECT_THAT(found->blocking, ElementsAre("src/a.txt"));
  EXPECT_EQ(content("src/a.txt"), "the user's own edit\n");
  EXPECT_EQ(repo_.git("rev-parse main"), before_);
  EXPECT_TRUE(fs::exists(repo_.root() / ".git" / "hydra-merge.json"));
}

TEST_F(InterruptedMergeTest, ALiveOwnersMergeIsLeftAlone) {
  halfDone();
  const fs::path journal = repo_.root() / ".git" / "hydra-merge.json";
  boost::json::object j = boost::json::parse(readFile(journal)).as_object();
  j["owner"] = toWord(ProcessOwner::self());
  testing::writeFile(journal, boost::json::serialize(j));

  EXPECT_FALSE(finishInterruptedMerge(repo_.root()).has_value());
  EXPECT_EQ(repo_.git("rev-parse main"), before_);
  EXPECT_TRUE(fs::exists(journal));
}

}  // namespace
}  // namespace hydra::core::merge
