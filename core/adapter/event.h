#pragma once

// What an agent did, parsed from its CLI's output stream.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hydra::core {

struct Usage {
  std::optional<std::int64_t> inputTokens;
  std::optional<std::int64_t> outputTokens;
  std::optional<std::int64_t> cachedInputTokens;
  std::optional<double> costUsd;
};

enum class EventKind {
  Text,        // assistant prose: `text`
  ToolCall,    // `tool` with a short `detail` of its input
  ToolResult,  // `tool` (when known), `detail` = a short excerpt, `isError`
  FileChange,  // `path` and `change` (add, update, delete)
  Usage,       // `usage` for one turn or step
  Error,       // `text` says what went wrong
  Summary,     // the run's end: `text` (final message), `turns`, `usage`, `warnings`, `isError`
  Raw,         // a line the adapter could not parse, as it was
};

const char* toString(EventKind kind);

struct AgentEvent {
  EventKind kind = EventKind::Raw;
  std::string text;
  std::string tool;
  std::string detail;
  std::string path;
  std::string change;
  bool isError = false;
  std::optional<Usage> usage;
  std::optional<int> turns;
  std::vector<std::string> warnings;
};

}  // namespace hydra::core
