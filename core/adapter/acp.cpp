// Agents driven over the Agent Client Protocol: JSON-RPC 2.0, one message per
// line, on the agent's stdin and stdout. hydra is the client:
//
//   initialize -> session/new {cwd: the worktree} -> session/prompt {the task}
//
// and the prompt's answer ({stopReason}) ends the run. Meanwhile the agent
// sends session/update notifications, which become hydra's events (message
// chunks -> text, tool_call / tool_call_update -> tool calls and results,
// diffs -> file changes, plans, usage), and asks hydra things:
// session/request_permission is answered by the agent's policy ("worktree":
// allow what names only paths inside the worktree, reject the rest; "allow";
// "reject"), fs/read_text_file and fs/write_text_file are served inside the
// worktree only, and anything else (terminal/* among it: hydra does not offer
// terminals) is refused as unknown. Agents number their own requests, from 0
// like ours: a message with a method is theirs, one without is an answer.
//
// Presets: "acp" runs any ACP agent named by [agents.NAME] binary and args;
// "codex-acp" is Codex through Zed's `codex-acp` (npm package
// @zed-industries/codex-acp), switched to its "full-access" mode: it starts
// read-only, and hydra's sandbox is what confines it, as for `codex exec`;
// "gemini-acp" is `gemini --acp`, "opencode-acp" is `opencode acp`;
// "claude-acp" is Claude Code through Zed's `claude-agent-acp` (npm package
// @zed-industries/claude-agent-acp), made to run the installed `claude` (see
// completeClaudeEnvironment) in its default mode, where it asks permission for
// edits and commands and the policy answers.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "core/adapter/builtin.h"
#include "core/adapter/json_stream.h"
#include "core/process/process.h"
#include "core/util/safe_fs.h"
#include "hydra/version.h"
#include "protocol/line_framing.h"
#include "protocol/message.h"

