#pragma once

// Does confinement work on this machine? Runs bubblewrap once, with the shape
// of a real policy (private /tmp, a writable directory, a read-only one, its
// own PID namespace, no capabilities), and checks that the writable one took
// a write and the read-only one refused it.

#include <filesystem>
#include <string>

namespace hydra::core::sandbox {

enum class ProbeOutcome {
  Works,
  NotInstalled,       // no bwrap on PATH
  NamespacesRefused,  // the kernel would not give bwrap its namespaces
  Failed,             // anything else; `detail` has bwrap's own words
};

struct SandboxProbe {
  ProbeOutcome outcome = ProbeOutcome::Failed;
  std::filesystem::path bwrap;  // the binary found (empty when not installed)
  // What went wrong, for people: bwrap's error message, the missing program.
  std::string detail;

  bool works() const { return outcome == ProbeOutcome::Works; }
  // One sentence: "bubblewrap works (/usr/bin/bwrap)", "bubblewrap is not
  // installed (install the Debian package bubblewrap)", ...
  std::string describe() const;
};

// Runs the probe now with `program` (looked up on PATH unless it holds a
// '/'). Blocking; a few milliseconds when bubblewrap works.
SandboxProbe probeBubblewrap(const std::string& program = "bwrap");

// probeBubblewrap() run once per process, on first use; thread-safe.
const SandboxProbe& cachedSandboxProbe();

}  // namespace hydra::core::sandbox
