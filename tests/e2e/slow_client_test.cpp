// A client that stops reading, against the real `hydra serve`, while a
// scripted agent floods its output: hydra's memory stays under the bound
// docs/protocol.md documents ("Slow clients"), agent output is what the client
// loses first, and a client that still sends requests but reads nothing is
// treated as gone once more than the send limit waits for it.
//
// Memory is read from /proc/PID/status (VmRSS, VmHWM) while hydra runs, and
// its peak over the whole run from wait4 (ru_maxrss) once it has exited.

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "protocol/framing.h"
#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// docs/protocol.md, "Slow clients": what a client that stops reading may cost.
constexpr long kSendLimitKiB = 64 * 1024;       // messages waiting for the client
constexpr long kFrontMessagesKiB = 2 * 1536;    // the two at the front: hydra/log answers here
constexpr long kInProgressKiB = 16 * 2 * 1024;  // 16 answers being built, 1 MiB held twice each
constexpr long kOutputKiB = 8 * 1024;           // agent output stops being queued past this
constexpr long kEngineKiB = 28 * 1024;          // the rest of hydra while one agent floods (measured ~17 MiB)

template <class Pred>
bool eventually(Pred pred, std::chrono::seconds limit = 120s) {
  auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class SlowClientTest : public ::testing::Test {
 protected:
  void start() {
    client_ = std::make_unique<RpcClient>(repo_.root());
    client_->initialize(repo_.uri());
    baselineKiB_ = process().statusKiB("VmRSS").value_or(0);
    ASSERT_GT(baselineKiB_, 0);
  }
  HydraProcess& process() { return client_->process(); }
  std::string race(const std::string& agent) {
    return std::string(
        client_->call("hydra/race", json::object{{"task", "t"}, {"agents", json::array{agent}}})
            .at("raceId")
            .as_string());
  }
  std::string recordStatus(const std::string& raceId, bool agent) {
    std::error_code ec;
    if (!fs::exists(repo_.root() / ".hydra" / "races" / raceId / "race.json", ec)) return "";
    json::object record = repo_.raceRecord(raceId);
    return std::string(
        (agent ? record.at("agents").at(0) : json::value(record)).at("status").as_string());
  }
  // Highest VmHWM seen so far while hydra runs.
  void sample() {
    if (auto hwm = process().statusKiB("VmHWM")) peakSeenKiB_ = std::max(peakSeenKiB_, *hwm);
  }

  TestRepo repo_;
  std::unique_ptr<RpcClient> client_;
  long baselineKiB_ = 0;
  long peakSeenKiB_ = 0;
};

TEST_F(SlowClientTest, FloodingAgentAndAClientThatStopsReadingStayUnderTheMemoryBound) {
  constexpr int kLines = 1'000'000;  // about 100 MB of output
  repo_.writeConfig(TestRepo::agent("flood", {"flood", std::to_string(kLines)}));
  start();
  std::string id = race("flood");

  // Nothing more is read until the agent is done, as the record on disk tells.
  ASSERT_TRUE(eventually([&] {
    sample();
    return recordStatus(id, true) == "completed";
  })) << "the agent did not finish while its client was not reading";
  sample();
  EXPECT_LE(peakSeenKiB_ - baselineKiB_, kOutputKiB + kEngineKiB)
      << "VmHWM " << peakSeenKiB_ << " KiB, " << baselineKiB_ << " KiB after initialize";

  // Reading again, the client learns how much it missed: every line is sent or counted.
  client_->waitFor("hydra/raceFinished", id);
  std::uint64_t lines = 0, dropped = 0;
  for (const auto& m : client_->notifications("hydra/agentOutput")) {
    lines += m.at("params").at("lines").as_array().size();
    if (const auto* d = m.at("params").as_object().if_contains("droppedLines"))
      dropped += d->to_number<std::uint64_t>();
  }
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(lines + dropped, static_cast<std::uint64_t>(kLines));
  ASSERT_EQ(client_->notifications("hydra/agentFinished").size(), 1u);

  EXPECT_TRUE(client_->call("shutdown", json::object{}).is_null());
  client_->notify("exit");
  ASSERT_EQ(process().waitExit(30s), 0);
  ASSERT_TRUE(process().peakRssKiB());
  RecordProperty("baselineKiB", static_cast<int>(baselineKiB_));
  RecordProperty("peakKiB", static_cast<int>(*process().peakRssKiB()));
  EXPECT_LE(*process().peakRssKiB() - baselineKiB_, kOutputKiB + kEngineKiB)
      << "peak " << *process().peakRssKiB() << " KiB, " << baselineKiB_ << " KiB after initialize";
}

// The client keeps asking for the agent's log (1 MiB answers) and reads
// nothing: past the send limit hydra treats it as gone, as if it had
// disconnected. The agent is stopped, the race is interrupted, hydra exits,
// and its memory never passed the bound.
TEST_F(SlowClientTest, ClientThatSendsButNeverReadsIsTreatedAsGonePastTheSendLimit) {
  const fs::path pids = repo_.scratch() / "pids";
  const fs::path never = repo_.scratch() / "never";
  repo_.writeConfig(TestRepo::agent(
      "flood", {"flood", "200000", "pids", pids.string(), "wait-for", never.string()}));
  start();
  std::string id = race("flood");
  ASSERT_TRUE(eventually([&] { return fs::exists(pids); }));
  std::istringstream in(readFile(pids));
  int agentPid = 0, sleeperPid = 0;
  in >> agentPid >> sleeperPid;
  ASSERT_GT(agentPid, 0);

  // From here on nothing is read. Each hydra/log answer is about 1 MiB.
  int sent = 0;
  for (; sent < 10'000; ++sent) {
    std::string body = json::serialize(json::object{
        {"jsonrpc", "2.0"},
        {"id", "log-" + std::to_string(sent)},  // an id still pending may not be used again
        {"method", "hydra/log"},
        {"params", json::object{{"raceId", id}, {"agentId", "flood"}, {"limit", 1 << 20}}}});
    if (!process().sendRaw(protocol::encodeFrame(body))) break;  // hydra stopped reading
    sample();
    if (process().waitExit(0ms)) break;
  }
  auto code = process().waitExit(60s);
  ASSERT_TRUE(code) << "hydra kept running for a client that reads nothing (" << sent
                    << " requests sent); its log:\n"
                    << process().stderrText();
  EXPECT_EQ(*code, 1);
  EXPECT_GT(sent, 64) << "dropped before the send limit was reached";
  EXPECT_NE(process().stderrText().find("treating it as gone"), std::string::npos)
      << process().stderrText();

  ASSERT_TRUE(process().peakRssKiB());
  long peak = *process().peakRssKiB();
  RecordProperty("baselineKiB", static_cast<int>(baselineKiB_));
  RecordProperty("peakKiB", static_cast<int>(peak));
  RecordProperty("requestsSent", sent);
  EXPECT_GE(peak, peakSeenKiB_);
  EXPECT_LE(peak - baselineKiB_, kSendLimitKiB + kFrontMessagesKiB + kInProgressKiB + kEngineKiB)
      << "peak " << peak << " KiB, " << baselineKiB_ << " KiB after initialize";

  EXPECT_TRUE(eventually([&] { return processGone(agentPid); }, 10s)) << "the agent outlived hydra";
  EXPECT_TRUE(eventually([&] { return processGone(sleeperPid); }, 10s))
      << "the agent's child outlived hydra";
  EXPECT_EQ(recordStatus(id, false), "interrupted");
  EXPECT_EQ(recordStatus(id, true), "interrupted");
}

}  // namespace
}  // namespace hydra::test
