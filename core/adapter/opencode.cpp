// OpenCode: `opencode run --format json TASK`.
//
// The stream (captured from opencode 1.18): per model step a `step_start`,
// then `text` and `tool_use` parts (each tool part arrives once, already
// `completed` or `error`, with its input, output and metadata), then a
// `step_finish` carrying the step's tokens and cost. There is no final event:
// the Summary is built at the end from the steps seen.

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "core/adapter/builtin.h"
#include "core/adapter/json_stream.h"

namespace hydra::core::adapters {

namespace {

std::string errorMessage(const json::object& line) {
  for (auto keys : {std::initializer_list<std::string_view>{"error", "data", "message"},
                    std::initializer_list<std::string_view>{"error", "message"},
                    std::initializer_list<std::string_view>{"error", "name"},
                    std::initializer_list<std::string_view>{"error"}}) {
    std::string message = stringAt(line, keys);
    if (!message.empty()) return message;
  }
  return "error";
}

class OpencodeParser final : public JsonLinesParser {
 protected:
  bool parseObjectLine(const json::object& line, std::vector<AgentEvent>& out) override {
    std::string type = stringAt(line, {"type"});
    // Every line names its session; `opencode run --session` continues it.
    if (std::string id = stringAt(line, {"sessionID"}); !id.empty()) sessionId_ = id;
    if (type == "error") {
      sawError_ = true;
      out.push_back(errorEvent(errorMessage(line)));
      return true;
    }
    const json::object* part = objectAt(line, {"part"});
    if (part == nullptr) return false;
    if (type == "step_start") {
      insideStep_ = true;
      return true;
    }
    if (type == "text") {
      std::string text = stringAt(*part, {"text"});
      if (!text.empty()) {
        lastText_ = text;
        out.push_back(textEvent(std::move(text)));
      }
      return true;
    }
    if (type == "tool_use") {
      parseTool(*part, out);
      return true;
    }
    if (type == "step_finish") {
      parseStepFinish(*part, out);
      return true;
    }
    return false;
  }

  AgentEvent summaryFromSeen() override {
    AgentEvent summary = summaryEvent();
    summary.text = lastText_;
    summary.sessionId = sessionId_;
    summary.turns = steps_;
    if (sawUsage_) summary.usage = total_;
    summary.isError = sawError_;
    if (insideStep_) {
      summary.warnings.push_back("the stream ended inside a step");
    } else if (steps_ == 0) {
      summary.warnings.push_back("no step finished");
    } else if (lastReason_ != "stop") {
      summary.warnings.push_back("the last step ended with reason " + lastReason_);
    }
    return summary;
  }

 private:
  void parseTool(const json::object& part, std::vector<AgentEvent>& out) {
    std::string tool = stringAt(part, {"tool"});
    const json::value* input = find(part, {"state", "input"});
    json::value none;
    const json::value& args = input != nullptr ? *input : none;

    std::string callId = stringAt(part, {"callID"});
    if (callId.empty() || announced_.insert(callId).second) {
      out.push_back(toolCallEvent(tool, describeInput(args)));
    }

    std::string status = stringAt(part, {"state", "status"});
    if (status == "error") {
      out.push_back(toolResultEvent(tool, oneLine(stringAt(part, {"state", "error"}), kDetailLimit), true));
    } else if (status == "completed") {
      out.push_back(toolResultEvent(tool, oneLine(stringAt(part, {"state", "output"}), kDetailLimit), false));
      fileChange(tool, args, part, out);
    }
    // Pending and running states only announce the call.
  }

