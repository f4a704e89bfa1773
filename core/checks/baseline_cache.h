#pragma once

// The checks of a base commit, kept so that the next race on the same base
// with the same commands does not run them again. Blocking file I/O: call it
// from a worker thread.

#include <filesystem>
#include <optional>
#include <string>

#include "core/config/config.h"
#include "core/scoring/scores.h"

namespace hydra::core {

// The cache key of a baseline: the base commit and the exact commands and formats.
std::string baselineKey(const std::string& baseCommit, const ScoringConfig& config);

class BaselineCache {
 public:
  explicit BaselineCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // The cached baseline for this base and these commands, if any (marked fromCache).
  std::optional<scoring::Baseline> load(const std::string& baseCommit, const ScoringConfig& config) const;
  // Keeps `baseline`, unless a check of it was cut short (a timeout or a
  // failure to run says nothing reliable about the base commit).
  void save(const scoring::Baseline& baseline, const ScoringConfig& config) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path file(const std::string& baseCommit, const ScoringConfig& config) const;
  std::filesystem::path dir_;
};

}  // namespace hydra::core
