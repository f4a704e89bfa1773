// The adapter fuzz targets: an agent's stdout through one CLI's stream parser,
// fed as the race engine feeds it (core::LineSplitter, then lines made UTF-8
// as core::Process does), then into the JSON hydra writes from the events: the
// hydra/agentOutput notification (server/output_coalescer.h) and the race record.

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <variant>

#include "core/adapter/adapter.h"
#include "core/adapter/builtin.h"
#include "core/process/line_splitter.h"
#include "core/util/utf8.h"
#include "core/records/record.h"
#include "protocol/message.h"
#include "server/output_coalescer.h"
#include "tests/fuzz/fuzz_checks.h"

namespace hydra::fuzz {

namespace json = boost::json;
namespace fs = std::filesystem;
using core::AgentEvent;
using core::EventKind;

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw Failure(what);
}

std::string describe(const AgentEvent& e) {
  return std::string(core::toString(e.kind)) + " event (text '" + e.text + "', tool '" + e.tool +
         "', detail '" + e.detail + "', path '" + e.path + "', change '" + e.change + "')";
}

void checkCount(const std::optional<std::int64_t>& n, const std::string& what) {
  require(!n || (*n >= 0 && *n <= core::adapters::kMaxCount), what + " out of range");
}

void checkUsage(const core::Usage& u, const std::string& what) {
  checkCount(u.inputTokens, what + ": inputTokens");
  checkCount(u.outputTokens, what + ": outputTokens");
  checkCount(u.cachedInputTokens, what + ": cachedInputTokens");
  require(!u.costUsd || (std::isfinite(*u.costUsd) && *u.costUsd >= 0 &&
                         *u.costUsd <= core::adapters::kMaxCostUsd * (1 + 1e-9)),
          what + ": costUsd out of range");
}

void checkEvent(const AgentEvent& e) {
  for (const std::string* s : {&e.text, &e.tool, &e.detail, &e.path, &e.change}) {
    require(core::isValidUtf8(*s), "ill-formed UTF-8 in a " + describe(e));
  }
  for (const std::string& w : e.warnings)
    require(core::isValidUtf8(w), "ill-formed UTF-8 in a warning");
  // builtin.h: details and excerpts fit on one line of a UI.
  require(e.detail.size() <= core::adapters::kDetailLimit,
          "detail over the limit in a " + describe(e));
  require(e.detail.find('\n') == std::string::npos, "detail on several lines in a " + describe(e));
  if (e.kind == EventKind::FileChange) {
    require(!e.path.empty(), "file change without a path");
    require(e.change == "add" || e.change == "update" || e.change == "delete",
            "file change of unknown kind in a " + describe(e));
  }
  if (e.kind == EventKind::Usage) require(e.usage.has_value(), "usage event without usage");
  if (e.usage) checkUsage(*e.usage, "usage of a " + describe(e));
  require(!e.turns || *e.turns >= 0, "negative turns");
}

// Boost.JSON's own text for `v`, which must read back: a non-finite number
// (written `Infinity`) or ill-formed UTF-8 would not.
json::value roundTrip(const json::value& v, const std::string& what) {
  std::string text = json::serialize(v);
  json::error_code ec;
  json::value back = json::parse(text, ec);
  require(!ec, what + " is not valid JSON (" + ec.message() + "): " + text);
  return back;
}

// What hydra writes to an ACP agent: one valid JSON-RPC message per line.
void checkOutgoing(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    require(!line.empty() && line.back() == '\n' && line.find('\n') == line.size() - 1,
            "a message to the agent is not one line: " + line);
    require(core::isValidUtf8(line), "a message to the agent is not UTF-8");
    const auto parsed = protocol::parseMessage(std::string_view(line).substr(0, line.size() - 1));
    require(std::holds_alternative<protocol::Message>(parsed), "a message to the agent is not JSON-RPC: " + line);
  }
}

// A worktree for ACP sessions, emptied before each input, next to a file
// that must stay as it is.
struct AcpWorktree {
  fs::path root;
  fs::path worktree;

  AcpWorktree() {
    root = fs::temp_directory_path() / ("hydra-fuzz-acp-" + std::to_string(::getpid()));
    worktree = root / "worktree";
    fs::create_directories(worktree);
    std::ofstream(root / "outside.txt") << "untouched\n";
  }

  void reset() const {
    for (const auto& entry : fs::directory_iterator(worktree)) fs::remove_all(entry.path());
  }

  void requireNothingOutside() const {
    std::size_t entries = 0;
    for (const auto& entry : fs::directory_iterator(root)) {
      (void)entry;
      ++entries;
    }
    require(entries == 2, "an ACP session wrote next to its worktree");
    std::ifstream in(root / "outside.txt");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    require(text == "untouched\n", "an ACP session changed a file outside its worktree");
  }
};

