// Claude Code: `claude -p TASK --output-format stream-json --verbose`.
//
// The stream (captured from claude 2.1): `system/init`; `assistant` messages
// whose content blocks are `text` and `tool_use`; `user` messages carrying
// `tool_result` blocks (and a top-level `tool_use_result` with details such as
// whether Write created or updated the file); and one final `result` with
// `num_turns`, `total_cost_usd`, `usage`, `is_error` and `permission_denials`.

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <climits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/adapter/builtin.h"
#include "core/adapter/json_stream.h"

namespace hydra::core::adapters {

namespace {

bool isFileTool(std::string_view tool) {
  return tool == "Write" || tool == "Edit" || tool == "MultiEdit" || tool == "NotebookEdit";
}

std::string filePathOf(std::string_view tool, const json::value& input) {
  const json::object* object = input.if_object();
  if (object == nullptr || !isFileTool(tool)) return {};
  return stringAt(*object, {tool == "NotebookEdit" ? "notebook_path" : "file_path"});
}

class ClaudeParser final : public JsonLinesParser {
 protected:
  bool parseObjectLine(const json::object& line, std::vector<AgentEvent>& out) override {
    std::string type = stringAt(line, {"type"});
    if (type == "system") return stringAt(line, {"subtype"}) == "init";
    if (type == "assistant") return parseAssistant(line, out);
    if (type == "user") return parseUser(line, out);
    if (type == "result") return parseResult(line, out);
    return false;
  }

  AgentEvent summaryFromSeen() override {
    // Killed, crashed or cut off: claude always ends a finished run with `result`.
    AgentEvent summary = summaryEvent();
    summary.text = lastText_;
    summary.isError = true;
    summary.warnings.push_back("the stream ended without a result event");
    return summary;
  }

 private:
  struct PendingTool {
    std::string name;
    std::string path;  // the file a file tool writes; empty for other tools
  };

  bool parseAssistant(const json::object& line, std::vector<AgentEvent>& out) {
    const json::array* content = arrayAt(line, {"message", "content"});
    if (content == nullptr) return false;
    for (const json::value& block : *content) {
      const json::object* object = block.if_object();
      if (object == nullptr) continue;
      std::string type = stringAt(*object, {"type"});
      if (type == "text") {
        std::string text = stringAt(*object, {"text"});
        if (text.empty()) continue;
        lastText_ = text;
        out.push_back(textEvent(std::move(text)));
      } else if (type == "tool_use") {
        std::string name = stringAt(*object, {"name"});
        const json::value* input = object->if_contains("input");
        json::value none;
        const json::value& args = input != nullptr ? *input : none;
        out.push_back(toolCallEvent(name, describeInput(args)));
        tools_[stringAt(*object, {"id"})] = PendingTool{name, filePathOf(name, args)};
      }
      // `thinking` blocks are the model's scratchpad, not output: left out.
    }
    return true;
  }

  bool parseUser(const json::object& line, std::vector<AgentEvent>& out) {
    const json::value* content = find(line, {"message", "content"});
    if (content == nullptr) return false;
    const json::array* blocks = content->if_array();
    if (blocks == nullptr) return true;  // the prompt echoed back as a string
    for (const json::value& block : *blocks) {
      const json::object* object = block.if_object();
      if (object == nullptr || stringAt(*object, {"type"}) != "tool_result") continue;
      parseToolResult(*object, objectAt(line, {"tool_use_result"}), out);
    }
    return true;
  }

  void parseToolResult(const json::object& block, const json::object* details,
                       std::vector<AgentEvent>& out) {
    PendingTool tool;
    if (auto it = tools_.find(stringAt(block, {"tool_use_id"})); it != tools_.end()) {
      tool = std::move(it->second);
      tools_.erase(it);
    }
    bool isError = boolAt(block, {"is_error"});
    const json::value* content = block.if_contains("content");
    std::string text = content != nullptr ? contentText(*content) : std::string();
    out.push_back(toolResultEvent(tool.name, oneLine(text, kDetailLimit), isError));
    // A denied or failed write changed nothing: only successful ones count.
    if (!isError && !tool.path.empty()) {
      out.push_back(fileChangeEvent(tool.path, changeOf(tool, details)));
    }
  }

  std::string changeOf(const PendingTool& tool, const json::object* details) {
    if (tool.name != "Write") {
      written_.remember(tool.path);
      return "update";
    }
    // Write's details say "create" or "update" when they are about this file.
    if (details != nullptr && stringAt(*details, {"filePath"}) == tool.path) {
      std::string kind = stringAt(*details, {"type"});
      if (kind == "create" || kind == "update") {
        written_.remember(tool.path);
        return kind == "create" ? "add" : "update";
      }
    }
    return written_.changeForWrite(tool.path);
  }

