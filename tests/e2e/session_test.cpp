// End-to-end cases that need more than a transcript: timing of the client's
// disappearance, chunked writes, volume, and the command line itself.

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <fstream>
#include <random>
#include <sstream>

#include "hydra/version.h"
#include "protocol/framing.h"
#include "tests/e2e/hydra_process.h"

namespace hydra::test {
namespace {

namespace json = boost::json;

void initialize(HydraProcess& hydra) {
  ASSERT_TRUE(hydra.request(0, "initialize", json::object{{"capabilities", json::object{}}}));
  auto r = hydra.responseTo(0);
  ASSERT_TRUE(r) << hydra.stderrText();
  ASSERT_TRUE(r->contains("result"));
}

TEST(SessionTest, ClientThatStopsReadingAndLeavesEndsTheServer) {
  HydraProcess hydra({"serve"});
  initialize(hydra);
  hydra.closeStdout();  // nobody reads the answers any more
  hydra.request(1, "hydra/ping");
  hydra.closeStdin();
  auto code = hydra.waitExit();
  ASSERT_TRUE(code) << "hydra kept running after its client left";
  EXPECT_EQ(*code, 1);
}

TEST(SessionTest, MessagesWrittenInTinyRandomPiecesAreAllServed) {
  HydraProcess hydra({"--stdio"});
  std::string stream = protocol::encodeFrame(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})");
  for (int i = 1; i <= 20; ++i) {
    stream += protocol::encodeFrame(R"({"jsonrpc":"2.0","id":)" + std::to_string(i) +
                                    R"(,"method":"hydra/ping","params":{"data":)" + std::to_string(i) + "}}");
  }
  std::mt19937 rng(42);
  for (std::size_t at = 0; at < stream.size();) {
    std::size_t n = std::min<std::size_t>(1 + rng() % 7, stream.size() - at);
    ASSERT_TRUE(hydra.sendRaw(std::string_view(stream).substr(at, n)));
    at += n;
  }
  for (int i = 1; i <= 20; ++i) {
    auto r = hydra.responseTo(i);
    ASSERT_TRUE(r) << "no answer to " << i << "\n" << hydra.stderrText();
    EXPECT_EQ(r->at("result").at("data").as_int64(), i);
  }
}

TEST(SessionTest, ThousandPipelinedRequestsAreAllAnsweredOnce) {
  HydraProcess hydra({"serve"});
  initialize(hydra);
  std::string batch;
  for (int i = 1; i <= 1000; ++i) {
    batch += protocol::encodeFrame(R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"hydra/ping"})");
  }
  ASSERT_TRUE(hydra.sendRaw(batch));
  std::vector<int> seen(1001, 0);
  for (int n = 0; n < 1000; ++n) {
    auto m = hydra.receive();
    ASSERT_TRUE(m) << "only " << n << " answers";
    seen[m->at("id").as_int64()]++;
  }
  for (int i = 1; i <= 1000; ++i) EXPECT_EQ(seen[i], 1) << i;
}

TEST(SessionTest, LogsGoToTheLogFileAndNeverToStdout) {
  auto logFile = std::filesystem::temp_directory_path() / ("hydra-e2e-log-" + std::to_string(::getpid()));
  {
    HydraProcess hydra({"serve", "--log-level", "debug", "--log-file", logFile.string()});
    initialize(hydra);
    hydra.request(1, "shutdown");
    ASSERT_TRUE(hydra.responseTo(1));
    hydra.notify("exit");
    EXPECT_EQ(hydra.waitExit(), 0);
    EXPECT_TRUE(hydra.skipped.empty());
    EXPECT_EQ(hydra.stderrText(), "");
  }
  std::ifstream in(logFile);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("serving on stdio"), std::string::npos) << ss.str();
  std::filesystem::remove(logFile);
}

// Runs hydra with `args`, stdin closed, and returns {exit code, stdout + stderr}.
std::pair<int, std::string> runCommand(const std::vector<std::string>& args) {
  std::string cmd = HydraProcess::binary().string();
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " </dev/null 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  return {WEXITSTATUS(status), out};
}

TEST(CommandLineTest, VersionPrintsNameAndVersion) {
  auto [code, out] = runCommand({"--version"});
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, std::string("hydra ") + kVersion + "\n");
}

TEST(CommandLineTest, HelpListsServe) {
  auto [code, out] = runCommand({"--help"});
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("serve"), std::string::npos);
  EXPECT_NE(out.find("--stdio"), std::string::npos);
}

TEST(CommandLineTest, UnknownSubcommandIsAnError) {
  auto [code, out] = runCommand({"frobnicate"});
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("frobnicate"), std::string::npos);
}

TEST(CommandLineTest, BadLogLevelIsRejected) {
  auto [code, out] = runCommand({"serve", "--log-level", "loud"});
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("loud"), std::string::npos);
}

TEST(CommandLineTest, EmptyStdinEndsServeWithoutShutdown) {
  auto [code, out] = runCommand({"serve", "--log-level", "off"});
  EXPECT_EQ(code, 1);
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace hydra::test
