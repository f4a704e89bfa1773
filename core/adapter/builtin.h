#pragma once

// Pieces the built-in adapters are made of: event constructors, usage sums,
// command-line building, and the adapters themselves (for the registry).
// Internal to core/adapter; everyone else goes through adapter.h.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/adapter/adapter.h"
#include "core/adapter/event.h"
#include "core/config/config.h"

namespace hydra::core::adapters {

// Details and excerpts are cut to this many bytes so a UI can show them on one line.
inline constexpr std::size_t kDetailLimit = 120;

// The largest token or turn count an adapter reports: 2^53 - 1, the largest
// integer every JSON reader holds exactly (JavaScript's
// Number.MAX_SAFE_INTEGER). Larger values are refused, and sums stop there.
inline constexpr std::int64_t kMaxCount = (std::int64_t{1} << 53) - 1;
// The largest cost, in US dollars, an adapter reports: far above any real run,
// and small enough that no sum of reported costs can overflow to infinity.
inline constexpr double kMaxCostUsd = 1e12;

AgentEvent rawEvent(std::string_view line);
AgentEvent textEvent(std::string text);
AgentEvent toolCallEvent(std::string tool, std::string detail);
AgentEvent toolResultEvent(std::string tool, std::string detail, bool isError);
AgentEvent fileChangeEvent(std::string path, std::string change);
AgentEvent usageEvent(const Usage& usage);
AgentEvent errorEvent(std::string text);
AgentEvent summaryEvent();

// Adds every field `part` has to `total`; fields neither has stay empty. Each
// sum stops at kMaxCount (tokens) or kMaxCostUsd (cost). Returns what was
// added: `part`, cut where a sum stopped. An adapter that emits the returned
// parts as Usage events keeps the sum of all its events within the same
// bounds, so whoever adds them up again never overflows either.
Usage addUsage(Usage& total, const Usage& part);
// a + b, stopping at kMaxCount; both in 0..kMaxCount.
std::int64_t addCounts(std::int64_t a, std::int64_t b);
// A count as a number of turns (an int), stopping at the largest int.
int turnsFrom(std::int64_t count);
// turns + 1, stopping at the largest int: a stream of billions of lines cannot overflow it.
int nextTurn(int turns);

// Some CLIs report a whole-file write without saying whether the file existed.
// The first write to a path in a run counts as "add", later ones as "update";
// a file that existed before the run is therefore reported as added, which is
// the best the stream allows (the race's diff has the truth).
class WrittenPaths {
 public:
  std::string changeForWrite(const std::string& path);
  void remember(const std::string& path) { paths_.insert(path); }

 private:
  std::set<std::string> paths_;
};

// How an adapter runs its CLI when the configuration says nothing else.
struct CommandTemplate {
  // Default arguments; an argument "{task}" (or containing it) receives the task.
  std::vector<std::string> args{};
  // Variables that keep the CLI non-interactive; config.env is applied on top.
  std::map<std::string, std::string> env{};
  // When config.args replaces the defaults without mentioning {task}, append
  // the task after them (false for the generic command adapter, whose task
  // then arrives through HYDRA_TASK only).
  bool appendTaskToReplacedArgs = true;
};

// A parser for CLIs that print plain text: each line becomes one event of
// `kind` (blank lines are dropped unless `keepBlank`), and finish() adds a
// Summary that only marks the end, since plain text says nothing about turns,
// tokens or success (the exit status does).
std::unique_ptr<StreamParser> plainTextParser(EventKind kind, bool keepBlank);

// Every occurrence of "{task}" in `arg` replaced by `task`. The task is never
// rescanned, so a task that itself contains "{task}" is passed as written.
std::string substituteTask(std::string_view arg, std::string_view task);

// program = config.binary (config always names one: the adapter's default
// binary unless [agents.NAME] binary says otherwise); args = config.args (or the
// template's) with {task} substituted, then config.extraArgs; env = template
// env overlaid with config.env.
Invocation buildInvocation(const AgentConfig& config, const CommandTemplate& command,
                           std::string_view task);

const Adapter& claudeAdapter();
const Adapter& codexAdapter();
const Adapter& cursorAdapter();
const Adapter& geminiAdapter();
const Adapter& opencodeAdapter();
const Adapter& aiderAdapter();
const Adapter& commandAdapter();
const Adapter& acpAdapter();
const Adapter& claudeAcpAdapter();
const Adapter& codexAcpAdapter();
const Adapter& geminiAcpAdapter();
const Adapter& opencodeAcpAdapter();

}  // namespace hydra::core::adapters
