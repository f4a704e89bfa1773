// The policy, the environment it gives a run, and the bubblewrap command line
// it turns into, checked argument by argument; the errors for policies that
// would not confine.

#include "core/sandbox/policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/sandbox/bubblewrap.h"
#include "core/sandbox/mode.h"
#include "core/sandbox/paths.h"
#include "core/sandbox/probe.h"
#include "tests/support/race_repo.h"

namespace hydra::core::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RaceRepo;

// The value that follows `flag ... path` pairs: the positions of `option` in args.
std::vector<std::string> bindsOf(const std::vector<std::string>& args, const std::string& option) {
  std::vector<std::string> paths;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == option) paths.push_back(args[i + 1]);
  }
  return paths;
}

std::ptrdiff_t positionOf(const std::vector<std::string>& args, const std::string& option,
                          const std::string& path) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == option && args[i + 1] == path) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

// Sets an environment variable of this process for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

const fs::path kBwrap = "/usr/bin/bwrap";

TEST(SandboxModeTest, ParsesTheThreeModesAndNothingElse) {
  EXPECT_EQ(parseSandboxMode("auto"), SandboxMode::Auto);
  EXPECT_EQ(parseSandboxMode("bubblewrap"), SandboxMode::Bubblewrap);
  EXPECT_EQ(parseSandboxMode("off"), SandboxMode::Off);
  EXPECT_EQ(parseSandboxMode("Auto"), std::nullopt);
  EXPECT_EQ(parseSandboxMode("on"), std::nullopt);
  EXPECT_EQ(parseSandboxMode(""), std::nullopt);
  for (auto mode : {SandboxMode::Auto, SandboxMode::Bubblewrap, SandboxMode::Off}) {
    EXPECT_EQ(parseSandboxMode(toString(mode)), mode);
  }
}

TEST(SandboxModeTest, AutoConfinesWhenTheProbeWorksAndWarnsWhenItDoesNot) {
  SandboxProbe works{ProbeOutcome::Works, "/usr/bin/bwrap", ""};
  const auto confined = decideSandbox(SandboxMode::Auto, works);
  EXPECT_TRUE(confined.confined);
  EXPECT_EQ(confined.bwrap, "/usr/bin/bwrap");
  EXPECT_EQ(confined.warning, "");

  SandboxProbe missing{ProbeOutcome::NotInstalled, "", "'bwrap' not found on PATH \"/bin\""};
  const auto unconfined = decideSandbox(SandboxMode::Auto, missing);
  EXPECT_FALSE(unconfined.confined);
  EXPECT_THAT(unconfined.warning, HasSubstr("bubblewrap is not installed"));
  EXPECT_THAT(unconfined.warning, HasSubstr("unconfined"));
}

TEST(SandboxModeTest, BubblewrapModeRefusesToRunUnconfined) {
  SandboxProbe refused{ProbeOutcome::NamespacesRefused, "/usr/bin/bwrap",
                       "bwrap: Creating new namespace failed"};
  try {
    decideSandbox(SandboxMode::Bubblewrap, refused);
    FAIL() << "expected SandboxError";
  } catch (const SandboxError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot create its namespaces"));
    EXPECT_THAT(e.what(), HasSubstr("Creating new namespace failed"));
    EXPECT_THAT(e.what(), HasSubstr("sandbox = \"auto\" or \"off\""));
  }
  SandboxProbe works{ProbeOutcome::Works, "/usr/bin/bwrap", ""};
  EXPECT_TRUE(decideSandbox(SandboxMode::Bubblewrap, works).confined);
}

TEST(SandboxModeTest, OffNeverConfinesAndDoesNotWarn) {
  SandboxProbe works{ProbeOutcome::Works, "/usr/bin/bwrap", ""};
  const auto decision = decideSandbox(SandboxMode::Off, works);
  EXPECT_FALSE(decision.confined);
  EXPECT_EQ(decision.warning, "");
}

