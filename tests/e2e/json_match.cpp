#include "tests/e2e/json_match.h"

#include <boost/json/serialize.hpp>

namespace hydra::test {

namespace json = boost::json;

std::string mismatch(const json::value& expected, const json::value& actual,
                     const std::string& path) {
  if (expected.is_object()) {
    if (!actual.is_object()) return path + ": expected an object, got " + json::serialize(actual);
    for (const auto& [key, value] : expected.get_object()) {
      std::string p = path + "." + std::string(key);
      const json::value* a = actual.get_object().if_contains(key);
      if (!a) return p + ": missing";
      if (auto m = mismatch(value, *a, p); !m.empty()) return m;
    }
    return "";
  }
  if (expected.is_array()) {
    if (!actual.is_array() || actual.get_array().size() != expected.get_array().size()) {
      return path + ": expected an array of " + std::to_string(expected.get_array().size()) +
             ", got " + json::serialize(actual);
    }
    for (std::size_t i = 0; i < expected.get_array().size(); ++i) {
      auto m = mismatch(expected.get_array()[i], actual.get_array()[i],
                        path + "[" + std::to_string(i) + "]");
      if (!m.empty()) return m;
    }
    return "";
  }
  // 3 and 3.0 are the same number on the wire.
  if (expected.is_number() && actual.is_number()) {
    if (expected.to_number<double>() == actual.to_number<double>()) return "";
  } else if (expected == actual) {
    return "";
  }
  return path + ": expected " + json::serialize(expected) + ", got " + json::serialize(actual);
}

}  // namespace hydra::test
