#pragma once

#include <optional>
#include <string>

namespace hydra::server {

// Sends spdlog's default logger to stderr, or to `file` when given. stdout is
// never used: in `hydra serve` it carries the protocol.
void setupLogging(const std::string& level, const std::optional<std::string>& file);

// The names accepted by --log-level.
inline constexpr const char* kLogLevels[] = {"trace", "debug", "info", "warn", "error", "off"};

}  // namespace hydra::server
