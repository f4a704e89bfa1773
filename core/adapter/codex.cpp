// Codex CLI: `codex exec --json ... TASK`.
//
// The stream (captured from codex 0.169): `thread.started`, `turn.started`,
// `item.started` / `item.completed` for each item (`agent_message`,
// `command_execution`, `file_change`, ...), `turn.completed` with token usage
// (no cost), or `turn.failed` / `error`. There is no final summary event, so
// the Summary is built at the end from what was seen.

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "core/adapter/builtin.h"
#include "core/adapter/json_stream.h"

namespace hydra::core::adapters {

namespace {

constexpr std::string_view kCommandTool = "command_execution";
constexpr std::string_view kFileChangeTool = "file_change";

// Codex wraps every command as `/bin/bash -lc '<command>'`; the inner command
// is what a person wants to read.
std::string unwrapShell(std::string_view command) {
  std::size_t space = command.find(' ');
  if (space == std::string_view::npos) return std::string(command);
  std::string_view shell = command.substr(0, space);
  bool isShell = shell.size() >= 2 && shell.substr(shell.size() - 2) == "sh";
  for (std::string_view flags : {" -lc '", " -c '"}) {
    std::string_view rest = command.substr(space);
    if (!isShell || rest.size() <= flags.size() || rest.substr(0, flags.size()) != flags ||
        command.back() != '\'') {
      continue;
    }
    std::string_view quoted = rest.substr(flags.size(), rest.size() - flags.size() - 1);
    std::string inner;
    for (std::size_t i = 0; i < quoted.size(); ++i) {
      // A single quote inside single quotes is written '\''.
      if (quoted.substr(i, 4) == "'\\''") {
        inner.push_back('\'');
        i += 3;
      } else {
        inner.push_back(quoted[i]);
      }
    }
    return inner;
  }
  return std::string(command);
}

std::string describeChanges(const json::array* changes) {
  std::string out;
  if (changes == nullptr) return out;
  for (const json::value& change : *changes) {
    const json::object* object = change.if_object();
    if (object == nullptr) continue;
    if (!out.empty()) out += ", ";
    out += stringAt(*object, {"kind"}) + " " + stringAt(*object, {"path"});
  }
  return oneLine(out, kDetailLimit);
}

class CodexParser final : public JsonLinesParser {
 protected:
  bool parseObjectLine(const json::object& line, std::vector<AgentEvent>& out) override {
    std::string type = stringAt(line, {"type"});
    if (type == "thread.started") {
      // `codex exec resume` continues this thread.
      threadId_ = stringAt(line, {"thread_id"});
      return true;
    }
    if (type == "turn.started") return true;
    if (type == "item.started" || type == "item.updated" || type == "item.completed") {
      const json::object* item = objectAt(line, {"item"});
      return item != nullptr && parseItem(*item, type == "item.completed", out);
    }
    if (type == "turn.completed") return parseTurnCompleted(line, out);
    if (type == "turn.failed") {
      turns_ = nextTurn(turns_);
      failed_ = true;
      out.push_back(errorEvent(messageOr(line, {"error", "message"}, "turn failed")));
      return true;
    }
    if (type == "error") {
      unresolvedError_ = true;
      out.push_back(errorEvent(messageOr(line, {"message"}, "error")));
      return true;
    }
    return false;
  }

  AgentEvent summaryFromSeen() override {
    AgentEvent summary = summaryEvent();
    summary.text = lastText_;
    summary.sessionId = threadId_;
    summary.turns = turns_;
    if (sawUsage_) summary.usage = total_;
    summary.isError = failed_ || unresolvedError_ || turns_ == 0;
    if (turns_ == 0) summary.warnings.push_back("the stream ended before a turn completed");
    return summary;
  }

 private:
  static std::string messageOr(const json::object& line,
                               std::initializer_list<std::string_view> keys, std::string fallback) {
    std::string message = stringAt(line, keys);
    return message.empty() ? fallback : message;
  }

  bool parseItem(const json::object& item, bool completed, std::vector<AgentEvent>& out) {
    std::string type = stringAt(item, {"type"});
    std::string id = stringAt(item, {"id"});
    if (type == "agent_message") {
      std::string text = stringAt(item, {"text"});
      if (completed && !text.empty()) {
        lastText_ = text;
        out.push_back(textEvent(std::move(text)));
      }
      return true;
    }
    // The model's reasoning and its to-do list are not output.
    if (type == "reasoning" || type == "todo_list") return true;
    if (type == kCommandTool) {
      commandItem(item, id, completed, out);
      return true;
    }
    if (type == kFileChangeTool) {
      fileChangeItem(item, id, completed, out);
      return true;
    }
    if (type == "error") {
      if (completed) out.push_back(errorEvent(messageOr(item, {"message"}, "error")));
      return true;
    }
    return false;
  }

