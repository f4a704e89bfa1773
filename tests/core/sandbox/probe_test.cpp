// The probe against the real bubblewrap of this machine, against a missing
// one, and where user namespaces are refused (hydra_sandbox_probe sets that
// up in a namespace of its own, without touching the host).

#include "core/sandbox/probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/core/git/temp_repo.h"

namespace hydra::core::sandbox {
namespace {

using ::testing::HasSubstr;

TEST(ProbeTest, BubblewrapWorksHere) {
  const SandboxProbe probe = probeBubblewrap();
  EXPECT_EQ(probe.outcome, ProbeOutcome::Works) << probe.describe();
  EXPECT_TRUE(probe.works());
  EXPECT_TRUE(probe.bwrap.is_absolute());
  EXPECT_EQ(probe.bwrap.filename(), "bwrap");
  EXPECT_THAT(probe.describe(), HasSubstr("bubblewrap works"));
}

TEST(ProbeTest, MissingBinaryIsNotInstalled) {
  const SandboxProbe probe = probeBubblewrap("hydra-no-such-bwrap");
  EXPECT_EQ(probe.outcome, ProbeOutcome::NotInstalled);
  EXPECT_FALSE(probe.works());
  EXPECT_THAT(probe.describe(), HasSubstr("not installed"));
  EXPECT_THAT(probe.describe(), HasSubstr("hydra-no-such-bwrap"));
  EXPECT_THAT(probe.describe(), HasSubstr("bubblewrap"));
}

TEST(ProbeTest, SomethingThatIsNotBubblewrapFails) {
  // /bin/false takes any arguments and exits 1, saying nothing.
  const SandboxProbe probe = probeBubblewrap("/bin/false");
  EXPECT_EQ(probe.outcome, ProbeOutcome::Failed);
  EXPECT_THAT(probe.describe(), HasSubstr("does not work here"));
  EXPECT_THAT(probe.describe(), HasSubstr("exit code 1"));
}

TEST(ProbeTest, RefusedUserNamespacesAreReportedAsSuch) {
  const std::string out =
      testing::run(std::string(HYDRA_SANDBOX_PROBE) + " --without-user-namespaces");
  EXPECT_THAT(out, HasSubstr("outcome: namespaces-refused")) << out;
  // bwrap's own words reach the user.
  EXPECT_THAT(out, HasSubstr("namespace")) << out;
}

TEST(ProbeTest, TheToolSeesTheSameAsTheLibraryWithNamespacesAvailable) {
  const std::string out = testing::run(HYDRA_SANDBOX_PROBE);
  EXPECT_THAT(out, HasSubstr("outcome: works")) << out;
}

TEST(ProbeTest, CachedProbeIsRunOnce) {
  const SandboxProbe& first = cachedSandboxProbe();
  const SandboxProbe& second = cachedSandboxProbe();
  EXPECT_EQ(&first, &second);
  EXPECT_TRUE(first.works()) << first.describe();
}

}  // namespace
}  // namespace hydra::core::sandbox
