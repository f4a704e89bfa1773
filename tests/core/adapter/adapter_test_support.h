#pragma once

// Shared by the adapter tests: fixtures read line by line and fed to a parser
// the way the runner feeds an agent's stdout.

#include <gtest/gtest.h>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/adapter/adapter.h"
#include "core/adapter/event.h"

namespace hydra::core {

// Lets GoogleTest print event kinds by name in failure messages.
inline void PrintTo(EventKind kind, std::ostream* os) { *os << toString(kind); }

}  // namespace hydra::core

namespace hydra::core::testing {

inline std::string fixturePath(const std::string& name) {
  return std::string(HYDRA_TEST_DATA_DIR) + "/fixtures/" + name;
}

inline std::vector<std::string> readLines(const std::string& fixture) {
  std::ifstream in(fixturePath(fixture), std::ios::binary);
  if (!in) throw std::runtime_error("cannot open fixture " + fixture);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline const Adapter& adapterNamed(std::string_view name) {
  const Adapter* adapter = findAdapter(name);
  if (adapter == nullptr) throw std::runtime_error("no adapter " + std::string(name));
  return *adapter;
}

// A real line with one change made to it, for cases no captured stream shows.
inline std::string edited(const std::string& line,
                          const std::function<void(boost::json::object&)>& edit) {
  boost::json::value value = boost::json::parse(line);
  edit(value.as_object());
  return boost::json::serialize(value);
}

// Every line through one parser, then finish().
inline std::vector<AgentEvent> parseAll(const Adapter& adapter,
                                        const std::vector<std::string>& lines) {
  auto parser = adapter.parser();
  std::vector<AgentEvent> events;
  for (const std::string& line : lines) {
    for (AgentEvent& event : parser->parseLine(line)) events.push_back(std::move(event));
  }
  for (AgentEvent& event : parser->finish()) events.push_back(std::move(event));
  return events;
}

inline std::vector<AgentEvent> parseFixture(std::string_view adapter, const std::string& fixture) {
  return parseAll(adapterNamed(adapter), readLines(fixture));
}

inline std::vector<EventKind> kindsOf(const std::vector<AgentEvent>& events) {
  std::vector<EventKind> kinds;
  for (const AgentEvent& event : events) kinds.push_back(event.kind);
  return kinds;
}

// The events of one kind, in order.
inline std::vector<AgentEvent> ofKind(const std::vector<AgentEvent>& events, EventKind kind) {
  std::vector<AgentEvent> out;
  for (const AgentEvent& event : events) {
    if (event.kind == kind) out.push_back(event);
  }
  return out;
}

}  // namespace hydra::core::testing