namespace hydra::core::adapters {

namespace {

namespace fs = std::filesystem;
using protocol::Message;
using protocol::Notification;
using protocol::Request;
using protocol::RequestId;
using protocol::Response;
using protocol::ResponseError;

// The largest file fs/read_text_file hands an agent, and fs/write_text_file takes.
constexpr std::uintmax_t kMaxFileBytes = 16 * 1024 * 1024;

// The most of one streamed message held back before it is shown.
constexpr std::size_t kMaxTextBytes = 64 * 1024;

// JSON-RPC error codes of our answers.
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kRefused = -32000;

std::string line(const Message& message) { return protocol::encodeLine(protocol::serialize(message)); }

// Writes `text` to `relative` beneath `root`, a regular file or nothing,
// reached without following any link (core/util/safe_fs.h): a folder swapped
// for a link cannot lead the write out of `root`. O_NONBLOCK: a FIFO there is
// refused (no reader), never waited on.
bool writeWhole(const fs::path& root, const fs::path& relative, std::string_view text) {
  if (relative.empty() || relative.filename().empty()) return false;
  int fd = -1;
  try {
    const SafeDir dir = SafeDir::openBeneath(root, relative.parent_path());
    fd = ::openat(dir.fd(), relative.filename().c_str(),
                  O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  } catch (const std::exception&) {
    return false;
  }
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0 && written == text.size();
}

// `root` made absolute and free of symlinks, as inside() needs it; `root`
// itself when it cannot be resolved.
fs::path canonicalRoot(const fs::path& root) {
  std::error_code ec;
  fs::path base = fs::weakly_canonical(root, ec);
  return ec ? root : base;
}

// `path`, when it lies inside `root` (canonicalRoot()), made absolute and free
// of symlinks as far as it exists; else nullopt.
std::optional<fs::path> inside(const fs::path& root, const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::error_code ec;
  fs::path candidate(path);
  if (candidate.is_relative()) candidate = root / candidate;
  const fs::path resolved = fs::weakly_canonical(candidate, ec);
  if (ec) return std::nullopt;
  auto [b, r] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
  if (b != root.end()) return std::nullopt;
  return resolved;
}

class AcpSession final : public AgentSession {
 public:
  explicit AcpSession(SessionSetup setup) : setup_(std::move(setup)), root_(canonicalRoot(setup_.worktree)) {}

  std::vector<std::string> start() override {
    const json::object params{
        {"protocolVersion", 1},
        {"clientCapabilities",
         json::object{{"fs", json::object{{"readTextFile", true}, {"writeTextFile", true}}}, {"terminal", false}}},
        {"clientInfo", json::object{{"name", "hydra"}, {"version", kVersion}}}};
    return {request("initialize", params)};
  }

  std::vector<std::string> takeOutgoing() override { return std::exchange(outgoing_, {}); }

  bool done() const override { return done_; }

  std::vector<std::string> cancel() override {
    if (sessionId_.empty() || done_) return {};
    return {line(Notification{"session/cancel", json::object{{"sessionId", sessionId_}}})};
  }

  std::vector<AgentEvent> parseLine(std::string_view text) override {
    std::vector<AgentEvent> out;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) return out;
    const protocol::ParseResult parsed = protocol::parseMessage(text);
    if (const auto* invalid = std::get_if<protocol::InvalidMessage>(&parsed)) {
      // Not JSON-RPC: shown as it is (an agent's stray print).
      out.push_back(rawEvent(text));
      if (invalid->reply && invalid->id) outgoing_.push_back(line(Response{invalid->id, invalid->error}));
      return out;
    }
    const Message& message = std::get<Message>(parsed);
    if (const auto* r = std::get_if<Request>(&message)) {
      answer(*r, out);
    } else if (const auto* n = std::get_if<Notification>(&message)) {
      if (n->method == "session/update") update(n->params, out);
    } else {
      answered(std::get<Response>(message), out);
    }
    return out;
  }

  std::vector<AgentEvent> finish() override {
    std::vector<AgentEvent> out;
    flushText(out);
    if (!summarized_) {
      // It ended before answering the prompt: the run did not finish.
      AgentEvent summary = summaryFromSeen();
      summary.isError = true;
      summary.warnings.push_back(phase_.empty() ? "the agent ended before it answered"
                                                : "the agent ended before it answered " + phase_);
      emit(std::move(summary), out);
    }
    return out;
  }

 private:
  std::string request(const std::string& method, json::value params) {
    const std::int64_t id = nextId_++;
    pending_[id] = method;
    phase_ = method;
    return line(Request{RequestId{id}, method, std::move(params)});
  }

  // --- their answers to our requests ---------------------------------------

  void answered(const Response& response, std::vector<AgentEvent>& out) {
    const auto* id = response.id ? std::get_if<std::int64_t>(&*response.id) : nullptr;
    auto it = id ? pending_.find(*id) : pending_.end();
    if (it == pending_.end()) return;  // not ours
    const std::string method = it->second;
    pending_.erase(it);
    if (response.isError()) {
      const ResponseError& e = std::get<ResponseError>(response.outcome);
      fail(method + " failed: " + e.message + " (" + std::to_string(e.code) + ")", out);
      return;
    }
    const json::value& result = std::get<json::value>(response.outcome);
    if (method == "initialize") {
      outgoing_.push_back(request("session/new", json::object{{"cwd", setup_.worktree.string()},
                                                               {"mcpServers", json::array{}}}));
    } else if (method == "session/new") {
      const json::object* object = result.if_object();
      sessionId_ = object ? stringAt(*object, {"sessionId"}) : std::string();
      if (sessionId_.empty()) return fail("session/new gave no sessionId", out);
      if (setup_.mode.empty()) return prompt();
      outgoing_.push_back(
          request("session/set_mode", json::object{{"sessionId", sessionId_}, {"modeId", setup_.mode}}));
    } else if (method == "session/set_mode") {
      prompt();
    } else if (method == "session/prompt") {
      const json::object* object = result.if_object();
      const std::string stopReason = object ? stringAt(*object, {"stopReason"}) : std::string();
      flushText(out);
      AgentEvent summary = summaryFromSeen();
      if (stopReason != "end_turn") {
        summary.isError = true;
        summary.warnings.push_back("the agent stopped: " + (stopReason.empty() ? "no reason given" : stopReason));
      }
      if (object) {
        if (const json::object* usage = objectAt(*object, {"usage"})) summary.usage = usageOf(*usage);
      }
      emit(std::move(summary), out);
      done_ = true;
    }
  }

  void prompt() {
    json::array blocks{json::object{{"type", "text"}, {"text", setup_.task}}};
    outgoing_.push_back(request("session/prompt", json::object{{"sessionId", sessionId_}, {"prompt", blocks}}));
  }

  void fail(const std::string& why, std::vector<AgentEvent>& out) {
    flushText(out);
    out.push_back(errorEvent(why));
    AgentEvent summary = summaryFromSeen();
    summary.isError = true;
    summary.warnings.push_back(why);
    emit(std::move(summary), out);
    done_ = true;
  }

  // --- their requests --------------------------------------------------------

  void answer(const Request& r, std::vector<AgentEvent>& out) {
    const json::object* params = r.params.if_object();
    if (params == nullptr) return reply(r.id, ResponseError{kInvalidParams, "params must be an object", nullptr});
    if (r.method == "session/request_permission") return permission(r.id, *params, out);
    if (r.method == "fs/read_text_file") return readFile(r.id, *params);
    if (r.method == "fs/write_text_file") return writeFile(r.id, *params, out);
    reply(r.id, ResponseError{kMethodNotFound, "hydra does not offer " + r.method, nullptr});
  }

  void reply(const RequestId& id, json::value result) {
    outgoing_.push_back(line(Response{id, std::move(result)}));
  }
  void reply(const RequestId& id, ResponseError error) { outgoing_.push_back(line(Response{id, std::move(error)})); }

  // Every path a permission request names: its locations, and the usual
  // path fields of its raw input.
  static std::vector<std::string> pathsOf(const json::object& toolCall) {
    std::vector<std::string> paths;
    if (const json::array* locations = arrayAt(toolCall, {"locations"})) {
      for (const json::value& l : *locations) {
        if (const json::object* o = l.if_object()) paths.push_back(stringAt(*o, {"path"}));
      }
    }
    if (const json::object* input = objectAt(toolCall, {"rawInput"})) {
      for (const char* key : {"path", "file_path", "filePath", "absolute_path", "notebook_path"}) {
        if (std::string p = stringAt(*input, {key}); !p.empty()) paths.push_back(p);
      }
    }
    return paths;
  }

  void permission(const RequestId& id, const json::object& params, std::vector<AgentEvent>& out) {
    const json::object* toolCall = objectAt(params, {"toolCall"});
    const json::array* options = arrayAt(params, {"options"});
    const std::string title = toolCall ? stringAt(*toolCall, {"title"}) : std::string();
    bool allow = setup_.permissions == "allow";
    std::string outside;
    if (setup_.permissions == "worktree" && toolCall) {
      allow = true;
      for (const std::string& p : pathsOf(*toolCall)) {
        if (!inside(root_, p)) {
          allow = false;
          outside = p;
          break;
        }
      }
    }
    // The option of the kind we chose; once rather than always.
    static const std::vector<std::string> kAllow{"allow_once", "allow_always"};
    static const std::vector<std::string> kReject{"reject_once", "reject_always"};
    std::string chosen;
    for (const std::string& kind : allow ? kAllow : kReject) {
      if (!chosen.empty() || options == nullptr) break;
      for (const json::value& o : *options) {
        const json::object* option = o.if_object();
        if (option && stringAt(*option, {"kind"}) == kind) {
          chosen = stringAt(*option, {"optionId"});
          break;
        }
      }
    }
    if (!allow) {
      ++denied_;
      warnings_.push_back("permission denied: " +
                          (title.empty() ? std::string("a tool call") : oneLine(title, kDetailLimit)) +
                          (outside.empty() ? "" : " (" + outside + " is outside its worktree)"));
      out.push_back(toolResultEvent(title, "permission denied", true));
    }
    const json::object outcome = chosen.empty()
                                     ? json::object{{"outcome", "cancelled"}}
                                     : json::object{{"outcome", "selected"}, {"optionId", chosen}};
    reply(id, json::object{{"outcome", outcome}});
  }

  void readFile(const RequestId& id, const json::object& params) {
    const std::string path = stringAt(params, {"path"});
    const auto at = inside(root_, path);
    if (!at) return reply(id, ResponseError{kRefused, path + " is outside the worktree", nullptr});
    std::error_code ec;
    if (!fs::exists(*at, ec)) {
      // Some agents (gemini) read a file before creating it and cannot take
      // "not found" for an answer: a missing file reads as empty.
      return reply(id, json::object{{"content", ""}});
    }
    // Read as it is when opened, not as it was when looked at: `at` holds no
    // link (inside() resolved them), so it is opened beneath the worktree
    // refusing any link on the way. A folder the agent swaps for a link
    // meanwhile cannot lead the read out of the worktree, and a file it swaps
    // for a FIFO is refused, never waited on.
    std::string content;
    try {
      const fs::path rel = at->lexically_relative(root_);
      content = SafeDir::openBeneath(root_, rel.parent_path()).readFile(rel.filename().string(), kMaxFileBytes + 1);
    } catch (const std::exception&) {
      return reply(id, ResponseError{kRefused, path + " is not a readable text file", nullptr});
    }
    if (content.size() > kMaxFileBytes) {
      return reply(id, ResponseError{kRefused, path + " is not a readable text file", nullptr});
    }
    // `line` (1-based) and `limit` select lines.
    const auto first = countAt(params, {"line"});
    const auto limit = countAt(params, {"limit"});
    if (first || limit) {
      std::istringstream lines(content);
      std::string piece, selected;
      std::int64_t n = 0, taken = 0;
      while (std::getline(lines, piece)) {
        ++n;
        if (first && n < *first) continue;
        if (limit && taken >= *limit) break;
        selected += piece + "\n";
        ++taken;
      }
      content = std::move(selected);
    }
    reply(id, json::object{{"content", content}});
  }

  void writeFile(const RequestId& id, const json::object& params, std::vector<AgentEvent>& out) {
    const std::string path = stringAt(params, {"path"});
    const json::value* content = params.if_contains("content");
    const auto at = inside(root_, path);
    if (!at) return reply(id, ResponseError{kRefused, path + " is outside the worktree", nullptr});
    if (content == nullptr || !content->is_string() || content->get_string().size() > kMaxFileBytes) {
      return reply(id, ResponseError{kInvalidParams, "content must be a string of at most 16 MiB", nullptr});
    }
    std::error_code ec;
    const bool existed = fs::exists(*at, ec);
    fs::create_directories(at->parent_path(), ec);
    // Checked again now that its folders exist, and opened without following
    // a symlink: what the agent changed meanwhile cannot lead the write out.
    if (inside(root_, at->string()) != at) {
      return reply(id, ResponseError{kRefused, path + " is outside the worktree", nullptr});
    }
    if (!writeWhole(root_, at->lexically_relative(root_), content->get_string())) {
      return reply(id, ResponseError{kRefused, "cannot write " + path, nullptr});
    }
    out.push_back(fileChangeEvent(relative(*at), existed ? "update" : "add"));
    reply(id, json::value(nullptr));
  }

  std::string relative(const fs::path& p) const { return p.lexically_relative(root_).string(); }

  // --- what it does: session/update ------------------------------------------

  void update(const json::value& params, std::vector<AgentEvent>& out) {
    const json::object* object = params.if_object();
    const json::object* u = object ? objectAt(*object, {"update"}) : nullptr;
    if (u == nullptr) return;
    const std::string kind = stringAt(*u, {"sessionUpdate"});
    if (kind == "agent_message_chunk") {
      // Chunks are pieces of one message: it is shown whole once it ends (or
      // in parts of kMaxTextBytes, however long an agent keeps talking).
      if (const json::object* content = objectAt(*u, {"content"})) text_ += stringAt(*content, {"text"});
      if (text_.size() > kMaxTextBytes) flushText(out);
      return;
    }
    flushText(out);
    if (kind == "tool_call") {
      const std::string id = stringAt(*u, {"toolCallId"});
      Tool tool{stringAt(*u, {"title"}), stringAt(*u, {"kind"})};
      tools_[id] = tool;
      out.push_back(toolCallEvent(tool.kind.empty() ? tool.title : tool.kind, oneLine(tool.title, kDetailLimit)));
      toolUpdate(id, *u, out);
    } else if (kind == "tool_call_update") {
      toolUpdate(stringAt(*u, {"toolCallId"}), *u, out);
    } else if (kind == "plan") {
      std::string plan;
      if (const json::array* entries = arrayAt(*u, {"entries"})) {
        for (const json::value& e : *entries) {
          if (const json::object* entry = e.if_object()) plan += (plan.empty() ? "" : "; ") + stringAt(*entry, {"content"});
        }
      }
      if (!plan.empty()) out.push_back(textEvent("plan: " + plan));
    } else if (kind == "usage_update") {
      if (auto usage = usageOf(*u)) out.push_back(usageEvent(addUsage(total_, *usage)));
    }
    // agent_thought_chunk (its scratchpad), available_commands_update, mode
    // and config updates say nothing about the work.
  }

  struct Tool {
    std::string title;
    std::string kind;
  };

  void toolUpdate(const std::string& id, const json::object& u, std::vector<AgentEvent>& out) {
    Tool& tool = tools_[id];
    if (std::string title = stringAt(u, {"title"}); !title.empty()) tool.title = title;
    if (const json::array* content = arrayAt(u, {"content"})) {
      for (const json::value& c : *content) {
        const json::object* item = c.if_object();
        if (item == nullptr || stringAt(*item, {"type"}) != "diff") continue;
        const std::string path = stringAt(*item, {"path"});
        if (path.empty() || reportedDiffs_.count(id + "\n" + path)) continue;
        reportedDiffs_.insert(id + "\n" + path);
        const json::value* oldText = item->if_contains("oldText");
        const auto at = inside(root_, path);
        out.push_back(fileChangeEvent(at ? relative(*at) : path,
                                      oldText == nullptr || oldText->is_null() ? "add" : "update"));
      }
    }
    const std::string status = stringAt(u, {"status"});
    if (status == "completed" || status == "failed") {
      std::string detail;
      if (const json::array* content = arrayAt(u, {"content"})) {
        for (const json::value& c : *content) {
          const json::object* item = c.if_object();
          if (item && stringAt(*item, {"type"}) == "content") {
            if (const json::value* inner = item->if_contains("content")) detail = contentText(*inner);
          }
        }
      }
      out.push_back(toolResultEvent(tool.kind.empty() ? tool.title : tool.kind, oneLine(detail, kDetailLimit),
                                    status == "failed"));
    }
  }

  static std::optional<Usage> usageOf(const json::object& o) {
    Usage usage;
    usage.inputTokens = countAt(o, {"inputTokens"});
    usage.outputTokens = countAt(o, {"outputTokens"});
    usage.cachedInputTokens = countAt(o, {"cachedReadTokens"});
    usage.costUsd = costAt(o, {"cost", "amount"});
    if (!usage.inputTokens && !usage.outputTokens && !usage.cachedInputTokens && !usage.costUsd) return std::nullopt;
    return usage;
  }

  void flushText(std::vector<AgentEvent>& out) {
    if (text_.empty()) return;
    lastText_ = text_;
    out.push_back(textEvent(std::exchange(text_, {})));
  }

  AgentEvent summaryFromSeen() {
    AgentEvent summary = summaryEvent();
    summary.text = lastText_;
    summary.warnings = warnings_;
    summary.deniedToolCalls = denied_;
    if (total_.inputTokens || total_.outputTokens || total_.costUsd) summary.usage = total_;
    return summary;
  }

  void emit(AgentEvent summary, std::vector<AgentEvent>& out) {
    summarized_ = true;
    out.push_back(std::move(summary));
  }

  SessionSetup setup_;
  fs::path root_;  // the worktree, resolved once: every path the agent names is checked against it
  std::int64_t nextId_ = 0;
  std::map<std::int64_t, std::string> pending_;  // our requests not yet answered, by id
  std::string phase_;                            // the last request we sent
  std::string sessionId_;
  std::vector<std::string> outgoing_;
  std::map<std::string, Tool> tools_;  // by toolCallId
  std::set<std::string> reportedDiffs_;
  std::string text_;      // the message being streamed
  std::string lastText_;  // the last whole message
  std::vector<std::string> warnings_;
  int denied_ = 0;
  Usage total_;
  bool summarized_ = false;
  bool done_ = false;
};

// "acp" and its presets: a command line, and the session.
class AcpAdapter final : public Adapter {
 public:
  // `cli`: the plain CLI it is a mode of, for its state directories; its
  // version option too, when `versionOfCli`.
  using CompleteEnvironment = void (*)(std::map<std::string, std::string>& env);
  AcpAdapter(std::string_view name, std::string_view binary, CommandTemplate command, const Adapter* cli,
             bool versionOfCli, std::string_view mode = {}, CompleteEnvironment complete = nullptr)
      : name_(name),
        binary_(binary),
        command_(std::move(command)),
        cli_(cli),
        versionOfCli_(versionOfCli),
        mode_(mode),
        complete_(complete) {}

