#include "core/merge/diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "core/git/git.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::merge {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempRepo;

// `count` numbered lines, each ending in a newline.
std::string numberedLines(int count, const std::string& prefix = "line") {
  std::string text;
  for (int i = 1; i <= count; ++i) text += prefix + " " + std::to_string(i) + "\n";
  return text;
}

// Bytes that git and libgit2 both call binary (a NUL early on), different
// enough for different seeds that no rename is seen between them.
std::string binaryBytes(unsigned seed) {
  std::string bytes = "\x89PNG\r\n";
  bytes += '\0';
  unsigned state = seed;
  for (int i = 0; i < 600; ++i) {
    state = state * 1103515245u + 12345u;
    bytes += static_cast<char>((state >> 16) & 0xff);
  }
  return bytes;
}

// What git says about one path in `git diff --numstat` and `--name-status`.
struct GitView {
  std::string oldPath;  // set for renames
  std::string status;   // translated to hydra's words
  int additions = 0;
  int deletions = 0;
  bool binary = false;
};

// Splits NUL-separated output into its fields (the last one may be empty).
std::vector<std::string> splitNul(const std::string& text) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (std::size_t nul; (nul = text.find('\0', start)) != std::string::npos; start = nul + 1) {
    fields.push_back(text.substr(start, nul - start));
  }
  return fields;
}

int parseCount(const std::string& field) { return field == "-" ? 0 : std::stoi(field); }

// Runs git's own diff of the two commits; -z keeps unusual paths unquoted.
std::map<std::string, GitView> gitView(const TempRepo& repo, const std::string& base,
                                       const std::string& agent) {
  std::map<std::string, GitView> view;
  // --name-status -z: "<status>\0<path>\0" or "R<score>\0<old>\0<new>\0".
  const std::vector<std::string> names =
      splitNul(repo.git("diff --name-status -z " + base + " " + agent));
  for (std::size_t i = 0; i < names.size();) {
    const std::string code = names[i];
    const char letter = code[0];
    GitView entry;
    std::string path;
    if (letter == 'R') {
      entry.oldPath = names[i + 1];
      path = names[i + 2];
      i += 3;
    } else {
      path = names[i + 1];
      i += 2;
    }
    switch (letter) {
      case 'A':
        entry.status = "added";
        break;
      case 'D':
        entry.status = "deleted";
        break;
      case 'M':
        entry.status = "modified";
        break;
      case 'R':
        entry.status = "renamed";
        break;
      case 'T':
        entry.status = "typechange";
        break;
      default:
        ADD_FAILURE() << "unexpected git status " << code;
    }
    view[path] = entry;
  }
  // --numstat -z: "<add>\t<del>\t<path>\0" or "<add>\t<del>\t\0<old>\0<new>\0";
  // "-\t-" for binary files.
  const std::string numstat = repo.git("diff --numstat -z " + base + " " + agent);
  const std::vector<std::string> fields = splitNul(numstat + '\0');
  for (std::size_t i = 0; i < fields.size() && !fields[i].empty();) {
    const std::string& record = fields[i];
    const std::size_t tab1 = record.find('\t');
    const std::size_t tab2 = record.find('\t', tab1 + 1);
    const std::string added = record.substr(0, tab1);
    const std::string deleted = record.substr(tab1 + 1, tab2 - tab1 - 1);
    std::string path = record.substr(tab2 + 1);
    i += 1;
    if (path.empty()) {  // a rename: old and new path follow
      path = fields[i + 1];
      i += 2;
    }
    GitView& entry = view[path];
    entry.additions += parseCount(added);
    entry.deletions += parseCount(deleted);
    entry.binary = entry.binary || added == "-";
  }
  return view;
}

class DiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.isolateLibgit2();
    buildHistory();
  }

  // A base commit and an agent commit that between them show every kind of
  // change git reports.
  void buildHistory() {
    repo_.write("big.txt", numberedLines(400));
    repo_.write("gone.txt", numberedLines(12, "doomed"));
    repo_.write("old/name.txt", numberedLines(40, "moving"));
    repo_.write("image.bin", binaryBytes(1));
    repo_.write("doomed.bin", binaryBytes(5));
    repo_.write("script.sh", "#!/bin/sh\necho hi\n");
    repo_.write("no-newline.txt", "first\nsecond\n");
    repo_.write("space name.txt", "one\ntwo\n");
    repo_.write("becomes-link.txt", "plain\ntext\n");
    fs::create_symlink("README.md", repo_.root() / "link-becomes-file");
    repo_.write(".gitattributes", "*.dat -diff\n");
    repo_.write("table.dat", "text that an attribute declares binary\n");
    base_ = repo_.commit("base");

    repo_.git("checkout -q -b agent");
    std::string big = numberedLines(400);
    big.replace(big.find("line 10\n"), 8, "line ten\n");
    big.replace(big.find("line 200\n"), 9, "inserted a\ninserted b\ninserted c\nline 200\n");
    big.erase(big.find("line 300\n"), 9 * 5);  // lines 300..304
    big += numberedLines(25, "appended");
    repo_.write("big.txt", big);
    fs::remove(repo_.root() / "gone.txt");
    fs::remove(repo_.root() / "doomed.bin");
    std::string moved = numberedLines(40, "moving");
    moved.replace(moved.find("moving 7\n"), 9, "moved 7\n");
    fs::remove_all(repo_.root() / "old");
    repo_.write("new/name.txt", moved);
    repo_.write("image.bin", binaryBytes(2));
    repo_.write("added.bin", binaryBytes(3));
    repo_.write("src/fresh.cpp", "int main() { return 0; }\n");
    repo_.write("dir/naïve.txt", "unicode path\n");
    fs::permissions(repo_.root() / "script.sh", fs::perms::owner_exec, fs::perm_options::add);
    repo_.write("no-newline.txt", "first\nsecond");
    repo_.write("space name.txt", "one\n2\nthree\n");
    fs::remove(repo_.root() / "becomes-link.txt");
    fs::create_symlink("big.txt", repo_.root() / "becomes-link.txt");
    fs::remove(repo_.root() / "link-becomes-file");
    repo_.write("link-becomes-file", "now a file\nwith two lines\n");
    repo_.write("table.dat", "still text, still declared binary\n");
    agent_ = repo_.commit("agent");
    repo_.git("checkout -q main");
  }

  const FileChange* find(const DiffSummary& summary, const std::string& path) {
    for (const FileChange& change : summary.files) {
      if (change.path == path) return &change;
    }
    return nullptr;
  }

  git::LibGit2 libgit2_;
  TempRepo repo_;
  std::string base_;
  std::string agent_;
};

TEST_F(DiffTest, SummaryMatchesGitNumstatAndNameStatusFileByFile) {
  const DiffSummary summary = diffCommits(repo_.root(), base_, agent_);
  const std::map<std::string, GitView> expected = gitView(repo_, base_, agent_);

  ASSERT_EQ(summary.files.size(), expected.size());
  int additions = 0;
  int deletions = 0;
  for (const FileChange& change : summary.files) {
    SCOPED_TRACE(change.path);
    const auto it = expected.find(change.path);
    ASSERT_NE(it, expected.end());
    EXPECT_EQ(change.status, it->second.status);
    EXPECT_EQ(change.oldPath, it->second.oldPath);
    EXPECT_EQ(change.additions, it->second.additions);
    EXPECT_EQ(change.deletions, it->second.deletions);
    EXPECT_EQ(change.binary, it->second.binary);
    additions += it->second.additions;
    deletions += it->second.deletions;
  }
  EXPECT_EQ(summary.additions, additions);
  EXPECT_EQ(summary.deletions, deletions);
}

TEST_F(DiffTest, SummaryCoversEveryKindOfChange) {
  // The cross-check above is only as good as the fixture: make sure it holds
  // each kind of change, with the numbers worked out by hand.
  const DiffSummary summary = diffCommits(repo_.root(), base_, agent_);
  const auto expectChange = [&](const std::string& path, const std::string& status, int additions,
                                int deletions, bool binary) {
    SCOPED_TRACE(path);
    const FileChange* change = find(summary, path);
    ASSERT_NE(change, nullptr);
    EXPECT_EQ(change->status, status);
    EXPECT_EQ(change->additions, additions);
    EXPECT_EQ(change->deletions, deletions);
    EXPECT_EQ(change->binary, binary);
  };
  expectChange("big.txt", "modified", 1 + 3 + 25, 1 + 5, false);
  expectChange("gone.txt", "deleted", 0, 12, false);
  expectChange("new/name.txt", "renamed", 1, 1, false);
  const FileChange* renamed = find(summary, "new/name.txt");
  ASSERT_NE(renamed, nullptr);
  EXPECT_EQ(renamed->oldPath, "old/name.txt");
  expectChange("image.bin", "modified", 0, 0, true);
  expectChange("added.bin", "added", 0, 0, true);
  expectChange("doomed.bin", "deleted", 0, 0, true);
  expectChange("src/fresh.cpp", "added", 1, 0, false);
  expectChange("dir/naïve.txt", "added", 1, 0, false);
  expectChange("script.sh", "modified", 0, 0, false);
  expectChange("no-newline.txt", "modified", 1, 1, false);
  expectChange("space name.txt", "modified", 2, 1, false);
  expectChange("becomes-link.txt", "typechange", 1, 2, false);
  expectChange("link-becomes-file", "typechange", 2, 1, false);
  expectChange("table.dat", "modified", 0, 0, true);
  EXPECT_EQ(find(summary, "README.md"), nullptr);
  EXPECT_EQ(find(summary, "old/name.txt"), nullptr);
}

