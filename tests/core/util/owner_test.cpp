#include "core/util/owner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util/proc_stat.h"

namespace hydra::core {
namespace {

// A pid that named a process a moment ago and names none now: a child that
// exited and was reaped.
int reapedPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return static_cast<int>(child);
}

TEST(OwnerTest, ThisProcessIsAlive) {
  const ProcessOwner self = ProcessOwner::self();
  EXPECT_EQ(self.pid, ::getpid());
  EXPECT_EQ(self.startTime, processStartTime(::getpid()).value());
  EXPECT_FALSE(self.host.empty());
  EXPECT_EQ(ownerLife(self), OwnerLife::Alive);
}

TEST(OwnerTest, AnExitedProcessIsDead) {
  const ProcessOwner self = ProcessOwner::self();
  EXPECT_EQ(ownerLife(ProcessOwner{reapedPid(), self.startTime, self.host}), OwnerLife::Dead);
  EXPECT_EQ(ownerLife(ProcessOwner{0, 0, self.host}), OwnerLife::Dead);
  EXPECT_EQ(ownerLife(ProcessOwner{-1, 0, ""}), OwnerLife::Dead);
}

TEST(OwnerTest, AReusedPidWithAnotherStartTimeIsDead) {
  ProcessOwner earlier = ProcessOwner::self();
  earlier.startTime += 1;  // the same pid, but a process that started at another time
  EXPECT_EQ(ownerLife(earlier), OwnerLife::Dead);
}

TEST(OwnerTest, ALivePidWithoutAStartTimeIsTakenAtItsWord) {
  ProcessOwner old = ProcessOwner::self();
  old.startTime = 0;
  old.host.clear();  // written before hosts were: this host
  EXPECT_EQ(ownerLife(old), OwnerLife::Alive);
}

TEST(OwnerTest, AnotherHostsOwnerIsNeverTakenForDead) {
  const ProcessOwner self = ProcessOwner::self();
  const std::string other = self.host + "-elsewhere";
  EXPECT_EQ(ownerLife(ProcessOwner{reapedPid(), 1, other}), OwnerLife::Elsewhere);
  EXPECT_EQ(ownerLife(ProcessOwner{self.pid, self.startTime, other}), OwnerLife::Elsewhere);
}

TEST(OwnerTest, AWordRoundTripsAndGarbageIsRefused) {
  const ProcessOwner owner{4242, 987654321012ull, "build-7.example"};
  EXPECT_EQ(toWord(owner), "4242:987654321012:build-7.example");
  EXPECT_EQ(parseOwnerWord(toWord(owner)), owner);
  EXPECT_EQ(parseOwnerWord("4242:0:"), (ProcessOwner{4242, 0, ""}));
  for (const char* bad : {"", "4242", "4242:1", "x:1:h", "4242:y:h", "0:1:h", "-3:1:h", "4242:1:h:x", "4242 :1:h"}) {
    EXPECT_EQ(parseOwnerWord(bad), std::nullopt) << bad;
  }
}

TEST(OwnerTest, DescribeNamesThePidAndTheHost) {
  EXPECT_EQ(describe(ProcessOwner{4242, 1, "build-7"}), "pid 4242 on build-7");
  EXPECT_EQ(describe(ProcessOwner{4242, 1, ""}), "pid 4242 on " + ProcessOwner::self().host);
}

}  // namespace
}  // namespace hydra::core
