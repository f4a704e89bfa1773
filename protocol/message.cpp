#include "protocol/message.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "protocol/errors.h"
#include "protocol/utf8.h"

namespace hydra::protocol {

namespace json = boost::json;

namespace {

// --- JSON that every reader accepts ------------------------------------------

bool isClean(const json::value& v) {
  switch (v.kind()) {
    case json::kind::double_:
      return std::isfinite(v.get_double());
    case json::kind::string:
      return isValidUtf8(v.get_string());
    case json::kind::array:
      for (const json::value& item : v.get_array()) {
        if (!isClean(item)) return false;
      }
      return true;
    case json::kind::object:
      for (const auto& member : v.get_object()) {
        if (!isValidUtf8(member.key()) || !isClean(member.value())) return false;
      }
      return true;
    default:
      return true;
  }
}

json::value cleaned(const json::value& v) {
  switch (v.kind()) {
    case json::kind::double_:
      return std::isfinite(v.get_double()) ? v : json::value(nullptr);
    case json::kind::string:
      return json::value(makeValidUtf8(v.get_string()));
    case json::kind::array: {
      json::array out;
      out.reserve(v.get_array().size());
      for (const json::value& item : v.get_array()) out.push_back(cleaned(item));
      return out;
    }
    case json::kind::object: {
      json::object out;
      out.reserve(v.get_object().size());
      // Two names may become one once repaired; the later member wins, as in a parse.
      for (const auto& member : v.get_object()) {
        out.insert_or_assign(makeValidUtf8(member.key()), cleaned(member.value()));
      }
      return out;
    }
    default:
      return v;
  }
}

}  // namespace

std::string toString(const RequestId& id) {
  if (const auto* n = std::get_if<std::int64_t>(&id)) return std::to_string(*n);
  return json::serialize(json::value(std::get<std::string>(id)));
}

json::value toJson(const RequestId& id) {
  if (const auto* n = std::get_if<std::int64_t>(&id)) return *n;
  return json::value(std::get<std::string>(id));
}

std::optional<RequestId> requestIdFromJson(const json::value& v) {
  if (v.is_int64()) return RequestId{v.get_int64()};
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return RequestId{static_cast<std::int64_t>(v.get_uint64())};
  }
  if (v.is_string()) return RequestId{std::string(v.get_string())};
  return std::nullopt;
}

