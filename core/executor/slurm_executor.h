#pragma once

// The Slurm executor: each command (an agent run, its setup, a check) becomes
// one batch job. hydra writes the job's directory (job_files.h) on the file
// system it shares with the nodes, submits `job.sh` with sbatch in the
// command's working directory, and follows the job:
//
//   output   the runner on the node appends the command's lines to the job's
//            stdout and stderr files; hydra reads what is new every
//            follow_interval, into the same line handler a local process
//            feeds (adapter parsers, logs, notifications)
//   state    one `squeue` per queue_interval for all of hydra's jobs (no
//            accounting database needed); a job the queue says has ended
//            without a result is reported with its state and the last line
//            of its slurm.out (a runner the node could not start, ...)
//   the end  the runner's result.json: exit code or signal, once the command
//            and everything it left running have ended on the node
//   cancel   scancel: the runner ends the command (SIGTERM, SIGKILL after the
//            kill grace) and reports; a job still pending simply goes
//   timeout  the command's timeout counts from its start on the node; then
//            hydra scancels it and reports a timeout. The job's --time is
//            that timeout plus a margin, so a job outlives no hydra by long.
//
// Every job carries `--comment=hydra:RACE:SUBJECT:ROLE`, so a restarted hydra
// finds the jobs of a race its predecessor left and cancels them
// (cancelRaceJobs()).

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/executor/executor.h"

namespace hydra::core {

struct SlurmSettings {
  std::optional<std::string> partition;
  std::optional<std::string> account;
  // sbatch --time; unset: each command's timeout and kill grace plus a margin.
  std::optional<std::string> timeLimit;
  // Passed to sbatch before the script (never --output, --chdir, ...: hydra's).
  std::vector<std::string> extraArgs;
  // SLURM_CONF for sinfo, sbatch, squeue and scancel; unset: the environment's.
  std::optional<std::filesystem::path> slurmConf;
  // The hydra binary the nodes run (`run-job`), at a path they see.
  std::filesystem::path runner;
  // Where job directories go: on the file system hydra and the nodes share.
  std::filesystem::path jobsDir;
  std::chrono::milliseconds followInterval{100};
  std::chrono::milliseconds queueInterval{1000};
  // How long a job may be ended (or gone) in the queue without its runner's
  // result before hydra stops waiting: a shared file system's caches.
  std::chrono::milliseconds resultGrace{10000};
};

// Slurm could not be used: not installed, not answering, or the paths the
// nodes need are not shared with them.
class SlurmError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SlurmJob;
class QueuePoller;

class SlurmExecutor final : public Executor, public std::enable_shared_from_this<SlurmExecutor> {
 public:
  static std::shared_ptr<SlurmExecutor> create(SlurmSettings settings);

  ExecutorKind kind() const override { return ExecutorKind::Slurm; }
  bool local() const override { return false; }
  bool canWriteStdin() const override { return false; }
  std::shared_ptr<Execution> start(boost::asio::io_context& io, ProcessSpec spec, LineHandler onLine,
                                   ExitHandler onExit, const JobLabel& label) override;

  const SlurmSettings& settings() const { return settings_; }
  // The variables Slurm's own commands get (SLURM_CONF).
  std::map<std::string, std::string> slurmEnvironment() const;

 private:
  friend class SlurmJob;
  friend class QueuePoller;
  explicit SlurmExecutor(SlurmSettings settings) : settings_(std::move(settings)) {}

  // The queue is polled while some job is followed.
  void follow(boost::asio::io_context& io, const std::string& jobId, std::weak_ptr<SlurmJob> job);
  void forget(const std::string& jobId);
  // The ids of the jobs followed now.
  std::vector<std::string> followedIds();
  void onQueue(const std::string& output, const std::vector<std::string>& asked);

  SlurmSettings settings_;
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<SlurmJob>> followed_;  // by job id
  // Alive while it polls: held by its own pending handlers only, so it ends
  // with its io_context as well as when nothing is followed any more.
  std::weak_ptr<QueuePoller> poller_;
};

// Checks, before anything is submitted, that Slurm answers (sinfo) and that
// the paths the nodes need are on a file system they share: the job and
// worktree directory, the repository's git directory and the runner. Paths on
// a local file system are fine only when every node of the partition is this
// machine. Throws SlurmError saying what to change.
void checkSlurmReady(const SlurmSettings& settings, const std::vector<std::filesystem::path>& sharedPaths);

// The jobs of `raceId` still queued or running, by their comment; ended with
// scancel. Returns the job ids cancelled. Blocking. Throws SlurmError when
// Slurm does not answer.
std::vector<std::string> cancelRaceJobs(const std::string& raceId,
                                        const std::optional<std::filesystem::path>& slurmConf);

// The Slurm state of a job hydra follows, from squeue's %T.
bool slurmStateIsFinal(std::string_view state);

// sbatch options hydra sets itself, which [executor] extra_args may not.
bool isReservedSbatchOption(std::string_view arg);

// `--time` for a command with `timeout` and `killGrace` (minutes, rounded
// up, with a margin for hydra's own scancel to come first); empty: none.
std::string slurmTimeLimit(std::chrono::milliseconds timeout, std::chrono::milliseconds killGrace);

}  // namespace hydra::core
