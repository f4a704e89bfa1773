#include "core/util/redact.h"

#include <algorithm>
#include <optional>

namespace hydra::core {

namespace {

constexpr std::size_t npos = std::string_view::npos;
// Names longer than this are not looked at in full; real variable names are short.
constexpr std::size_t kMaxNameLength = 128;

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool isLower(char c) { return c >= 'a' && c <= 'z'; }
bool isAlpha(char c) { return isUpper(c) || isLower(c); }
bool isAlnum(char c) { return isAlpha(c) || isDigit(c); }
bool isBase64Url(char c) { return isAlnum(c) || c == '_' || c == '-'; }
bool isUpperAlnum(char c) { return isUpper(c) || isDigit(c); }
bool isNameChar(char c) { return isAlnum(c) || c == '_' || c == '-' || c == '.'; }
bool isQuote(char c) { return c == '"' || c == '\''; }
bool isBlank(char c) { return c == ' ' || c == '\t'; }
char toLower(char c) { return isUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
// Characters of an RFC 6750 bearer token.
bool isTokenChar(char c) {
  return isAlnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' ||
         c == '-';
}
// Where an unquoted assignment value ends. A backslash ends it too, so that an
// escaped quote in JSON text (`\"`) is never cut in half.
bool endsPlainValue(char c) { return std::string_view(" \t\r\n,;&\"'`()<>[]{}\\").find(c) != npos; }
// Where an Authorization header's value ends: it may contain spaces ("Basic x").
bool endsHeaderValue(char c) {
  return c == '\r' || c == '\n' || c == '"' || c == '\'' || c == '\\';
}

bool startsWith(std::string_view text, std::size_t at, std::string_view prefix) {
  return text.substr(at, prefix.size()) == prefix;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return toLower(x) == toLower(y);
         });
}

template <class Pred>
std::size_t runEnd(std::string_view text, std::size_t from, Pred pred) {
  while (from < text.size() && pred(text[from])) ++from;
  return from;
}

// A token may only start where a run of token characters starts: `task-sk-...`
// and `xAKIA...` are parts of something else. This also keeps the scan linear:
// no token is looked for again from inside a run already looked at.
bool wordStartsAt(std::string_view text, std::size_t at) {
  return at == 0 || !(isBase64Url(text[at - 1]) || text[at - 1] == '.');
}

// The span to replace with the mask; scanning resumes at `end`.
struct Match {
  std::size_t begin;
  std::size_t end;
};

// `-----END <label>PRIVATE KEY-----` at or after `from`: the index just past it.
std::size_t privateKeyEnd(std::string_view text, std::size_t from) {
  for (std::size_t at = text.find("-----END ", from); at != npos;
       at = text.find("-----END ", at + 1)) {
    std::size_t close = text.find("-----", at + 9);
    if (close == npos) return npos;
    std::string_view label = text.substr(at + 9, close - at - 9);
    if (label.find('\n') == npos && label.ends_with("PRIVATE KEY")) return close + 5;
  }
  return npos;
}

std::optional<Match> privateKeyBlock(std::string_view text, std::size_t at, bool& inPrivateKey) {
  if (!startsWith(text, at, "-----BEGIN ")) return std::nullopt;
  std::size_t close = text.find("-----", at + 11);
  if (close == npos) return std::nullopt;
  std::string_view label = text.substr(at + 11, close - at - 11);
  if (label.find('\n') != npos || !label.ends_with("PRIVATE KEY")) return std::nullopt;
  std::size_t end = privateKeyEnd(text, close + 5);
  if (end == npos) {
    // The rest of the block is still to come (or was cut off): mask it all.
    inPrivateKey = true;
    return Match{at, text.size()};
  }
  return Match{at, end};
}

// `prefix` then at least `minBody` characters of `body`.
template <class Pred>
std::optional<Match> prefixedToken(std::string_view text, std::size_t at, std::string_view prefix,
                                   std::size_t minBody, Pred body) {
  if (!startsWith(text, at, prefix)) return std::nullopt;
  std::size_t end = runEnd(text, at + prefix.size(), body);
  if (end - at - prefix.size() < minBody) return std::nullopt;
  return Match{at, end};
}

// Anthropic (`sk-ant-api03-...`) and OpenAI (`sk-...`, `sk-proj-...`) keys. A
// digit is required because long dashed words (`sk-learn-...`) have none,
// while random key bodies of this length practically always do.
std::optional<Match> skKey(std::string_view text, std::size_t at) {
  auto match = prefixedToken(text, at, "sk-", 20, isBase64Url);
  if (!match) return std::nullopt;
  std::string_view body = text.substr(at + 3, match->end - at - 3);
  if (std::none_of(body.begin(), body.end(), isDigit)) return std::nullopt;
  return match;
}

std::optional<Match> githubOrGitlabToken(std::string_view text, std::size_t at) {
  for (std::string_view prefix : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}) {
    if (auto match = prefixedToken(text, at, prefix, 20, isAlnum)) return match;
  }
  if (auto match = prefixedToken(text, at, "github_pat_", 20,
                                 [](char c) { return isAlnum(c) || c == '_'; })) {
    return match;
  }
  return prefixedToken(text, at, "glpat-", 20, isBase64Url);
}

