// Any program as an agent: `binary` with `args`, "{task}" inside an argument
// replaced by the task. The task is never put into a shell string; a program
// run without arguments reads it from HYDRA_TASK, which the runner sets for
// every agent. Its output is unknown, so every line is passed on as Raw, even
// one that looks like another CLI's JSON.

#include <memory>

#include "core/adapter/builtin.h"

namespace hydra::core::adapters {

namespace {

class CommandAdapter final : public Adapter {
 public:
  std::string_view name() const override { return "command"; }
  // No default: [agents.NAME] must name the program with `binary`.
  std::string_view defaultBinary() const override { return ""; }

  Invocation invocation(const AgentConfig& config, std::string_view task) const override {
    static const CommandTemplate command{
        .args = {},
        .env = {},
        .appendTaskToReplacedArgs = false,
    };
    return buildInvocation(config, command, task);
  }

  std::unique_ptr<StreamParser> parser() const override {
    return plainTextParser(EventKind::Raw, /*keepBlank=*/true);
  }

  bool finalMessageIsOutput() const override { return true; }

  // Any program: there is no option it is known to answer with a version.
  std::vector<std::string> versionArgs() const override { return {}; }
};

}  // namespace

const Adapter& commandAdapter() {
  static const CommandAdapter adapter;
  return adapter;
}

}  // namespace hydra::core::adapters
