#pragma once

// An editor's side of a session with the real `hydra serve`, for tests where
// timing and ids vary: requests by name, every notification kept in arrival
// order, and the server's own requests (window/workDoneProgress/create)
// answered as an editor would.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/e2e/hydra_process.h"

namespace hydra::test {

class RpcClient {
 public:
  using Predicate = std::function<bool(const boost::json::object& message)>;

  explicit RpcClient(const std::filesystem::path& cwd, std::vector<std::string> extraEnv = {});

  HydraProcess& process() { return hydra_; }

  // initialize (with rootUri) and initialized; returns the result.
  boost::json::object initialize(const std::string& rootUri, boost::json::object capabilities = {});

  std::int64_t send(std::string_view method, boost::json::value params = boost::json::object{});
  void notify(std::string_view method, boost::json::value params = boost::json::object{});
  // The response to `id` (with `result` or `error`); reads and handles whatever comes first.
  boost::json::object response(std::int64_t id,
                               std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // send + response; throws unless the answer is a result.
  boost::json::value call(std::string_view method,
                          boost::json::value params = boost::json::object{});
  // send + response; throws unless the answer is an error, which it returns.
  boost::json::object callError(std::string_view method,
                                boost::json::value params = boost::json::object{});

  // Reads until a notification matching `pred` has arrived (it may have
  // arrived already, at or after `from`); its index in notifications().
  std::size_t waitFor(const Predicate& pred, std::size_t from = 0,
                      std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Waits for the notification `method` whose params.raceId is `raceId`.
  std::size_t waitFor(std::string_view method, const std::string& raceId, std::size_t from = 0,
                      std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Reads whatever arrives within `quiet`.
  void drain(std::chrono::milliseconds quiet = std::chrono::milliseconds(100));

  // Every notification so far ({method, params}), in arrival order.
  const std::vector<boost::json::object>& notifications() const { return notifications_; }
  std::vector<boost::json::object> notifications(std::string_view method) const;
  // The server's requests so far.
  const std::vector<boost::json::object>& serverRequests() const { return serverRequests_; }

 private:
  // Reads one message; false at timeout or end of output.
  bool readOne(std::chrono::milliseconds timeout);

  HydraProcess hydra_;
  std::int64_t nextId_ = 1;
  std::map<std::int64_t, boost::json::object> responses_;
  std::vector<boost::json::object> notifications_;
  std::vector<boost::json::object> serverRequests_;
};

}  // namespace hydra::test