std::optional<Match> slackToken(std::string_view text, std::size_t at) {
  if (!startsWith(text, at, "xox") || at + 4 >= text.size() || text[at + 4] != '-') {
    return std::nullopt;
  }
  if (std::string_view("abprs").find(text[at + 3]) == npos) return std::nullopt;
  return prefixedToken(text, at, text.substr(at, 5), 10,
                       [](char c) { return isAlnum(c) || c == '-'; });
}

// `prefix` then exactly `length` characters of `body`, not followed by another.
template <class Pred>
std::optional<Match> fixedToken(std::string_view text, std::size_t at, std::string_view prefix,
                                std::size_t length, Pred body) {
  if (!startsWith(text, at, prefix)) return std::nullopt;
  std::size_t end = runEnd(text, at + prefix.size(), body);
  if (end - at - prefix.size() != length) return std::nullopt;
  return Match{at, end};
}

std::optional<Match> awsOrGoogleKey(std::string_view text, std::size_t at) {
  if (auto match = fixedToken(text, at, "AKIA", 16, isUpperAlnum)) return match;
  if (auto match = fixedToken(text, at, "ASIA", 16, isUpperAlnum)) return match;
  return fixedToken(text, at, "AIza", 35, isBase64Url);
}

// header.payload.signature, base64url, the header a JSON object (`eyJ` = `{"`).
std::optional<Match> jsonWebToken(std::string_view text, std::size_t at) {
  if (!startsWith(text, at, "eyJ")) return std::nullopt;
  std::size_t headerEnd = runEnd(text, at, isBase64Url);
  if (headerEnd - at < 10 || headerEnd >= text.size() || text[headerEnd] != '.') {
    return std::nullopt;
  }
  std::size_t payloadEnd = runEnd(text, headerEnd + 1, isBase64Url);
  if (payloadEnd - headerEnd - 1 < 4 || payloadEnd >= text.size() || text[payloadEnd] != '.') {
    return std::nullopt;
  }
  return Match{at, runEnd(text, payloadEnd + 1, isBase64Url)};
}

// `Bearer <token>`: the scheme stays, the token goes. Lower-case "bearer" is
// also prose ("the bearer of"), so there the token must contain a digit.
std::optional<Match> bearerToken(std::string_view text, std::size_t at) {
  bool capital = startsWith(text, at, "Bearer");
  if (!capital && !startsWith(text, at, "bearer")) return std::nullopt;
  std::size_t start = at + 6;
  if (start >= text.size() || !isBlank(text[start])) return std::nullopt;
  start = runEnd(text, start, isBlank);
  std::size_t end = runEnd(text, start, isTokenChar);
  if (end - start < 8) return std::nullopt;
  std::string_view token = text.substr(start, end - start);
  if (!capital && std::none_of(token.begin(), token.end(), isDigit)) return std::nullopt;
  return Match{start, end};
}

// `scheme://user:password@host`: the password goes.
std::optional<Match> urlPassword(std::string_view text, std::size_t at) {
  if (!startsWith(text, at, "://")) return std::nullopt;
  std::size_t start = at + 3;
  std::size_t end = runEnd(text, start, [](char c) {
    return c != '@' && c != '/' && c != '?' && c != '#' && !isBlank(c) && !endsHeaderValue(c);
  });
  if (end >= text.size() || text[end] != '@') return std::nullopt;
  std::size_t colon = text.substr(start, end - start).find(':');
  if (colon == npos || start + colon + 1 == end) return std::nullopt;
  return Match{start + colon + 1, end};
}

