#include "core/adapter/event.h"

#include <array>
#include <cmath>
#include <utility>

#include "core/util/json_fields.h"

namespace hydra::core {

namespace json = boost::json;

namespace {

constexpr std::array<std::pair<EventKind, std::string_view>, 8> kKinds{{
    {EventKind::Text, "text"},
    {EventKind::ToolCall, "toolCall"},
    {EventKind::ToolResult, "toolResult"},
    {EventKind::FileChange, "fileChange"},
    {EventKind::Usage, "usage"},
    {EventKind::Error, "error"},
    {EventKind::Summary, "summary"},
    {EventKind::Raw, "raw"},
}};

Usage readUsage(const JsonFields& r) {
  Usage u;
  u.inputTokens = r.optionalNumber<std::int64_t>("inputTokens");
  u.outputTokens = r.optionalNumber<std::int64_t>("outputTokens");
  u.cachedInputTokens = r.optionalNumber<std::int64_t>("cachedInputTokens");
  u.costUsd = r.optionalNumber<double>("costUsd");
  return u;
}

}  // namespace

std::string_view toString(EventKind kind) {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "raw";
}

std::optional<EventKind> parseEventKind(std::string_view text) {
  for (const auto& [k, name] : kKinds) {
    if (name == text) return k;
  }
  return std::nullopt;
}

void tag_invoke(json::value_from_tag, json::value& out, const Usage& u) {
  json::object o;
  putIfSet(o, "inputTokens", u.inputTokens);
  putIfSet(o, "outputTokens", u.outputTokens);
  putIfSet(o, "cachedInputTokens", u.cachedInputTokens);
  if (u.costUsd && std::isfinite(*u.costUsd)) o["costUsd"] = *u.costUsd;
  out = std::move(o);
}

Usage tag_invoke(json::value_to_tag<Usage>, const json::value& in) { return readUsage(JsonFields(in)); }

Usage usageFromJson(const json::value& in, const std::string& path) { return readUsage(JsonFields(in, path)); }

void tag_invoke(json::value_from_tag, json::value& out, const AgentEvent& e) {
  json::object o;
  o["kind"] = toString(e.kind);
  putIfNotEmpty(o, "text", e.text);
  putIfNotEmpty(o, "tool", e.tool);
  putIfNotEmpty(o, "detail", e.detail);
  putIfNotEmpty(o, "path", e.path);
  putIfNotEmpty(o, "change", e.change);
  // isError only says something about results, errors and the run's end.
  if (e.isError || e.kind == EventKind::ToolResult || e.kind == EventKind::Summary) o["isError"] = e.isError;
  if (e.usage) o["usage"] = json::value_from(*e.usage);
  putIfSet(o, "turns", e.turns);
  if (!e.warnings.empty()) o["warnings"] = stringArray(e.warnings);
  if (e.deniedToolCalls > 0) o["deniedToolCalls"] = e.deniedToolCalls;
  if (!e.sessionId.empty()) o["sessionId"] = e.sessionId;
  out = std::move(o);
}

AgentEvent tag_invoke(json::value_to_tag<AgentEvent>, const json::value& in) {
  JsonFields r(in);
  AgentEvent e;
  e.kind = r.word("kind", parseEventKind);
  e.text = r.optionalString("text").value_or("");
  e.tool = r.optionalString("tool").value_or("");
  e.detail = r.optionalString("detail").value_or("");
  e.path = r.optionalString("path").value_or("");
  e.change = r.optionalString("change").value_or("");
  e.isError = r.boolean("isError", false);
  e.usage = r.optionalObject<Usage>("usage", readUsage);
  e.turns = r.optionalNumber<int>("turns");
  e.warnings = r.strings("warnings");
  e.deniedToolCalls = r.optionalNumber<int>("deniedToolCalls").value_or(0);
  e.sessionId = r.optionalString("sessionId").value_or("");
  return e;
}

}  // namespace hydra::core
