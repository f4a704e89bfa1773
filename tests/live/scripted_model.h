#pragma once

// tests/live/model_server.py as a real child process: the scripted model a
// real agent CLI talks to. One instance per agent, each with its own scenario,
// port and request log.

#include <sys/types.h>

#include <boost/json/object.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace hydra::test {

class ScriptedModel {
 public:
  // Starts the server on a free port of 127.0.0.1 and waits until it listens.
  // `scenario` is a file name under tests/live/scenarios/; its ${NAME}s take
  // their values from `vars`. The request log goes into `dir`. A CLI that
  // says it works outside `cwdWithin` gets an error, never a tool call: a
  // scripted edit can only land in the test's own repository.
  ScriptedModel(const std::string& scenario, const std::filesystem::path& dir,
                const std::filesystem::path& cwdWithin,
                std::map<std::string, std::string> vars = {});
  ~ScriptedModel();
  ScriptedModel(const ScriptedModel&) = delete;
  ScriptedModel& operator=(const ScriptedModel&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Every request so far, as logged (see model_server.py), in arrival order.
  std::vector<boost::json::object> requests() const;
  // Those that were part of the script (the turn index is a number).
  std::vector<boost::json::object> scriptedRequests() const;
  // Waits until a logged request matches; false at the deadline.
  bool waitForRequest(const std::function<bool(const boost::json::object&)>& pred,
                      std::chrono::seconds limit) const;

  // The sums of the usage the scenario made the server report, over the
  // scripted requests it answered (a retried request counts each time).
  struct Reported {
    std::int64_t inputTokens = 0;
    std::int64_t outputTokens = 0;
    std::int64_t cachedInputTokens = 0;
    int answers = 0;
  };
  Reported reported() const;

  // Where the server's own stderr went (empty unless something broke).
  std::string stderrText() const;

  static std::filesystem::path scenarioPath(const std::string& name);

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::filesystem::path scenario_;
  std::filesystem::path log_;
  std::filesystem::path stderr_;
};

}  // namespace hydra::test
