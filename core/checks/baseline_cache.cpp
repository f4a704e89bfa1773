#include "core/checks/baseline_cache.h"

#include <spdlog/spdlog.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/guard/records.h"
#include "core/util/atomic_file.h"

namespace hydra::core {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

std::uint64_t fnv1a(std::string_view data, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string baselineKey(const std::string& baseCommit, const ScoringConfig& c) {
  std::uint64_t h = 1469598103934665603ull;
  for (const std::string& part :
       {baseCommit, c.buildCommand.value_or(""), c.testCommand.value_or(""), c.lintCommand.value_or(""),
        c.testFormat.value_or(""), c.lintFormat.value_or(""), c.junitReport.value_or("")}) {
    h = fnv1a(part, h);
    h = fnv1a(std::string_view("\0", 1), h);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

fs::path BaselineCache::file(const std::string& baseCommit, const ScoringConfig& config) const {
  return dir_ / ("baseline-" + baselineKey(baseCommit, config) + ".json");
}

std::optional<scoring::Baseline> BaselineCache::load(const std::string& baseCommit,
                                                      const ScoringConfig& config) const {
  fs::path path = file(baseCommit, config);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    auto b = json::value_to<scoring::Baseline>(json::parse(text.str()));
    if (b.commit != baseCommit) return std::nullopt;
    b.fromCache = true;
    return b;
  } catch (const std::exception& e) {
    spdlog::warn("ignoring unreadable baseline cache {}: {}", path.string(), e.what());
    return std::nullopt;
  }
}

void BaselineCache::save(const scoring::Baseline& baseline, const ScoringConfig& config) const {
  for (const auto* c : {&baseline.checks.build, &baseline.checks.tests, &baseline.checks.lint}) {
    if (*c && ((*c)->timedOut || !(*c)->error.empty())) return;
  }
  try {
    fs::create_directories(dir_);
    scoring::Baseline stored = baseline;
    stored.fromCache = false;
    const fs::path path = file(baseline.commit, config);
    guard::OwnRecordWrite own({path});  // hydra's own: no race's guard takes it for tampering
    writeFileAtomic(path, json::serialize(json::value_from(stored)));
  } catch (const std::exception& e) {
    spdlog::warn("could not cache the baseline: {}", e.what());
  }
}

}  // namespace hydra::core
