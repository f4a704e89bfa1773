// Aider: `aider --message TASK --yes-always --no-auto-commits --no-stream`.
//
// Aider prints plain text only (no JSON mode), so each line is shown as text.
// The invocation follows aider's documented options; no captured run backs
// it. --no-auto-commits matters: by default aider commits its own edits, and
// committing an agent's work is left to the race.

#include <memory>

#include "core/adapter/builtin.h"

namespace hydra::core::adapters {

namespace {

class AiderAdapter final : public Adapter {
 public:
  // The two APIs its default models use.
  std::vector<std::string_view> defaultAllowedHosts() const override { return {"api.openai.com", "api.anthropic.com"}; }
  std::string_view name() const override { return "aider"; }
  std::string_view defaultBinary() const override { return "aider"; }
  std::vector<std::filesystem::path> stateDirectories(const std::map<std::string, std::string>& env,
                                                      const std::filesystem::path& home) const override {
    (void)env;
    // Its analytics id and caches; its chat history goes into the worktree.
    return {home / ".aider"};
  }

  Invocation invocation(const AgentConfig& config, std::string_view task) const override {
    static const CommandTemplate command{
        .args = {"--message", "{task}", "--yes-always", "--no-auto-commits", "--no-stream"},
    };
    return buildInvocation(config, command, task);
  }

  std::unique_ptr<StreamParser> parser() const override {
    return plainTextParser(EventKind::Text, /*keepBlank=*/false);
  }

  bool finalMessageIsOutput() const override { return true; }
};

}  // namespace

const Adapter& aiderAdapter() {
  static const AiderAdapter adapter;
  return adapter;
}

}  // namespace hydra::core::adapters