  bool parseResult(const json::object& line, std::vector<AgentEvent>& out) {
    AgentEvent summary = summaryEvent();
    summary.text = stringAt(line, {"result"});
    if (summary.text.empty()) summary.text = lastText_;
    summary.sessionId = stringAt(line, {"session_id"});
    summary.isError = boolAt(line, {"is_error"});
    if (auto turns = countAt(line, {"num_turns"})) summary.turns = turnsFrom(*turns);
    summary.usage = usageOf(line);

    std::string subtype = stringAt(line, {"subtype"});
    if (!subtype.empty() && subtype != "success") {
      summary.warnings.push_back("run ended with " + subtype);
    }
    if (const json::array* denials = arrayAt(line, {"permission_denials"})) {
      for (const json::value& denial : *denials) {
        summary.warnings.push_back(describeDenial(denial));
      }
      summary.deniedToolCalls = static_cast<int>(std::min<std::size_t>(denials->size(), INT_MAX));
    }
    emitSummary(std::move(summary), out);
    return true;
  }

  static std::optional<Usage> usageOf(const json::object& line) {
    Usage usage;
    usage.inputTokens = countAt(line, {"usage", "input_tokens"});
    usage.outputTokens = countAt(line, {"usage", "output_tokens"});
    usage.cachedInputTokens = countAt(line, {"usage", "cache_read_input_tokens"});
    usage.costUsd = costAt(line, {"total_cost_usd"});
    if (!usage.inputTokens && !usage.outputTokens && !usage.cachedInputTokens && !usage.costUsd) {
      return std::nullopt;
    }
    return usage;
  }

  // Claude with too narrow a permission mode exits 0 and reports the writes it
  // refused only here; each becomes a warning a person will see.
  static std::string describeDenial(const json::value& denial) {
    std::string out = "permission denied:";
    const json::object* object = denial.if_object();
    if (object == nullptr) return out + " " + oneLine(json::serialize(denial), kDetailLimit);
    std::string tool = stringAt(*object, {"tool_name"});
    if (!tool.empty()) out += " " + tool;
    if (const json::value* input = object->if_contains("tool_input")) {
      std::string detail = describeInput(*input);
      if (!detail.empty()) out += " " + detail;
    }
    return out;
  }

  std::map<std::string, PendingTool> tools_;  // by tool_use id, until their result arrives
  std::string lastText_;
  WrittenPaths written_;
};

class ClaudeAdapter final : public Adapter {
 public:
  // Claude Code's model API (API keys and sign-in alike).
  std::vector<std::string_view> defaultAllowedHosts() const override { return {"api.anthropic.com"}; }
  std::string_view name() const override { return "claude"; }
  std::string_view defaultBinary() const override { return "claude"; }
  std::vector<std::filesystem::path> stateDirectories(const std::map<std::string, std::string>& env,
                                                      const std::filesystem::path& home) const override {
    // Sessions, settings and logs; claude runs with the rest of HOME read-only.
    return {envPath(env, "CLAUDE_CONFIG_DIR", home / ".claude")};
  }

  Invocation invocation(const AgentConfig& config, std::string_view task) const override {
    static const CommandTemplate command{
        .args = {"-p", "{task}", "--output-format", "stream-json", "--verbose", "--permission-mode",
                 "acceptEdits", "--allowedTools", "Bash,Write,Edit,Read"},
        // A self-update in the middle of a race would change the binary under it.
        .env = {{"DISABLE_AUTOUPDATER", "1"}},
    };
    return buildInvocation(config, command, task);
  }

  std::optional<Invocation> resumeInvocation(const AgentConfig& config, std::string_view sessionId,
                                             std::string_view task) const override {
    if (!config.args.empty()) return std::nullopt;
    const CommandTemplate command{
        .args = {"-p", "{task}", "--resume", std::string(sessionId), "--output-format", "stream-json", "--verbose",
                 "--permission-mode", "acceptEdits", "--allowedTools", "Bash,Write,Edit,Read"},
        .env = {{"DISABLE_AUTOUPDATER", "1"}},
    };
    return buildInvocation(config, command, task);
  }

  std::unique_ptr<StreamParser> parser() const override { return std::make_unique<ClaudeParser>(); }
};

}  // namespace

const Adapter& claudeAdapter() {
  static const ClaudeAdapter adapter;
  return adapter;
}

}  // namespace hydra::core::adapters
