#include "core/config/executor_kind.h"

#include <array>
#include <cstddef>
#include <stdexcept>

namespace hydra::core {

namespace {

// Indexed by the enum's value.
constexpr std::array<std::string_view, 2> kWords{"local", "slurm"};

}  // namespace

std::string_view toString(ExecutorKind kind) { return kWords[static_cast<std::size_t>(kind)]; }

std::optional<ExecutorKind> parseExecutorKind(std::string_view text) {
  for (std::size_t i = 0; i < kWords.size(); ++i) {
    if (kWords[i] == text) return static_cast<ExecutorKind>(i);
  }
  return std::nullopt;
}

std::optional<ExecutorKind> requestedExecutorKind(const std::optional<std::string>& word) {
  if (!word) return std::nullopt;
  if (auto kind = parseExecutorKind(*word)) return kind;
  std::string there;
  for (std::string_view w : kWords) there += (there.empty() ? "" : ", ") + std::string(w);
  throw std::invalid_argument("unknown executor '" + *word + "' (there are: " + there + ")");
}

std::span<const std::string_view> executorKindWords() { return kWords; }

}  // namespace hydra::core