  void fileChange(const std::string& tool, const json::value& args, const json::object& part,
                  std::vector<AgentEvent>& out) {
    if ((tool != "write" && tool != "edit") || !args.is_object()) return;
    std::string path = stringAt(args.get_object(), {"filePath"});
    if (path.empty()) return;
    if (tool == "edit") {
      written_.remember(path);
      out.push_back(fileChangeEvent(path, "update"));
      return;
    }
    // write's metadata says whether the file was there before.
    const json::value* exists = find(part, {"state", "metadata", "exists"});
    if (exists != nullptr && exists->is_bool()) {
      written_.remember(path);
      out.push_back(fileChangeEvent(path, exists->get_bool() ? "update" : "add"));
      return;
    }
    out.push_back(fileChangeEvent(path, written_.changeForWrite(path)));
  }

  void parseStepFinish(const json::object& part, std::vector<AgentEvent>& out) {
    steps_ = nextTurn(steps_);
    insideStep_ = false;
    lastReason_ = stringAt(part, {"reason"});
    if (objectAt(part, {"tokens"}) == nullptr && !costAt(part, {"cost"})) return;
    Usage usage;
    usage.inputTokens = countAt(part, {"tokens", "input"});
    // Reasoning tokens are billed as output; opencode counts them apart.
    usage.outputTokens = countAt(part, {"tokens", "output"});
    if (auto reasoning = countAt(part, {"tokens", "reasoning"}); reasoning && usage.outputTokens) {
      usage.outputTokens = addCounts(*usage.outputTokens, *reasoning);
    }
    usage.cachedInputTokens = countAt(part, {"tokens", "cache", "read"});
    usage.costUsd = costAt(part, {"cost"});
    sawUsage_ = true;
    out.push_back(usageEvent(addUsage(total_, usage)));
  }

  std::set<std::string> announced_;  // tool callIDs whose ToolCall went out
  std::string lastText_;
  std::string sessionId_;
  std::string lastReason_;
  Usage total_;
  bool sawUsage_ = false;
  bool sawError_ = false;
  bool insideStep_ = false;
  int steps_ = 0;
  WrittenPaths written_;
};

class OpencodeAdapter final : public Adapter {
 public:
  // The providers it is most often set up with, its own (opencode.ai) and its model list (models.dev).
  std::vector<std::string_view> defaultAllowedHosts() const override { return {"api.anthropic.com", "api.openai.com", "opencode.ai", "models.dev"}; }
  std::string_view name() const override { return "opencode"; }
  std::string_view defaultBinary() const override { return "opencode"; }
  std::vector<std::filesystem::path> stateDirectories(const std::map<std::string, std::string>& env,
                                                      const std::filesystem::path& home) const override {
    // Its database and logs, its binaries cache, its config folder (it
    // writes a .gitignore there) and its locks, each where XDG says.
    return {envPath(env, "XDG_DATA_HOME", home / ".local" / "share") / "opencode",
            envPath(env, "XDG_CACHE_HOME", home / ".cache") / "opencode",
            envPath(env, "XDG_CONFIG_HOME", home / ".config") / "opencode",
            envPath(env, "XDG_STATE_HOME", home / ".local" / "state") / "opencode"};
  }

  Invocation invocation(const AgentConfig& config, std::string_view task) const override {
    static const CommandTemplate command{
        .args = {"run", "--format", "json", "{task}"},
        // A self-update in the middle of a race would change the binary under it.
        .env = {{"OPENCODE_DISABLE_AUTOUPDATE", "1"}},
    };
    return buildInvocation(config, command, task);
  }

  std::optional<Invocation> resumeInvocation(const AgentConfig& config, std::string_view sessionId,
                                             std::string_view task) const override {
    if (!config.args.empty()) return std::nullopt;
    const CommandTemplate command{
        .args = {"run", "--format", "json", "--session", std::string(sessionId), "{task}"},
        .env = {{"OPENCODE_DISABLE_AUTOUPDATE", "1"}},
    };
    return buildInvocation(config, command, task);
  }

  std::unique_ptr<StreamParser> parser() const override {
    return std::make_unique<OpencodeParser>();
  }
};

}  // namespace

const Adapter& opencodeAdapter() {
  static const OpencodeAdapter adapter;
  return adapter;
}

}  // namespace hydra::core::adapters
