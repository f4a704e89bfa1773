#include "core/util/paths.h"

#include <system_error>

namespace hydra::core {

namespace fs = std::filesystem;

bool isWithin(const fs::path& root, const fs::path& path) {
  auto r = root.begin();
  auto p = path.begin();
  for (; r != root.end(); ++r, ++p) {
    // A trailing separator yields an empty last element: it matches anything.
    if (r->empty()) return true;
    if (p == path.end() || *r != *p) return false;
  }
  return true;
}

std::optional<fs::path> resolveInside(const fs::path& root, std::string_view relative) {
  if (relative.empty() || relative.find('\0') != std::string_view::npos) return std::nullopt;
  fs::path rel(relative);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) return std::nullopt;

  std::error_code ec;
  fs::path canonicalRoot = fs::canonical(root, ec);
  if (ec) return std::nullopt;

  // weakly_canonical follows symlinks for the existing prefix and normalises the
  // rest lexically, so `a/../../x` and `link-to-outside/x` are both caught here.
  fs::path resolved = fs::weakly_canonical(canonicalRoot / rel, ec);
  if (ec) return std::nullopt;
  if (!isWithin(canonicalRoot, resolved)) return std::nullopt;
  return resolved;
}

}  // namespace hydra::core
