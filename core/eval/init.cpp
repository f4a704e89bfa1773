#include "core/eval/init.h"

#include <cctype>
#include <cstdio>

namespace hydra::core::eval {

namespace {

std::string list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + tomlString(items[i]);
  return out + "]";
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The header every set starts with: what it is and how hidden files stay hidden.
std::string preamble(const SetHeader& header) {
  return "# An eval set for hydra (docs/eval.md): `hydra eval run THIS_FILE` runs every\n"
         "# case below with each agent, `samples` times, verifies each result and\n"
         "# reports pass@k; `hydra eval compare` tells a regression between two runs.\n"
         "#\n"
         "# Hidden files are copied into a sample's checkout only after its agent\n"
         "# finished, so no agent sees them. Keep them out of the commits the cases\n"
         "# start from: hydra refuses a case whose base commit already holds one.\n"
         "\n"
         "[eval]\n"
         "name = " +
         tomlString(header.name) +
         "\n"
         "agents = " +
         list(header.agents) +
         "  # hydra.toml's agents or built-in ones; --agents overrides\n"
         "samples = 5                  # runs per case and agent\n"
         "pass_k = [1, 5]              # the k of every pass@k reported\n"
         "timeout_seconds = 600        # per agent run\n"
         "# max_concurrent_agents = 4  # samples at once (default: [general] max_concurrent_agents)\n";
}

const char* kOptionalKeys =
    "# fail_to_pass = [\"test_name\"]   # tests that must go from failing to passing\n"
    "# pass_to_pass = [\"test_other\"]  # tests that must keep passing\n"
    "# build_command, test_command and lint_command override [scoring] for this case\n";

}  // namespace

std::string tomlString(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string slugOf(std::string_view text, std::size_t limit) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      out += static_cast<char>(std::tolower(c));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
    if (out.size() >= limit) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "case" : out;
}

bool isTestPath(std::string_view path) {
  std::string_view rest = path;
  std::string_view file = path;
  while (!rest.empty()) {
    const auto slash = rest.find('/');
    const std::string component = lower(rest.substr(0, slash));
    if (slash == std::string_view::npos) {
      file = rest;
      break;
    }
    if (component == "test" || component == "tests" || component == "spec" || component == "specs" ||
        component == "__tests__") {
      return true;
    }
    rest.remove_prefix(slash + 1);
  }
  const std::string name = lower(file);
  const auto dot = name.find('.');
  const std::string stem = name.substr(0, dot);
  const std::string_view original = file.substr(0, file.find('.'));
  return startsWith(name, "test_") || endsWith(stem, "_test") || endsWith(stem, "_spec") ||
         name.find(".test.") != std::string::npos || name.find(".spec.") != std::string::npos ||
         endsWith(original, "Test") || endsWith(original, "Tests");
}

std::string templateSet(const SetHeader& header, const std::string& verifyCommand) {
  return preamble(header) +
         "\n"
         "[[cases]]\n"
         "id = \"first-case\"            # letters, digits, '_', '-', '.'; unique\n"
         "task = \"Describe the task as you would give it to an agent\"\n"
         "base = \"HEAD\"                 # a commit id keeps the case where it is as the branch moves\n"
         "verify_command = " +
         tomlString(verifyCommand) +
         "  # exit 0 = solved; runs once the hidden files are in\n"
         "hidden_files = []              # e.g. [\"tests/test_hidden_fix.py\"], relative to this file's folder\n" +
         kOptionalKeys;
}

std::string setFromRace(const SetHeader& header, const RaceCase& c) {
  std::string hidden = "hidden_files = " + list(c.hiddenFiles) + "\n";
  if (c.hiddenFiles.empty()) {
    hidden = "# " + c.agentId + " added or changed no test file: add hidden tests beside this file.\n" + hidden;
  }
  return preamble(header) +
         "\n"
         "# From race " +
         c.raceId + ": its task and base commit; the hidden files are the tests " + c.agentId +
         "\n# added or changed, copied beside this file.\n"
         "[[cases]]\n"
         "id = " +
         tomlString(c.id) +
         "\n"
         "task = " +
         tomlString(c.task) +
         "\n"
         "base = " +
         tomlString(c.baseCommit) +
         "\n"
         "verify_command = " +
         tomlString(c.verifyCommand) + "  # exit 0 = solved; runs once the hidden files are in\n" + hidden +
         kOptionalKeys;
}

}  // namespace hydra::core::eval
