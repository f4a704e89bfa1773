#pragma once

// Times as hydra's records and the protocol write them: ISO 8601 UTC with
// milliseconds, "2026-11-21T11:05:01.123Z".

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace hydra::core {

using Timestamp = std::chrono::system_clock::time_point;

// "2026-11-21T11:05:01.123Z" (milliseconds, truncated).
std::string formatTimestamp(Timestamp time);
// The form formatTimestamp writes; the fraction may have 0 to 9 digits. nullopt
// for anything else (other offsets than Z included).
std::optional<Timestamp> parseTimestamp(std::string_view text);
// Now, truncated to what the records keep, so a saved and reloaded time compares equal.
Timestamp recordNow();
// b - a in milliseconds, never negative.
std::int64_t millisBetween(Timestamp a, Timestamp b);

}  // namespace hydra::core
