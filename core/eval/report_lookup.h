#pragma once

// Finding an evaluation's report for a front end: a path the user gave
// (relative to the repository root), or else the newest report hydra wrote
// under .hydra/evals; read and, when asked, rendered.

#include <boost/json/value.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/eval/report.h"

namespace hydra::core::eval {

// The newest report under ROOT/.hydra/evals, by when it was last written
// (the greater name when two were written at once); nullopt when there is none.
std::optional<std::filesystem::path> newestReport(const std::filesystem::path& root);

// A report as found.
struct FoundReport {
  std::filesystem::path path;
  Report report;
  std::optional<std::string> text;  // rendered, for format "text" or "markdown"
};

// Reads `path` (relative to `root` unless absolute), or the newest report
// when there is no path, rendering it for `format` ("json", "text",
// "markdown"). Throws WorkspaceError (InvalidRequest) when there is no report
// yet, and when the file cannot be read as a report (data {path}). Blocking.
FoundReport findReport(const std::filesystem::path& root, const std::optional<std::filesystem::path>& path,
                       std::string_view format);

// {path, report, text?}
boost::json::value toJson(const FoundReport& found);

}  // namespace hydra::core::eval