TEST(SandboxPathsTest, WithinComparesWholeComponents) {
  EXPECT_TRUE(isWithin("/a/b", "/a/b"));
  EXPECT_TRUE(isWithin("/a/b/c", "/a/b"));
  EXPECT_TRUE(isWithin("/a/b/c", "/a/b/"));
  EXPECT_TRUE(isWithin("/a/b/../b/c", "/a/b"));
  EXPECT_FALSE(isWithin("/a/bc", "/a/b"));
  EXPECT_FALSE(isWithin("/a", "/a/b"));
  EXPECT_FALSE(isWithin("/a/b/../c", "/a/b"));
  EXPECT_TRUE(isWithin("/anything", "/"));
}

class PolicyTest : public ::testing::Test {
 protected:
  RaceRepo repo;
};

TEST_F(PolicyTest, PolicyForWorktreeFindsItsMetadataAndTheCheckout) {
  const SandboxPolicy policy = policyForWorktree(repo.agent().path);
  EXPECT_EQ(policy.worktree, repo.agent().path);
  ASSERT_TRUE(policy.gitMetadata.has_value());
  EXPECT_EQ(*policy.gitMetadata, repo.gitMetadata(repo.agent()));
  EXPECT_EQ(policy.repository, repo.root());
  EXPECT_THAT(policy.hidden,
              ElementsAre(repo.root() / ".hydra-workspaces", repo.root() / ".hydra"));
  EXPECT_TRUE(policy.privateTmp);
}

TEST_F(PolicyTest, PolicyForTheMainCheckoutIsRefused) {
  EXPECT_THROW(policyForWorktree(repo.root()), git::GitError);
}

TEST_F(PolicyTest, CommandLineHasTheMandatoryFlagsAndTheProgramAfterTheSeparator) {
  ProcessSpec spec;
  spec.program = "/bin/echo";
  spec.args = {"hello", "--bind", "/", "/"};
  spec.timeout = std::chrono::seconds(7);
  const ProcessSpec confined = confine(spec, policyForWorktree(repo.agent().path), kBwrap);
  EXPECT_EQ(confined.program, kBwrap.string());
  EXPECT_EQ(confined.timeout, std::chrono::seconds(7));
  const auto& args = confined.args;
  ASSERT_GE(args.size(), 7u);
  EXPECT_THAT(std::vector<std::string>(args.begin(), args.begin() + 7),
              ElementsAre("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"));
  for (const char* flag : {"--unshare-pid", "--die-with-parent", "--new-session"}) {
    EXPECT_THAT(args, Contains(flag));
  }
  const auto capDrop = std::find(args.begin(), args.end(), "--cap-drop");
  ASSERT_NE(capDrop, args.end());
  EXPECT_EQ(*(capDrop + 1), "ALL");
  EXPECT_NE(positionOf(args, "--chdir", repo.agent().path.string()), -1);
  // The command's own arguments come after "--", untouched, even when they
  // look like bwrap options.
  const auto separator = std::find(args.begin(), args.end(), "--");
  ASSERT_NE(separator, args.end());
  EXPECT_THAT(std::vector<std::string>(separator + 1, args.end()),
              ElementsAre("/bin/echo", "hello", "--bind", "/", "/"));
}

