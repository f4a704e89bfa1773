#include "core/checks/baseline_cache.h"

#include <git2.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "core/util/atomic_file.h"
#include "hydra/version.h"

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

// The checksum of an entry's baseline line: its git blob id (SHA-1), in hex.
std::string checksumOf(const std::string& text) {
  git_oid id;
  if (git_odb_hash(&id, text.data(), text.size(), GIT_OBJECT_BLOB) < 0) throw std::runtime_error("cannot hash");
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &id);
  return hex;
}

}  // namespace

std::string baselineKey(const std::string& baseCommit, const ScoringConfig& c) {
  std::uint64_t h = 1469598103934665603ull;
  for (const std::string& part :
       {baseCommit, c.buildCommand.value_or(""), c.testCommand.value_or(""), c.lintCommand.value_or(""),
        c.testFormat.value_or(""), c.lintFormat.value_or(""), c.junitReport.value_or(""), std::string(kVersion),
        // What the checks' environment asks of the runners (PYTEST_ADDOPTS=-rA -vvv,
        // GOFLAGS=-v): a baseline run without it named fewer tests.
        std::string("checks-env-6")}) {
    h = fnv1a(part, h);
    h = fnv1a(std::string_view("\0", 1), h);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

fs::path defaultBaselineCacheDir(const fs::path& repoRoot) {
  fs::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    base = fs::path(home) / ".cache";
  } else {
    base = fs::temp_directory_path() / ("hydra-cache-" + std::to_string(::getuid()));
  }
  std::error_code ec;
  fs::path root = fs::weakly_canonical(repoRoot, ec);
  if (ec) root = repoRoot;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(root.string())));
  return base / "hydra" / "baselines" / (root.filename().string() + "-" + hash);
}

fs::path BaselineCache::file(const std::string& baseCommit, const ScoringConfig& config) const {
  return dir_ / ("baseline-" + baselineKey(baseCommit, config) + ".json");
}

std::optional<scoring::Baseline> BaselineCache::load(const std::string& baseCommit,
                                                      const ScoringConfig& config) const {
  const fs::path path = file(baseCommit, config);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string header, body;
  std::getline(in, header);
  std::getline(in, body);
  auto ignore = [&](const std::string& why) -> std::optional<scoring::Baseline> {
    spdlog::warn("ignoring the cached baseline {}: {}; it is made again", path.string(), why);
    return std::nullopt;
  };
  try {
    const json::object head = json::parse(header).as_object();
    if (head.at("key").as_string() != baselineKey(baseCommit, config)) return ignore("it is another entry's");
    if (head.at("hydraVersion").as_string() != kVersion) return ignore("another hydra made it");
    if (head.at("checksum").as_string() != checksumOf(body)) return ignore("its checksum does not match");
    auto b = json::value_to<scoring::Baseline>(json::parse(body));
    if (b.commit != baseCommit) return ignore("it is of another commit");
    b.fromCache = true;
    return b;
  } catch (const std::exception& e) {
    return ignore(std::string("it is unreadable: ") + e.what());
  }
}

void BaselineCache::save(const scoring::Baseline& baseline, const ScoringConfig& config) const {
  for (const auto* c : {&baseline.checks.build, &baseline.checks.tests, &baseline.checks.lint}) {
    if (*c && ((*c)->timedOut || !(*c)->error.empty())) return;
  }
  try {
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0700);
    scoring::Baseline stored = baseline;
    stored.fromCache = false;
    const std::string body = json::serialize(json::value_from(stored));
    const json::object head{{"key", baselineKey(baseline.commit, config)},
                            {"hydraVersion", kVersion},
                            {"commit", baseline.commit},
                            {"checksum", checksumOf(body)}};
    writeFileAtomic(file(baseline.commit, config), json::serialize(head) + "\n" + body + "\n");
  } catch (const std::exception& e) {
    spdlog::warn("could not cache the baseline: {}", e.what());
  }
}

}  // namespace hydra::core
