#include "core/records/store.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "core/guard/records.h"

namespace hydra::core {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr std::size_t kMaxIdLength = 128;

void requireId(std::string_view id, std::string_view what) {
  if (!isValidId(id)) {
    throw std::invalid_argument("invalid " + std::string(what) + " \"" + std::string(id) + "\"");
  }
}

std::optional<std::string> readWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream data;
  data << in.rdbuf();
  if (in.bad())
    throw std::system_error(errno, std::generic_category(), "cannot read " + path.string());
  return std::move(data).str();
}

// Masks secrets in every string value of `value`. Member names are never
// looked at, and no value is masked for its member's name: in hydra's records a
// name is either one of hydra's own field names (none of which names a secret)
// or data, such as a test's name in `testCases`, and masking the verdict beside
// `...::test_key` would leave a record hydra can no longer read.
void redactJson(json::value& value, const Redactor& redactor) {
  if (value.is_string()) {
    json::string& s = value.get_string();
    std::string_view text(s.data(), s.size());
    std::string masked = redactor.redact(text);
    if (masked != text) s.assign(masked.data(), masked.size());
  } else if (value.is_array()) {
    for (auto& element : value.get_array()) redactJson(element, redactor);
  } else if (value.is_object()) {
    for (auto& member : value.get_object()) redactJson(member.value(), redactor);
  }
}

// The T that `path` holds; nullopt when there is no such file. A file that
// does not hold one is a RecordError naming the file and the field.
template <class T>
std::optional<T> readRecordFile(const fs::path& path) {
  auto text = readWholeFile(path);
  if (!text) return std::nullopt;
  boost::system::error_code ec;
  json::value value = json::parse(*text, ec);
  if (ec) throw RecordError(path.string() + ": " + ec.message());
  try {
    return json::value_to<T>(value);
  } catch (const JsonFieldError& e) {
    throw RecordError(path.string() + ": " + e.what());
  }
}

// The hydra that ran `race` is still the same live process, or runs on
// another host, where it cannot be tested (and so is never taken for dead).
bool hydraAlive(const RaceRecord& race) { return ownerLife(race.hydraOwner()) != OwnerLife::Dead; }

bool groupExists(pid_t group) { return ::kill(-group, 0) == 0 || errno == EPERM; }

// The process group an interrupted agent may have left behind, if it is safe
// to signal: never group 0 or 1 (kill(-1) is everyone), never hydra's own group,
// never a group whose leader's pid now names another process.
std::optional<pid_t> orphanedGroup(const AgentRecord& agent) {
  if (!agent.processGroup || *agent.processGroup <= 1) return std::nullopt;
  pid_t group = *agent.processGroup;
  if (group == ::getpgrp()) return std::nullopt;
  if (agent.pid && agent.pidStartTime) {
    auto startTime = processStartTime(*agent.pid);
    if (startTime && *startTime != *agent.pidStartTime) return std::nullopt;
  }
  if (!groupExists(group)) return std::nullopt;
  return group;
}

}  // namespace

bool isValidId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdLength) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// ---- AgentLog ----

AgentLog::AgentLog(fs::path stdoutPath, fs::path stderrPath, std::shared_ptr<const Redactor> redactor,
                   fs::path eventsPath)
    : redactor_(std::move(redactor)), eventsPath_(std::move(eventsPath)) {
  out_.path = std::move(stdoutPath);
  err_.path = std::move(stderrPath);
  // The stdout log exists from the start, so a viewer can page it at once.
  out_.file.emplace(out_.path);
}

void AgentLog::write(OutputStream stream, std::string_view line) {
  std::lock_guard lock(mutex_);
  Stream& s = stream == OutputStream::Stdout ? out_ : err_;
  if (!s.file) s.file.emplace(s.path);
  if (redactor_) {
    s.file->append(redactor_->redactLine(line, s.state));
  } else {
    s.file->append(line);
  }
}