// Past 16 MiB a blob is neither read for its lines nor compared for
// similarity (either would load it whole): a large file moved with an edit is
// a deletion and an addition, one moved unchanged is still a rename (by id).
TEST_F(DiffTest, LargeFilesAreBinaryAndRenamedOnlyWhenIdentical) {
  const std::string large = numberedLines(1'500'000);  // about 17 MiB of text
  ASSERT_GT(large.size(), std::size_t{16} << 20);
  repo_.write("large/edited.txt", large);
  repo_.write("large/kept.txt", large + "kept\n");
  const std::string base = repo_.commit("large files");
  fs::remove(repo_.root() / "large/edited.txt");
  fs::remove(repo_.root() / "large/kept.txt");
  repo_.write("moved/edited.txt", large + "one more line\n");
  repo_.write("moved/kept.txt", large + "kept\n");
  const std::string moved = repo_.commit("moved");

  const DiffSummary summary = diffCommits(repo_.root(), base, moved);
  const FileChange* kept = find(summary, "moved/kept.txt");
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->status, "renamed");
  EXPECT_EQ(kept->oldPath, "large/kept.txt");
  const FileChange* edited = find(summary, "moved/edited.txt");
  ASSERT_NE(edited, nullptr);
  EXPECT_EQ(edited->status, "added");
  EXPECT_TRUE(edited->binary);
  const FileChange* gone = find(summary, "large/edited.txt");
  ASSERT_NE(gone, nullptr);
  EXPECT_EQ(gone->status, "deleted");
  EXPECT_EQ(summary.files.size(), 3u);
}

TEST_F(DiffTest, SummaryOfIdenticalCommitsIsEmpty) {
  const DiffSummary summary = diffCommits(repo_.root(), agent_, "agent");
  EXPECT_TRUE(summary.files.empty());
  EXPECT_EQ(summary.additions, 0);
  EXPECT_EQ(summary.deletions, 0);
}

TEST_F(DiffTest, UnknownCommitIsAGitError) {
  EXPECT_THROW(diffCommits(repo_.root(), base_, "no-such-branch"), git::GitError);
}

// git ends the ---/+++ lines of a name with a space in a tab (GNU diff's
// convention); libgit2 does not, and `git apply` reads both.
std::string withoutNameTabs(std::string patch) {
  for (std::size_t at; (at = patch.find("\t\n")) != std::string::npos;) patch.erase(at, 1);
  return patch;
}

TEST_F(DiffTest, PatchOfOnePathIsWhatGitDiffPrints) {
  // Paths without renames (git limits to a path before looking for renames):
  // modified, added, deleted, binary, mode and type changes, odd names.
  for (const std::string path : {"big.txt", "gone.txt", "src/fresh.cpp", "image.bin", "added.bin",
                                 "doomed.bin", "script.sh", "no-newline.txt", "space name.txt",
                                 "dir/naïve.txt", "becomes-link.txt", "link-becomes-file"}) {
    SCOPED_TRACE(path);
    const std::string expected = repo_.git("diff --no-color --no-ext-diff " + base_ + " " + agent_ +
                                           " -- " + testing::shellQuote(path));
    std::string patch = unifiedPatch(repo_.root(), base_, agent_, path);
    ASSERT_FALSE(patch.empty());
    ASSERT_EQ(patch.back(), '\n');
    patch.pop_back();  // the helper strips git's final newline
    EXPECT_EQ(patch, withoutNameTabs(expected));
  }
}

TEST_F(DiffTest, PatchOfARenameMatchesEitherPathAndShowsTheRename) {
  const std::string byNew = unifiedPatch(repo_.root(), base_, agent_, "new/name.txt");
  EXPECT_EQ(unifiedPatch(repo_.root(), base_, agent_, "old/name.txt"), byNew);
  EXPECT_THAT(byNew, HasSubstr("diff --git a/old/name.txt b/new/name.txt\n"));
  EXPECT_THAT(byNew, HasSubstr("rename from old/name.txt\nrename to new/name.txt\n"));
  EXPECT_THAT(byNew, HasSubstr("-moving 7\n+moved 7\n"));
}

