// The ACP session, fed what an agent would write: the handshake, the events
// its session/update notifications become, the answers hydra gives its
// requests (permissions by policy, fs/* inside the worktree only), and how the
// run ends. Real ACP agents are raced in tests/live/.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/adapter/adapter.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class AcpSessionTest : public ::testing::Test {
 protected:
  AcpSessionTest() {
    std::string pattern = (fs::temp_directory_path() / "hydra-acp-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
    worktree_ = root_ / "worktree";
    fs::create_directories(worktree_);
    std::ofstream(worktree_ / "calc.py") << "def add(a, b):\n    return a - b\n";
    std::ofstream(root_ / "secret.txt") << "not for agents\n";
  }
  ~AcpSessionTest() override { fs::remove_all(root_); }

  std::unique_ptr<AgentSession> session(std::string permissions = "worktree") {
    return findAdapter("acp")->session(SessionSetup{worktree_, "Fix add()", std::move(permissions), {}});
  }

  // Messages hydra wrote, parsed.
  static std::vector<json::object> parsed(const std::vector<std::string>& lines) {
    std::vector<json::object> out;
    for (const auto& l : lines) {
      EXPECT_TRUE(!l.empty() && l.back() == '\n' && l.find('\n') == l.size() - 1) << "one line each: " << l;
      out.push_back(json::parse(l).as_object());
    }
    return out;
  }

  // Runs the handshake to the prompt; the prompt's request id.
  std::int64_t handshake(AgentSession& s) {
    auto init = parsed(s.start());
    EXPECT_EQ(init.at(0).at("method"), json::value("initialize"));
    s.parseLine(R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}})");
    auto created = parsed(s.takeOutgoing());
    EXPECT_EQ(created.at(0).at("method"), json::value("session/new"));
    EXPECT_EQ(created.at(0).at("params").at("cwd"), json::value(worktree_.string()));
    s.parseLine(R"({"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}})");
    auto prompt = parsed(s.takeOutgoing());
    EXPECT_EQ(prompt.at(0).at("method"), json::value("session/prompt"));
    EXPECT_EQ(prompt.at(0).at("params").at("prompt").at(0).at("text"), json::value("Fix add()"));
    return prompt.at(0).at("id").as_int64();
  }

  json::object ask(AgentSession& s, const std::string& request) {
    s.parseLine(request);
    auto answers = parsed(s.takeOutgoing());
    EXPECT_EQ(answers.size(), 1u) << request;
    return answers.empty() ? json::object{} : answers[0];
  }

  static std::string permissionRequest(int id, const std::string& path) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
           R"(,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t)" +
           std::to_string(id) + R"(","title":"Write )" + path + R"(","locations":[{"path":")" + path +
           R"("}]},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"},)"
           R"({"optionId":"always","name":"Always","kind":"allow_always"},{"optionId":"no","name":"Reject","kind":"reject_once"}]}})";
  }

  fs::path root_;
  fs::path worktree_;
};

TEST_F(AcpSessionTest, UpdatesBecomeEventsAndThePromptsAnswerEndsTheRun) {
  auto s = session();
  const auto promptId = handshake(*s);
  EXPECT_FALSE(s->done());

  auto chunk = [&](const std::string& text) {
    return s->parseLine(R"({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":)"
                        R"({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":")" +
                        text + R"("}}}})");
  };
  EXPECT_THAT(chunk("I'll read "), IsEmpty()) << "a message is shown whole";
  EXPECT_THAT(chunk("calc.py."), IsEmpty());
  auto events = s->parseLine(
      R"({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call",)"
      R"("toolCallId":"c1","title":"Edit calc.py","kind":"edit","status":"pending"}}})");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::Text);
  EXPECT_EQ(events[0].text, "I'll read calc.py.");
  EXPECT_EQ(events[1].kind, EventKind::ToolCall);
  EXPECT_EQ(events[1].tool, "edit");
  events = s->parseLine(
      R"({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update",)"
      R"("toolCallId":"c1","status":"completed","content":[{"type":"diff","path":")" +
      (worktree_ / "calc.py").string() + R"(","oldText":"a - b","newText":"a + b"}]}}})");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::FileChange);
  EXPECT_EQ(events[0].path, "calc.py");
  EXPECT_EQ(events[0].change, "update");
  EXPECT_EQ(events[1].kind, EventKind::ToolResult);
  EXPECT_FALSE(events[1].isError);

  chunk("Fixed.");
  events = s->parseLine(R"({"jsonrpc":"2.0","id":)" + std::to_string(promptId) + R"(,"result":{"stopReason":"end_turn"}})");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, EventKind::Summary);
  EXPECT_EQ(events[1].text, "Fixed.");
  EXPECT_FALSE(events[1].isError);
  EXPECT_TRUE(s->done());
  EXPECT_THAT(s->cancel(), IsEmpty()) << "nothing to cancel once it answered";
  EXPECT_THAT(s->finish(), IsEmpty()) << "one summary";
}

