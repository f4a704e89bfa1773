#pragma once

// Reading and writing the JSON forms of hydra's own types (records, scores,
// events): every reader names the offending field by its path from the root,
// and no writer ever emits a number that JSON cannot hold.
//
// Unknown fields are ignored, so an older hydra can read what a newer one wrote.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/timestamp.h"
#include "protocol/json_read.h"
#include "protocol/wire.h"

namespace hydra::core {

// JSON that does not hold what it should; what() starts with the field's path.
// The one error of every JSON reader (protocol/json_read.h, protocol/wire.h),
// so a record read through a described struct is refused the same way.
using JsonFieldError = protocol::ParamError;

// Core's described structs (BOOST_DESCRIBE_STRUCT) are read and written by
// protocol/wire.h's generic conversions, found here by ADL.
using protocol::tag_invoke;

class JsonFields {
 public:
  // Throws JsonFieldError when `in` is not an object.
  JsonFields(const boost::json::value& in, std::string path = {});

  // The member, or nullptr when it is absent or null.
  const boost::json::value* find(std::string_view key) const;

  std::string string(std::string_view key) const;
  std::optional<std::string> optionalString(std::string_view key) const;
  bool boolean(std::string_view key, bool fallback) const;

  template <class T>
  T number(std::string_view key) const {
    const boost::json::value* v = find(key);
    if (!v) fail(key, "missing");
    return numberOf<T>(key, *v);
  }

  template <class T>
  std::optional<T> optionalNumber(std::string_view key) const {
    const boost::json::value* v = find(key);
    if (!v) return std::nullopt;
    return numberOf<T>(key, *v);
  }

  Timestamp time(std::string_view key) const;
  std::optional<Timestamp> optionalTime(std::string_view key) const;

  template <class Enum>
  Enum word(std::string_view key, std::optional<Enum> (*parse)(std::string_view)) const {
    std::string text = string(key);
    auto value = parse(text);
    if (!value) fail(key, "unknown value \"" + text + "\"");
    return *value;
  }

  std::vector<std::string> strings(std::string_view key) const;

  // A nested object, read by `read(fields)`; nullopt when absent or null.
  template <class T, class Read>
  std::optional<T> optionalObject(std::string_view key, Read read) const {
    const boost::json::value* v = find(key);
    if (!v) return std::nullopt;
    return read(JsonFields(*v, path(key)));
  }

  // A member read by its type's own JSON reader (a described struct's, or its
  // tag_invoke), errors naming their path from here; nullopt when absent or null.
  template <class T>
  std::optional<T> optionalValue(std::string_view key) const {
    const boost::json::value* v = find(key);
    if (!v) return std::nullopt;
    try {
      return protocol::decode<T>(*v);
    } catch (const protocol::ParamError& e) {
      throw e.within(path(key));
    }
  }

  // Every element of an array member (absent: none), each read by `read(value, path)`.
  template <class T, class Read>
  std::vector<T> array(std::string_view key, Read read) const {
    std::vector<T> out;
    const boost::json::value* v = find(key);
    if (!v) return out;
    if (!v->is_array()) fail(key, "expected an array");
    const auto& list = v->get_array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      out.push_back(read(list[i], path(key) + "[" + std::to_string(i) + "]"));
    }
    return out;
  }

  std::string path(std::string_view key) const;
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

 private:
  std::string stringOf(std::string_view key, const boost::json::value& v) const;

  template <class T>
  T numberOf(std::string_view key, const boost::json::value& v) const {
    boost::system::error_code ec;
    T n = v.to_number<T>(ec);
    if (ec) fail(key, "expected a number that fits: " + ec.message());
    if constexpr (std::is_floating_point_v<T>) {
      if (!std::isfinite(n)) fail(key, "expected a finite number");
    }
    return n;
  }

  std::string path_;
  const boost::json::object* object_ = nullptr;
};

// --- writing -------------------------------------------------------------------

// A double as JSON: null when it is not finite (JSON has no Infinity or NaN).
inline boost::json::value finiteOrNull(double x) {
  return std::isfinite(x) ? boost::json::value(x) : boost::json::value(nullptr);
}

// The member only when the optional holds a value.
template <class T>
void putIfSet(boost::json::object& out, std::string_view key, const std::optional<T>& value) {
  if (!value) return;
  if constexpr (std::is_floating_point_v<T>) {
    out[key] = finiteOrNull(*value);
  } else {
    out[key] = boost::json::value_from(*value);
  }
}

// The member always: the value, or null.
template <class T>
void putOrNull(boost::json::object& out, std::string_view key, const std::optional<T>& value) {
  if (!value) {
    out[key] = nullptr;
  } else if constexpr (std::is_floating_point_v<T>) {
    out[key] = finiteOrNull(*value);
  } else {
    out[key] = boost::json::value_from(*value);
  }
}

inline void putIfNotEmpty(boost::json::object& out, std::string_view key, const std::string& value) {
  if (!value.empty()) out[key] = value;
}

inline void putTimeIfSet(boost::json::object& out, std::string_view key, const std::optional<Timestamp>& t) {
  if (t) out[key] = formatTimestamp(*t);
}

boost::json::array stringArray(const std::vector<std::string>& items);

}  // namespace hydra::core
