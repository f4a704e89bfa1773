#include "core/util/timestamp.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>

namespace hydra::core {

namespace {

using std::chrono::milliseconds;

// Reads exactly `width` digits at `at`.
std::optional<int> digits(std::string_view text, std::size_t at, std::size_t width) {
  if (at + width > text.size()) return std::nullopt;
  int value = 0;
  const char* first = text.data() + at;
  auto [ptr, ec] = std::from_chars(first, first + width, value);
  if (ec != std::errc() || ptr != first + width || *first == '-' || *first == '+') {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::string formatTimestamp(Timestamp time) {
  auto ms = std::chrono::floor<milliseconds>(time);
  auto day = std::chrono::floor<std::chrono::days>(ms);
  std::chrono::year_month_day date(day);
  std::chrono::hh_mm_ss clock(ms - day);
  char out[32];
  std::snprintf(
      out, sizeof out, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(date.year()),
      static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
      static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
      static_cast<int>(clock.seconds().count()), static_cast<int>(clock.subseconds().count()));
  return out;
}

std::optional<Timestamp> parseTimestamp(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction]Z
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text.back() != 'Z') {
    return std::nullopt;
  }
  auto year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
  auto hour = digits(text, 11, 2), minute = digits(text, 14, 2), second = digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  std::chrono::year_month_day date{std::chrono::year(*year), std::chrono::month(*month),
                                   std::chrono::day(*day)};
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 60) return std::nullopt;

  std::chrono::nanoseconds fraction{0};
  std::string_view rest = text.substr(19, text.size() - 20);
  if (!rest.empty()) {
    if (rest.front() != '.' || rest.size() < 2 || rest.size() > 10) return std::nullopt;
    std::string_view frac = rest.substr(1);
    auto value = digits(frac, 0, frac.size());
    if (!value) return std::nullopt;
    std::int64_t nanos = *value;
    for (std::size_t i = frac.size(); i < 9; ++i) nanos *= 10;
    fraction = std::chrono::nanoseconds(nanos);
  }
  auto since = std::chrono::sys_days(date).time_since_epoch() + std::chrono::hours(*hour) +
               std::chrono::minutes(*minute) + std::chrono::seconds(*second) + fraction;
  return Timestamp(std::chrono::duration_cast<Timestamp::duration>(since));
}

Timestamp recordNow() { return std::chrono::floor<milliseconds>(std::chrono::system_clock::now()); }

std::int64_t millisBetween(Timestamp a, Timestamp b) {
  return std::max<std::int64_t>(0, std::chrono::duration_cast<milliseconds>(b - a).count());
}

}  // namespace hydra::core
