#include "tests/e2e/rpc_client.h"

#include <boost/json/serialize.hpp>
#include <stdexcept>

namespace hydra::test {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

RpcClient::RpcClient(const std::filesystem::path& cwd, std::vector<std::string> extraEnv)
    : hydra_({"serve", "--log-level", "debug"}, cwd, std::move(extraEnv)) {}

json::object RpcClient::initialize(const std::string& rootUri, json::object capabilities) {
  json::value result =
      call("initialize", json::object{{"processId", nullptr},
                                      {"rootUri", rootUri},
                                      {"clientInfo", json::object{{"name", "e2e"}}},
                                      {"capabilities", std::move(capabilities)}});
  notify("initialized");
  return result.as_object();
}

std::int64_t RpcClient::send(std::string_view method, json::value params) {
  std::int64_t id = nextId_++;
  if (!hydra_.request(id, method, std::move(params)))
    throw std::runtime_error("hydra stopped reading");
  return id;
}

void RpcClient::notify(std::string_view method, json::value params) {
  hydra_.notify(method, std::move(params));
}

bool RpcClient::readOne(std::chrono::milliseconds timeout) {
  auto message = hydra_.receive(timeout);
  if (!message) return false;
  const json::value* method = message->if_contains("method");
  const json::value* id = message->if_contains("id");
  if (method && id) {
    // What an editor does with window/workDoneProgress/create and the like: accept.
    serverRequests_.push_back(*message);
    hydra_.send(json::object{{"jsonrpc", "2.0"}, {"id", *id}, {"result", nullptr}});
  } else if (method) {
    notifications_.push_back(std::move(*message));
  } else if (id && id->is_int64()) {
    responses_[id->get_int64()] = std::move(*message);
  }
  return true;
}

json::object RpcClient::response(std::int64_t id, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!responses_.contains(id)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || !readOne(left)) {
      throw std::runtime_error("no answer to request " + std::to_string(id) + "; hydra's log:\n" +
                               hydra_.stderrText());
    }
  }
  json::object r = std::move(responses_.at(id));
  responses_.erase(id);
  return r;
}

json::value RpcClient::call(std::string_view method, json::value params) {
  json::value sent = params;
  auto r = response(send(method, std::move(params)));
  if (!r.contains("result")) {
    throw std::runtime_error(std::string(method) + " " + json::serialize(sent) +
                             " failed: " + json::serialize(r));
  }
  return r.at("result");
}

json::object RpcClient::callError(std::string_view method, json::value params) {
  auto r = response(send(method, std::move(params)));
  if (!r.contains("error")) {
    throw std::runtime_error(std::string(method) + " did not fail: " + json::serialize(r));
  }
  return r.at("error").as_object();
}

std::size_t RpcClient::waitFor(const Predicate& pred, std::size_t from,
                               std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (std::size_t i = from;; ++i) {
    while (i >= notifications_.size()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 || !readOne(left)) {
        throw std::runtime_error("the awaited notification did not come; hydra's log:\n" +
                                 hydra_.stderrText());
      }
    }
    if (pred(notifications_[i])) return i;
  }
}

std::size_t RpcClient::waitFor(std::string_view method, const std::string& raceId, std::size_t from,
                               std::chrono::milliseconds timeout) {
  return waitFor(
      [&](const json::object& m) {
        return m.at("method").as_string() == method &&
               m.at("params").at("raceId").as_string() == raceId;
      },
      from, timeout);
}

void RpcClient::drain(std::chrono::milliseconds quiet) {
  while (readOne(quiet)) {
  }
}

std::vector<json::object> RpcClient::notifications(std::string_view method) const {
  std::vector<json::object> out;
  for (const auto& n : notifications_) {
    if (n.at("method").as_string() == method) out.push_back(n);
  }
  return out;
}

}  // namespace hydra::test
