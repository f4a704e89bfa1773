#pragma once

// The node's half of a cluster job: `hydra run-job DIR`, the command a job's
// batch script runs. It starts the command in DIR/spec.json on this machine
// the way hydra runs one locally (its own process group, hydra as child
// subreaper with a RunReaper, so that nothing it starts outlives it), appends
// its output lines to DIR/stdout and DIR/stderr as they come, and once the
// command and everything it left running have ended writes DIR/result.json.
//
// SIGTERM, SIGINT or SIGHUP (what scancel and the scheduler's time limit
// send) end the command: SIGTERM to its group, SIGKILL after the spec's kill
// grace; the result then says cancelled. The command is already confined as
// hydra decided (its program is bubblewrap): the node needs the same paths.

#include <filesystem>

namespace hydra::core {

// Returns the runner's exit code: 0 once a result is written (the command's
// own exit code is in it), 1 when not even that was possible (said on stderr).
int runJob(const std::filesystem::path& dir);

}  // namespace hydra::core
