#include "server/workspace_folder.h"

#include <cctype>

namespace hydra::server {

namespace fs = std::filesystem;

namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int hi = hexValue(s[i + 1]);
    int lo = hexValue(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    char c = static_cast<char>(hi * 16 + lo);
    if (c == '\0') return std::nullopt;  // no path contains NUL
    out += c;
    i += 2;
  }
  return out;
}

bool startsWithIgnoringCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<fs::path> pathFromFileUri(std::string_view uri) {
  constexpr std::string_view scheme = "file://";
  if (!startsWithIgnoringCase(uri, scheme)) return std::nullopt;
  std::string_view rest = uri.substr(scheme.size());
  // Query and fragment are not part of the path.
  rest = rest.substr(0, rest.find_first_of("?#"));
  std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view authority = rest.substr(0, slash);
  if (!authority.empty() && authority != "localhost") return std::nullopt;
  auto path = percentDecode(rest.substr(slash));
  if (!path) return std::nullopt;
  return fs::path(*path);
}

std::string fileUriFromPath(const fs::path& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file://";
  for (unsigned char c : path.string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 0xF];
    }
  }
  return uri;
}

WorkspaceFolder workspaceFolder(const protocol::InitializeParams& params) {
  WorkspaceFolder w;
  if (params.rootUri) {
    auto path = pathFromFileUri(*params.rootUri);
    if (!path) {
      w.path = *params.rootUri;
      w.problem = "rootUri is not a local file:// URI";
      return w;
    }
    w.path = *path;
  } else if (params.rootPath && !params.rootPath->empty()) {
    w.path = *params.rootPath;
  } else {
    w.path = fs::current_path();
  }
  return w;
}

}  // namespace hydra::server
