#include "core/eval/report_lookup.h"

#include <boost/json/value_from.hpp>

#include "core/guard/records.h"
#include "core/workspace/errors.h"

namespace hydra::core::eval {

namespace fs = std::filesystem;
namespace json = boost::json;

std::optional<fs::path> newestReport(const fs::path& root) {
  std::error_code ec;
  std::optional<fs::path> newest;
  fs::file_time_type newestTime{};
  for (const auto& entry : fs::directory_iterator(root / ".hydra" / guard::kEvalReportsFolder, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".json") continue;
    auto time = entry.last_write_time(ec);
    if (ec) continue;
    if (!newest || time > newestTime || (time == newestTime && entry.path() > *newest)) {
      newest = entry.path();
      newestTime = time;
    }
  }
  return newest;
}

FoundReport findReport(const fs::path& root, const std::optional<fs::path>& path, std::string_view format) {
  FoundReport found;
  if (path) {
    found.path = path->is_absolute() ? *path : root / *path;
  } else if (auto newest = newestReport(root)) {
    found.path = *newest;
  } else {
    throw WorkspaceError::invalidRequest("no eval report yet in " +
                                         (root / ".hydra" / guard::kEvalReportsFolder).string() +
                                         ": run an eval set first");
  }
  try {
    found.report = readReportFile(found.path);
  } catch (const std::runtime_error& e) {
    throw WorkspaceError(WorkspaceError::Kind::InvalidRequest, e.what(), json::object{{"path", found.path.string()}});
  }
  if (format == "text") found.text = renderText(found.report);
  if (format == "markdown") found.text = renderMarkdown(found.report);
  return found;
}

json::value toJson(const FoundReport& found) {
  json::object result{{"path", found.path.string()}, {"report", json::value_from(found.report)}};
  if (found.text) result["text"] = *found.text;
  return result;
}

}  // namespace hydra::core::eval
