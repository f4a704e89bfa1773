#include "server/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <mutex>

#include "core/util/terminal_text.h"

namespace hydra::server {

namespace {

// Hands every message on made safe for a terminal (core/util/terminal_text.h):
// log lines quote what agents said (their errors, the paths they made), and
// stderr is often the user's terminal.
class TerminalSafeSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit TerminalSafeSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string safe = core::terminalSafe(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy(msg);
    copy.payload = safe;
    inner_->log(copy);
  }
  void flush_() override { inner_->flush(); }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

}  // namespace

void setupLogging(const std::string& level, const std::optional<std::string>& file) {
  std::shared_ptr<spdlog::sinks::sink> sink;
  if (file) {
    sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(*file);
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  }
  sink->set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%^%l%$] %v");
  auto logger = std::make_shared<spdlog::logger>("hydra", std::make_shared<TerminalSafeSink>(std::move(sink)));
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace hydra::server