// The name an assignment separator at `at` assigns to, looking back over
// blanks, a closing quote (maybe escaped) and a closing bracket:
// `NAME=`, `"name": `, `\"name\":`, `["x-api-key"] = `.
std::string_view assignedName(std::string_view text, std::size_t nameEnd) {
  std::size_t j = nameEnd;
  while (j > 0 && nameEnd - j < 8 && isBlank(text[j - 1])) --j;
  if (j > 0 && text[j - 1] == ']') --j;
  if (j > 0 && isQuote(text[j - 1])) {
    --j;
    if (j > 0 && text[j - 1] == '\\') --j;
  }
  std::size_t start = j;
  while (start > 0 && j - start < kMaxNameLength && isNameChar(text[start - 1])) --start;
  std::string_view name = text.substr(start, j - start);
  while (!name.empty() && (name.front() == '-' || name.front() == '.')) name.remove_prefix(1);
  return name;
}

// The value after an assignment separator: quoted (`"v"`, `'v'`, `\"v\"`) up to
// its closing quote or the end of the line, else up to where a plain value ends.
std::optional<Match> assignedValue(std::string_view text, std::size_t from, bool header) {
  std::size_t start = runEnd(text, from, isBlank);
  if (start >= text.size()) return std::nullopt;
  // `$VAR` and `${VAR}` name a secret without holding it; a mask is done already.
  // Checked before the value is scanned, so skipping costs nothing.
  auto skipped = [&](std::size_t valueStart) {
    return valueStart < text.size() &&
           (text[valueStart] == '$' || startsWith(text, valueStart, Redactor::kMask));
  };
  std::size_t end;
  if (text[start] == '\\' && start + 1 < text.size() && isQuote(text[start + 1])) {
    // Inside JSON text: `\"value\"`.
    char quote = text[start + 1];
    start += 2;
    if (skipped(start)) return std::nullopt;
    end = start;
    while (end < text.size() && text[end] != '\n' &&
           !(text[end] == '\\' && end + 1 < text.size() && text[end + 1] == quote)) {
      ++end;
    }
  } else if (isQuote(text[start])) {
    char quote = text[start++];
    if (skipped(start)) return std::nullopt;
    end = start;
    // Up to the closing quote, skipping escaped characters, or the end of the line.
    while (end < text.size() && text[end] != quote && text[end] != '\n') {
      end += text[end] == '\\' && end + 1 < text.size() && text[end + 1] != '\n' ? 2 : 1;
    }
  } else {
    if (skipped(start)) return std::nullopt;
    end = runEnd(text, start,
                 [header](char c) { return !(header ? endsHeaderValue(c) : endsPlainValue(c)); });
    while (header && end > start && isBlank(text[end - 1])) --end;
  }
  if (end == start) return std::nullopt;
  return Match{start, end};
}

// `=` or `:` at `at`: an assignment to a secret-looking name, an Authorization
// header, or a URL with a password.
std::optional<Match> assignment(std::string_view text, std::size_t at) {
  char sep = text[at];
  char next = at + 1 < text.size() ? text[at + 1] : '\0';
  char prev = at > 0 ? text[at - 1] : '\0';
  std::size_t nameEnd = at;
  if (sep == ':') {
    if (next == '/') return urlPassword(text, at);
    if (next == ':' || next == '=' || prev == ':') return std::nullopt;  // `a::b`, `:=` (at '=')
  } else {
    if (next == '=' || next == '>') return std::nullopt;  // `==`, `=>`
    if (prev == '=' || prev == '!' || prev == '<' || prev == '>') return std::nullopt;
    if (prev == ':') nameEnd = at - 1;  // Go's `token := ...`
  }
  std::string_view name = assignedName(text, nameEnd);
  if (name.empty()) return std::nullopt;
  bool header =
      equalsIgnoreCase(name, "authorization") || equalsIgnoreCase(name, "proxy-authorization");
  if (!header && !Redactor::isSecretName(name)) return std::nullopt;
  return assignedValue(text, at + 1, header);
}