  // Items may arrive completed without having been started: the call is
  // announced once, whichever comes first.
  void announce(const std::string& id, std::string_view tool, std::string detail,
                std::vector<AgentEvent>& out) {
    if (id.empty() || announced_.insert(id).second) {
      out.push_back(toolCallEvent(std::string(tool), std::move(detail)));
    }
  }

  void commandItem(const json::object& item, const std::string& id, bool completed,
                   std::vector<AgentEvent>& out) {
    announce(id, kCommandTool, oneLine(unwrapShell(stringAt(item, {"command"})), kDetailLimit), out);
    if (!completed) return;
    std::optional<std::int64_t> exitCode = intAt(item, {"exit_code"});
    bool isError = stringAt(item, {"status"}) == "failed" || (exitCode && *exitCode != 0);
    std::string detail = oneLine(stringAt(item, {"aggregated_output"}), kDetailLimit);
    if (detail.empty() && exitCode && *exitCode != 0) {
      detail = "exit code " + std::to_string(*exitCode);
    }
    out.push_back(toolResultEvent(std::string(kCommandTool), std::move(detail), isError));
  }

  void fileChangeItem(const json::object& item, const std::string& id, bool completed,
                      std::vector<AgentEvent>& out) {
    const json::array* changes = arrayAt(item, {"changes"});
    std::string detail = describeChanges(changes);
    announce(id, kFileChangeTool, detail, out);
    if (!completed) return;
    bool applied = stringAt(item, {"status"}) == "completed";
    out.push_back(toolResultEvent(std::string(kFileChangeTool), detail, !applied));
    if (!applied || changes == nullptr) return;
    for (const json::value& change : *changes) {
      const json::object* object = change.if_object();
      if (object == nullptr) continue;
      std::string path = stringAt(*object, {"path"});
      if (path.empty()) continue;  // names no file: nothing to report
      std::string kind = stringAt(*object, {"kind"});
      // codex's kinds are hydra's; any other still says the file changed.
      if (kind != "add" && kind != "delete") kind = "update";
      out.push_back(fileChangeEvent(std::move(path), std::move(kind)));
    }
  }

  bool parseTurnCompleted(const json::object& line, std::vector<AgentEvent>& out) {
    turns_ = nextTurn(turns_);
    unresolvedError_ = false;
    if (objectAt(line, {"usage"}) == nullptr) return true;
    Usage usage;
    usage.inputTokens = countAt(line, {"usage", "input_tokens"});
    usage.outputTokens = countAt(line, {"usage", "output_tokens"});
    usage.cachedInputTokens = countAt(line, {"usage", "cached_input_tokens"});
    sawUsage_ = true;
    out.push_back(usageEvent(addUsage(total_, usage)));
    return true;
  }

  std::set<std::string> announced_;  // item ids whose ToolCall went out
  std::string lastText_;
  std::string threadId_;
  Usage total_;
  bool sawUsage_ = false;
  int turns_ = 0;
  bool failed_ = false;
  bool unresolvedError_ = false;  // an error event not followed by a completed turn
};

class CodexAdapter final : public Adapter {
 public:
  // The OpenAI API; ChatGPT sign-in talks to chatgpt.com and refreshes its token at auth.openai.com.
  std::vector<std::string_view> defaultAllowedHosts() const override { return {"api.openai.com", "chatgpt.com", "auth.openai.com"}; }
  std::string_view name() const override { return "codex"; }
  std::string_view defaultBinary() const override { return "codex"; }
  std::vector<std::filesystem::path> stateDirectories(const std::map<std::string, std::string>& env,
                                                      const std::filesystem::path& home) const override {
    // Its state databases: without them codex exits at once.
    return {envPath(env, "CODEX_HOME", home / ".codex")};
  }

  Invocation invocation(const AgentConfig& config, std::string_view task) const override {
    // `--full-auto` is deprecated; approval and sandbox are set explicitly. The
    // values are TOML, hence the quotes inside the arguments.
    static const CommandTemplate command{
        .args = {"exec", "--json", "-c", "approval_policy=\"never\"", "-c",
                 "sandbox_mode=\"danger-full-access\"", "{task}"},
    };
    return buildInvocation(config, command, task);
  }

  std::optional<Invocation> resumeInvocation(const AgentConfig& config, std::string_view sessionId,
                                             std::string_view task) const override {
    if (!config.args.empty()) return std::nullopt;
    const CommandTemplate command{
        .args = {"exec", "resume", "--json", "-c", "approval_policy=\"never\"", "-c",
                 "sandbox_mode=\"danger-full-access\"", std::string(sessionId), "{task}"},
    };
    return buildInvocation(config, command, task);
  }

  std::unique_ptr<StreamParser> parser() const override { return std::make_unique<CodexParser>(); }
};

}  // namespace

const Adapter& codexAdapter() {
  static const CodexAdapter adapter;
  return adapter;
}

}  // namespace hydra::core::adapters
