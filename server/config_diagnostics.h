#pragma once

// hydra.toml's problems as LSP diagnostics (textDocument/publishDiagnostics):
// an error or warning names a line and column (core::ConfigError,
// core::ConfigWarning); the diagnostic's range covers the whole key, value
// or table header that starts there, so an editor underlines `max_concurrent_agents`
// or `"two"`, not its first character.

#include <boost/json/object.hpp>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace hydra::server {

inline constexpr int kDiagnosticError = 1;
inline constexpr int kDiagnosticWarning = 2;

// How many characters (code points) of `line` the TOML item starting at the
// 0-based code point `column` spans: a quoted string to its closing quote, a
// table header to its closing bracket, a bare key or value to the next
// space, '=', ',', ']', '}' or '#'. At least 1 within the line; 0 past its end.
std::size_t tomlItemLength(std::string_view line, std::size_t column);

// The diagnostic at 1-based `line` and `column` of `file` (0: unknown, the
// file's start), its range widened over the item there as `file` reads now.
// LSP counts characters in UTF-16 code units, which the range is given in.
boost::json::object configDiagnostic(const std::filesystem::path& file, int line, int column, int severity,
                                     std::string message);

}  // namespace hydra::server
