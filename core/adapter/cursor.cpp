// Cursor CLI: `cursor-agent -p --force --output-format stream-json TASK`.
//
// Written from the stream format Cursor documents; no captured stream was
// available to check it against (docs/agents.md says which shapes it reads):
// `system/init`; `user` and `assistant` messages with text content blocks;
// `tool_call` events, `subtype` "started" then "completed", whose `tool_call`
// object holds one `<kind>ToolCall` entry (readToolCall, writeToolCall,
// shellToolCall, editToolCall, ...) with `args` and, once completed, a
// `result` that is either {"success": {...}} or a failure; and a final
// `result` with `is_error`, `duration_ms` and the full assistant text.

#include <boost/json/serialize.hpp>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "core/adapter/builtin.h"
#include "core/adapter/json_stream.h"

namespace hydra::core::adapters {

namespace {

constexpr std::string_view kToolCallSuffix = "ToolCall";

struct ToolCallView {
  std::string tool;
  const json::object* call = nullptr;  // holds `args` and, when completed, `result`
};

// {"writeToolCall": {...}} -> tool "write"; {"function": {"name": ...}} -> its name.
ToolCallView viewToolCall(const json::object& toolCall) {
  for (const auto& [key, value] : toolCall) {
    const json::object* call = value.if_object();
    if (call == nullptr) continue;
    std::string_view name = key;
    if (name == "function") return {stringAt(*call, {"name"}), call};
    if (name.size() > kToolCallSuffix.size() &&
        name.substr(name.size() - kToolCallSuffix.size()) == kToolCallSuffix) {
      return {std::string(name.substr(0, name.size() - kToolCallSuffix.size())), call};
    }
  }
  return {};
}

const json::value* argsOf(const json::object& call) {
  const json::value* args = call.if_contains("args");
  return args != nullptr ? args : call.if_contains("arguments");
}

// A short excerpt of what a successful call produced.
std::string describeSuccess(const json::object& success) {
  for (std::string_view key : {"stdout", "output", "content", "path"}) {
    std::string text = stringAt(success, {key});
    if (!text.empty()) return oneLine(text, kDetailLimit);
  }
  return {};
}

std::string describeFailure(const json::value& failure) {
  if (const json::object* object = failure.if_object()) {
    for (std::string_view key : {"message", "error", "errorMessage", "stderr"}) {
      std::string text = stringAt(*object, {key});
      if (!text.empty()) return oneLine(text, kDetailLimit);
    }
  }
  return oneLine(failure.is_string() ? std::string(failure.get_string()) : json::serialize(failure),
                 kDetailLimit);
}

class CursorParser final : public JsonLinesParser {
 protected:
  bool parseObjectLine(const json::object& line, std::vector<AgentEvent>& out) override {
    std::string type = stringAt(line, {"type"});
    if (type == "system" || type == "user") return true;
    if (type == "assistant") return parseAssistant(line, out);
    if (type == "tool_call") return parseToolCall(line, out);
    if (type == "result") {
      AgentEvent summary = summaryEvent();
      summary.text = stringAt(line, {"result"});
      if (summary.text.empty()) summary.text = lastText_;
      summary.isError = boolAt(line, {"is_error"});
      emitSummary(std::move(summary), out);
      return true;
    }
    return false;
  }

  AgentEvent summaryFromSeen() override {
    // Failures end with a non-zero exit and a message on stderr, no JSON.
    AgentEvent summary = summaryEvent();
    summary.text = lastText_;
    summary.isError = true;
    summary.warnings.push_back("the stream ended without a result event");
    return summary;
  }

 private:
  bool parseAssistant(const json::object& line, std::vector<AgentEvent>& out) {
    const json::value* content = find(line, {"message", "content"});
    if (content == nullptr) return false;
    std::string text = contentText(*content);
    if (!text.empty()) {
      lastText_ = text;
      out.push_back(textEvent(std::move(text)));
    }
    return true;
  }

  bool parseToolCall(const json::object& line, std::vector<AgentEvent>& out) {
    const json::object* toolCall = objectAt(line, {"tool_call"});
    if (toolCall == nullptr) return false;
    ToolCallView view = viewToolCall(*toolCall);
    if (view.call == nullptr) return false;

    const json::value* args = argsOf(*view.call);
    std::string callId = stringAt(line, {"call_id"});
    if (callId.empty() || announced_.insert(callId).second) {
      out.push_back(toolCallEvent(view.tool, args != nullptr ? describeInput(*args) : ""));
    }
    if (stringAt(line, {"subtype"}) != "completed") return true;

    const json::object* result = objectAt(*view.call, {"result"});
    const json::object* success = result != nullptr ? objectAt(*result, {"success"}) : nullptr;
    if (result != nullptr && success == nullptr) {
      // Anything but {"success": ...} is a failure, whatever its key.
      out.push_back(toolResultEvent(view.tool, describeFailure(*result), true));
      return true;
    }
    out.push_back(toolResultEvent(view.tool, success ? describeSuccess(*success) : "", false));
    fileChange(view.tool, args, success, out);
    return true;
  }

  void fileChange(const std::string& tool, const json::value* args, const json::object* success,
                  std::vector<AgentEvent>& out) {
    if (tool != "write" && tool != "edit") return;
    std::string path = success != nullptr ? stringAt(*success, {"path"}) : std::string();
    if (path.empty() && args != nullptr && args->is_object()) {
      path = stringAt(args->get_object(), {"path"});
    }
    if (path.empty()) return;
    if (tool == "edit") {
      written_.remember(path);
      out.push_back(fileChangeEvent(path, "update"));
    } else {
      out.push_back(fileChangeEvent(path, written_.changeForWrite(path)));
    }
  }

  std::set<std::string> announced_;  // call_ids whose ToolCall went out
  std::string lastText_;
  WrittenPaths written_;
};

class CursorAdapter final : public Adapter {
 public:
  // Cursor's agent backend.
  std::vector<std::string_view> defaultAllowedHosts() const override { return {"api2.cursor.sh"}; }
  std::string_view name() const override { return "cursor"; }
  // The CLI's binary is cursor-agent; `cursor` is the editor.
  std::string_view defaultBinary() const override { return "cursor-agent"; }
  std::vector<std::filesystem::path> stateDirectories(const std::map<std::string, std::string>& env,
                                                      const std::filesystem::path& home) const override {
    (void)env;
    return {home / ".cursor", home / ".config" / "cursor"};
  }

  Invocation invocation(const AgentConfig& config, std::string_view task) const override {
    // Without --force, edits are only proposed, never written.
    static const CommandTemplate command{
        .args = {"-p", "--force", "--output-format", "stream-json", "{task}"},
    };
    return buildInvocation(config, command, task);
  }

  std::unique_ptr<StreamParser> parser() const override { return std::make_unique<CursorParser>(); }
};

}  // namespace

const Adapter& cursorAdapter() {
  static const CursorAdapter adapter;
  return adapter;
}

}  // namespace hydra::core::adapters
