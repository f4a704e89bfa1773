#include "tests/e2e/crash_checks.h"

#include "tests/e2e/test_repo.h"

namespace hydra::test {

namespace fs = std::filesystem;

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