void AgentLog::writeEvents(OutputStream stream, const std::vector<AgentEvent>& events) {
  if (events.empty() || eventsPath_.empty()) return;
  std::string lines;
  for (const auto& e : events) {
    if (e.kind == EventKind::Raw) continue;  // the log holds the line itself
    json::value value = json::value_from(e);
    value.as_object()["stream"] = toString(stream);
    if (redactor_) redactJson(value, *redactor_);
    lines += json::serialize(value);
    lines += '\n';
  }
  if (lines.empty()) return;
  std::lock_guard lock(mutex_);
  if (!events_) events_.emplace(eventsPath_);
  events_->append(lines);
}

void AgentLog::sync() {
  std::lock_guard lock(mutex_);
  if (out_.file) out_.file->sync();
  if (err_.file) err_.file->sync();
  if (events_) events_->sync();
}

// ---- RaceStore ----

RaceStore::RaceStore(fs::path repoRoot, Redactor redactor)
    : racesDir_(std::move(repoRoot) / ".hydra" / "races"),
      redactor_(std::make_shared<const Redactor>(std::move(redactor))) {}

fs::path RaceStore::raceDir(std::string_view raceId) const {
  requireId(raceId, "race id");
  return racesDir_ / std::string(raceId);
}

fs::path RaceStore::logPath(std::string_view raceId, std::string_view agentId,
                            OutputStream stream) const {
  requireId(agentId, "agent id");
  std::string name(agentId);
  name += stream == OutputStream::Stdout ? ".log" : ".stderr.log";
  return raceDir(raceId) / name;
}

namespace {

constexpr std::string_view kClaimPrefix = ".claim-";
constexpr const char* kOwnerFile = "owner";

// The owner a claim's name carries: `.claim-<hex>-<owner word>`.
std::optional<ProcessOwner> claimOwner(std::string_view name) {
  if (!name.starts_with(kClaimPrefix)) return std::nullopt;
  name.remove_prefix(kClaimPrefix.size());
  const auto dash = name.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  return parseOwnerWord(name.substr(dash + 1));
}

}  // namespace

std::string RaceStore::newRaceId() {
  std::error_code ec;
  fs::create_directories(racesDir_, ec);
  if (ec) throw std::system_error(ec, "cannot create " + racesDir_.string());
  std::random_device entropy;
  const std::string owner = toWord(ProcessOwner::self());
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08x", entropy());
  const fs::path claim = racesDir_ / (std::string(kClaimPrefix) + hex + "-" + owner);
  if (!fs::create_directory(claim, ec) || ec) {
    throw std::system_error(ec ? ec : std::make_error_code(std::errc::file_exists),
                            "cannot create the race folder " + claim.string());
  }
  try {
    guard::OwnRecordWrite own({claim / kOwnerFile});
    writeFileAtomic(claim / kOwnerFile, owner + "\n");
  } catch (...) {
    fs::remove_all(claim, ec);
    throw;
  }
  for (int attempt = 0; attempt < 64; ++attempt) {
    auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    auto day = std::chrono::floor<std::chrono::days>(now);
    std::chrono::year_month_day date(day);
    std::chrono::hh_mm_ss clock(now - day);
    char id[32];
    std::snprintf(id, sizeof id, "%04d%02u%02u-%02d%02d%02d-%04x", static_cast<int>(date.year()),
                  static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                  static_cast<int>(clock.hours().count()),
                  static_cast<int>(clock.minutes().count()),
                  static_cast<int>(clock.seconds().count()), entropy() & 0xffffu);
    // Never over an existing folder: another race took that id. The owner
    // file appears among hydra's records under that name: the escape guard
    // must know it as hydra's own write, not an agent's.
    guard::OwnRecordWrite own({claim / kOwnerFile, racesDir_ / id / kOwnerFile});
    if (::renameat2(AT_FDCWD, claim.c_str(), AT_FDCWD, (racesDir_ / id).c_str(), RENAME_NOREPLACE) == 0) return id;
    if (errno == EEXIST) continue;
    const int error = errno;
    fs::remove_all(claim, ec);
    throw std::system_error(error, std::generic_category(), "cannot create the race folder " + (racesDir_ / id).string());
  }
  fs::remove_all(claim, ec);
  throw std::runtime_error("cannot find a free race id in " + racesDir_.string());
}

void RaceStore::abandon(std::string_view raceId) {
  const fs::path dir = raceDir(raceId);
  std::error_code ec;
  if (fs::exists(dir / "race.json", ec)) return;
  guard::OwnRecordWrite own(guard::filesUnder(dir));
  fs::remove_all(dir, ec);
}

