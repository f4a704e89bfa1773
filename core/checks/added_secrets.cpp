#include "core/checks/added_secrets.h"

#include <charconv>

namespace hydra::core::checks {

namespace {

bool startsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// The first line number of the agent's side in a hunk header "@@ -a,b +c,d @@".
int newStart(std::string_view header) {
  const std::size_t plus = header.find(" +");
  if (plus == std::string_view::npos) return 1;
  int start = 1;
  const char* first = header.data() + plus + 2;
  std::from_chars(first, header.data() + header.size(), start);
  return start;
}

}  // namespace

std::vector<std::string> addedSecrets(std::string_view patch, const Redactor& redactor, std::size_t maxScannedPerFile) {
  std::vector<std::string> found;
  std::string path;
  bool inHunk = false;
  int line = 0;
  std::size_t scanned = 0;
  Redactor::LineState state;
  while (!patch.empty()) {
    const std::size_t end = patch.find('\n');
    const std::string_view text = patch.substr(0, end);
    patch.remove_prefix(end == std::string_view::npos ? patch.size() : end + 1);
    if (startsWith(text, "diff --git ")) {
      path.clear();
      inHunk = false;
      scanned = 0;
      state = {};
      continue;
    }
    if (!inHunk) {
      if (startsWith(text, "+++ b/")) path = std::string(text.substr(6));
      if (startsWith(text, "@@ ")) {
        inHunk = true;
        line = newStart(text);
      }
      continue;
    }
    if (startsWith(text, "@@ ")) {
      line = newStart(text);
      continue;
    }
    if (text.empty() || text[0] == ' ') {
      ++line;
      continue;
    }
    if (text[0] != '+') continue;  // a removed line, or "\ No newline at end of file"
    const std::string_view added = text.substr(1);
    if (!path.empty() && scanned < maxScannedPerFile) {
      scanned += added.size() + 1;
      if (redactor.redactLine(added, state) != added) found.push_back(path + ":" + std::to_string(line));
    }
    ++line;
  }
  return found;
}

}  // namespace hydra::core::checks
