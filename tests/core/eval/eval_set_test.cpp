#include "core/eval/eval_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <git2.h>

#include <filesystem>
#include <fstream>

#include "core/config/config.h"

namespace hydra::core::eval {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

const fs::path kFile = "/evals/basics.toml";

void expectError(std::string_view text, int line, int column, std::string_view message) {
  try {
    parseEvalSet(text, kFile);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_EQ(e.message(), message);
  }
}

TEST(EvalSetTest, ReadsEveryKey) {
  EvalSet set = parseEvalSet(R"toml(
[eval]
name = "basics"
agents = ["claude", "fixer"]
samples = 5
pass_k = [5, 1, 5]
timeout_seconds = 120
max_concurrent_agents = 2

[[cases]]
id = "add"
task = "Fix add()"
base = "v1.0"
verify_command = "python3 -m pytest -q"
fail_to_pass = ["test_add"]
pass_to_pass = ["test_sub"]
test_command = "python3 -m pytest -q -rA"
lint_command = ""

[[cases]]
id = "other.repo"
task = "Make it faster"
repo = "../other"
verify_command = "make check"
)toml",
                              kFile);
  EXPECT_EQ(set.name, "basics");
  EXPECT_THAT(set.agents, ElementsAre("claude", "fixer"));
  EXPECT_EQ(set.samples, 5);
  EXPECT_THAT(set.passK, ElementsAre(1, 5)) << "sorted, each once";
  EXPECT_EQ(set.timeoutSeconds, 120);
  EXPECT_EQ(set.maxConcurrentAgents, 2);
  ASSERT_EQ(set.cases.size(), 2u);
  const EvalCase& add = set.cases[0];
  EXPECT_EQ(add.id, "add");
  EXPECT_EQ(add.base, "v1.0");
  EXPECT_EQ(add.verifyCommand, "python3 -m pytest -q");
  EXPECT_THAT(add.failToPass, ElementsAre("test_add"));
  EXPECT_THAT(add.passToPass, ElementsAre("test_sub"));
  EXPECT_EQ(add.testCommand, "python3 -m pytest -q -rA");
  EXPECT_EQ(add.lintCommand, std::nullopt) << "empty: not configured";
  EXPECT_EQ(add.repo, std::nullopt);
  EXPECT_EQ(add.line, 10);
  EXPECT_EQ(set.cases[1].base, "HEAD");
  EXPECT_EQ(set.cases[1].repo, "../other");
  EXPECT_EQ(set.findCase("other.repo"), &set.cases[1]);
  EXPECT_EQ(set.findCase("nope"), nullptr);
  EXPECT_EQ(set.folder(), "/evals");
}

TEST(EvalSetTest, ProblemsNameTheirPlace) {
  const std::string head = "[eval]\nname = \"x\"\n";
  expectError(head + "samples = 0\n", 3, 11, "'samples' must be at least 1, found 0");
  expectError(head + "sample = 3\n", 3, 1, "unknown key 'sample' in [eval]; did you mean 'samples'?");
  expectError(head + "pass_k = []\n", 3, 10, "'pass_k' must be a non-empty array of integers (e.g. [1, 5])");
  expectError(head + "pass_k = [1, 0]\n", 3, 14, "'pass_k' must be at least 1, found 0");
  expectError(head + "agents = [\"my agent\"]\n", 3, 10,
              "'agents' must name agents (letters, digits, '_' and '-'), found 'my agent'");
  expectError(head + "[[cases]]\nid = \"a b\"\n", 4, 6,
              "'id' must be letters, digits, '_', '-' and '.' (at most 64), found 'a b'");
  expectError(head + "[[cases]]\nid = \"a\"\ntask = \"t\"\n", 3, 1, "case 1 ('a') has no 'verify_command'");
  expectError(head + "[[cases]]\nid = \"a\"\ntask = \"t\"\nverify_command = \"true\"\nhiden_files = []\n", 7, 1,
              "unknown key 'hiden_files' in [[cases]]; did you mean 'hidden_files'?");
  expectError(head + "[[cases]]\nid = \"a\"\ntask = \"t\"\nverify_command = \"true\"\n"
                     "[[cases]]\nid = \"a\"\ntask = \"u\"\nverify_command = \"true\"\n",
              7, 1, "two cases have the id 'a'");
  expectError(head + "[[cases]]\nid = \"a\"\ntask = \"t\"\nverify_command = \"true\"\nhidden_files = [\"../secret\"]\n",
              7, 16, "'hidden_files' must name files inside the eval set's folder, found '../secret'");
  expectError("cases = 3\n" + head, 1, 9, "'cases' must be tables: write each case as [[cases]]");
  expectError(head + "[scoring]\n", 3, 2, "unknown table [scoring]");
  expectError("[eval]\nname = \"x\"\n", 1, 1, "an eval set needs at least one [[cases]] table");
  expectError("[[cases]]\nid = \"a\"\ntask = \"t\"\nverify_command = \"true\"\n", 1, 1,
              "an eval set needs an [eval] table (its name, agents, samples)");
  expectError("[eval\n", 1, 6, "Error while parsing table header: expected ']', saw '\\n'");
}

class EvalSetFileTest : public ::testing::Test {
 protected:
  EvalSetFileTest() {
    git_libgit2_init();
    dir = fs::temp_directory_path() / ("hydra-eval-set-" + std::to_string(::getpid()));
    fs::create_directories(dir / "hidden");
  }
  ~EvalSetFileTest() override {
    fs::remove_all(dir);
    git_libgit2_shutdown();
  }
  void write(const fs::path& rel, const std::string& text) { std::ofstream(dir / rel) << text; }
  fs::path dir;
};

TEST_F(EvalSetFileTest, HiddenFilesMustExistAndChangeTheHash) {
  const std::string text =
      "[eval]\nname = \"x\"\n[[cases]]\nid = \"a\"\ntask = \"t\"\nverify_command = \"true\"\n"
      "hidden_files = [\"hidden/test_a.py\"]\n";
  write("set.toml", text);
  try {
    loadEvalSet(dir / "set.toml");
    ADD_FAILURE() << "a missing hidden file is an error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_THAT(e.message(), ::testing::HasSubstr("hidden file 'hidden/test_a.py' is not a file in"));
  }
  write("hidden/test_a.py", "def test_a(): pass\n");
  EvalSet set = loadEvalSet(dir / "set.toml");
  ASSERT_THAT(set.cases.at(0).hiddenFiles, ElementsAre("hidden/test_a.py"));
  const std::string first = evalSetHash(set);
  EXPECT_EQ(first.size(), 40u);
  EXPECT_EQ(evalSetHash(set), first) << "the same set, the same hash";
  write("hidden/test_a.py", "def test_a(): assert False\n");
  EXPECT_NE(evalSetHash(set), first) << "a hidden file is part of the set";
  EXPECT_THROW(loadEvalSet(dir / "nope.toml"), ConfigError);
  EXPECT_THROW(loadEvalSet(dir), ConfigError);
}

TEST(CaseIdTest, PlainNamesOnly) {
  EXPECT_TRUE(isValidCaseId("add-1.v2_x"));
  for (const char* bad : {"", ".", "..", "a/b", "a b", "ä"}) EXPECT_FALSE(isValidCaseId(bad)) << bad;
  EXPECT_FALSE(isValidCaseId(std::string(65, 'a')));
}

}  // namespace
}  // namespace hydra::core::eval