int RaceStore::removeAbandoned() {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(racesDir_, ec)) {
    const std::string name = entry.path().filename().string();
    std::optional<ProcessOwner> owner;
    if (name.starts_with(kClaimPrefix)) {
      owner = claimOwner(name);
    } else if (isValidId(name) && entry.is_directory(ec) && !fs::exists(entry.path() / "race.json", ec)) {
      std::ifstream file(entry.path() / kOwnerFile);
      std::string word;
      file >> word;
      owner = parseOwnerWord(word);
    } else {
      continue;
    }
    // No owner: made by a hydra from before owners were kept, or cut short
    // before its owner was written (a claim is renamed only once it has one).
    if (owner && ownerLife(*owner) != OwnerLife::Dead) continue;
    std::error_code removeError;
    guard::OwnRecordWrite own(guard::filesUnder(entry.path()));
    fs::remove_all(entry.path(), removeError);
    if (removeError) {
      spdlog::warn("could not remove {}, left by a hydra that stopped: {}", entry.path().string(), removeError.message());
      continue;
    }
    spdlog::info("removed {}, left by a hydra that stopped before its race was recorded", entry.path().string());
    ++removed;
  }
  return removed;
}

void RaceStore::save(const RaceRecord& race) {
  fs::path dir = raceDir(race.id);
  fs::create_directories(dir);
  json::value value = json::value_from(race);
  if (redactor_) redactJson(value, *redactor_);
  const fs::path file = dir / "race.json";
  guard::OwnRecordWrite own({file});
  writeFileAtomic(file, json::serialize(value) + "\n");
}

std::optional<RaceRecord> RaceStore::load(std::string_view raceId) const {
  return readRecordFile<RaceRecord>(raceDir(raceId) / "race.json");
}

std::vector<RaceRecord> RaceStore::list() const {
  std::vector<RaceRecord> races;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(racesDir_, ec)) {
    std::string name = entry.path().filename().string();
    if (!isValidId(name) || !entry.is_directory()) continue;
    try {
      if (auto race = load(name)) races.push_back(std::move(*race));
    } catch (const std::exception& e) {
      spdlog::warn("skipping race {}: {}", name, e.what());
    }
  }
  std::sort(races.begin(), races.end(), [](const RaceRecord& a, const RaceRecord& b) {
    if (a.createdAt != b.createdAt) return a.createdAt > b.createdAt;
    return a.id > b.id;
  });
  return races;
}

bool RaceStore::remove(std::string_view raceId) {
  const fs::path dir = raceDir(raceId);
  guard::OwnRecordWrite own(guard::filesUnder(dir));
  return fs::remove_all(dir) > 0;
}

void RaceStore::appendEvent(std::string_view raceId, const json::object& event) {
  json::value value = event;
  if (redactor_) redactJson(value, *redactor_);
  // serialize() escapes newlines inside strings, so each event is one line.
  const fs::path file = raceDir(raceId) / "events.jsonl";
  guard::OwnRecordWrite own({file});
  AppendFile(file).append(json::serialize(value));
}

std::vector<json::object> RaceStore::readEvents(std::string_view raceId) const {
  std::vector<json::object> events;
  std::ifstream in(raceDir(raceId) / "events.jsonl", std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    boost::system::error_code ec;
    json::value value = json::parse(line, ec);
    if (!ec && value.is_object()) events.push_back(std::move(value.get_object()));
  }
  return events;
}

std::unique_ptr<AgentLog> RaceStore::openLog(std::string_view raceId, std::string_view agentId) {
  fs::create_directories(raceDir(raceId));
  return std::make_unique<AgentLog>(logPath(raceId, agentId, OutputStream::Stdout),
                                    logPath(raceId, agentId, OutputStream::Stderr), redactor_,
                                    raceDir(raceId) / (std::string(agentId) + ".events.jsonl"));
}

fs::path RaceStore::checkLogPath(std::string_view raceId, std::string_view subject, std::string_view check) const {
  // A collaboration's iterations are checked as "builder@2".
  std::string plain(subject);
  std::replace(plain.begin(), plain.end(), '@', '-');
  requireId(plain, "check subject");
  requireId(check, "check name");
  return raceDir(raceId) / "checks" / (std::string(subject) + "." + std::string(check) + ".log");
}