const AcpWorktree& acpWorktree() {
  static const AcpWorktree place;
  place.reset();
  return place;
}

}  // namespace

void adapterStream(std::string_view adapterName, std::string_view input) {
  const core::Adapter* adapter = core::findAdapter(adapterName);
  require(adapter != nullptr, "no adapter " + std::string(adapterName));
  // An ACP agent's session answers it: in a worktree of its own, next to a
  // file it must never reach.
  const AcpWorktree& place = acpWorktree();
  std::unique_ptr<core::StreamParser> parser = adapter->session(core::SessionSetup{place.worktree, "task", "worktree", {}});
  auto* session = dynamic_cast<core::AgentSession*>(parser.get());
  if (session) {
    checkOutgoing(session->start());
  } else {
    parser = adapter->parser();
  }

  std::vector<AgentEvent> events;
  auto deliver = [&](std::vector<std::string> lines) {
    for (std::string& line : lines) {
      if (!core::isValidUtf8(line)) line = core::makeValidUtf8(line);
      for (AgentEvent& e : parser->parseLine(line)) {
        checkEvent(e);
        events.push_back(std::move(e));
      }
      if (session) checkOutgoing(session->takeOutgoing());
    }
  };
  // A small line limit, so that long lines arrive in pieces as they can.
  core::LineSplitter splitter(512);
  constexpr std::size_t kChunk = 4096;
  for (std::size_t at = 0; at < input.size(); at += kChunk)
    deliver(splitter.feed(input.substr(at, kChunk)));
  deliver(splitter.finish());

  std::vector<AgentEvent> last = parser->finish();
  for (const AgentEvent& e : last) checkEvent(e);
  require(parser->finish().empty(), "finish() gave events twice");
  if (session) place.requireNothingOutside();
  events.insert(events.end(), last.begin(), last.end());
  std::size_t summaries = 0;
  for (const AgentEvent& e : events) summaries += e.kind == EventKind::Summary;
  require(summaries == 1, "the run has " + std::to_string(summaries) + " Summary events");

  // Whoever adds up the run's Usage events (the race engine does) stays within
  // the bounds, and so does the usage the record keeps.
  long double sums[4] = {0, 0, 0, 0};
  std::optional<core::Usage> summaryUsage;
  for (const AgentEvent& e : events) {
    if (e.kind == EventKind::Summary && e.usage) summaryUsage = e.usage;
    if (e.kind != EventKind::Usage || !e.usage) continue;
    sums[0] += e.usage->inputTokens.value_or(0);
    sums[1] += e.usage->outputTokens.value_or(0);
    sums[2] += e.usage->cachedInputTokens.value_or(0);
    sums[3] += e.usage->costUsd.value_or(0);
  }
  for (int i = 0; i < 3; ++i) {
    require(sums[i] <= core::adapters::kMaxCount, "the run's Usage events add up past kMaxCount");
  }
  require(sums[3] <= core::adapters::kMaxCostUsd * (1 + 1e-9L),
          "the run's costs add up past kMaxCostUsd");

  // The notification the events go out in.
  server::OutputBatch batch;
  batch.raceId = "20261121-101500-a3f9";
  batch.agentId = "agent";
  batch.events = events;
  roundTrip(batch.toJson(), "the hydra/agentOutput notification");

  // The record, with the usage the race engine keeps: the summary's, else the sum.
  core::AgentRecord record;
  record.agentId = "agent";
  record.agent = std::string(adapterName);
  record.adapter = std::string(adapterName);
  record.branch = "hydra/agent-20261121-101500-a3f9";
  record.worktree = "/tmp/w";
  record.status = core::AgentStatus::Completed;
  if (summaryUsage) {
    record.usage = summaryUsage;
  } else {
    core::Usage total;
    for (const AgentEvent& e : events) {
      if (e.kind == EventKind::Usage && e.usage) core::adapters::addUsage(total, *e.usage);
    }
    record.usage = total;
  }
  json::value back = roundTrip(json::value_from(record), "the race record");
  core::AgentRecord reread = json::value_to<core::AgentRecord>(back);
  require(reread.usage.has_value() == record.usage.has_value(),
          "the record's usage did not read back");
  if (record.usage) {
    require(reread.usage->inputTokens == record.usage->inputTokens &&
                reread.usage->outputTokens == record.usage->outputTokens &&
                reread.usage->cachedInputTokens == record.usage->cachedInputTokens,
            "the record's token counts did not read back");
  }
}

}  // namespace hydra::fuzz