TEST_F(PolicyTest, CommandLineBindsWhatThePolicySaysParentsFirst) {
  SandboxPolicy policy = policyForWorktree(repo.agent().path);
  const fs::path state = repo.root().parent_path() / "home" / ".agent-state";
  policy.writable.push_back(state);
  ProcessSpec spec;
  spec.program = "/bin/true";
  const auto args = confine(spec, policy, kBwrap).args;

  EXPECT_TRUE(fs::is_directory(state)) << "writable paths are created first";
  const std::string root = repo.root().string();
  const std::string agent = repo.agent().path.string();
  const std::string metadata = repo.gitMetadata(repo.agent()).string();
  const std::string workspaces = (repo.root() / ".hydra-workspaces").string();
  const std::string records = (repo.root() / ".hydra").string();
  // Sorted by path: the state folder lives next to the repository, in "home".
  EXPECT_THAT(bindsOf(args, "--bind"), ElementsAre(state.string(), metadata, agent));
  // The worktree's own settings, the links between it and the repository and
  // hydra's record of it are read-only inside its writable metadata folder.
  EXPECT_THAT(bindsOf(args, "--ro-bind"),
              ElementsAre("/", root, metadata + "/commondir", metadata + "/config.worktree",
                          metadata + "/gitdir", metadata + "/hydra", agent + "/.git"));
  EXPECT_THAT(bindsOf(args, "--tmpfs"), ElementsAre("/tmp", records, workspaces));
  EXPECT_THAT(bindsOf(args, "--remount-ro"), ElementsAre(workspaces, records));
  // Order: private /tmp, then the checkout read-only, the hidden folders,
  // the worktree inside them, its .git link over it, remounts at the end.
  EXPECT_LT(positionOf(args, "--tmpfs", "/tmp"), positionOf(args, "--ro-bind", root));
  EXPECT_LT(positionOf(args, "--ro-bind", root), positionOf(args, "--tmpfs", workspaces));
  EXPECT_LT(positionOf(args, "--tmpfs", workspaces), positionOf(args, "--bind", agent));
  EXPECT_LT(positionOf(args, "--bind", agent), positionOf(args, "--ro-bind", agent + "/.git"));
  EXPECT_LT(positionOf(args, "--ro-bind", agent + "/.git"),
            positionOf(args, "--remount-ro", workspaces));
  EXPECT_EQ(*(std::find(args.begin(), args.end(), "--tmpfs") - 2), "--perms");
  EXPECT_EQ(*(std::find(args.begin(), args.end(), "--tmpfs") - 1), "1777");
}

TEST_F(PolicyTest, PathsThatDoNotExistAreLeftOutOfReadOnlyAndHidden) {
  SandboxPolicy policy = policyForWorktree(repo.agent().path);
  policy.readOnly.push_back("/nonexistent-hydra-tool-dir");
  policy.hidden.push_back(repo.root() / "no-such-dir");
  ProcessSpec spec;
  spec.program = "/bin/true";
  const auto args = confine(spec, policy, kBwrap).args;
  EXPECT_THAT(args, Not(Contains("/nonexistent-hydra-tool-dir")));
  EXPECT_THAT(args, Not(Contains((repo.root() / "no-such-dir").string())));
}

TEST_F(PolicyTest, WithoutPrivateTmpTheHostTmpStaysReadOnly) {
  SandboxPolicy policy = policyForWorktree(repo.agent().path);
  policy.privateTmp = false;
  ProcessSpec spec;
  spec.program = "/bin/true";
  const auto args = confine(spec, policy, kBwrap).args;
  EXPECT_THAT(bindsOf(args, "--tmpfs"), Not(Contains("/tmp")));
  EXPECT_THAT(args, Not(Contains("--perms")));
}