TEST_F(DiffTest, FullPatchIsWhatGitDiffPrints) {
  // Renames and their similarity, binary files, and type changes with the
  // deletion first (the only order in which the patch applies) included; up
  // to the tabs after names with spaces.
  const std::string patch = unifiedPatch(repo_.root(), base_, agent_);
  const std::string gitPatch = repo_.git("diff --no-color --no-ext-diff " + base_ + " " + agent_);
  EXPECT_EQ(patch, withoutNameTabs(gitPatch) + "\n");
  // The patch of each path is a piece of the whole.
  for (const FileChange& change : diffCommits(repo_.root(), base_, agent_).files) {
    EXPECT_THAT(patch, HasSubstr(unifiedPatch(repo_.root(), base_, agent_, change.path)));
  }
}

TEST_F(DiffTest, PatchOfAnUnchangedPathIsEmpty) {
  EXPECT_EQ(unifiedPatch(repo_.root(), base_, agent_, "README.md"), "");
  EXPECT_EQ(unifiedPatch(repo_.root(), base_, base_), "");
}

TEST_F(DiffTest, FileVersionsOfModifiedAddedAndDeletedFiles) {
  const FileVersions modified = fileVersions(repo_.root(), base_, agent_, "space name.txt");
  EXPECT_EQ(modified.base, "one\ntwo\n");
  EXPECT_EQ(modified.agent, "one\n2\nthree\n");
  EXPECT_FALSE(modified.binary);

  const FileVersions added = fileVersions(repo_.root(), base_, agent_, "src/fresh.cpp");
  EXPECT_EQ(added.base, std::nullopt);
  EXPECT_EQ(added.agent, "int main() { return 0; }\n");

  const FileVersions deleted = fileVersions(repo_.root(), base_, agent_, "gone.txt");
  EXPECT_EQ(deleted.base, numberedLines(12, "doomed"));
  EXPECT_EQ(deleted.agent, std::nullopt);
}

TEST_F(DiffTest, FileVersionsOfABinaryFileAreItsExactBytes) {
  const FileVersions image = fileVersions(repo_.root(), base_, agent_, "image.bin");
  EXPECT_TRUE(image.binary);
  EXPECT_EQ(image.base, binaryBytes(1));
  EXPECT_EQ(image.agent, binaryBytes(2));

  const FileVersions added = fileVersions(repo_.root(), base_, agent_, "added.bin");
  EXPECT_TRUE(added.binary);
  EXPECT_EQ(added.base, std::nullopt);
  EXPECT_EQ(added.agent, binaryBytes(3));
}

TEST_F(DiffTest, FileVersionsFollowRenamesAndTypeChanges) {
  const FileVersions renamed = fileVersions(repo_.root(), base_, agent_, "new/name.txt");
  EXPECT_EQ(renamed.base, numberedLines(40, "moving"));
  EXPECT_EQ(renamed.agent, repo_.git("show " + agent_ + ":new/name.txt") + "\n");
  EXPECT_EQ(fileVersions(repo_.root(), base_, agent_, "old/name.txt"), renamed);

  const FileVersions link = fileVersions(repo_.root(), base_, agent_, "becomes-link.txt");
  EXPECT_EQ(link.base, "plain\ntext\n");
  EXPECT_EQ(link.agent, "big.txt");  // a symlink's blob is its target
}

TEST_F(DiffTest, FileVersionsRefusesPathsOutsideTheChangeSet) {
  // Each of these names a file that exists somewhere: the refusal must come
  // from the path, not from a failed lookup.
  testing::writeFile(repo_.outside() / "x", "outside the repository\n");
  for (const std::string path : {"../x", "/etc/passwd", "README.md", "src/../big.txt", "./big.txt",
                                 "src//a.txt", "", "new/../big.txt", "big.txt/"}) {
    SCOPED_TRACE(path);
    EXPECT_THROW(fileVersions(repo_.root(), base_, agent_, path), std::invalid_argument);
  }
  try {
    fileVersions(repo_.root(), base_, agent_, "README.md");
    FAIL() << "an unchanged file was readable";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("not among the changes"));
  }
  try {
    fileVersions(repo_.root(), base_, agent_, "../x");
    FAIL() << "a path outside the repository was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'..'"));
  }
}

TEST_F(DiffTest, DiffsCommitsNotTheWorkingTree) {
  // Uncommitted edits, even to changed files, are not part of the review.
  repo_.git("checkout -q agent");
  repo_.write("space name.txt", "uncommitted\n");
  repo_.write("untracked.txt", "new\n");
  const FileVersions versions = fileVersions(repo_.root(), base_, "agent", "space name.txt");
  EXPECT_EQ(versions.agent, "one\n2\nthree\n");
  EXPECT_EQ(find(diffCommits(repo_.root(), base_, "agent"), "untracked.txt"), nullptr);
}

}  // namespace
}  // namespace hydra::core::merge
