#pragma once

// A small JSON-RPC client for end-to-end tests: runs the real `hydra` binary
// with pipes on stdin and stdout (stderr goes to a file) and speaks the LSP
// base protocol to it.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "protocol/framing.h"

namespace hydra::test {

class HydraProcess {
 public:
  // The default working directory is outside any repository, so that the
  // server never touches one the test did not make for it.
  explicit HydraProcess(std::vector<std::string> args, std::filesystem::path cwd = std::filesystem::temp_directory_path(),
                        std::vector<std::string> extraEnv = {});
  ~HydraProcess();
  HydraProcess(const HydraProcess&) = delete;
  HydraProcess& operator=(const HydraProcess&) = delete;

  // Returns false once the server has stopped reading.
  bool sendRaw(std::string_view bytes);
  bool send(const boost::json::value& message);
  bool request(std::int64_t id, std::string_view method, boost::json::value params = boost::json::object{});
  bool notify(std::string_view method, boost::json::value params = boost::json::object{});

  // The next message from the server, or nullopt at timeout or end of output.
  // Throws when it is not a JSON object (Boost.JSON refuses ill-formed UTF-8,
  // `Infinity` and `NaN`).
  std::optional<boost::json::object> receive(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // The next message's body as the server wrote it.
  std::optional<std::string> receiveBody(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Receives until a response with `id` arrives; notifications on the way are kept in `skipped`.
  std::optional<boost::json::object> responseTo(std::int64_t id,
                                                std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::vector<boost::json::object> skipped;

  void closeStdin();
  void closeStdout();
  // The exit code (or 128 + signal), or nullopt if it is still running at timeout.
  std::optional<int> waitExit(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Once it has exited: its peak resident memory (VmHWM), in KiB, as the
  // kernel reported it to waitpid (getrusage's ru_maxrss).
  std::optional<long> peakRssKiB() const { return peakRssKiB_; }
  // While it runs: a "kB" field of /proc/PID/status (VmRSS, VmHWM), in KiB.
  std::optional<long> statusKiB(const std::string& field) const;
  pid_t pid() const { return pid_; }
  std::string stderrText() const;

  static std::filesystem::path binary();

 private:
  pid_t pid_ = -1;
  int in_ = -1;   // the server's stdin
  int out_ = -1;  // the server's stdout
  std::filesystem::path stderrPath_;
  std::optional<int> exitCode_;
  std::optional<long> peakRssKiB_;
  protocol::FrameDecoder decoder_;
  bool eof_ = false;
};

}  // namespace hydra::test