TEST_F(AcpSessionTest, PermissionsFollowThePolicyAndDenialsAreCounted) {
  auto s = session();
  const auto promptId = handshake(*s);
  json::object inside = ask(*s, permissionRequest(0, (worktree_ / "calc.py").string()));
  EXPECT_EQ(inside.at("result").at("outcome"), json::parse(R"({"outcome":"selected","optionId":"yes"})"));
  json::object outside = ask(*s, permissionRequest(1, (root_ / "secret.txt").string()));
  EXPECT_EQ(outside.at("result").at("outcome"), json::parse(R"({"outcome":"selected","optionId":"no"})"));
  // A path that climbs out through ".." is outside too.
  json::object climbing = ask(*s, permissionRequest(2, (worktree_ / ".." / "secret.txt").string()));
  EXPECT_EQ(climbing.at("result").at("outcome").at("optionId"), json::value("no"));

  auto events = s->parseLine(R"({"jsonrpc":"2.0","id":)" + std::to_string(promptId) + R"(,"result":{"stopReason":"end_turn"}})");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().deniedToolCalls, 2);
  EXPECT_THAT(events.back().warnings, ElementsAre(HasSubstr("is outside its worktree"), HasSubstr("is outside its worktree")));

  auto allowAll = session("allow");
  handshake(*allowAll);
  EXPECT_EQ(ask(*allowAll, permissionRequest(0, (root_ / "secret.txt").string())).at("result").at("outcome").at("optionId"),
            json::value("yes"));
  auto rejectAll = session("reject");
  handshake(*rejectAll);
  EXPECT_EQ(ask(*rejectAll, permissionRequest(0, (worktree_ / "calc.py").string())).at("result").at("outcome").at("optionId"),
            json::value("no"));
}

TEST_F(AcpSessionTest, FilesAreServedInsideTheWorktreeOnly) {
  auto s = session();
  handshake(*s);
  auto read = [&](int id, const std::string& path, const std::string& extra = "") {
    return ask(*s, R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                       R"(,"method":"fs/read_text_file","params":{"sessionId":"s1","path":")" + path + "\"" + extra + "}}");
  };
  EXPECT_EQ(read(0, (worktree_ / "calc.py").string()).at("result").at("content"),
            json::value("def add(a, b):\n    return a - b\n"));
  EXPECT_EQ(read(1, (worktree_ / "calc.py").string(), R"(,"line":2,"limit":1)").at("result").at("content"),
            json::value("    return a - b\n"));
  // A file it is about to create reads as empty (gemini asks first).
  EXPECT_EQ(read(2, (worktree_ / "new.py").string()).at("result").at("content"), json::value(""));
  const json::object refused = read(3, (root_ / "secret.txt").string());
  EXPECT_EQ(refused.at("error").at("code"), json::value(-32000));
  EXPECT_THAT(std::string(refused.at("error").at("message").as_string()), HasSubstr("outside the worktree"));
  // Nor through a symlink that points out.
  fs::create_symlink(root_ / "secret.txt", worktree_ / "link.txt");
  EXPECT_TRUE(read(4, (worktree_ / "link.txt").string()).contains("error"));

  s->parseLine(R"({"jsonrpc":"2.0","id":5,"method":"fs/write_text_file","params":{"sessionId":"s1","path":")" +
               (worktree_ / "pkg" / "new.py").string() + R"(","content":"x = 1\n"}})");
  auto written = parsed(s->takeOutgoing());
  ASSERT_EQ(written.size(), 1u);
  EXPECT_TRUE(written[0].at("result").is_null());
  std::ifstream in(worktree_ / "pkg" / "new.py");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "x = 1\n");
  const json::object outside = ask(*s, R"({"jsonrpc":"2.0","id":6,"method":"fs/write_text_file","params":{"sessionId":"s1","path":")" +
                                           (root_ / "planted.txt").string() + R"(","content":"x"}})");
  EXPECT_TRUE(outside.contains("error"));
  EXPECT_FALSE(fs::exists(root_ / "planted.txt"));
  // Nor through its symlink.
  EXPECT_TRUE(ask(*s, R"({"jsonrpc":"2.0","id":8,"method":"fs/write_text_file","params":{"sessionId":"s1","path":")" +
                          (worktree_ / "link.txt").string() + R"(","content":"overwritten"}})")
                  .contains("error"));
  std::ifstream secret(root_ / "secret.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(secret), {}), "not for agents\n");
  // What hydra does not offer is refused as unknown, terminals among it.
  EXPECT_EQ(ask(*s, R"({"jsonrpc":"2.0","id":7,"method":"terminal/create","params":{"command":"sh"}})")
                .at("error")
                .at("code"),
            json::value(-32601));
}

