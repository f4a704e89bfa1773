#include "tests/e2e/crash_checks.h"

#include <boost/json/parse.hpp>
#include <sstream>
#include <stdexcept>

#include "tests/e2e/test_repo.h"

namespace hydra::test {

namespace fs = std::filesystem;

std::string unreadable(const fs::path& dir) {
  std::string bad;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
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

std::set<int> processesIn(const fs::path& workspace) {
  std::set<int> pids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code linkError;
    const fs::path cwd = fs::read_symlink(e.path() / "cwd", linkError);
    if (!linkError && cwd.string().starts_with(workspace.string()) && !processGone(std::stoi(name))) {
      pids.insert(std::stoi(name));
    }
  }
  return pids;
}

}  // namespace hydra::test
