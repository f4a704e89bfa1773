#pragma once

// Which folder an editor session works on: the client's rootUri (or rootPath,
// or hydra's working directory when the client names neither). The
// repository is the one containing it (core::Workspace finds it the way the
// terminal commands do).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/lifecycle.h"

namespace hydra::server {

// The local path a file:// URI names (percent-escapes decoded; an empty or
// "localhost" authority). nullopt for other schemes, other hosts, a relative
// path or a malformed escape.
std::optional<std::filesystem::path> pathFromFileUri(std::string_view uri);
// The file:// URI of an absolute path, percent-escaping every byte but the
// unreserved ones and '/': pathFromFileUri gives the path back.
std::string fileUriFromPath(const std::filesystem::path& path);

struct WorkspaceFolder {
  std::filesystem::path path;  // what the client opened
  std::string problem;         // non-empty when rootUri names no local folder
};

WorkspaceFolder workspaceFolder(const protocol::InitializeParams& params);

}  // namespace hydra::server
