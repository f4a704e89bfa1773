// An agent's output read line by line: real adapters and their recorded
// streams, the real redactor, and a real process's pipes.

#include "core/run/agent_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/executor/executor.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

const fs::path kScriptedAgent = fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "agents" / "scripted_agent.sh";
const fs::path kClaudeStream =
    fs::path(HYDRA_SOURCE_DIR) / "tests" / "core" / "adapter" / "fixtures" / "claude.permission-denied.edited.jsonl";

const Adapter& adapterNamed(std::string_view name) {
  const Adapter* adapter = findAdapter(name);
  if (!adapter) throw std::runtime_error("no adapter " + std::string(name));
  return *adapter;
}

class AgentOutputTest : public ::testing::Test {
 protected:
  AgentOutputReader reader(std::string_view adapter) {
    return AgentOutputReader(redactor, adapterNamed(adapter));
  }

  std::shared_ptr<const Redactor> redactor = std::make_shared<Redactor>(std::vector<std::string>{"hunter2-secret-value"});
  SessionSetup setup{fs::current_path(), "Do the task", {}, {}};
};

TEST_F(AgentOutputTest, AClaudeStreamReadFromARealProcessGivesUsageFinalMessageSessionAndWarnings) {
  auto out = reader("claude");
  EXPECT_EQ(out.open(setup), nullptr) << "claude is read by a parser, not spoken to";
  boost::asio::io_context io;
  std::vector<AgentEvent> events;
  bool exited = false;
  ProcessSpec process;
  process.program = kScriptedAgent.string();
  process.args = {"print-file", kClaudeStream.string(), "--"};
  process.cwd = fs::current_path();
  auto execution = localExecutor()->start(
      io, process,
      [&](OutputStream stream, std::string line) {
        auto read = out.read(stream, line);
        events.insert(events.end(), read.events.begin(), read.events.end());
      },
      [&](const ProcessResult&) { exited = true; }, JobLabel{"race1", "claude", "agent"});
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!exited && std::chrono::steady_clock::now() < deadline) io.run_one_for(20ms);
  ASSERT_TRUE(exited);
  auto tail = out.finish(std::nullopt);
  EXPECT_FALSE(events.empty()) << "the parser made events of its lines";

  AgentFinished finished;
  out.fillIn(finished);
  ASSERT_TRUE(finished.usage);
  EXPECT_EQ(finished.usage->inputTokens, 400);
  EXPECT_EQ(finished.finalMessage, "I need permission to write hello.txt.");
  EXPECT_EQ(finished.sessionId, "3098744b-cf4b-491d-b056-cc0c8dfb2b99");
  EXPECT_EQ(finished.deniedToolCalls, 1);
  EXPECT_FALSE(finished.warnings.empty()) << "a denied tool call is reported";
  EXPECT_FALSE(out.summaryIsError());
  EXPECT_EQ(out.reason(), "") << "it said nothing on stderr and did not fail";
}

TEST_F(AgentOutputTest, SecretsAreMaskedAndAPrivateKeyStaysMaskedOnItsOwnStreamOnly) {
  auto out = reader("command");
  out.open(setup);
  auto line = out.read(OutputStream::Stdout, "token is hunter2-secret-value, ok");
  EXPECT_EQ(line.text, "token is [REDACTED], ok");
  EXPECT_EQ(out.read(OutputStream::Stderr, "-----BEGIN RSA PRIVATE KEY-----").text, "[REDACTED]");
  EXPECT_EQ(out.read(OutputStream::Stderr, "MIIEpAIBAAKCAQEA").text, "[REDACTED]") << "inside the block";
  EXPECT_EQ(out.read(OutputStream::Stdout, "plain words").text, "plain words") << "stdout is not inside it";
  // The setup command's lines share the streams' state (SetupStep's Redact).
  EXPECT_EQ(out.redact(OutputStream::Stderr, "still the key"), "[REDACTED]");
  EXPECT_EQ(out.redact(OutputStream::Stderr, "-----END RSA PRIVATE KEY-----"), "[REDACTED]");
  EXPECT_EQ(out.redact(OutputStream::Stderr, "after it"), "after it");

  AgentFinished finished;
  out.fillIn(finished);
  EXPECT_EQ(finished.finalMessage, "token is [REDACTED], ok\nplain words") << "what it printed, masked";
  EXPECT_THAT(finished.stderrTail, ::testing::Not(HasSubstr("MIIE")));
}

