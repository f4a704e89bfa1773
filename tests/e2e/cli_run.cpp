#include "tests/e2e/cli_run.h"

#include <sys/wait.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "tests/e2e/test_repo.h"

namespace hydra::test {

CommandRun runShell(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  CommandRun r;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.out.append(buffer, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return r;
}

CommandRun hydraIn(const std::filesystem::path& dir, const std::string& args) {
  return runShell("cd " + shellQuote(dir.string()) + " && PYTHONDONTWRITEBYTECODE=1 " + shellQuote(HYDRA_BINARY) + " " + args);
}

boost::json::object jsonOf(const CommandRun& r) {
  const auto brace = r.out.find('{');
  if (brace == std::string::npos) throw std::runtime_error("no JSON in:\n" + r.out);
  return boost::json::parse(r.out.substr(brace)).as_object();
}

std::string unreadableRecords(const std::filesystem::path& dir) {
  std::string bad;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string text = readFile(it->path());
    try {
      if (it->path().extension() == ".json") boost::json::parse(text);
      if (it->path().extension() == ".jsonl") {
        if (!text.empty() && text.back() != '\n') throw std::runtime_error("ends in part of a line");
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);) boost::json::parse(line);
      }
    } catch (const std::exception& e) {
      bad += it->path().string() + ": " + e.what() + "\n";
    }
  }
  return bad;
}

std::vector<std::string> objectFiles(const std::filesystem::path& root) {
  std::vector<std::string> files;
  const std::filesystem::path objects = root / ".git" / "objects";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(objects)) {
    const std::string relative = entry.path().lexically_relative(objects).string();
    const bool loose = relative.size() == 41 && relative[2] == '/' &&
                       relative.find_first_not_of("0123456789abcdef/") == std::string::npos;
    if (entry.is_regular_file() && (loose || relative.starts_with("pack/"))) files.push_back(relative);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> quarantines(const std::filesystem::path& root) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root / ".git" / "hydra-objects", ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace hydra::test
