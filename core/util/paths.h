#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace hydra::core {

// Resolves `relative` against `root` and returns the canonical result only if it
// stays inside `root` once every symlink on the way is followed. Absolute paths,
// `..` components that climb out, and symlinks that lead out all give nullopt.
// The target itself need not exist; its nearest existing ancestor decides.
std::optional<std::filesystem::path> resolveInside(const std::filesystem::path& root,
                                                   std::string_view relative);

// True when `path` (already canonical) is `root` or lies beneath it.
bool isWithin(const std::filesystem::path& root, const std::filesystem::path& path);

}  // namespace hydra::core
