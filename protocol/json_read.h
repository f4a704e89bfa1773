#pragma once

// Reading typed params out of JSON with errors that name the bad field.
//
// Described wire structs are read through protocol/wire.h; a type with a
// JSON form of its own implements `tag_invoke(value_to_tag<T>, const value&)`
// with an ObjectReader. A mismatch anywhere throws ParamError; each enclosing field
// prefixes its name while the error unwinds, so the dispatcher can answer
// -32602 "params.agents[1]: expected string, found number".

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>
#include <boost/system/system_error.hpp>

#include "protocol/message.h"

namespace hydra::protocol {

class ParamError : public std::runtime_error {
 public:
  // A message that names its own path, or needs none.
  explicit ParamError(std::string message) : ParamError("", std::move(message)) {}
  ParamError(std::string path, std::string reason)
      : std::runtime_error(path.empty() ? reason : path + ": " + reason),
        path_(std::move(path)),
        reason_(std::move(reason)) {}

  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

  // The same error one level up: `key` is an object member name, or "[i]".
  ParamError within(std::string_view key) const {
    std::string p(key);
    if (!path_.empty()) p += (path_.front() == '[' ? "" : ".") + path_;
    return ParamError(std::move(p), reason_);
  }

 private:
  std::string path_;
  std::string reason_;
};

[[noreturn]] inline void throwExpected(const char* expected, const boost::json::value& v) {
  throw ParamError("", std::string("expected ") + expected + ", found " + kindName(v));
}

template <class T>
T decode(const boost::json::value& v);

namespace detail {

template <class T>
struct Decoder {
  static T read(const boost::json::value& v) {
    try {
      return boost::json::value_to<T>(v);
    } catch (const ParamError&) {
      throw;
    } catch (const boost::system::system_error& e) {
      throw ParamError("", e.code().message());
    }
  }
};

template <>
struct Decoder<std::string> {
  static std::string read(const boost::json::value& v) {
    if (!v.is_string()) throwExpected("string", v);
    return std::string(v.get_string());
  }
};

template <>
struct Decoder<bool> {
  static bool read(const boost::json::value& v) {
    if (!v.is_bool()) throwExpected("boolean", v);
    return v.get_bool();
  }
};

template <>
struct Decoder<double> {
  static double read(const boost::json::value& v) {
    if (v.is_double()) {
      // parseMessage refuses these already; a value built elsewhere may hold one.
      if (!std::isfinite(v.get_double())) throw ParamError("", "number is out of range");
      return v.get_double();
    }
    if (v.is_int64()) return static_cast<double>(v.get_int64());
    if (v.is_uint64()) return static_cast<double>(v.get_uint64());
    throwExpected("number", v);
  }
};

template <class Int>
  requires(std::is_integral_v<Int> && !std::is_same_v<Int, bool>)
struct Decoder<Int> {
  static Int read(const boost::json::value& v) {
    if (v.is_int64()) {
      std::int64_t n = v.get_int64();
      if (n < static_cast<std::int64_t>(std::numeric_limits<Int>::min()) ||
          (n > 0 && static_cast<std::uint64_t>(n) > std::numeric_limits<Int>::max())) {
        throw ParamError("", "integer " + std::to_string(n) + " is out of range");
      }
      return static_cast<Int>(n);
    }
    if (v.is_uint64()) {
      std::uint64_t n = v.get_uint64();
      if (n > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) {
        throw ParamError("", "integer " + std::to_string(n) + " is out of range");
      }
      return static_cast<Int>(n);
    }
    if (v.is_double()) throw ParamError("", "expected integer, found a fractional number");
    throwExpected("integer", v);
  }
};

template <>
struct Decoder<boost::json::value> {
  static boost::json::value read(const boost::json::value& v) { return v; }
};

template <>
struct Decoder<boost::json::object> {
  static boost::json::object read(const boost::json::value& v) {
    if (!v.is_object()) throwExpected("object", v);
    return v.get_object();
  }
};

template <>
struct Decoder<RequestId> {
  static RequestId read(const boost::json::value& v) {
    auto id = requestIdFromJson(v);
    if (!id) throwExpected("integer or string", v);
    return *id;
  }
};

template <class T>
struct Decoder<std::optional<T>> {
  static std::optional<T> read(const boost::json::value& v) {
    if (v.is_null()) return std::nullopt;
    return decode<T>(v);
  }
};

template <class T>
struct Decoder<std::vector<T>> {
  static std::vector<T> read(const boost::json::value& v) {
    if (!v.is_array()) throwExpected("array", v);
    std::vector<T> out;
    out.reserve(v.get_array().size());
    std::size_t i = 0;
    for (const auto& item : v.get_array()) {
      try {
        out.push_back(decode<T>(item));
      } catch (const ParamError& e) {
        throw e.within("[" + std::to_string(i) + "]");
      }
      ++i;
    }
    return out;
  }
};

template <class T>
struct Decoder<std::map<std::string, T>> {
  static std::map<std::string, T> read(const boost::json::value& v) {
    if (!v.is_object()) throwExpected("object", v);
    std::map<std::string, T> out;
    for (const auto& [key, item] : v.get_object()) {
      try {
        out.emplace(std::string(key), decode<T>(item));
      } catch (const ParamError& e) {
        throw e.within(key);
      }
    }
    return out;
  }
};

}  // namespace detail

template <class T>
T decode(const boost::json::value& v) {
  return detail::Decoder<T>::read(v);
}

// Field-by-field access to a JSON object, for value_to tag_invoke overloads.
class ObjectReader {
 public:
  explicit ObjectReader(const boost::json::value& v) {
    if (!v.is_object()) throwExpected("object", v);
    object_ = &v.get_object();
  }

  template <class T>
  void required(std::string_view key, T& out) const {
    const boost::json::value* v = object_->if_contains(key);
    if (!v) throw ParamError(std::string(key), "is required");
    read(key, *v, out);
  }

  // Absent or null leaves `out` as it was.
  template <class T>
  void optional(std::string_view key, T& out) const {
    const boost::json::value* v = object_->if_contains(key);
    if (!v || v->is_null()) return;
    read(key, *v, out);
  }

  bool has(std::string_view key) const { return object_->contains(key); }
  const boost::json::object& object() const { return *object_; }

 private:
  template <class T>
  static void read(std::string_view key, const boost::json::value& v, T& out) {
    try {
      out = decode<T>(v);
    } catch (const ParamError& e) {
      throw e.within(key);
    }
  }

  const boost::json::object* object_;
};

}  // namespace hydra::protocol
