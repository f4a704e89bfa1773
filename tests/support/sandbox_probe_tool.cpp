// hydra_sandbox_probe: prints what core/sandbox's probe finds on this machine,
// as two lines, "outcome: works|not-installed|namespaces-refused|failed" and
// "describe: <SandboxProbe::describe()>".
//
//   --without-user-namespaces   first moves into a user namespace of its own
//                               whose user.max_user_namespaces is 0, as an
//                               unprivileged user (uid 1000 there): what a
//                               machine with unprivileged user namespaces
//                               turned off looks like to bwrap. The host's
//                               sysctl is not touched.
//   --program NAME              probe NAME instead of bwrap

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "core/sandbox/probe.h"

namespace {

bool writeProcFile(const char* path, const std::string& content) {
  std::ofstream out(path);
  out << content;
  out.close();
  if (!out) std::fprintf(stderr, "hydra_sandbox_probe: cannot write %s\n", path);
  return static_cast<bool>(out);
}

bool leaveUserNamespaces() {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWUSER) != 0) {
    std::fprintf(stderr, "hydra_sandbox_probe: unshare: %s\n", std::strerror(errno));
    return false;
  }
  // The limit holds in this namespace and every one below it; the creator
  // has the capabilities here to set it.
  if (!writeProcFile("/proc/sys/user/max_user_namespaces", "0")) return false;
  if (!writeProcFile("/proc/self/setgroups", "deny")) return false;
  if (!writeProcFile("/proc/self/uid_map", "1000 " + std::to_string(uid) + " 1\n")) return false;
  if (!writeProcFile("/proc/self/gid_map", "1000 " + std::to_string(gid) + " 1\n")) return false;
  if (::setresgid(1000, 1000, 1000) != 0 || ::setresuid(1000, 1000, 1000) != 0) {
    std::fprintf(stderr, "hydra_sandbox_probe: cannot become uid 1000: %s\n", std::strerror(errno));
    return false;
  }
  return true;
}

const char* outcomeName(hydra::core::sandbox::ProbeOutcome outcome) {
  using hydra::core::sandbox::ProbeOutcome;
  switch (outcome) {
    case ProbeOutcome::Works:
      return "works";
    case ProbeOutcome::NotInstalled:
      return "not-installed";
    case ProbeOutcome::NamespacesRefused:
      return "namespaces-refused";
    case ProbeOutcome::Failed:
      break;
  }
  return "failed";
}

}  // namespace

int main(int argc, char** argv) {
  std::string program = "bwrap";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--without-user-namespaces") {
      if (!leaveUserNamespaces()) return 70;
    } else if (arg == "--program" && i + 1 < argc) {
      program = argv[++i];
    } else {
      std::fprintf(stderr, "hydra_sandbox_probe: unknown argument '%s'\n", argv[i]);
      return 64;
    }
  }
  const auto probe = hydra::core::sandbox::probeBubblewrap(program);
  std::printf("outcome: %s\ndescribe: %s\n", outcomeName(probe.outcome), probe.describe().c_str());
  return 0;
}
