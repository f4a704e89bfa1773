#include "core/collab/prompts.h"

#include <cstdio>

#include "core/util/utf8.h"
#include "core/util/text.h"

namespace hydra::core::collab {

std::string expandTemplate(std::string_view text, const std::map<std::string, std::string>& values) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '{') {
      std::size_t close = text.find('}', i + 1);
      if (close != std::string_view::npos) {
        auto it = values.find(std::string(text.substr(i + 1, close - i - 1)));
        if (it != values.end()) {
          out += it->second;
          i = close + 1;
          continue;
        }
      }
    }
    out += text[i++];
  }
  return out;
}

std::string bounded(std::string_view text, std::size_t max, std::string_view whereAll) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = text.rfind('\n', max);
  if (cut == std::string_view::npos || cut < max / 2) cut = max;
  std::string kept = makeValidUtf8(text.substr(0, cut));
  const std::size_t left = text.size() - kept.size();
  kept += "\n[... " + std::to_string(left) + " more bytes left out";
  if (!whereAll.empty()) kept += "; all of it: " + std::string(whereAll);
  kept += "]\n";
  return kept;
}

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

void part(std::string& out, const char* name, const std::optional<double>& value) {
  out += std::string("  ") + name + ": " + (value ? number(*value) : std::string("not measured")) + "\n";
}

void check(std::string& out, const char* name, const std::optional<scoring::CheckResult>& c) {
  if (!c) return;
  out += std::string("- ") + name + " (`" + c->command + "`): ";
  if (c->skipped) {
    out += "skipped (the build failed)\n";
    return;
  }
  if (!c->error.empty()) {
    out += "could not run: " + c->error + "\n";
    return;
  }
  if (c->timedOut) {
    out += "timed out";
  } else if (c->passed()) {
    out += "passed";
  } else if (c->exitCode) {
    out += "failed (exit " + std::to_string(*c->exitCode) + ")";
  } else {
    out += "failed";
  }
  if (c->tests) {
    out += ", " + std::to_string(c->tests->passed) + " passed, " + std::to_string(c->tests->failed) + " failed";
  }
  if (c->lint) {
    out += ", " + std::to_string(c->lint->errors) + " errors, " + std::to_string(c->lint->warnings) + " warnings";
  }
  out += "\n";
  if (!c->passed() && !c->output.empty()) {
    std::string_view tail = c->output;
    if (tail.size() > kMaxCheckOutputBytes) {
      tail = tail.substr(tail.size() - kMaxCheckOutputBytes);
      std::size_t nl = tail.find('\n');
      if (nl != std::string_view::npos && nl + 1 < tail.size()) tail = tail.substr(nl + 1);
    }
    out += "  output (the end):\n";
    std::size_t start = 0;
    std::string valid = makeValidUtf8(tail);
    while (start < valid.size()) {
      std::size_t nl = valid.find('\n', start);
      if (nl == std::string::npos) nl = valid.size();
      out += "    " + valid.substr(start, nl - start) + "\n";
      start = nl + 1;
    }
  }
}

}  // namespace

std::string scoresText(const scoring::AgentScore& score) {
  std::string out = "Total: " + number(score.total) + " / 100";
  if (!score.ineligible.empty()) out += " (cannot be merged: " + score.ineligible + ")";
  out += "\n";
  part(out, "build", score.breakdown.build);
  part(out, "tests", score.breakdown.tests);
  part(out, "lint", score.breakdown.lint);
  part(out, "diff size", score.breakdown.diffSize);
  part(out, "speed", score.breakdown.speed);
  out += "Diff: +" + std::to_string(score.diff.linesAdded) + " -" + std::to_string(score.diff.linesRemoved) + " in " +
         std::to_string(score.diff.filesChanged) + " file(s)\n";
  if (score.testChanges) {
    auto names = [](const std::vector<std::string>& list) {
      std::string s;
      for (const auto& n : list) s += (s.empty() ? "" : ", ") + n;
      return s;
    };
    if (!score.testChanges->broken.empty()) out += "Tests broken against the base: " + names(score.testChanges->broken) + "\n";
    if (!score.testChanges->fixed.empty()) out += "Tests fixed against the base: " + names(score.testChanges->fixed) + "\n";
    if (!score.testChanges->removed.empty()) out += "Tests that no longer run: " + names(score.testChanges->removed) + "\n";
    if (!score.testChanges->skipped.empty()) {
      out += "Tests skipped or expected to fail now (scored as failed): " + names(score.testChanges->skipped) + "\n";
    }
  }
  for (const auto& flag : score.flags) out += "Flag: " + flag + "\n";
  if (score.checks.build || score.checks.tests || score.checks.lint) out += "Checks:\n";
  check(out, "build", score.checks.build);
  check(out, "tests", score.checks.tests);
  check(out, "lint", score.checks.lint);
  return out;
}

bool approves(std::string_view review, std::string_view marker) {
  return !marker.empty() && review.find(marker) != std::string_view::npos;
}

std::string firstLine(std::string_view text, std::size_t max) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    std::size_t a = line.find_first_not_of(" \t\r#*>-");
    if (a != std::string_view::npos) {
      line = line.substr(a);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) line.remove_suffix(1);
      return clipped(line, max);
    }
    start = nl + 1;
  }
  return "";
}

}  // namespace hydra::core::collab