  std::string_view name() const override { return name_; }
  std::string_view defaultBinary() const override { return binary_; }
  Invocation invocation(const AgentConfig& config, std::string_view task) const override {
    return buildInvocation(config, command_, task);
  }
  // Never used: session() is.
  std::unique_ptr<StreamParser> parser() const override { return plainTextParser(EventKind::Raw, false); }
  bool speaksOverStdin() const override { return true; }
  std::unique_ptr<AgentSession> session(const SessionSetup& setup) const override {
    SessionSetup withMode = setup;
    if (withMode.mode.empty()) withMode.mode = std::string(mode_);
    return std::make_unique<AcpSession>(std::move(withMode));
  }
  std::vector<std::string> versionArgs() const override {
    // Otherwise no option it is known to answer with a version (and without
    // one, an ACP agent waits for its client).
    return versionOfCli_ ? cli_->versionArgs() : std::vector<std::string>{};
  }
  std::vector<std::filesystem::path> stateDirectories(const std::map<std::string, std::string>& env,
                                                      const std::filesystem::path& home) const override {
    return cli_ ? cli_->stateDirectories(env, home) : std::vector<std::filesystem::path>{};
  }
  void completeEnvironment(std::map<std::string, std::string>& env) const override {
    if (complete_) complete_(env);
  }
  std::vector<std::string_view> defaultAllowedHosts() const override {
    return cli_ ? cli_->defaultAllowedHosts() : std::vector<std::string_view>{};
  }

