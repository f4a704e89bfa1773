#pragma once

// Reading test and lint results out of real tools' output.

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/scoring/formulas.h"

namespace hydra::core::scoring {

// The names [scoring] test_format and lint_format accept: one per parser,
// registered with it, plus "exit_code" (judge by the exit code alone) and, for
// tests, "junit" (read `junit_report`).
std::span<const std::string_view> testFormatNames();
std::span<const std::string_view> lintFormatNames();

struct TestParse {
  TestCounts counts;
  std::string format;  // which parser read it: "pytest", "jest", ...
};

// `format` is [scoring] test_format when set ("exit_code" forces the fallback:
// nullopt); otherwise the parser is chosen by what the output looks like.
// nullopt when no parser recognises the output.
std::optional<TestParse> parseTestOutput(std::string_view output, std::optional<std::string_view> format = std::nullopt);

// A JUnit XML report (`junit_report`), read with a real XML parser. nullopt when
// the file is missing or is not a JUnit report; `error` says why.
std::optional<TestParse> parseJUnitReport(const std::filesystem::path& file, std::string* error = nullptr);

struct LintParse {
  LintCounts counts;
  std::string format;  // "gcc", "clang_tidy", "clippy", "eslint", "eslint_json", "ruff", "flake8", "go_vet"
};

std::optional<LintParse> parseLintOutput(std::string_view output, std::optional<std::string_view> format = std::nullopt);

}  // namespace hydra::core::scoring
