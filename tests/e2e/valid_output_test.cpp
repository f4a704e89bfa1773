// Everything the real `hydra serve` writes is valid UTF-8 JSON, whatever the
// client or an agent sends it: header bytes that are not UTF-8, numbers too
// large for a double (Boost.JSON reads 1e999 as infinity and would print it
// as `Infinity`), and an agent whose stream reports such a number.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "protocol/framing.h"
#include "protocol/message.h"
#include "tests/e2e/hydra_process.h"
#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

// The next message as the server wrote it, checked to be UTF-8 that Boost.JSON
// parses (it refuses `Infinity`, `NaN` and ill-formed UTF-8).
json::object receiveValid(HydraProcess& hydra) {
  auto body = hydra.receiveBody();
  if (!body) throw std::runtime_error("no message; hydra's log:\n" + hydra.stderrText());
  EXPECT_TRUE(protocol::isValidUtf8(*body)) << *body;
  EXPECT_THAT(*body, Not(HasSubstr("Infinity")));
  EXPECT_THAT(*body, Not(HasSubstr("NaN")));
  json::error_code ec;
  json::value v = json::parse(*body, ec);
  if (ec) throw std::runtime_error("not JSON (" + ec.message() + "): " + *body);
  return v.as_object();
}

void initialize(HydraProcess& hydra) {
  ASSERT_TRUE(hydra.request(0, "initialize", json::object{{"capabilities", json::object{}}}));
  json::object r = receiveValid(hydra);
  ASSERT_TRUE(r.contains("result")) << json::serialize(r);
}

void expectPingAnswered(HydraProcess& hydra, std::int64_t id) {
  ASSERT_TRUE(hydra.request(id, "hydra/ping", json::object{{"data", id}}));
  json::object r = receiveValid(hydra);
  EXPECT_EQ(r.at("id").as_int64(), id) << json::serialize(r);
  EXPECT_EQ(r.at("result").at("data").as_int64(), id);
}

TEST(ValidOutputTest, FrameErrorsQuotingHeaderBytesThatAreNotUtf8AreValidJson) {
  HydraProcess hydra({"serve", "--log-level", "off"});
  initialize(hydra);

  ASSERT_TRUE(hydra.sendRaw("X-Junk \xFF\xFE\xC3\r\n\r\n"));
  json::object e = receiveValid(hydra);
  EXPECT_TRUE(e.at("id").is_null());
  EXPECT_EQ(e.at("error").at("code").as_int64(), -32700);
  EXPECT_EQ(e.at("error").at("message").as_string(),
            "malformed header line 'X-Junk \\xFF\\xFE\\xC3'");
  expectPingAnswered(hydra, 1);

  ASSERT_TRUE(hydra.sendRaw("Content-Length: 2\xE9\xFF\r\n\r\n{}"));
  json::object length = receiveValid(hydra);
  EXPECT_EQ(length.at("error").at("message").as_string(),
            "Content-Length '2\\xE9\\xFF' is not a non-negative integer");
  expectPingAnswered(hydra, 2);
}

TEST(ValidOutputTest, NumbersTooLargeForADoubleAreRefusedNotEchoedAsInfinity) {
  HydraProcess hydra({"serve", "--log-level", "off"});
  initialize(hydra);

  const std::pair<std::string, std::string> cases[] = {
      {"1e999", "params.data"},
      {"-1e999", "params.data"},
      {"[1,{\"x\":1e400}]", "params.data[1].x"},
  };
  std::int64_t id = 10;
  for (const auto& [number, path] : cases) {
    SCOPED_TRACE(number);
    ASSERT_TRUE(hydra.sendRaw(
        protocol::encodeFrame(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                              R"(,"method":"hydra/ping","params":{"data":)" + number + "}}")));
    json::object r = receiveValid(hydra);
    EXPECT_EQ(r.at("id").as_int64(), id);
    EXPECT_EQ(r.at("error").at("code").as_int64(), -32602);
    EXPECT_EQ(r.at("error").at("data").at("path").as_string(), path);
    EXPECT_THAT(std::string(r.at("error").at("message").as_string()), HasSubstr(path));
    ++id;
  }

  // Large but finite numbers are echoed as they are.
  ASSERT_TRUE(hydra.sendRaw(protocol::encodeFrame(
      R"({"jsonrpc":"2.0","id":20,"method":"hydra/ping","params":{"data":[1e308,-2.5]}})")));
  json::object ok = receiveValid(hydra);
  EXPECT_EQ(ok.at("result").at("data"), (json::array{1e308, -2.5}));

  // A notification carrying one is dropped unanswered; the session goes on.
  ASSERT_TRUE(hydra.sendRaw(protocol::encodeFrame(
      R"({"jsonrpc":"2.0","method":"$/setTrace","params":{"value":1e999}})")));
  expectPingAnswered(hydra, 21);
}

// claude's stream-json result line with "total_cost_usd":1e999: the race record
// stays readable, the race stays in hydra/status, and every notification about
// it is valid JSON.
TEST(ValidOutputTest, AnAgentReportingAnInfiniteCostLeavesEverythingReadable) {
  TestRepo repo;
  std::string stream =
      readFile(fs::path(HYDRA_SOURCE_DIR) / "tests" / "e2e" / "fixtures" / "claude.stream.jsonl");
  const std::string cost = "\"total_cost_usd\":0.004";
  ASSERT_NE(stream.find(cost), std::string::npos);
  stream.replace(stream.find(cost), cost.size(), "\"total_cost_usd\":1e999");
  const fs::path fixture = repo.scratch() / "claude.infinite-cost.jsonl";
  std::ofstream(fixture) << stream;
  repo.writeConfig(TestRepo::agent("spendthrift", {"print-file", fixture.string()}, "claude"));

  RpcClient client(repo.root());  // its reads throw on anything that is not JSON
  client.initialize(repo.uri());
  std::string id(
      client.call("hydra/race", json::object{{"task", "t"}, {"agents", json::array{"spendthrift"}}})
          .at("raceId")
          .as_string());
  client.waitFor("hydra/raceFinished", id);

  auto finished = client.notifications("hydra/agentFinished");
  ASSERT_EQ(finished.size(), 1u);
  const json::object& params = finished[0].at("params").as_object();
  ASSERT_TRUE(params.contains("usage")) << json::serialize(params);
  EXPECT_FALSE(params.at("usage").as_object().contains("costUsd")) << json::serialize(params);
  EXPECT_EQ(params.at("usage").at("inputTokens").as_int64(), 400);

  const fs::path record = repo.root() / ".hydra" / "races" / id / "race.json";
  std::string text = readFile(record);
  EXPECT_THAT(text, Not(HasSubstr("Infinity")));
  EXPECT_NO_THROW(json::parse(text)) << text;
  json::value status = client.call("hydra/status", json::object{{"raceId", id}});
  EXPECT_THAT(json::serialize(status), HasSubstr("spendthrift"));
  json::value races = client.call("hydra/races");
  EXPECT_THAT(json::serialize(races), HasSubstr(id));
}

}  // namespace
}  // namespace hydra::test
