#include "tests/e2e/cli_run.h"

#include <sys/wait.h>

#include <boost/json/parse.hpp>
#include <cstdio>
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

}  // namespace hydra::test