TEST_F(AgentOutputTest, TheStderrTailKeepsTheLastLinesWithinItsBudgetAndItsLastWordIsTheReason) {
  auto out = reader("command");
  out.open(setup);
  for (int i = 1; i <= 30; ++i) out.read(OutputStream::Stderr, "line " + std::to_string(i));
  out.read(OutputStream::Stderr, "   ");
  AgentFinished finished;
  out.fillIn(finished);
  EXPECT_THAT(finished.stderrTail, ::testing::StartsWith("line 12\n"));
  EXPECT_THAT(finished.stderrTail, HasSubstr("line 30\n   "));
  EXPECT_EQ(out.reason(), "line 30") << "the last line that says something";

  // Long lines: the byte budget holds, but the last line is always kept.
  for (int i = 0; i < 5; ++i) out.read(OutputStream::Stderr, std::string(3000, 'x'));
  out.fillIn(finished);
  EXPECT_EQ(finished.stderrTail, std::string(3000, 'x'));
}

TEST_F(AgentOutputTest, APlainTextCLIsFinalMessageIsTheEndOfItsStdoutInWholeLines) {
  auto out = reader("command");
  out.open(setup);
  out.read(OutputStream::Stdout, "");
  out.read(OutputStream::Stdout, "  the answer is 42  ");
  out.read(OutputStream::Stdout, "");
  AgentFinished finished;
  out.fillIn(finished);
  EXPECT_EQ(finished.finalMessage, "the answer is 42");

  for (int i = 0; i < 400; ++i) out.read(OutputStream::Stdout, std::to_string(i) + std::string(99, '.'));
  out.fillIn(finished);
  EXPECT_LE(finished.finalMessage.size(), AgentOutputReader::kMaxOutputTail);
  EXPECT_THAT(finished.finalMessage, ::testing::EndsWith("399" + std::string(99, '.')));
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(finished.finalMessage.front()))) << "it starts on a line";

  // A CLI with a final message of its own keeps no tail.
  auto claude = reader("claude");
  claude.open(setup);
  claude.read(OutputStream::Stdout, "not json at all");
  AgentFinished none;
  claude.fillIn(none);
  EXPECT_EQ(none.finalMessage, "");
}

TEST_F(AgentOutputTest, AStreamHydraCutOffEndsInAnErrorSummaryThatIsTheReason) {
  auto out = reader("claude");
  out.open(setup);
  out.read(OutputStream::Stdout, R"({"type":"system","subtype":"init","session_id":"s1"})");
  out.read(OutputStream::Stderr, "working");
  auto tail = out.finish(std::string("cut off by hydra: cancelled"));
  ASSERT_FALSE(tail.empty());
  const auto& summary = tail.back();
  EXPECT_EQ(summary.kind, EventKind::Summary);
  EXPECT_TRUE(summary.isError);
  EXPECT_THAT(summary.warnings, ::testing::Contains(std::string("cut off by hydra: cancelled")));
  EXPECT_TRUE(out.summaryIsError());
  EXPECT_EQ(out.reason(), "cut off by hydra: cancelled") << "its summary's words before its stderr";

  out.close();
  EXPECT_TRUE(out.finish(std::nullopt).empty()) << "closed: nothing more is parsed";
  EXPECT_TRUE(out.read(OutputStream::Stdout, "late").events.empty());
}

TEST_F(AgentOutputTest, AnErrorTheCLIReportedIsTheReasonBeforeItsSummaryAndItsStderr) {
  auto codex = reader("codex");
  codex.open(setup);
  codex.read(OutputStream::Stderr, "some noise");
  EXPECT_EQ(codex.reason(), "some noise") << "its stderr, while it said nothing else";
  auto read = codex.read(OutputStream::Stdout, R"({"type":"turn.failed","error":{"message":"the model is overloaded"}})");
  ASSERT_FALSE(read.events.empty());
  EXPECT_EQ(read.events.front().kind, EventKind::Error);
  EXPECT_EQ(codex.reason(), "the model is overloaded");

  // An error summary without an error event: its words.
  auto claude = reader("claude");
  claude.open(setup);
  claude.read(OutputStream::Stderr, "some noise");
  claude.read(OutputStream::Stdout,
              R"({"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s2"})");
  EXPECT_TRUE(claude.summaryIsError());
  EXPECT_EQ(claude.reason(), "run ended with error_during_execution");
}

}  // namespace
}  // namespace hydra::core
