#pragma once

// Which repository an editor session works on, and its hydra.toml.
//
// The repository is the one containing the client's rootUri (or rootPath, or
// hydra's working directory when the client names neither), found the way the
// terminal commands find it: git's discovery upwards, then its working tree.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/config/config.h"
#include "protocol/lifecycle.h"

namespace hydra::server {

// The local path a file:// URI names (percent-escapes decoded; an empty or
// "localhost" authority). nullopt for other schemes, other hosts, a relative
// path or a malformed escape.
std::optional<std::filesystem::path> pathFromFileUri(std::string_view uri);

struct Workspace {
  std::filesystem::path folder;               // what the client opened
  std::optional<std::filesystem::path> root;  // the repository's working tree
  std::string problem;                        // why there is no root
};

Workspace locateWorkspace(const protocol::InitializeParams& params);

// hydra.toml as last read: the config, or what is wrong with it.
struct ConfigState {
  std::optional<core::Config> config;
  std::optional<core::ConfigError> error;
};

ConfigState readConfig(const std::filesystem::path& root);

}  // namespace hydra::server
