#pragma once

// The `[general] sandbox` setting and what it decides, given what the probe
// found on this machine (probe.h).

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hydra::core::sandbox {

// A sandbox that cannot be set up as asked: an invalid policy, a mode that
// cannot be honoured. The message says what to do about it.
class SandboxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class SandboxMode {
  Auto,        // bubblewrap when the probe works, else unconfined (and say so)
  Bubblewrap,  // bubblewrap or nothing: refuse to run agents unconfined
  Off,         // unconfined
};

std::string_view toString(SandboxMode mode);
// "auto", "bubblewrap" or "off"; nullopt for anything else.
std::optional<SandboxMode> parseSandboxMode(std::string_view text);

struct SandboxProbe;

// How agents and checks run in this process.
struct SandboxDecision {
  bool confined = false;
  std::filesystem::path bwrap;  // the bubblewrap binary, when confined
  // For the user when not confined as they might expect: why, in one sentence
  // ("bubblewrap is not installed (...): agents run unconfined"). Empty when
  // confined, and when the mode is Off.
  std::string warning;
};

// Auto: confined if the probe works, else unconfined with a warning.
// Bubblewrap: confined if the probe works, else throws SandboxError with the
// probe's reason. Off: unconfined.
SandboxDecision decideSandbox(SandboxMode mode, const SandboxProbe& probe);

}  // namespace hydra::core::sandbox
