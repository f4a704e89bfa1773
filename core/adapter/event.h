#pragma once

// What an agent did, parsed from its CLI's output stream.

#include <boost/json/conversion.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

// The wire word: text, toolCall, toolResult, fileChange, usage, error, summary, raw.
std::string_view toString(EventKind kind);
std::optional<EventKind> parseEventKind(std::string_view text);

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
  int deniedToolCalls = 0;  // Summary: tool calls the CLI refused to run (permission denials)
  // Summary: the CLI's own id of the session, which a later run can continue
  // (Adapter::resumeInvocation); empty when the CLI gives none.
  std::string sessionId;
};

// The one JSON form of each, used by the records, `--json` and the protocol:
// {inputTokens?, outputTokens?, cachedInputTokens?, costUsd?} and {kind, text?,
// tool?, detail?, path?, change?, isError?, usage?, turns?, warnings?,
// deniedToolCalls?, sessionId?}, members
// that say nothing left out. A cost that is not a finite number is left out.
void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const Usage& usage);
Usage tag_invoke(boost::json::value_to_tag<Usage>, const boost::json::value& in);
void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const AgentEvent& event);
AgentEvent tag_invoke(boost::json::value_to_tag<AgentEvent>, const boost::json::value& in);
// Usage read from `in`, errors naming fields from `path` (e.g. "agents[0].usage").
Usage usageFromJson(const boost::json::value& in, const std::string& path);

}  // namespace hydra::core