std::unique_ptr<AgentLog> RaceStore::openCheckLog(std::string_view raceId, std::string_view subject,
                                                 std::string_view check) {
  fs::path path = checkLogPath(raceId, subject, check);
  fs::create_directories(path.parent_path());
  // Both streams go to one file, in the order they arrived.
  return std::make_unique<AgentLog>(path, path, redactor_);
}

fs::path RaceStore::scoresPath(std::string_view raceId) const { return raceDir(raceId) / "scores.json"; }

void RaceStore::saveScores(std::string_view raceId, const scoring::RaceScores& scores) {
  json::value value = json::value_from(scores);
  if (redactor_) redactJson(value, *redactor_);
  const fs::path file = scoresPath(raceId);
  guard::OwnRecordWrite own({file});
  writeFileAtomic(file, json::serialize(value) + "\n");
}

std::optional<scoring::RaceScores> RaceStore::loadScores(std::string_view raceId) const {
  return readRecordFile<scoring::RaceScores>(scoresPath(raceId));
}

RaceStore::AgentEventsPage RaceStore::readAgentEvents(std::string_view raceId, std::string_view agentId,
                                                      std::uint64_t offset, std::uint64_t limit) const {
  requireId(agentId, "agent id");
  AgentEventsPage page;
  page.offset = offset;
  std::ifstream in(raceDir(raceId) / (std::string(agentId) + ".events.jsonl"), std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    boost::system::error_code ec;
    json::value value = json::parse(line, ec);
    if (ec || !value.is_object()) continue;
    std::uint64_t index = page.total++;
    if (index < offset || page.events.size() >= limit) continue;
    try {
      page.events.push_back(json::value_to<AgentEvent>(value));
      const json::value* stream = value.as_object().if_contains("stream");
      auto parsed = stream && stream->is_string() ? parseOutputStream(stream->as_string()) : std::nullopt;
      page.streams.push_back(parsed.value_or(OutputStream::Stdout));
    } catch (const JsonFieldError&) {
      --page.total;  // not an event hydra wrote
    }
  }
  return page;
}

std::optional<LogSlice> RaceStore::readLog(std::string_view raceId, std::string_view agentId,
                                           std::uint64_t offset, std::uint64_t limit,
                                           OutputStream stream) const {
  fs::path path = logPath(raceId, agentId, stream);
  std::error_code ec;
  if (!fs::is_directory(raceDir(raceId), ec)) return std::nullopt;
  LogSlice slice;
  slice.offset = offset;
  std::ifstream in(path, std::ios::binary);
  if (!in) return slice;
  in.seekg(0, std::ios::end);
  slice.totalSize = static_cast<std::uint64_t>(in.tellg());
  if (offset >= slice.totalSize) return slice;
  std::uint64_t count = std::min({limit, kMaxLogSlice, slice.totalSize - offset});
  slice.data.resize(count);
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(slice.data.data(), static_cast<std::streamsize>(count));
  slice.data.resize(static_cast<std::size_t>(in.gcount()));
  return slice;
}

bool markIfOrphaned(RaceRecord& race) {
  if (race.status != RaceStatus::Running || hydraAlive(race)) return false;
  race.status = RaceStatus::Interrupted;
  for (AgentRecord& agent : race.agents) {
    if (agent.status == AgentStatus::Running || agent.status == AgentStatus::Queued) {
      agent.status = AgentStatus::Interrupted;
    }
  }
  return true;
}

std::vector<RaceRecord> RaceStore::recoverInterrupted(const std::function<void(pid_t)>& killGroup) {
  std::vector<RaceRecord> changed;
  for (RaceRecord& race : list()) {
    if (!markIfOrphaned(race)) continue;
    // Finished agents too: hydra may have died between an agent's exit and
    // the cleanup of the children it left in its group.
    for (const AgentRecord& agent : race.agents) {
      if (auto group = orphanedGroup(agent)) killGroup(*group);
    }
    save(race);
    changed.push_back(std::move(race));
  }
  return changed;
}

}  // namespace hydra::core
