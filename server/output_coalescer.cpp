#include "server/output_coalescer.h"

#include <boost/json/value_from.hpp>

#include <algorithm>

namespace hydra::server {

namespace {

// Roughly what an event adds to a notification.
std::size_t eventBytes(const core::AgentEvent& e) {
  std::size_t n =
      32 + e.text.size() + e.tool.size() + e.detail.size() + e.path.size() + e.change.size();
  for (const auto& w : e.warnings) n += w.size() + 4;
  return n;
}

}  // namespace

boost::json::value OutputBatch::toJson() const {
  boost::json::object o{{"raceId", raceId}, {"agentId", agentId}, {"stream", core::toString(stream)}};
  boost::json::array l;
  l.reserve(lines.size());
  for (const auto& line : lines) l.emplace_back(line);
  o["lines"] = std::move(l);
  boost::json::array e;
  e.reserve(events.size());
  for (const auto& event : events) e.push_back(boost::json::value_from(event));
  o["events"] = std::move(e);
  if (droppedLines > 0) o["droppedLines"] = droppedLines;
  return o;
}

void OutputBatch::dropContent() {
  droppedLines += lines.size();
  lines.clear();
  events.clear();
  bytes = 0;
}

OutputCoalescer::Pending& OutputCoalescer::open(const Key& key, Clock::time_point now) {
  auto it = pending_.find(key);
  if (it != pending_.end()) return it->second;
  Pending p;
  p.batch.raceId = std::get<0>(key);
  p.batch.agentId = std::get<1>(key);
  p.batch.stream = std::get<2>(key);
  p.opened = now;
  return pending_.emplace(key, std::move(p)).first->second;
}

std::optional<OutputBatch> OutputCoalescer::add(const std::string& raceId,
                                                const std::string& agentId,
                                                core::OutputStream stream, std::string line,
                                                std::vector<core::AgentEvent> events,
                                                Clock::time_point now) {
  Key key{raceId, agentId, stream};
  Pending& p = open(key, now);
  bool repeated = false;  // a line the adapter could not parse is already in `lines`
  for (auto& e : events) {
    if (e.kind == core::EventKind::Raw && e.text == line) {
      repeated = true;
      continue;
    }
    p.batch.bytes += eventBytes(e);
    p.batch.events.push_back(std::move(e));
  }
  bool eventsOnly = line.empty() && !events.empty() && !repeated;
  if (!eventsOnly) {
    p.batch.bytes += line.size() + 4;
    p.batch.lines.push_back(std::move(line));
  }
  if (p.batch.bytes < limits_.maxBytes) return std::nullopt;
  OutputBatch full = std::move(p.batch);
  pending_.erase(key);
  return full;
}

void OutputCoalescer::addDropped(const std::string& raceId, const std::string& agentId,
                                 std::uint64_t lines, Clock::time_point now) {
  if (lines == 0) return;
  open(Key{raceId, agentId, core::OutputStream::Stdout}, now).batch.droppedLines += lines;
}

template <class Pred>
std::vector<OutputBatch> OutputCoalescer::take(Pred pred) {
  std::vector<std::pair<Clock::time_point, OutputBatch>> taken;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (pred(it->first, it->second)) {
      taken.emplace_back(it->second.opened, std::move(it->second.batch));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  std::stable_sort(taken.begin(), taken.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<OutputBatch> out;
  out.reserve(taken.size());
  for (auto& [opened, batch] : taken) out.push_back(std::move(batch));
  return out;
}

std::vector<OutputBatch> OutputCoalescer::takeDue(Clock::time_point now) {
  return take([&](const Key&, const Pending& p) { return p.opened + limits_.interval <= now; });
}

std::vector<OutputBatch> OutputCoalescer::takeAgent(const std::string& raceId,
                                                    const std::string& agentId) {
  return take([&](const Key& k, const Pending&) {
    return std::get<0>(k) == raceId && std::get<1>(k) == agentId;
  });
}

std::vector<OutputBatch> OutputCoalescer::takeRace(const std::string& raceId) {
  return take([&](const Key& k, const Pending&) { return std::get<0>(k) == raceId; });
}

std::vector<OutputBatch> OutputCoalescer::takeAll() {
  return take([](const Key&, const Pending&) { return true; });
}

std::optional<OutputCoalescer::Clock::time_point> OutputCoalescer::nextDue() const {
  std::optional<Clock::time_point> earliest;
  for (const auto& [key, p] : pending_) {
    if (!earliest || p.opened < *earliest) earliest = p.opened;
  }
  if (!earliest) return std::nullopt;
  return *earliest + limits_.interval;
}

}  // namespace hydra::server
