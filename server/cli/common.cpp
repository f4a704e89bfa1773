#include "server/cli/common.h"

#include <unistd.h>

#include <boost/json/serialize.hpp>
#include <cmath>
#include <cstdio>

#include "core/git/git.h"
#include "core/util/terminal_text.h"
#include "core/util/text.h"
#include "core/workspace/hydra_config.h"

namespace hydra::cli {

std::filesystem::path findRepositoryRoot(const std::filesystem::path& start) {
  try {
    auto repo = core::git::discoverRepository(start);
    auto root = core::git::workdir(repo.get());
    if (root.empty()) throw CommandError("the repository at " + start.string() + " is bare: hydra needs a working tree");
    return root;
  } catch (const core::git::GitError&) {
    throw CommandError("not inside a git repository: " + start.string() +
                       " (hydra races agents in worktrees of a git repository; run `git init` first)");
  }
}

std::string jsonLine(const boost::json::value& value) {
  const std::string raw = boost::json::serialize(value);
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    const auto next = i + 1 < raw.size() ? static_cast<unsigned char>(raw[i + 1]) : 0;
    // U+0080..U+009F is C2 80..C2 9F in UTF-8; it only occurs inside strings.
    if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(next));
      out += escaped;
      ++i;
      continue;
    }
    out += raw[i];
  }
  return out;
}

std::string oneLine(std::string_view text, std::size_t max) {
  // Escaped first: terminalSafe keeps line breaks and tabs, which core::oneLine then flattens.
  return core::oneLine(core::terminalSafe(text), max);
}

core::Config loadRepositoryConfig(const std::filesystem::path& root) {
  try {
    return core::loadConfig(root);
  } catch (const core::ConfigError& e) {
    throw CommandError(e.what(), 2);
  }
}

CommandError commandError(const core::WorkspaceError& error) {
  return CommandError(error.what(), error.isUsageError() ? 2 : 1);
}

bool stdoutIsTerminal() { return ::isatty(STDOUT_FILENO) == 1; }
bool stdinIsTerminal() { return ::isatty(STDIN_FILENO) == 1; }

std::string formatBytes(std::uintmax_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0 || value >= 10.0) {
    std::snprintf(buf, sizeof buf, "%.0f %s", value, kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
  }
  return buf;
}

std::string formatDuration(std::chrono::milliseconds d) {
  auto ms = d.count();
  char buf[32];
  if (ms < 10'000) {
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  } else if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(ms / 1000));
  } else if (ms < 3'600'000) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(ms / 60'000),
                  static_cast<long long>((ms / 1000) % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(ms / 3'600'000),
                  static_cast<long long>((ms / 60'000) % 60));
  }
  return buf;
}

std::string fixed1(double v) {
  if (v < 100.0 && v > 99.9) v = 99.9;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string wholeScore(double v) {
  if (v < 100.0 && v >= 99.5) return "99";
  return std::to_string(static_cast<long long>(std::llround(v)));
}

std::string padRight(std::string s, std::size_t n) {
  std::size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  if (chars < n) s.append(n - chars, ' ');
  return s;
}

}  // namespace hydra::cli
