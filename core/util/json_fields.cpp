#include "core/util/json_fields.h"

namespace hydra::core {

namespace json = boost::json;

JsonFields::JsonFields(const json::value& in, std::string path) : path_(std::move(path)) {
  if (!in.is_object()) throw JsonFieldError(path_, "expected an object");
  object_ = &in.get_object();
}

const json::value* JsonFields::find(std::string_view key) const {
  const json::value* v = object_->if_contains(key);
  return v && !v->is_null() ? v : nullptr;
}

std::string JsonFields::string(std::string_view key) const {
  const json::value* v = find(key);
  if (!v) fail(key, "missing");
  return stringOf(key, *v);
}

std::optional<std::string> JsonFields::optionalString(std::string_view key) const {
  const json::value* v = find(key);
  if (!v) return std::nullopt;
  return stringOf(key, *v);
}

bool JsonFields::boolean(std::string_view key, bool fallback) const {
  const json::value* v = find(key);
  if (!v) return fallback;
  if (!v->is_bool()) fail(key, "expected true or false");
  return v->get_bool();
}

Timestamp JsonFields::time(std::string_view key) const {
  auto t = optionalTime(key);
  if (!t) fail(key, "missing");
  return *t;
}

std::optional<Timestamp> JsonFields::optionalTime(std::string_view key) const {
  auto text = optionalString(key);
  if (!text) return std::nullopt;
  auto t = parseTimestamp(*text);
  if (!t) fail(key, "not an ISO 8601 UTC time: " + *text);
  return t;
}

std::vector<std::string> JsonFields::strings(std::string_view key) const {
  return array<std::string>(key, [this, key](const json::value& v, const std::string&) {
    return stringOf(key, v);
  });
}

std::string JsonFields::path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void JsonFields::fail(std::string_view key, const std::string& message) const {
  throw JsonFieldError(path(key), message);
}

std::string JsonFields::stringOf(std::string_view key, const json::value& v) const {
  if (!v.is_string()) fail(key, "expected a string");
  return std::string(v.get_string());
}

json::array stringArray(const std::vector<std::string>& items) {
  json::array out;
  out.reserve(items.size());
  for (const auto& s : items) out.emplace_back(s);
  return out;
}

}  // namespace hydra::core
