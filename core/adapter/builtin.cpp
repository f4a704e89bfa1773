#include "core/adapter/builtin.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace hydra::core::adapters {

namespace {

constexpr std::string_view kTaskPlaceholder = "{task}";

bool mentionsTask(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg.find(kTaskPlaceholder) != std::string::npos;
  });
}

void appendSubstituted(std::vector<std::string>& out, const std::vector<std::string>& args,
                       std::string_view task) {
  for (const std::string& arg : args) out.push_back(substituteTask(arg, task));
}

// Adds `part` to `total` up to `max`; returns what was added. Both hold values
// in 0..max (the adapters' readers refuse anything else), so nothing overflows.
template <class T>
std::optional<T> addUpTo(std::optional<T>& total, const std::optional<T>& part, T max) {
  if (!part) return std::nullopt;
  T have = total.value_or(T{0});
  T added = std::min(*part, max - have);
  total = have + added;
  return added;
}

}  // namespace

AgentEvent rawEvent(std::string_view line) {
  AgentEvent event;
  event.kind = EventKind::Raw;
  event.text = std::string(line);
  return event;
}

AgentEvent textEvent(std::string text) {
  AgentEvent event;
  event.kind = EventKind::Text;
  event.text = std::move(text);
  return event;
}

AgentEvent toolCallEvent(std::string tool, std::string detail) {
  AgentEvent event;
  event.kind = EventKind::ToolCall;
  event.tool = std::move(tool);
  event.detail = std::move(detail);
  return event;
}

AgentEvent toolResultEvent(std::string tool, std::string detail, bool isError) {
  AgentEvent event;
  event.kind = EventKind::ToolResult;
  event.tool = std::move(tool);
  event.detail = std::move(detail);
  event.isError = isError;
  return event;
}

AgentEvent fileChangeEvent(std::string path, std::string change) {
  AgentEvent event;
  event.kind = EventKind::FileChange;
  event.path = std::move(path);
  event.change = std::move(change);
  return event;
}

AgentEvent usageEvent(const Usage& usage) {
  AgentEvent event;
  event.kind = EventKind::Usage;
  event.usage = usage;
  return event;
}

AgentEvent errorEvent(std::string text) {
  AgentEvent event;
  event.kind = EventKind::Error;
  event.text = std::move(text);
  event.isError = true;
  return event;
}

AgentEvent summaryEvent() {
  AgentEvent event;
  event.kind = EventKind::Summary;
  return event;
}

Usage addUsage(Usage& total, const Usage& part) {
  Usage added;
  added.inputTokens = addUpTo(total.inputTokens, part.inputTokens, kMaxCount);
  added.outputTokens = addUpTo(total.outputTokens, part.outputTokens, kMaxCount);
  added.cachedInputTokens = addUpTo(total.cachedInputTokens, part.cachedInputTokens, kMaxCount);
  added.costUsd = addUpTo(total.costUsd, part.costUsd, kMaxCostUsd);
  return added;
}

std::int64_t addCounts(std::int64_t a, std::int64_t b) { return a + std::min(b, kMaxCount - a); }

int turnsFrom(std::int64_t count) {
  return static_cast<int>(std::clamp<std::int64_t>(count, 0, std::numeric_limits<int>::max()));
}

int nextTurn(int turns) { return turns < std::numeric_limits<int>::max() ? turns + 1 : turns; }

std::string WrittenPaths::changeForWrite(const std::string& path) {
  return paths_.insert(path).second ? "add" : "update";
}

namespace {

class PlainTextParser final : public StreamParser {
 public:
  PlainTextParser(EventKind kind, bool keepBlank) : kind_(kind), keepBlank_(keepBlank) {}

  std::vector<AgentEvent> parseLine(std::string_view line) override {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    bool blank = line.find_first_not_of(" \t") == std::string_view::npos;
    if (blank && !keepBlank_) return {};
    AgentEvent event = kind_ == EventKind::Text ? textEvent(std::string(line)) : rawEvent(line);
    return {std::move(event)};
  }

  std::vector<AgentEvent> finish() override {
    if (finished_) return {};
    finished_ = true;
    return {summaryEvent()};
  }

 private:
  EventKind kind_;
  bool keepBlank_;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<StreamParser> plainTextParser(EventKind kind, bool keepBlank) {
  return std::make_unique<PlainTextParser>(kind, keepBlank);
}

std::string substituteTask(std::string_view arg, std::string_view task) {
  std::string out;
  out.reserve(arg.size());
  std::size_t from = 0;
  for (std::size_t at = arg.find(kTaskPlaceholder); at != std::string_view::npos;
       at = arg.find(kTaskPlaceholder, from)) {
    out.append(arg.substr(from, at - from));
    out.append(task);
    from = at + kTaskPlaceholder.size();
  }
  out.append(arg.substr(from));
  return out;
}

Invocation buildInvocation(const AgentConfig& config, const CommandTemplate& command,
                           std::string_view task) {
  Invocation invocation;
  invocation.program = config.binary;

  if (config.args.empty()) {
    appendSubstituted(invocation.args, command.args, task);
  } else {
    appendSubstituted(invocation.args, config.args, task);
    if (command.appendTaskToReplacedArgs && !mentionsTask(config.args)) {
      invocation.args.emplace_back(task);
    }
  }
  appendSubstituted(invocation.args, config.extraArgs, task);

  invocation.env = command.env;
  for (const auto& [key, value] : config.env) invocation.env[key] = value;
  return invocation;
}

}  // namespace hydra::core::adapters
