#pragma once

// The checks of a base commit, kept so that the next race on the same base
// with the same commands does not run them again. Blocking file I/O: call it
// from a worker thread.
//
// The cache lives outside the repository (defaultBaselineCacheDir), where no
// confined agent can write: a forged baseline would change every agent's
// score. Each entry is two lines of JSON: a header with the entry's key (the
// base commit, the commands and formats, hydra's version) and a checksum of
// the second line (its git blob id), then the baseline itself. An entry that is damaged, whose
// checksum does not match, or that was made for another key or another hydra
// is ignored, and rebuilt by the next race.

#include <filesystem>
#include <optional>
#include <string>

#include "core/config/config.h"
#include "core/scoring/scores.h"

namespace hydra::core {

// The cache key of a baseline: the base commit, the exact commands and
// formats, and hydra's version.
std::string baselineKey(const std::string& baseCommit, const ScoringConfig& config);

// Where the baselines of the repository at `repoRoot` are kept:
// $XDG_CACHE_HOME/hydra/baselines/<name>-<hash of its path> (XDG_CACHE_HOME
// defaults to ~/.cache; without a home, the system's temporary directory).
std::filesystem::path defaultBaselineCacheDir(const std::filesystem::path& repoRoot);

class BaselineCache {
 public:
  explicit BaselineCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // The cached baseline for this base and these commands, if any (marked
  // fromCache). A damaged or foreign entry is nullopt, with a warning.
  std::optional<scoring::Baseline> load(const std::string& baseCommit, const ScoringConfig& config) const;
  // Keeps `baseline`, unless a check of it was cut short (a timeout or a
  // failure to run says nothing reliable about the base commit).
  void save(const scoring::Baseline& baseline, const ScoringConfig& config) const;

  const std::filesystem::path& dir() const { return dir_; }
  // The file of the entry for this base and these commands.
  std::filesystem::path file(const std::string& baseCommit, const ScoringConfig& config) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace hydra::core
