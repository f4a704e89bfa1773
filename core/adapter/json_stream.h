#pragma once

// Reading agent CLIs' JSON-lines output: one JSON object per line, in shapes
// that change between CLI versions. Nothing here trusts a field to exist or to
// have the expected type, and nothing throws on bad input.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/adapter/adapter.h"
#include "core/adapter/builtin.h"
#include "core/util/text.h"  // oneLine: what a parser shows of a tool call

namespace hydra::core::adapters {

namespace json = boost::json;

// The line as a JSON object; nullopt when it is not JSON or not an object.
std::optional<json::object> parseObject(std::string_view line);

// The value at `keys` (each one a level deeper), or nullptr when any level is
// missing or not an object.
const json::value* find(const json::object& object, std::initializer_list<std::string_view> keys);

// Typed reads: the value when it is there with the right type, else a fallback.
std::string stringAt(const json::object& object, std::initializer_list<std::string_view> keys);
std::optional<std::int64_t> intAt(const json::object& object,
                                  std::initializer_list<std::string_view> keys);
// A finite number (Boost.JSON reads 1e999 as infinity, which is refused here).
std::optional<double> numberAt(const json::object& object,
                               std::initializer_list<std::string_view> keys);
// A token or turn count: a whole number from 0 to kMaxCount; anything else
// (negative, fractional, larger) is refused, so that what an agent prints can
// never make a count that JSON readers round or a sum that overflows.
std::optional<std::int64_t> countAt(const json::object& object,
                                    std::initializer_list<std::string_view> keys);
// A cost in US dollars: a finite number from 0 to kMaxCostUsd, else nullopt.
std::optional<double> costAt(const json::object& object,
                             std::initializer_list<std::string_view> keys);
bool boolAt(const json::object& object, std::initializer_list<std::string_view> keys);
const json::object* objectAt(const json::object& object,
                             std::initializer_list<std::string_view> keys);
const json::array* arrayAt(const json::object& object,
                           std::initializer_list<std::string_view> keys);

// A one-line description of a tool's input: the path, command, pattern, URL or
// query it acts on when it has one, else its compact JSON.
std::string describeInput(const json::value& input);

// The text of a tool result's content: a string as is, an array of content
// blocks as their "text" fields joined by newlines, anything else as JSON.
std::string contentText(const json::value& content);

// The common frame of a JSON-lines parser: strips a trailing '\r', skips blank
// lines, turns lines that are not JSON objects (or whose shape the CLI adapter
// does not know) into Raw events, contains any exception, and makes sure the
// run ends with exactly one Summary.
class JsonLinesParser : public StreamParser {
 public:
  std::vector<AgentEvent> parseLine(std::string_view line) final;
  std::vector<AgentEvent> finish() final;

 protected:
  // Appends the events of one JSON object; returns false when the shape is
  // unknown, in which case the line becomes one Raw event instead.
  virtual bool parseObjectLine(const json::object& object, std::vector<AgentEvent>& out) = 0;
  // The stream ended: append anything held back.
  virtual void flush(std::vector<AgentEvent>& /*out*/) {}
  // The Summary for a stream that did not deliver one itself.
  virtual AgentEvent summaryFromSeen() = 0;
  // Appends `summary` and remembers that the run has its Summary.
  void emitSummary(AgentEvent summary, std::vector<AgentEvent>& out);

 private:
  bool summarized_ = false;
  bool finished_ = false;
};

}  // namespace hydra::core::adapters