void expectRefused(const SandboxPolicy& policy, const std::string& program,
                   const std::string& message) {
  ProcessSpec spec;
  spec.program = program;
  try {
    confine(spec, policy, kBwrap);
    ADD_FAILURE() << "expected SandboxError containing: " << message;
  } catch (const SandboxError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST_F(PolicyTest, PoliciesThatWouldNotConfineAreRefused) {
  const SandboxPolicy base = policyForWorktree(repo.agent().path);

  SandboxPolicy relative = base;
  relative.writable.push_back("state");
  expectRefused(relative, "/bin/true", "writable path 'state' is not an absolute path");

  SandboxPolicy ancestor = base;
  ancestor.writable.push_back(repo.root().parent_path());
  expectRefused(ancestor, "/bin/true", "would make the user's checkout writable");

  SandboxPolicy inside = base;
  inside.writable.push_back(repo.root() / ".hydra");
  expectRefused(inside, "/bin/true", "lies in the user's checkout, outside the worktree");

  SandboxPolicy checkout = base;
  checkout.worktree = repo.root();
  expectRefused(checkout, "/bin/true", "is or contains the user's checkout");

  SandboxPolicy missing = base;
  missing.worktree = repo.root() / "no-such-worktree";
  expectRefused(missing, "/bin/true", "is not a directory");

  SandboxPolicy noRepository = base;
  noRepository.repository.clear();
  expectRefused(noRepository, "/bin/true", "no repository given");

  expectRefused(base, "hydra-no-such-program", "not found on PATH");
}

TEST_F(PolicyTest, ProgramHiddenByThePrivateTmpIsRefusedUnlessBoundBack) {
  // The repository lives under /tmp here, like a tool install might.
  const fs::path tool = repo.root().parent_path() / "tools" / "agent";
  testing::writeFile(tool, "#!/bin/sh\n");
  fs::permissions(tool, fs::perms::owner_all);
  SandboxPolicy policy = policyForWorktree(repo.agent().path);
  ASSERT_TRUE(isWithin(tool, "/tmp")) << "this test needs the system temp dir to be /tmp";
  expectRefused(policy, tool.string(), "lives under /tmp");

  policy.readOnly.push_back(tool.parent_path());
  ProcessSpec spec;
  spec.program = tool.string();
  EXPECT_NO_THROW(confine(spec, policy, kBwrap));
}

TEST_F(PolicyTest, EnvironmentPointsAtTheWorktreeAndNowhereElseInTheCheckout) {
  const std::string root = repo.root().string();
  ScopedEnv gitDir("GIT_DIR", root + "/.git");
  ScopedEnv oldPwd("OLDPWD", root + "/src");
  ScopedEnv unrelated("HYDRA_TEST_UNRELATED", "/usr/share");
  ScopedEnv list("HYDRA_TEST_LIST", "/usr/bin:" + root + "/node_modules/.bin::/bin");
  ScopedEnv onlyCheckout("HYDRA_TEST_ONLY_CHECKOUT", root + "/a:" + root + "/b");

  ProcessSpec spec;
  spec.program = "/bin/true";
  spec.env["HYDRA_WORKTREE"] = repo.agent().path.string();
  spec.env["HYDRA_TEST_SPEC"] = root + "/hydra.toml";
  applyPolicyEnvironment(spec, policyForWorktree(repo.agent().path));

  EXPECT_EQ(spec.cwd, repo.agent().path);
  EXPECT_EQ(spec.env["PWD"], repo.agent().path.string());
  EXPECT_EQ(spec.env["HYDRA_WORKTREE"], repo.agent().path.string());
  for (const char* name : {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "OLDPWD",
                           "HYDRA_TEST_ONLY_CHECKOUT", "HYDRA_TEST_SPEC"}) {
    EXPECT_THAT(spec.unsetEnv, Contains(name));
    EXPECT_EQ(spec.env.count(name), 0u) << name;
  }
  EXPECT_THAT(spec.unsetEnv, Not(Contains("HYDRA_TEST_UNRELATED")));
  EXPECT_THAT(spec.unsetEnv, Not(Contains("PATH")));
  EXPECT_EQ(spec.env["HYDRA_TEST_LIST"], "/usr/bin::/bin");
}

TEST_F(PolicyTest, UnconfinedRunsInTheWorktreeWithThePolicysEnvironment) {
  ScopedEnv pwd("PWD", repo.root().string());
  ProcessSpec spec;
  spec.program = "/bin/true";
  const ProcessSpec ready = unconfined(spec, policyForWorktree(repo.agent().path));
  EXPECT_EQ(ready.program, "/bin/true");
  EXPECT_EQ(ready.cwd, repo.agent().path);
  EXPECT_EQ(ready.env.at("PWD"), repo.agent().path.string());
}

TEST_F(PolicyTest, GitCommitPathsAreTheObjectStoreAndTheBranchFolders) {
  const fs::path common = repo.root() / ".git";
  fs::remove_all(common / "logs" / "refs" / "heads" / "hydra");  // as after a gc
  const auto paths = gitCommitPaths(common, "hydra/hostile-20261121-120411");
  EXPECT_THAT(paths, ElementsAre(common / "objects", common / "refs/heads/hydra",
                                 common / "logs/refs/heads/hydra"));
  for (const auto& path : paths) EXPECT_TRUE(fs::is_directory(path)) << path;
}

}  // namespace
}  // namespace hydra::core::sandbox
