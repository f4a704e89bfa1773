#pragma once

// Which processes are still alive, found through /proc: how the live tests see
// what an agent CLI left behind, including processes that left its process
// group or session (a shell tool started with setsid).

#include <sys/types.h>

#include <string>
#include <vector>

namespace hydra::test {

struct LiveProcess {
  pid_t pid = 0;
  pid_t processGroup = 0;
  pid_t session = 0;
  std::string commandLine;  // arguments joined by spaces
};

// Every running process (zombies excluded) whose environment holds exactly the
// entry `entry` ("HOME=/tmp/x/home"). An agent's own HOME marks everything it
// started, however it detached.
std::vector<LiveProcess> processesWithEnvironment(const std::string& entry);

// "pid 123 (pgid 123, sid 99): sleep 3600", one per line.
std::string describe(const std::vector<LiveProcess>& processes);

}  // namespace hydra::test
