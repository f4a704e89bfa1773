#pragma once

// What the crash tests check after hydra was killed with SIGKILL, besides
// records that parse (cli_run.h's unreadableRecords): processes left running. Shared by crash_loop_test.cpp
// (races) and crash_points_test.cpp (collaborations, evaluations, cleanup,
// merges).

#include <filesystem>
#include <set>
#include <string>

namespace hydra::test {

// Processes whose working directory is in `workspace`: an agent's or a
// check's, left running.
std::set<int> processesIn(const std::filesystem::path& workspace);

}  // namespace hydra::test