std::optional<std::string> nonFinitePath(const json::value& v, std::string root) {
  switch (v.kind()) {
    case json::kind::double_:
      if (std::isfinite(v.get_double())) return std::nullopt;
      return root;
    case json::kind::array: {
      std::size_t i = 0;
      for (const json::value& item : v.get_array()) {
        if (auto path = nonFinitePath(item, root + "[" + std::to_string(i) + "]")) return path;
        ++i;
      }
      return std::nullopt;
    }
    case json::kind::object:
      for (const auto& member : v.get_object()) {
        std::string path =
            root.empty() ? std::string(member.key()) : root + "." + std::string(member.key());
        if (auto found = nonFinitePath(member.value(), std::move(path))) return found;
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::string serializeJson(const json::value& v) {
  if (isClean(v)) return json::serialize(v);
  return json::serialize(cleaned(v));
}

const char* kindName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
  }
  return "value";
}

namespace {

InvalidMessage invalid(std::optional<RequestId> id, ErrorCode code, std::string message) {
  return InvalidMessage{std::move(id), ResponseError{static_cast<int>(code), std::move(message), nullptr}};
}

bool validParams(const json::object& obj) {
  const json::value* params = obj.if_contains("params");
  return !params || params->is_object() || params->is_array();
}

json::value paramsOf(const json::object& obj) {
  const json::value* params = obj.if_contains("params");
  return params ? *params : json::value(nullptr);
}

std::string outOfRange(const std::string& path) {
  return "the number at '" + path + "' is out of range (JSON numbers must be finite)";
}

ParseResult parseResponse(const json::object& obj, std::optional<RequestId> id) {
  const json::value* result = obj.if_contains("result");
  const json::value* error = obj.if_contains("error");
  if ((result != nullptr) == (error != nullptr)) {
    return invalid(std::nullopt, ErrorCode::InvalidRequest,
                   "a response must have exactly one of 'result' and 'error'");
  }
  if (auto path = nonFinitePath(result ? *result : *error, result ? "result" : "error")) {
    return invalid(std::nullopt, ErrorCode::InvalidRequest, outOfRange(*path));
  }
  if (result) return Message{Response{std::move(id), *result}};

  const json::object* e = error->if_object();
  const json::value* code = e ? e->if_contains("code") : nullptr;
  const json::value* message = e ? e->if_contains("message") : nullptr;
  if (!code || !code->is_int64() || !message || !message->is_string()) {
    return invalid(std::nullopt, ErrorCode::InvalidRequest,
                   "'error' must be an object with an integer 'code' and a string 'message'");
  }
  const json::value* data = e->if_contains("data");
  ResponseError re{static_cast<int>(code->get_int64()), std::string(message->get_string()),
                   data ? *data : json::value(nullptr)};
  return Message{Response{std::move(id), std::move(re)}};
}

}  // namespace

ParseResult parseMessage(std::string_view body) {
  json::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) {
    return invalid(std::nullopt, ErrorCode::ParseError, "parse error: " + ec.message());
  }
  if (v.is_array()) {
    return invalid(std::nullopt, ErrorCode::InvalidRequest, "batch messages are not supported");
  }
  const json::object* obj = v.if_object();
  if (!obj) {
    return invalid(std::nullopt, ErrorCode::InvalidRequest,
                   std::string("a message must be a JSON object, found ") + kindName(v));
  }

  // Read the id first so that every later error can be answered to it.
  const json::value* idValue = obj->if_contains("id");
  std::optional<RequestId> id;
  if (idValue && !idValue->is_null()) {
    id = requestIdFromJson(*idValue);
    if (!id) {
      return invalid(std::nullopt, ErrorCode::InvalidRequest,
                     std::string("'id' must be an integer or a string, found ") + kindName(*idValue));
    }
  }

  const json::value* version = obj->if_contains("jsonrpc");
  if (!version || !version->is_string() || version->get_string() != "2.0") {
    return invalid(id, ErrorCode::InvalidRequest, "'jsonrpc' must be \"2.0\"");
  }

  const json::value* method = obj->if_contains("method");
  if (!method) {
    if (!idValue) {
      return invalid(std::nullopt, ErrorCode::InvalidRequest,
                     "a message needs a 'method' (request or notification) or an 'id' (response)");
    }
    return parseResponse(*obj, std::move(id));
  }

  bool isNotification = idValue == nullptr;
  if (!method->is_string()) {
    InvalidMessage m = invalid(id, ErrorCode::InvalidRequest,
                               std::string("'method' must be a string, found ") + kindName(*method));
    m.reply = !isNotification;
    return m;
  }
  if (idValue && idValue->is_null()) {
    return invalid(std::nullopt, ErrorCode::InvalidRequest, "a request's 'id' must not be null");
  }
  if (!validParams(*obj)) {
    InvalidMessage m = invalid(id, ErrorCode::InvalidRequest,
                               std::string("'params' must be an object or an array, found ") +
                                   kindName(obj->at("params")));
    m.reply = !isNotification;
    return m;
  }

  // Boost.JSON reads a number too large for a double (1e999) as infinity,
  // which JSON cannot carry back: such params are refused, never echoed.
  // (Members hydra does not read are not looked at.)
  const json::value* params = obj->if_contains("params");
  if (auto path = params ? nonFinitePath(*params, "params") : std::nullopt) {
    InvalidMessage m =
        invalid(id, ErrorCode::InvalidParams, "invalid params: " + outOfRange(*path));
    m.error.data = json::object{{"path", *path}};
    m.reply = !isNotification;
    return m;
  }

  std::string name(method->get_string());
  if (isNotification) return Message{Notification{std::move(name), paramsOf(*obj)}};
  return Message{Request{std::move(*id), std::move(name), paramsOf(*obj)}};
}

void tag_invoke(json::value_from_tag, json::value& v, const ResponseError& e) {
  json::object o;
  o["code"] = e.code;
  o["message"] = e.message;
  if (!e.data.is_null()) o["data"] = e.data;
  v = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& v, const Request& r) {
  json::object o;
  o["jsonrpc"] = "2.0";
  o["id"] = toJson(r.id);
  o["method"] = r.method;
  if (!r.params.is_null()) o["params"] = r.params;
  v = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& v, const Notification& n) {
  json::object o;
  o["jsonrpc"] = "2.0";
  o["method"] = n.method;
  if (!n.params.is_null()) o["params"] = n.params;
  v = std::move(o);
}

void tag_invoke(json::value_from_tag, json::value& v, const Response& r) {
  json::object o;
  o["jsonrpc"] = "2.0";
  o["id"] = r.id ? toJson(*r.id) : json::value(nullptr);
  if (const auto* e = std::get_if<ResponseError>(&r.outcome)) {
    o["error"] = json::value_from(*e);
  } else {
    o["result"] = std::get<json::value>(r.outcome);
  }
  v = std::move(o);
}

std::string serialize(const Message& message) {
  return std::visit([](const auto& m) { return serializeJson(json::value_from(m)); }, message);
}

}  // namespace hydra::protocol
