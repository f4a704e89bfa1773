// `hydra init [--force]`: writes a commented hydra.toml with the build, test
// and lint commands detected in the repository.

#include <cstdlib>
#include <iostream>

#include "core/workspace/init.h"
#include "server/cli/commands.h"
#include "server/cli/common.h"

namespace hydra::cli {

int runInit(const InitOptions& options) {
  auto root = findRepositoryRoot(std::filesystem::current_path());
  const char* path = std::getenv("PATH");
  auto detected = core::detectCommands(root, path ? path : "");
  try {
    core::writeInitConfig(root, options.force);
  } catch (const std::runtime_error& e) {
    throw CommandError(e.what(), 2);
  }
  std::cout << "Wrote " << (root / "hydra.toml").string() << "\n";
  auto show = [](const char* what, const std::optional<std::string>& command) {
    std::cout << "  " << what << (command ? *command : std::string("(none detected; set it in hydra.toml)")) << "\n";
  };
  show("build: ", detected.build);
  show("test:  ", detected.test);
  show("lint:  ", detected.lint);
  for (const auto& why : detected.evidence) std::cout << "  from " << why << "\n";
  for (const auto& warning : detected.warnings) std::cout << "  warning: " << warning << "\n";
  return 0;
}

}  // namespace hydra::cli
