#pragma once

// Path comparisons the policy checks rely on.

#include <filesystem>

namespace hydra::core::sandbox {

// Whether `path` is `dir` or inside it, component by component ("/a/bc" is
// not inside "/a/b"), after lexical normalisation. Both should be absolute.
bool isWithin(const std::filesystem::path& path, const std::filesystem::path& dir);

// The canonical form of an existing path, else its lexically normal form.
std::filesystem::path resolved(const std::filesystem::path& path);

}  // namespace hydra::core::sandbox