// hydra reads and writes for the agent beneath its worktree without following
// a link on the way: a link that stays inside is resolved first and served, a
// FIFO is refused at once (a write to one would otherwise wait for a reader).
TEST_F(AcpSessionTest, FilesAreOpenedBeneathTheWorktreeAndAFifoIsNeverWaitedOn) {
  auto s = session();
  handshake(*s);
  auto request = [&](int id, const std::string& method, const std::string& path, const std::string& extra = "") {
    return ask(*s, R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method +
                       R"(","params":{"sessionId":"s1","path":")" + path + "\"" + extra + "}}");
  };
  fs::create_directories(worktree_ / "src");
  {
    std::ofstream(worktree_ / "src" / "util.py") << "x = 1\n";
  }
  fs::create_directory_symlink("src", worktree_ / "lib");
  EXPECT_EQ(request(0, "fs/read_text_file", (worktree_ / "lib" / "util.py").string()).at("result").at("content"),
            json::value("x = 1\n"));
  EXPECT_TRUE(request(1, "fs/write_text_file", (worktree_ / "lib" / "util.py").string(), R"(,"content":"x = 2\n")")
                  .at("result")
                  .is_null());
  std::ifstream in(worktree_ / "src" / "util.py");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "x = 2\n");

  ASSERT_EQ(::mkfifo((worktree_ / "pipe").c_str(), 0600), 0);
  EXPECT_TRUE(request(2, "fs/read_text_file", (worktree_ / "pipe").string()).contains("error"));
  EXPECT_TRUE(request(3, "fs/write_text_file", (worktree_ / "pipe").string(), R"(,"content":"x")").contains("error"));
}

TEST_F(AcpSessionTest, APresetSwitchesItsSessionModeBeforeThePrompt) {
  // codex-acp starts read-only: hydra's sandbox, not its own, confines it.
  auto s = findAdapter("codex-acp")->session(SessionSetup{worktree_, "Fix add()", "worktree", {}});
  s->start();
  s->parseLine(R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}})");
  s->takeOutgoing();
  s->parseLine(R"({"jsonrpc":"2.0","id":1,"result":{"sessionId":"s9","modes":{"currentModeId":"read-only"}}})");
  auto mode = parsed(s->takeOutgoing());
  ASSERT_EQ(mode.size(), 1u);
  EXPECT_EQ(mode[0].at("method"), json::value("session/set_mode"));
  EXPECT_EQ(mode[0].at("params"), json::parse(R"({"sessionId":"s9","modeId":"full-access"})"));
  s->parseLine(R"({"jsonrpc":"2.0","id":2,"result":{}})");
  auto prompt = parsed(s->takeOutgoing());
  ASSERT_EQ(prompt.size(), 1u);
  EXPECT_EQ(prompt[0].at("method"), json::value("session/prompt"));
  // A mode the agent refuses fails the run with its message.
  auto refused = findAdapter("codex-acp")->session(SessionSetup{worktree_, "t", "worktree", {}});
  refused->start();
  refused->parseLine(R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}})");
  refused->parseLine(R"({"jsonrpc":"2.0","id":1,"result":{"sessionId":"s9"}})");
  auto events = refused->parseLine(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"unknown mode"}})");
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.back().isError);
  EXPECT_THAT(events.back().warnings, ElementsAre("session/set_mode failed: unknown mode (-32602)"));
}

