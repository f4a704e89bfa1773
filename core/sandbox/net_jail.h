#pragma once

// `hydra net-jail [--unshare] [--proxy SOCKET] -- PROGRAM ARGS...` (hidden):
// what runs first in an agent's network namespace, then becomes the agent.
//
//   --unshare       make the namespace here (no bubblewrap made one): as
//                   root a new network namespace; otherwise a user namespace
//                   that maps the user to itself, and a network namespace in
//                   it. Loopback is brought up. When the kernel refuses, the
//                   run fails saying so: it never runs with the host's network.
//   --proxy SOCKET  network = "allowlist": a forwarder listens on
//                   127.0.0.1:kProxyPort inside the namespace (before the
//                   agent starts, so its first request finds it) and relays
//                   each connection to the proxy's unix socket outside. This
//                   process stays, as the forwarder, and runs PROGRAM as its
//                   child: it passes on SIGTERM, SIGINT and SIGHUP, and ends
//                   the way the agent ended, so nothing of it outlives the
//                   agent and hydra sees the agent's own exit status; the
//                   agent is killed if the forwarder dies (PR_SET_PDEATHSIG).
//
// Without --proxy, PROGRAM (looked up on PATH) replaces this process.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/process/process.h"

namespace hydra::core::sandbox {

struct NetJailOptions {
  bool unshare = false;
  std::optional<std::filesystem::path> proxySocket;
  std::vector<std::string> command;
};

// Only returns on failure, with the exit status (126: no namespace or no
// forwarder, 127: PROGRAM cannot be executed), having said why on stderr.
int runNetJail(const NetJailOptions& options);

// `spec` run through `hydra` (the binary) net-jail with these options; its
// program is resolved now, against spec.cwd or PATH, as Process would.
ProcessSpec inNetJail(ProcessSpec spec, const std::filesystem::path& hydra, bool unshare,
                      const std::optional<std::filesystem::path>& proxySocket);

// The path of the running hydra binary.
std::filesystem::path hydraBinary();

}  // namespace hydra::core::sandbox
