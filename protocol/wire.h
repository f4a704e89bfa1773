#pragma once

// One JSON form for every wire struct, driven by its BOOST_DESCRIBE_STRUCT
// members: a struct is declared once, and its reader and writer follow.
//
//   Reading: each described member under its own name; a member listed in
//   the struct's `wireRequired` must be present ("task: is required"), any
//   other may be absent or null and keeps its default. A bad member throws
//   ParamError naming its path (json_read.h). A type with rules of its own
//   declares `void checkWire(const T&)` next to it (found by ADL): it runs
//   after reading and throws ParamError for the member it refuses.
//   Writing: every member in described order, after `"kind": T::wireKind`
//   when the struct declares one (LSP's progress values); an empty
//   std::optional is left out, or null when listed in `wireNullable`; a
//   member listed in `wireOmitDefault` is left out while it equals its
//   default (an empty list, a blank string, a zero count); a double that is
//   not finite is null (JSON has no Infinity or NaN).
//
// Unknown members are ignored, so an older reader accepts what a newer
// writer sends. Types whose JSON is not plain members (enums as numbers, a
// members always sent as null) keep hand-written tag_invoke.

#include <boost/describe/members.hpp>
#include <boost/describe/modifiers.hpp>
#include <boost/json/value_from.hpp>
#include <boost/mp11/algorithm.hpp>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "protocol/json_read.h"
#include "protocol/message.h"

namespace hydra::protocol {

template <class T>
using WireMembers = boost::describe::describe_members<T, boost::describe::mod_public>;

// A struct read and written through its described members.
template <class T>
concept WireStruct = std::is_class_v<T> && boost::describe::has_describe_members<T>::value;

// The names of T's described members, in order: what its JSON object holds.
template <WireStruct T>
std::vector<std::string_view> wireFieldNames() {
  std::vector<std::string_view> names;
  boost::mp11::mp_for_each<WireMembers<T>>([&](auto d) { names.emplace_back(d.name); });
  return names;
}

namespace detail {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <class List>
bool listed(const List& list, std::string_view name) {
  for (std::string_view listedName : list) {
    if (listedName == name) return true;
  }
  return false;
}

template <class T>
bool isRequired(std::string_view name) {
  if constexpr (requires { T::wireRequired; }) return listed(T::wireRequired, name);
  return false;
}

template <class T>
bool omitsDefault(std::string_view name) {
  return listed(T::wireOmitDefault, name);
}

template <class T>
bool isNullable(std::string_view name) {
  if constexpr (requires { T::wireNullable; }) return listed(T::wireNullable, name);
  return false;
}

template <WireStruct T>
boost::json::object writeWireObject(const T& x);

template <class V>
boost::json::value wireValue(const V& v) {
  if constexpr (WireStruct<V>) {
    return writeWireObject(v);
  } else if constexpr (std::is_floating_point_v<V>) {
    return std::isfinite(v) ? boost::json::value(v) : boost::json::value(nullptr);
  } else if constexpr (std::is_same_v<V, RequestId>) {
    return toJson(v);
  } else {
    return boost::json::value_from(v);
  }
}

}  // namespace detail

template <WireStruct T>
T readWire(const boost::json::value& in);

namespace detail {

// Members that are described structs themselves are read the same way,
// whichever namespace they live in.
template <WireStruct T>
struct Decoder<T> {
  static T read(const boost::json::value& v) { return readWire<T>(v); }
};

}  // namespace detail

template <WireStruct T>
T readWire(const boost::json::value& in) {
  ObjectReader r(in);
  T x{};
  boost::mp11::mp_for_each<WireMembers<T>>([&](auto d) {
    if (detail::isRequired<T>(d.name)) {
      r.required(d.name, x.*d.pointer);
    } else {
      r.optional(d.name, x.*d.pointer);
    }
  });
  if constexpr (requires { checkWire(x); }) checkWire(x);
  return x;
}

template <WireStruct T>
boost::json::object detail::writeWireObject(const T& x) {
  boost::json::object o;
  if constexpr (requires { T::wireKind; }) o["kind"] = T::wireKind;
  boost::mp11::mp_for_each<WireMembers<T>>([&](auto d) {
    const auto& member = x.*d.pointer;
    using M = std::remove_cvref_t<decltype(member)>;
    if constexpr (IsOptional<M>::value) {
      if (member) {
        o[d.name] = wireValue(*member);
      } else if (isNullable<T>(d.name)) {
        o[d.name] = nullptr;
      }
    } else {
      // Compared only in types that list members (a vector's == compiles
      // only when its elements have one).
      if constexpr (requires { T::wireOmitDefault; }) {
        static const T defaults{};
        if (omitsDefault<T>(d.name) && member == defaults.*d.pointer) return;
      }
      o[d.name] = wireValue(member);
    }
  });
  return o;
}

template <WireStruct T>
boost::json::object writeWire(const T& x) {
  return detail::writeWireObject(x);
}

// boost::json::value_from / value_to for every described struct of a
// namespace that brings these in (`using protocol::tag_invoke;`): a
// namespace that declares described structs must, or Boost.JSON's own
// conversion of described structs (no paths, no optional members) applies.
template <WireStruct T>
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const T& x) {
  v = writeWire(x);
}

template <WireStruct T>
T tag_invoke(boost::json::value_to_tag<T>, const boost::json::value& v) {
  return readWire<T>(v);
}

}  // namespace hydra::protocol
