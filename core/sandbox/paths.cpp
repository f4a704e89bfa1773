#include "core/sandbox/paths.h"

namespace hydra::core::sandbox {

namespace fs = std::filesystem;

namespace {

// "/a/b/" normalises to "/a/b/" (a trailing empty component); drop it.
fs::path normal(const fs::path& path) {
  fs::path n = path.lexically_normal();
  if (n.has_relative_path() && !n.has_filename()) n = n.parent_path();
  return n;
}

}  // namespace

bool isWithin(const fs::path& path, const fs::path& dir) {
  const fs::path p = normal(path);
  const fs::path d = normal(dir);
  auto pi = p.begin();
  for (auto di = d.begin(); di != d.end(); ++di, ++pi) {
    if (pi == p.end() || *pi != *di) return false;
  }
  return true;
}

fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  return ec ? normal(path) : canonical;
}

}  // namespace hydra::core::sandbox
