#include "core/sandbox/mode.h"

#include "core/sandbox/probe.h"

namespace hydra::core::sandbox {

std::string_view toString(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::Auto:
      return "auto";
    case SandboxMode::Bubblewrap:
      return "bubblewrap";
    case SandboxMode::Off:
      return "off";
  }
  return "auto";
}

std::optional<SandboxMode> parseSandboxMode(std::string_view text) {
  for (SandboxMode mode : {SandboxMode::Auto, SandboxMode::Bubblewrap, SandboxMode::Off}) {
    if (text == toString(mode)) return mode;
  }
  return std::nullopt;
}

SandboxDecision decideSandbox(SandboxMode mode, const SandboxProbe& probe) {
  SandboxDecision decision;
  switch (mode) {
    case SandboxMode::Off:
      return decision;
    case SandboxMode::Bubblewrap:
      if (!probe.works()) {
        throw SandboxError("sandbox = \"bubblewrap\", but " + probe.describe() +
                           "; fix that, or set sandbox = \"auto\" or \"off\" in [general]");
      }
      break;
    case SandboxMode::Auto:
      if (!probe.works()) {
        decision.warning = probe.describe() + ": agents and checks run unconfined";
        return decision;
      }
      break;
  }
  decision.confined = true;
  decision.bwrap = probe.bwrap;
  return decision;
}

}  // namespace hydra::core::sandbox
