#include "server/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace hydra::server {

void setupLogging(const std::string& level, const std::optional<std::string>& file) {
  std::shared_ptr<spdlog::logger> logger;
  if (file) {
    logger = std::make_shared<spdlog::logger>("hydra", std::make_shared<spdlog::sinks::basic_file_sink_mt>(*file));
  } else {
    logger = std::make_shared<spdlog::logger>("hydra", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  }
  logger->set_level(spdlog::level::from_str(level));
  logger->set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%^%l%$] %v");
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace hydra::server
