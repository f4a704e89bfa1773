#include "protocol/lifecycle.h"

#include "protocol/json_read.h"

namespace hydra::protocol {

namespace {

// Sets o[key] only when the optional holds a value.
template <class T>
void put(json::object& o, std::string_view key, const std::optional<T>& value) {
  if (value) o[key] = json::value_from(*value);
}

}  // namespace

bool InitializeParams::supportsWorkDoneProgress() const {
  const json::value* window = capabilities.if_contains("window");
  if (!window || !window->is_object()) return false;
  const json::value* wdp = window->get_object().if_contains("workDoneProgress");
  return wdp && wdp->is_bool() && wdp->get_bool();
}

void tag_invoke(json::value_from_tag, json::value& v, const ClientInfo& x) {
  json::object o;
  o["name"] = x.name;
  put(o, "version", x.version);
  v = std::move(o);
}

ClientInfo tag_invoke(json::value_to_tag<ClientInfo>, const json::value& v) {
  ObjectReader r(v);
  ClientInfo x;
  r.required("name", x.name);
  r.optional("version", x.version);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const InitializeParams& x) {
  json::object o;
  o["processId"] = x.processId ? json::value(*x.processId) : json::value(nullptr);
  put(o, "rootUri", x.rootUri);
  put(o, "rootPath", x.rootPath);
  put(o, "clientInfo", x.clientInfo);
  o["capabilities"] = x.capabilities;
  if (!x.initializationOptions.is_null()) o["initializationOptions"] = x.initializationOptions;
  put(o, "trace", x.trace);
  v = std::move(o);
}

InitializeParams tag_invoke(json::value_to_tag<InitializeParams>, const json::value& v) {
  ObjectReader r(v);
  InitializeParams x;
  r.optional("processId", x.processId);
  r.optional("rootUri", x.rootUri);
  r.optional("rootPath", x.rootPath);
  r.optional("clientInfo", x.clientInfo);
  r.optional("capabilities", x.capabilities);
  r.optional("initializationOptions", x.initializationOptions);
  r.optional("trace", x.trace);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const ServerInfo& x) {
  v = json::object{{"name", x.name}, {"version", x.version}};
}

ServerInfo tag_invoke(json::value_to_tag<ServerInfo>, const json::value& v) {
  ObjectReader r(v);
  ServerInfo x;
  r.required("name", x.name);
  r.required("version", x.version);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const InitializeResult& x) {
  v = json::object{{"capabilities", x.capabilities}, {"serverInfo", json::value_from(x.serverInfo)}};
}

InitializeResult tag_invoke(json::value_to_tag<InitializeResult>, const json::value& v) {
  ObjectReader r(v);
  InitializeResult x;
  r.required("capabilities", x.capabilities);
  r.required("serverInfo", x.serverInfo);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const CancelParams& x) {
  v = json::object{{"id", toJson(x.id)}};
}

CancelParams tag_invoke(json::value_to_tag<CancelParams>, const json::value& v) {
  ObjectReader r(v);
  CancelParams x;
  r.required("id", x.id);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const WorkDoneProgressCreateParams& x) {
  v = json::object{{"token", toJson(x.token)}};
}

WorkDoneProgressCreateParams tag_invoke(json::value_to_tag<WorkDoneProgressCreateParams>,
                                        const json::value& v) {
  ObjectReader r(v);
  WorkDoneProgressCreateParams x;
  r.required("token", x.token);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const WorkDoneProgressCancelParams& x) {
  v = json::object{{"token", toJson(x.token)}};
}

WorkDoneProgressCancelParams tag_invoke(json::value_to_tag<WorkDoneProgressCancelParams>,
                                        const json::value& v) {
  ObjectReader r(v);
  WorkDoneProgressCancelParams x;
  r.required("token", x.token);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const WorkDoneProgressBegin& x) {
  json::object o{{"kind", "begin"}, {"title", x.title}};
  put(o, "cancellable", x.cancellable);
  put(o, "message", x.message);
  put(o, "percentage", x.percentage);
  v = std::move(o);
}

WorkDoneProgressBegin tag_invoke(json::value_to_tag<WorkDoneProgressBegin>, const json::value& v) {
  ObjectReader r(v);
  WorkDoneProgressBegin x;
  r.required("title", x.title);
  r.optional("cancellable", x.cancellable);
  r.optional("message", x.message);
  r.optional("percentage", x.percentage);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const WorkDoneProgressReport& x) {
  json::object o{{"kind", "report"}};
  put(o, "cancellable", x.cancellable);
  put(o, "message", x.message);
  put(o, "percentage", x.percentage);
  v = std::move(o);
}

WorkDoneProgressReport tag_invoke(json::value_to_tag<WorkDoneProgressReport>, const json::value& v) {
  ObjectReader r(v);
  WorkDoneProgressReport x;
  r.optional("cancellable", x.cancellable);
  r.optional("message", x.message);
  r.optional("percentage", x.percentage);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const WorkDoneProgressEnd& x) {
  json::object o{{"kind", "end"}};
  put(o, "message", x.message);
  v = std::move(o);
}

WorkDoneProgressEnd tag_invoke(json::value_to_tag<WorkDoneProgressEnd>, const json::value& v) {
  ObjectReader r(v);
  WorkDoneProgressEnd x;
  r.optional("message", x.message);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const ProgressParams& x) {
  v = json::object{{"token", toJson(x.token)}, {"value", x.value}};
}

ProgressParams tag_invoke(json::value_to_tag<ProgressParams>, const json::value& v) {
  ObjectReader r(v);
  ProgressParams x;
  r.required("token", x.token);
  r.required("value", x.value);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const ShowMessageParams& x) {
  v = json::object{{"type", static_cast<int>(x.type)}, {"message", x.message}};
}

ShowMessageParams tag_invoke(json::value_to_tag<ShowMessageParams>, const json::value& v) {
  ObjectReader r(v);
  ShowMessageParams x;
  int type = 0;
  r.required("type", type);
  if (type < 1 || type > 4) throw ParamError("type", "must be 1 (error) to 4 (log)");
  x.type = static_cast<MessageType>(type);
  r.required("message", x.message);
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const PingParams& x) {
  json::object o;
  if (!x.data.is_null()) o["data"] = x.data;
  put(o, "delayMs", x.delayMs);
  if (x.workDoneToken) o["workDoneToken"] = toJson(*x.workDoneToken);
  v = std::move(o);
}

PingParams tag_invoke(json::value_to_tag<PingParams>, const json::value& v) {
  ObjectReader r(v);
  PingParams x;
  r.optional("data", x.data);
  r.optional("delayMs", x.delayMs);
  r.optional("workDoneToken", x.workDoneToken);
  if (x.delayMs && (*x.delayMs < 0 || *x.delayMs > 60'000)) {
    throw ParamError("delayMs", "must be between 0 and 60000");
  }
  return x;
}

void tag_invoke(json::value_from_tag, json::value& v, const PingResult& x) {
  v = json::object{{"data", x.data}, {"version", x.version}};
}

PingResult tag_invoke(json::value_to_tag<PingResult>, const json::value& v) {
  ObjectReader r(v);
  PingResult x;
  r.optional("data", x.data);
  r.required("version", x.version);
  return x;
}

}  // namespace hydra::protocol
