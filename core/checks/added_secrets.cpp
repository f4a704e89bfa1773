#include "core/checks/added_secrets.h"

#include <algorithm>
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

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Whether a value the redactor masked in an added line is one a program holds
// as a literal: source code assigns secret-looking names all the time
// (`_attr_key_re = re.compile(...)`, `api_key = os.environ["KEY"]`,
// `token = next_token()`), and flagging those would block the merge of an
// honest fix. A literal is at least Redactor::kMinExactLength long, has no
// blanks or brackets, is not called, and is either quoted or carries a digit
// as generated secrets do.
bool isLiteralSecret(std::string_view line, std::size_t start, std::size_t end) {
  const std::string_view value = line.substr(start, end - start);
  if (value.size() < Redactor::kMinExactLength) return false;
  if (value.find_first_of(" \t()[]{}<>,;") != std::string_view::npos) return false;
  if (end < line.size() && line[end] == '(') return false;
  const bool quoted = start > 0 && (line[start - 1] == '"' || line[start - 1] == '\'' || line[start - 1] == '`');
  return quoted || std::any_of(value.begin(), value.end(), isDigit);
}

// Whether `redacted` (`line` with spans replaced by Redactor::kMask) masks a
// literal secret. The masked spans are found by aligning the two texts: the
// text between masks is copied unchanged, so each span ends where the next
// unchanged piece resumes.
bool masksALiteralSecret(std::string_view line, std::string_view redacted) {
  const std::string_view mask = Redactor::kMask;
  if (redacted == mask) return true;  // a whole line: a key block's line or a bare secret
  std::size_t i = 0;
  std::size_t j = 0;
  while (j < redacted.size()) {
    if (redacted.compare(j, mask.size(), mask) != 0 || line.compare(i, mask.size(), mask) == 0) {
      if (redacted.compare(j, mask.size(), mask) == 0) {
        i += mask.size();
        j += mask.size();
      } else {
        ++i;
        ++j;
      }
      continue;
    }
    j += mask.size();
    const std::size_t nextMask = redacted.find(mask, j);
    const std::string_view following =
        redacted.substr(j, nextMask == std::string_view::npos ? std::string_view::npos : nextMask - j);
    std::size_t end = following.empty() ? line.size() : line.find(following, i);
    if (end == std::string_view::npos) end = line.size();
    if (isLiteralSecret(line, i, end)) return true;
    i = end;
  }
  return false;
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
      const std::string redacted = redactor.redactLine(added, state);
      if (redacted != added && masksALiteralSecret(added, redacted)) found.push_back(path + ":" + std::to_string(line));
    }
    ++line;
  }
  return found;
}

}  // namespace hydra::core::checks
