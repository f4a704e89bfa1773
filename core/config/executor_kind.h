#pragma once

// Where a run's agents and checks execute ([executor] kind, --executor, a
// race's record): child processes of hydra, or Slurm jobs. The words are the
// same in hydra.toml, on the wire and on disk.

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hydra::core {

enum class ExecutorKind { Local, Slurm };

// Wire words: local, slurm. parseExecutorKind gives nullopt for anything else.
std::string_view toString(ExecutorKind kind);
std::optional<ExecutorKind> parseExecutorKind(std::string_view text);

// The kind a front end was asked for (--executor, a request's `executor`),
// nullopt when none was named. Throws std::invalid_argument, naming the
// words there are, for any other word.
std::optional<ExecutorKind> requestedExecutorKind(const std::optional<std::string>& word);

// Every word, in the order of the enum (for hydra.toml's choice and the CLI).
std::span<const std::string_view> executorKindWords();

}  // namespace hydra::core
