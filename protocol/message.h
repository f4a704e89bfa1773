#pragma once

// The JSON-RPC 2.0 message model: request, notification, response (with a
// result or an error), and the validation that sorts a frame into one of them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>

#include "protocol/utf8.h"  // isValidUtf8, makeValidUtf8: what serializeJson() holds to

namespace hydra::protocol {

// A request id: JSON-RPC allows integers and strings.
using RequestId = std::variant<std::int64_t, std::string>;
std::string toString(const RequestId& id);
boost::json::value toJson(const RequestId& id);
// An integer or string id, or nullopt for anything else.
std::optional<RequestId> requestIdFromJson(const boost::json::value& v);

struct ResponseError {
  int code = 0;
  std::string message;
  boost::json::value data;  // null when absent
};

struct Request {
  RequestId id;
  std::string method;
  boost::json::value params;  // object or array; null when absent
};

struct Notification {
  std::string method;
  boost::json::value params;
};

struct Response {
  std::optional<RequestId> id;  // nullopt is a JSON null id (errors about unreadable requests)
  std::variant<boost::json::value, ResponseError> outcome;

  bool isError() const { return std::holds_alternative<ResponseError>(outcome); }
};

using Message = std::variant<Request, Notification, Response>;

// A frame that is not a valid message. `reply` tells whether JSON-RPC expects an
// error response for it (it does not for a malformed notification).
struct InvalidMessage {
  std::optional<RequestId> id;
  ResponseError error;
  bool reply = true;
};

using ParseResult = std::variant<Message, InvalidMessage>;

ParseResult parseMessage(std::string_view body);

void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const ResponseError& e);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const Request& r);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const Notification& n);
void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const Response& r);

// The message as JSON text; see serializeJson().
std::string serialize(const Message& message);

// JSON text that every reader accepts: valid UTF-8, finite numbers only.
// Boost.JSON 1.81 prints a non-finite double as `Infinity`, `-Infinity` or
// `NaN`, which is not JSON, and copies the bytes of strings and member names
// as they are, UTF-8 or not. Here a non-finite number is written as null and
// each ill-formed UTF-8 sequence as U+FFFD; a value that needs neither (the
// usual case) is serialized as it is, without a copy.
std::string serializeJson(const boost::json::value& v);

// Where `v` holds a number that is not finite (Boost.JSON parses `1e999` as
// infinity), as a path below `root` in the form ParamError uses
// ("params.data[2]"); nullopt when every number in `v` is finite.
std::optional<std::string> nonFinitePath(const boost::json::value& v, std::string root = "");

const char* kindName(const boost::json::value& v);

}  // namespace hydra::protocol