 private:
  std::string_view name_;
  std::string_view binary_;
  CommandTemplate command_;
  const Adapter* cli_;
  bool versionOfCli_;
  std::string_view mode_;  // the session mode the preset switches to
  CompleteEnvironment complete_;
};

// claude-agent-acp drives Claude Code through its SDK, by default the copy of
// Claude Code bundled in its package: an older one, which never answers
// session/new when it cannot write ~/.claude.json (read-only in hydra's
// sandbox, where only ~/.claude is Claude's to write). CLAUDE_CODE_EXECUTABLE
// makes it run the `claude` the plain "claude" preset runs instead: the same
// version in both modes, and one that works with ~/.claude alone.
void completeClaudeEnvironment(std::map<std::string, std::string>& env) {
  if (auto it = env.find("CLAUDE_CODE_EXECUTABLE"); it != env.end() && !it->second.empty()) return;
  std::string path;
  if (auto it = env.find("PATH"); it != env.end()) {
    path = it->second;
  } else if (const char* inherited = std::getenv("PATH")) {
    path = inherited;
  }
  auto claude = findExecutable("claude", path);
  if (!claude) {
    throw std::runtime_error(
        "claude-agent-acp runs the installed Claude Code, and `claude` is not on PATH: install "
        "@anthropic-ai/claude-code, or set CLAUDE_CODE_EXECUTABLE in the agent's env");
  }
  env["CLAUDE_CODE_EXECUTABLE"] = fs::absolute(*claude).lexically_normal().string();
}

}  // namespace

const Adapter& acpAdapter() {
  // Any ACP agent: [agents.NAME] names its binary and arguments; the task goes
  // in session/prompt, never on the command line.
  static const AcpAdapter adapter("acp", "", CommandTemplate{.args = {}, .env = {}, .appendTaskToReplacedArgs = false},
                                  nullptr, false);
  return adapter;
}

const Adapter& claudeAcpAdapter() {
  static const AcpAdapter adapter(
      "claude-acp", "claude-agent-acp",
      // A self-update in the middle of a race would change the binary under it.
      // IS_SANDBOX is cleared: as root, claude-agent-acp takes any value as leave
      // to start Claude Code with --allow-dangerously-skip-permissions, which
      // Claude Code refuses unless the value is "1", and session/new fails.
      // hydra never uses that mode: its policy answers the permission requests.
      CommandTemplate{.args = {},
                      .env = {{"DISABLE_AUTOUPDATER", "1"}, {"IS_SANDBOX", ""}},
                      .appendTaskToReplacedArgs = false},
      &claudeAdapter(), false, {}, completeClaudeEnvironment);
  return adapter;
}

const Adapter& codexAcpAdapter() {
  static const AcpAdapter adapter(
      "codex-acp", "codex-acp", CommandTemplate{.args = {}, .env = {}, .appendTaskToReplacedArgs = false},
      &codexAdapter(), false, "full-access");
  return adapter;
}

const Adapter& geminiAcpAdapter() {
  static const AcpAdapter adapter(
      "gemini-acp", "gemini",
      CommandTemplate{.args = {"--acp"},
                      .env = {{"GEMINI_CLI_TRUST_WORKSPACE", "true"}, {"GEMINI_CLI_NO_RELAUNCH", "true"}},
                      .appendTaskToReplacedArgs = false},
      &geminiAdapter(), true);
  return adapter;
}

const Adapter& opencodeAcpAdapter() {
  static const AcpAdapter adapter(
      "opencode-acp", "opencode",
      CommandTemplate{.args = {"acp"}, .env = {{"OPENCODE_DISABLE_AUTOUPDATE", "1"}}, .appendTaskToReplacedArgs = false},
      &opencodeAdapter(), true);
  return adapter;
}

}  // namespace hydra::core::adapters
