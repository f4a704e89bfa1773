#include "core/adapter/json_stream.h"

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <exception>
#include <limits>
#include <utility>

namespace hydra::core::adapters {

namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool isBlank(std::string_view text) {
  for (char c : text) {
    if (!isSpace(c)) return false;
  }
  return true;
}

// The keys whose value says best what a tool acts on, most telling first.
constexpr std::array<std::string_view, 11> kDescriptiveKeys = {
    "file_path", "filePath", "notebook_path", "path",   "command",    "cmd",
    "pattern",   "url",      "query",         "prompt", "description"};

}  // namespace

std::optional<json::object> parseObject(std::string_view line) {
  boost::system::error_code ec;
  json::value value = json::parse(line, ec);
  if (ec || !value.is_object()) return std::nullopt;
  return std::move(value.as_object());
}

const json::value* find(const json::object& object, std::initializer_list<std::string_view> keys) {
  const json::object* level = &object;
  const json::value* found = nullptr;
  for (std::string_view key : keys) {
    if (level == nullptr) return nullptr;
    found = level->if_contains(key);
    if (found == nullptr) return nullptr;
    level = found->if_object();
  }
  return found;
}

std::string stringAt(const json::object& object, std::initializer_list<std::string_view> keys) {
  const json::value* value = find(object, keys);
  if (value == nullptr || !value->is_string()) return {};
  return std::string(value->get_string());
}

std::optional<std::int64_t> intAt(const json::object& object,
                                  std::initializer_list<std::string_view> keys) {
  const json::value* value = find(object, keys);
  if (value == nullptr) return std::nullopt;
  if (value->is_int64()) return value->get_int64();
  if (value->is_uint64()) {
    std::uint64_t u = value->get_uint64();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (value->is_double()) {
    // Some CLIs print token counts as 400.0; accept whole numbers in range.
    double d = value->get_double();
    if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.0e18) {
      return static_cast<std::int64_t>(d);
    }
  }
  return std::nullopt;
}

std::optional<double> numberAt(const json::object& object,
                               std::initializer_list<std::string_view> keys) {
  const json::value* value = find(object, keys);
  if (value == nullptr) return std::nullopt;
  if (value->is_double()) {
    double d = value->get_double();
    if (!std::isfinite(d)) return std::nullopt;
    return d;
  }
  if (value->is_int64()) return static_cast<double>(value->get_int64());
  if (value->is_uint64()) return static_cast<double>(value->get_uint64());
  return std::nullopt;
}

std::optional<std::int64_t> countAt(const json::object& object,
                                    std::initializer_list<std::string_view> keys) {
  std::optional<std::int64_t> n = intAt(object, keys);
  if (!n || *n < 0 || *n > kMaxCount) return std::nullopt;
  return n;
}

std::optional<double> costAt(const json::object& object,
                             std::initializer_list<std::string_view> keys) {
  std::optional<double> cost = numberAt(object, keys);
  if (!cost || !(*cost >= 0.0 && *cost <= kMaxCostUsd)) return std::nullopt;
  return cost;
}

bool boolAt(const json::object& object, std::initializer_list<std::string_view> keys) {
  const json::value* value = find(object, keys);
  return value != nullptr && value->is_bool() && value->get_bool();
}

const json::object* objectAt(const json::object& object,
                             std::initializer_list<std::string_view> keys) {
  const json::value* value = find(object, keys);
  return value == nullptr ? nullptr : value->if_object();
}

const json::array* arrayAt(const json::object& object,
                           std::initializer_list<std::string_view> keys) {
  const json::value* value = find(object, keys);
  return value == nullptr ? nullptr : value->if_array();
}

std::string describeInput(const json::value& input) {
  if (input.is_string()) return oneLine(input.get_string(), kDetailLimit);
  if (const json::object* object = input.if_object()) {
    for (std::string_view key : kDescriptiveKeys) {
      const json::value* value = object->if_contains(key);
      if (value != nullptr && value->is_string() && !value->get_string().empty()) {
        return oneLine(value->get_string(), kDetailLimit);
      }
    }
    if (object->empty()) return {};
  }
  if (input.is_null()) return {};
  return oneLine(json::serialize(input), kDetailLimit);
}

std::string contentText(const json::value& content) {
  if (content.is_string()) return std::string(content.get_string());
  if (content.is_null()) return {};
  if (const json::array* blocks = content.if_array()) {
    std::string out;
    bool any = false;
    for (const json::value& block : *blocks) {
      const json::value* text = nullptr;
      if (block.is_string()) {
        text = &block;
      } else if (const json::object* object = block.if_object()) {
        text = object->if_contains("text");
      }
      if (text == nullptr || !text->is_string()) continue;
      if (any) out.push_back('\n');
      out.append(text->get_string());
      any = true;
    }
    if (any) return out;
  }
  return json::serialize(content);
}

std::vector<AgentEvent> JsonLinesParser::parseLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (isBlank(line)) return {};

  std::optional<json::object> object = parseObject(line);
  if (!object) return {rawEvent(line)};

  std::vector<AgentEvent> out;
  const bool summarizedBefore = summarized_;
  try {
    if (!parseObjectLine(*object, out)) return {rawEvent(line)};
  } catch (const std::exception&) {
    // A shape the adapter half-understood; the line is still worth showing.
    return {rawEvent(line)};
  }
  // A run has one Summary: a second result line (a CLI never prints one; an
  // agent may) is shown as it is rather than ending the run again.
  if (summarizedBefore && std::any_of(out.begin(), out.end(), [](const AgentEvent& e) {
        return e.kind == EventKind::Summary;
      })) {
    return {rawEvent(line)};
  }
  return out;
}

std::vector<AgentEvent> JsonLinesParser::finish() {
  std::vector<AgentEvent> out;
  if (finished_) return out;
  finished_ = true;
  flush(out);
  if (!summarized_) emitSummary(summaryFromSeen(), out);
  return out;
}

void JsonLinesParser::emitSummary(AgentEvent summary, std::vector<AgentEvent>& out) {
  summarized_ = true;
  out.push_back(std::move(summary));
}

}  // namespace hydra::core::adapters