TEST_F(AcpSessionTest, ClaudeAcpRunsTheInstalledClaudeAndKeepsItsPermissionsAsking) {
  const Adapter& claudeAcp = *findAdapter("claude-acp");
  EXPECT_EQ(claudeAcp.defaultBinary(), "claude-agent-acp");
  // Claude's own state directory is its to write, as for the plain claude preset.
  EXPECT_THAT(claudeAcp.stateDirectories({}, root_ / "home"), ElementsAre(root_ / "home" / ".claude"));

  // IS_SANDBOX inherited from hydra's environment would let claude-agent-acp
  // ask Claude Code for a mode it refuses as root: the preset clears it.
  AgentConfig config;
  config.name = "claude-acp";
  config.adapter = "claude-acp";
  Invocation invocation = claudeAcp.invocation(config, "Fix add()");
  EXPECT_THAT(invocation.args, IsEmpty()) << "the task goes in session/prompt";
  EXPECT_EQ(invocation.env.at("IS_SANDBOX"), "");
  EXPECT_EQ(invocation.env.at("DISABLE_AUTOUPDATER"), "1");

  // The `claude` on the agent's PATH is the Claude Code it drives.
  const fs::path bin = root_ / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "claude") << "#!/bin/sh\n";
  fs::permissions(bin / "claude", fs::perms::owner_all);
  std::map<std::string, std::string> env{{"PATH", (root_ / "empty").string() + ":" + bin.string()}};
  claudeAcp.completeEnvironment(env);
  EXPECT_EQ(env.at("CLAUDE_CODE_EXECUTABLE"), (bin / "claude").string());

  // One the user names is kept.
  std::map<std::string, std::string> named{{"PATH", bin.string()}, {"CLAUDE_CODE_EXECUTABLE", "/opt/claude/bin/claude"}};
  claudeAcp.completeEnvironment(named);
  EXPECT_EQ(named.at("CLAUDE_CODE_EXECUTABLE"), "/opt/claude/bin/claude");

  // Without one the run cannot start, and says what to do.
  std::map<std::string, std::string> none{{"PATH", (root_ / "empty").string()}};
  try {
    claudeAcp.completeEnvironment(none);
    ADD_FAILURE() << "no claude on PATH was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("`claude` is not on PATH"));
    EXPECT_THAT(e.what(), HasSubstr("CLAUDE_CODE_EXECUTABLE"));
  }

  // The other presets need nothing more.
  std::map<std::string, std::string> untouched{{"PATH", "/nowhere"}};
  for (const char* name : {"acp", "codex-acp", "gemini-acp", "opencode-acp", "claude"}) {
    findAdapter(name)->completeEnvironment(untouched);
    EXPECT_EQ(untouched.size(), 1u) << name;
  }
}

TEST_F(AcpSessionTest, AnErrorOrAnEarlyEndIsAFailedRun) {
  auto s = session();
  s->start();
  auto events = s->parseLine(R"({"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"no API key"}})");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::Error);
  EXPECT_THAT(events[0].text, HasSubstr("initialize failed: no API key"));
  EXPECT_TRUE(events[1].isError);
  EXPECT_TRUE(s->done());

  auto cut = session();
  const auto promptId = handshake(*cut);
  (void)promptId;
  EXPECT_THAT(parsed(cut->cancel()), ElementsAre(json::parse(R"({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}})")));
  events = cut->finish();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].isError);
  EXPECT_THAT(events[0].warnings, ElementsAre("the agent ended before it answered session/prompt"));

  auto refusing = session();
  const auto id = handshake(*refusing);
  events = refusing->parseLine(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":{"stopReason":"refusal"}})");
  EXPECT_TRUE(events.back().isError);
  EXPECT_THAT(events.back().warnings, ElementsAre("the agent stopped: refusal"));
  // A line that is not JSON-RPC is shown as it is.
  EXPECT_EQ(refusing->parseLine("Loaded cached credentials.").at(0).kind, EventKind::Raw);
}

}  // namespace
}  // namespace hydra::core
