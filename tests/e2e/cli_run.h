#pragma once

// Running the real `hydra` command line (and other shell commands) from
// end-to-end tests, and reading what it printed: shared by the tests that
// drive several front ends, crashes and full disks at once.

#include <boost/json/object.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace hydra::test {

struct CommandRun {
  int code = -1;
  std::string out;  // stdout and stderr
};

// A shell command's exit code and output (stdout and stderr together).
CommandRun runShell(const std::string& command);
// `hydra ARGS` (ARGS as the shell reads them) run in `dir`.
CommandRun hydraIn(const std::filesystem::path& dir, const std::string& args);
// The JSON document a `--json` command printed (after any progress lines).
boost::json::object jsonOf(const CommandRun& r);

// Every .json file under `dir` parses whole, every line of every .jsonl file
// parses and the file ends in a whole line; returns what did not ("" when all did).
std::string unreadableRecords(const std::filesystem::path& dir);

// The user's own object store of the repository at `root` as files: its
// loose objects and its packs, sorted (what a race must leave as it was).
std::vector<std::string> objectFiles(const std::filesystem::path& root);

// The race quarantines (.git/hydra-objects/NAME) present in the repository at `root`.
std::vector<std::string> quarantines(const std::filesystem::path& root);

// Polls `pred` every 20 ms until it holds; false when `limit` passes first.
template <class Pred>
bool eventually(Pred pred, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace hydra::test
