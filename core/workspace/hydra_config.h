#pragma once

// hydra.toml as hydra reads it: core/config's parser given the names hydra's
// units define (ConfigNames, from the adapter registry, the sandbox's network
// modes, the scoring parsers, protected-path patterns and the Slurm options
// hydra sets), and the questions about those names that front ends and
// `hydra init` ask. config/ stays a parser of plain data below the units; the
// registries are known here, above them all.

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/config/config.h"

namespace hydra::core {

// The names of hydra's units, gathered once.
const ConfigNames& hydraConfigNames();

// `<repoRoot>/hydra.toml` (defaults when there is none) and TOML text (`file`
// only names it in errors), checked against hydraConfigNames().
Config loadConfig(const std::filesystem::path& repoRoot);
Config parseConfig(std::string_view text, const std::filesystem::path& file);

// The adapters hydra.toml may name: claude, codex, cursor, gemini, opencode, aider, command.
std::span<const std::string_view> knownAdapters();

// The binary an adapter runs when [agents.NAME] gives none ("cursor-agent" for
// cursor); nullopt for "command", which has no usual binary, and unknown names.
std::optional<std::string> defaultAgentBinary(std::string_view adapter);

// The settings for agent `name`: its [agents.NAME] table when there is one, else
// the defaults of the adapter called `name`; nullopt when neither exists.
std::optional<AgentConfig> findAgent(const Config& config, std::string_view name);

// The values [scoring] test_format and lint_format accept.
std::span<const std::string_view> knownTestFormats();
std::span<const std::string_view> knownLintFormats();

}  // namespace hydra::core
