#include "core/scoring/test_naming.h"

#include <algorithm>
#include <vector>

namespace hydra::core::scoring {
namespace {

// The command's words, split at blanks; quoting is not undone (a runner's
// name or option is a word of its own either way).
std::vector<std::string_view> wordsOf(std::string_view command) {
  std::vector<std::string_view> words;
  std::size_t at = 0;
  while (at < command.size()) {
    const std::size_t start = command.find_first_not_of(" \t\n", at);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(command.find_first_of(" \t\n", start), command.size());
    words.push_back(command.substr(start, end - start));
    at = end;
  }
  return words;
}

// "node_modules/.bin/jest" -> "jest", "'vitest" -> "vitest".
std::string_view programName(std::string_view word) {
  if (const std::size_t slash = word.rfind('/'); slash != std::string_view::npos) word.remove_prefix(slash + 1);
  while (!word.empty() && (word.front() == '\'' || word.front() == '"')) word.remove_prefix(1);
  while (!word.empty() && (word.back() == '\'' || word.back() == '"' || word.back() == ';')) word.remove_suffix(1);
  return word;
}

// The runner a command visibly runs, among those whose naming depends on it:
// "npx jest --ci" -> jest, "python3 -m unittest discover" -> unittest.
std::optional<std::string> runnerOf(const std::vector<std::string_view>& words) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view name = programName(words[i]);
    for (const char* runner : {"jest", "mocha", "vitest"})
      if (name == runner) return std::string(runner);
    if (name == "-m" && i + 1 < words.size() && programName(words[i + 1]).starts_with("unittest"))
      return "unittest";
    if (name == "go" && i + 1 < words.size() && words[i + 1] == "test") return "go";
  }
  return std::nullopt;
}

bool hasWord(const std::vector<std::string_view>& words, std::initializer_list<std::string_view> wanted) {
  return std::any_of(words.begin(), words.end(), [&](std::string_view word) {
    return std::find(wanted.begin(), wanted.end(), programName(word)) != wanted.end();
  });
}

// Whether the command assigns GOFLAGS (`GOFLAGS=-mod=vendor go test`, `env
// GOFLAGS=...`, `export GOFLAGS=...`).
bool setsGoflags(const std::vector<std::string_view>& words) {
  return std::any_of(words.begin(), words.end(), [](std::string_view word) {
    while (!word.empty() && (word.front() == '\'' || word.front() == '"')) word.remove_prefix(1);
    return word.starts_with("GOFLAGS=");
  });
}

}  // namespace

std::optional<std::string> testsByCountsOnlyReason(std::string_view command, std::optional<std::string_view> format,
                                                   bool junitReport) {
  if (junitReport) return std::nullopt;
  const std::vector<std::string_view> words = wordsOf(command);
  const std::optional<std::string> runner = format ? std::optional<std::string>(*format) : runnerOf(words);
  if (!runner) return std::nullopt;
  const std::string how = "; have it write a JUnit report and set junit_report to compare them by name";
  // Their reporters print counts and failures only, verbose or not.
  if (*runner == "jest" || *runner == "mocha")
    return *runner + " names no passing tests in its output, so tests will be compared by counts only" + how;
  // Whether the verbose forms are asked for shows only where the command runs
  // the runner itself: "npm test" hides its script, so nothing is said of it.
  const bool runsItItself = runnerOf(words) == runner;
  if (*runner == "vitest" && runsItItself && !hasWord(words, {"--reporter=verbose", "verbose"}))
    return "vitest's default reporter names no tests, so tests will be compared by counts only; add "
           "--reporter=verbose to the command, or have it write a JUnit report and set junit_report";
  if (*runner == "unittest" && runsItItself && !hasWord(words, {"-v", "--verbose"}))
    return "python -m unittest without -v names only failing tests, so tests will be compared by counts only; "
           "add -v to the command";
  // hydra's checks set GOFLAGS=-v, which makes go test name every test; a
  // command that sets GOFLAGS itself replaces it.
  if (*runner == "go" && runsItItself && setsGoflags(words) && !hasWord(words, {"-v", "-json", "-v=true"}))
    return "the command sets GOFLAGS itself, replacing the -v hydra asks go test for, and go test without -v "
           "names no passing tests, so tests will be compared by counts only; add -v to the command";
  return std::nullopt;
}

}  // namespace hydra::core::scoring