std::optional<Match> matchAt(std::string_view text, std::size_t at, bool& inPrivateKey) {
  switch (text[at]) {
    case '-':
      return privateKeyBlock(text, at, inPrivateKey);
    case '=':
    case ':':
      return assignment(text, at);
    default:
      break;
  }
  if (!wordStartsAt(text, at)) return std::nullopt;
  switch (text[at]) {
    case 's':
      return skKey(text, at);
    case 'g':
      return githubOrGitlabToken(text, at);
    case 'x':
      return slackToken(text, at);
    case 'A':
      return awsOrGoogleKey(text, at);
    case 'e':
      return jsonWebToken(text, at);
    case 'B':
    case 'b':
      return bearerToken(text, at);
    default:
      return std::nullopt;
  }
}

// Copies `text`, replacing masked spans; allocates only once something is masked.
class MaskedCopy {
 public:
  explicit MaskedCopy(std::string_view text) : text_(text) {}
  void mask(std::size_t begin, std::size_t end) {
    out_.append(text_.substr(copied_, begin - copied_));
    out_.append(Redactor::kMask);
    copied_ = end;
    masked_ = true;
  }
  std::string finish() && {
    if (!masked_) return std::string(text_);
    out_.append(text_.substr(copied_));
    return std::move(out_);
  }

 private:
  std::string_view text_;
  std::string out_;
  std::size_t copied_ = 0;
  bool masked_ = false;
};

// `test_key`, `testApiKey`, Go's `TestKey`, `obj.test_token`: the name of a
// test, which says what is tested, not what is held. `TEST_API_KEY` is an
// environment variable's name and is not one of these.
bool isTestName(std::string_view name) {
  if (std::size_t dot = name.rfind('.'); dot != npos) name.remove_prefix(dot + 1);
  if (name.size() <= 4) return false;
  if (!name.starts_with("test") && !name.starts_with("Test")) return false;
  return name[4] == '_' || isUpper(name[4]);
}

}  // namespace

Redactor::Redactor(std::vector<std::string> exactSecrets) {
  for (auto& secret : exactSecrets) {
    if (secret.size() >= kMinExactLength) exact_.push_back(std::move(secret));
  }
  std::sort(exact_.begin(), exact_.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  exact_.erase(std::unique(exact_.begin(), exact_.end()), exact_.end());
}

bool Redactor::isSecretName(std::string_view name) {
  if (name.size() > kMaxNameLength) name = name.substr(name.size() - kMaxNameLength);
  if (isTestName(name)) return false;
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), toLower);
  for (std::string_view needle : {"password", "passwd", "passphrase", "secret", "token", "key"}) {
    for (std::size_t at = lower.find(needle); at != npos; at = lower.find(needle, at + 1)) {
      std::size_t after = at + needle.size();
      // The needle must end a word that no letter follows: `API_KEY`, `apiKey`,
      // `key2`, but not `KEYS`, `keyboard`, `tokens`, nor a camelCase word
      // after it (`KeyError: 'x'` names an exception, `tokenCount` a number).
      if (after == name.size() || !isAlpha(name[after])) return true;
    }
  }
  return false;
}

std::string Redactor::maskExact(std::string_view text) const {
  std::string out(text);
  std::string next;
  for (const auto& secret : exact_) {
    std::size_t at = out.find(secret);
    if (at == npos) continue;
    // Rebuilt by appending, so a line full of matches stays a linear pass.
    next.clear();
    std::size_t copied = 0;
    for (; at != npos; at = out.find(secret, copied)) {
      next.append(out, copied, at - copied);
      next.append(kMask);
      copied = at + secret.size();
    }
    next.append(out, copied);
    out.swap(next);
  }
  return out;
}

std::string Redactor::redactText(std::string_view text, bool& inPrivateKey) const {
  std::string exact;
  if (!exact_.empty()) {
    exact = maskExact(text);
    text = exact;
  }
  MaskedCopy copy(text);
  std::size_t at = 0;
  if (inPrivateKey) {
    std::size_t end = privateKeyEnd(text, 0);
    if (end == npos) return text.empty() ? std::string() : std::string(kMask);
    copy.mask(0, end);
    at = end;
    inPrivateKey = false;
  }
  while (at < text.size()) {
    if (auto match = matchAt(text, at, inPrivateKey)) {
      copy.mask(match->begin, match->end);
      at = std::max(match->end, at + 1);
    } else {
      ++at;
    }
  }
  return std::move(copy).finish();
}

std::string Redactor::redact(std::string_view text) const {
  bool inPrivateKey = false;
  return redactText(text, inPrivateKey);
}

std::string Redactor::redactLine(std::string_view line, LineState& state) const {
  return redactText(line, state.inPrivateKey);
}

}  // namespace hydra::core
