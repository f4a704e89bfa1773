#pragma once

// How each real agent CLI is pointed at a scripted model. Only through the
// `env` of its [agents.NAME] table (plus files in the HOME that env gives it),
// so that what runs is hydra's own default command line for the CLI.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace hydra::test {

// The CLIs raced for real, as hydra's adapters name them.
const std::vector<std::string>& liveClis();

// The directory scripts/install-agent-clis.sh links every pinned binary into.
std::filesystem::path agentCliBin();

// The environment that points `cli` at the model at `modelUrl`, with `home` as
// its HOME (created, and given the settings files the CLI reads from there).
std::map<std::string, std::string> agentEnvironment(const std::string& cli,
                                                    const std::string& modelUrl,
                                                    const std::filesystem::path& home);

// [agents.NAME] with only `env` set.
std::string agentTable(const std::string& name, const std::map<std::string, std::string>& env);

// A TOML basic string: "..." with quotes, backslashes and control characters escaped.
std::string tomlString(const std::string& s);

}  // namespace hydra::test
