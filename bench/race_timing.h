#pragma once

// What the race benchmarks share: reading the times in a race's events.jsonl
// and taking medians.

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

namespace hydra::bench {

// Milliseconds since the epoch of an ISO 8601 UTC timestamp with milliseconds.
inline double epochMs(const std::string& iso) {
  std::tm tm{};
  int ms = 0;
  std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
              &tm.tm_sec, &ms);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) * 1000.0 + ms;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace hydra::bench
