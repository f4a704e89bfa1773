#pragma once

// What the crash tests check after hydra was killed with SIGKILL: records
// that parse and processes left running. Shared by crash_loop_test.cpp
// (races) and crash_points_test.cpp (collaborations, evaluations, cleanup,
// merges).

#include <filesystem>
#include <set>
#include <string>

namespace hydra::test {

// Every .json file under `dir` parses whole, every line of every .jsonl file
// parses; returns what did not ("" when everything does).
std::string unreadable(const std::filesystem::path& dir);

// Processes whose working directory is in `workspace`: an agent's or a
// check's, left running.
std::set<int> processesIn(const std::filesystem::path& workspace);

}  // namespace hydra::test
