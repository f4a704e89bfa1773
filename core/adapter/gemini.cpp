// Gemini CLI: `gemini -p TASK --output-format stream-json --yolo`.
//
// The stream (captured from gemini-cli 0.61): `init`; `message` (the user's
// prompt echoed, then the assistant's text in `delta` pieces); `tool_use` with
// `tool_name`, `tool_id` and `parameters`; `tool_result` with `tool_id`,
// `status` and `output` or `error`; `error` with a `severity`; and one final
// `result` with `status` and token `stats`.

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "core/adapter/builtin.h"
#include "core/adapter/json_stream.h"

namespace hydra::core::adapters {

namespace {

class GeminiParser final : public JsonLinesParser {
 protected:
  bool parseObjectLine(const json::object& line, std::vector<AgentEvent>& out) override {
    std::string type = stringAt(line, {"type"});
    if (type == "init") return true;
    if (type == "message") return parseMessage(line, out);
    // Unknown lines become Raw without flushing: the text held back would be
    // dropped with this line's events, so it waits for the next known one.
    if (type != "tool_use" && type != "tool_result" && type != "error" && type != "result") {
      return false;
    }
    flushText(out);
    if (type == "tool_use") {
      parseToolUse(line, out);
    } else if (type == "tool_result") {
      parseToolResult(line, out);
    } else if (type == "error") {
      parseError(line, out);
    } else {
      parseResult(line, out);
    }
    return true;
  }

  void flush(std::vector<AgentEvent>& out) override { flushText(out); }

  AgentEvent summaryFromSeen() override {
    AgentEvent summary = summaryEvent();
    summary.text = lastText_;
    summary.isError = true;
    summary.warnings.push_back("the stream ended without a result event");
    return summary;
  }

 private:
  struct PendingTool {
    std::string name;
    std::string path;  // the file write_file or replace acts on
  };

  // The assistant's reply arrives in `delta` pieces; they are joined into one
  // Text event, sent when the next non-text event (or the end) shows it is complete.
  bool parseMessage(const json::object& line, std::vector<AgentEvent>& out) {
    if (stringAt(line, {"role"}) != "assistant") return true;  // the prompt, echoed
    std::string content = stringAt(line, {"content"});
    if (boolAt(line, {"delta"})) {
      pendingText_ += content;
      return true;
    }
    flushText(out);
    pendingText_ = std::move(content);
    flushText(out);
    return true;
  }

  void flushText(std::vector<AgentEvent>& out) {
    if (pendingText_.empty()) return;
    lastText_ = pendingText_;
    out.push_back(textEvent(std::move(pendingText_)));
    pendingText_.clear();
  }

  void parseToolUse(const json::object& line, std::vector<AgentEvent>& out) {
    std::string name = stringAt(line, {"tool_name"});
    const json::value* parameters = line.if_contains("parameters");
    json::value none;
    const json::value& input = parameters != nullptr ? *parameters : none;
    out.push_back(toolCallEvent(name, describeInput(input)));

    std::string path;
    if ((name == "write_file" || name == "replace") && input.is_object()) {
      path = stringAt(input.get_object(), {"file_path"});
    }
    tools_[stringAt(line, {"tool_id"})] = PendingTool{std::move(name), std::move(path)};
  }

  void parseToolResult(const json::object& line, std::vector<AgentEvent>& out) {
    PendingTool tool;
    if (auto it = tools_.find(stringAt(line, {"tool_id"})); it != tools_.end()) {
      tool = std::move(it->second);
      tools_.erase(it);
    }
    std::string status = stringAt(line, {"status"});
    bool isError = status != "success";
    std::string detail = stringAt(line, {"output"});
    if (detail.empty()) detail = stringAt(line, {"error", "message"});
    if (detail.empty()) detail = status;
    out.push_back(toolResultEvent(tool.name, oneLine(detail, kDetailLimit), isError));
    if (isError || tool.path.empty()) return;
    if (tool.name == "write_file") {
      // write_file creates or overwrites; the stream does not say which.
      out.push_back(fileChangeEvent(tool.path, written_.changeForWrite(tool.path)));
    } else {
      written_.remember(tool.path);
      out.push_back(fileChangeEvent(tool.path, "update"));
    }
  }

  void parseError(const json::object& line, std::vector<AgentEvent>& out) {
    std::string message = stringAt(line, {"message"});
    if (message.empty()) message = "error";
    if (stringAt(line, {"severity"}) == "warning") {
      AgentEvent warning = errorEvent("warning: " + message);
      warning.isError = false;
      out.push_back(std::move(warning));
      return;
    }
    out.push_back(errorEvent(std::move(message)));
  }

  void parseResult(const json::object& line, std::vector<AgentEvent>& out) {
    AgentEvent summary = summaryEvent();
    summary.text = lastText_;
    summary.isError = stringAt(line, {"status"}) != "success";
    std::string error = stringAt(line, {"error", "message"});
    if (!error.empty()) summary.warnings.push_back(error);
    if (objectAt(line, {"stats"}) != nullptr) {
      Usage usage;
      usage.inputTokens = countAt(line, {"stats", "input_tokens"});
      usage.outputTokens = countAt(line, {"stats", "output_tokens"});
      usage.cachedInputTokens = countAt(line, {"stats", "cached"});
      summary.usage = usage;
    }
    emitSummary(std::move(summary), out);
  }

  std::map<std::string, PendingTool> tools_;  // by tool_id, until their result arrives
  std::string pendingText_;
  std::string lastText_;
  WrittenPaths written_;
};

class GeminiAdapter final : public Adapter {
 public:
  // The Generative Language API (API keys); Google sign-in uses Code Assist and refreshes its token.
  std::vector<std::string_view> defaultAllowedHosts() const override { return {"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"}; }
  std::string_view name() const override { return "gemini"; }
  std::string_view defaultBinary() const override { return "gemini"; }
  std::vector<std::filesystem::path> stateDirectories(const std::map<std::string, std::string>& env,
                                                      const std::filesystem::path& home) const override {
    (void)env;
    // Settings it rewrites at start, its project registry, history and tmp.
    return {home / ".gemini"};
  }

  Invocation invocation(const AgentConfig& config, std::string_view task) const override {
    static const CommandTemplate command{
        .args = {"-p", "{task}", "--output-format", "stream-json", "--yolo"},
        // Each race runs in a fresh worktree, a folder gemini has never been
        // told to trust; and without NO_RELAUNCH it re-spawns itself as a
        // second process, which is harder to supervise.
        .env = {{"GEMINI_CLI_TRUST_WORKSPACE", "true"}, {"GEMINI_CLI_NO_RELAUNCH", "true"}},
    };
    return buildInvocation(config, command, task);
  }

  std::unique_ptr<StreamParser> parser() const override { return std::make_unique<GeminiParser>(); }
};

}  // namespace

const Adapter& geminiAdapter() {
  static const GeminiAdapter adapter;
  return adapter;
}

}  // namespace hydra::core::adapters
