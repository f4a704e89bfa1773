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

void checkWire(const PingParams& x) {
  if (x.delayMs && (*x.delayMs < 0 || *x.delayMs > 60'000)) {
    throw ParamError("delayMs", "must be between 0 and 60000");
  }
}

}  // namespace hydra::protocol
