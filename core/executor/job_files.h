#pragma once

// A cluster job's directory: what hydra writes for the job runner on a node
// (`hydra run-job DIR`, job_runner.h) and what the runner writes back. The
// directory lives on the file system hydra and the nodes share; both sides
// only ever read what the other has finished writing.
//
//   spec.json    the command: program, arguments, working directory, the
//                variables set or removed on top of the job's environment,
//                the kill grace (0600: it may hold an agent's variables)
//   job.sh       the batch script sbatch is given: runs the runner on DIR
//   started      written by the runner once the command runs (its host and pid)
//   stdout       the command's output lines, appended as they come
//   stderr
//   result.json  written last, atomically, once the command and everything it
//                left running have ended, and stdout and stderr are complete
//   slurm.out    what the runner itself said (the scheduler's output file)

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/process/execution.h"

namespace hydra::core::job {

inline constexpr const char* kSpec = "spec.json";
inline constexpr const char* kScript = "job.sh";
inline constexpr const char* kStarted = "started";
inline constexpr const char* kStdout = "stdout";
inline constexpr const char* kStderr = "stderr";
inline constexpr const char* kResult = "result.json";
inline constexpr const char* kSchedulerOutput = "slurm.out";

struct JobSpec {
  std::string program;
  std::vector<std::string> args;
  std::filesystem::path cwd;
  std::map<std::string, std::string> env;  // on top of the job's environment
  std::vector<std::string> unsetEnv;       // removed from it first
  std::chrono::milliseconds killGrace{2000};
};

// What the runner reports: the command's end as a ProcessResult says it
// (exit code or signal, cancelled when the job was told to stop, a spawn
// error), and how many processes it left running were ended after it.
struct JobResult {
  ProcessResult process;
  std::string host;
};

std::string toJson(const JobSpec& spec);
std::string toJson(const JobResult& result);
// Throw std::runtime_error naming what is wrong.
JobSpec parseJobSpec(std::string_view text);
JobResult parseJobResult(std::string_view text);

// Writes spec.json (0600) and job.sh (0700) into `dir`, which must exist:
// job.sh runs `runner run-job DIR`.
void writeJob(const std::filesystem::path& dir, const JobSpec& spec, const std::filesystem::path& runner);

// The result, once the runner has written it; nullopt before. Throws
// std::runtime_error when it is there but unreadable.
std::optional<JobResult> readResult(const std::filesystem::path& dir);

}  // namespace hydra::core::job
