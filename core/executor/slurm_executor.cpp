#include "core/executor/slurm_executor.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <csignal>
#include <fstream>
#include <random>
#include <sstream>

#include "core/executor/command.h"
#include "core/executor/job_files.h"
#include "core/process/line_splitter.h"
#include "core/util/host_name.h"
#include "core/util/text.h"
#include "core/util/utf8.h"

namespace hydra::core {

namespace fs = std::filesystem;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr auto kSlurmCommandTimeout = 60s;
// Read at most this much of an output file per follow: a flood of output is
// taken in steps, like a pipe's.
constexpr std::size_t kMaxReadPerFollow = 1 << 20;

std::string randomSuffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 6; ++i) s += kHex[rng() % 16];
  return s;
}

std::string userName() {
  if (const passwd* pw = ::getpwuid(::geteuid())) return pw->pw_name;
  return std::to_string(::geteuid());
}

std::map<std::string, std::string> envFor(const std::optional<fs::path>& slurmConf) {
  std::map<std::string, std::string> env;
  if (slurmConf) env["SLURM_CONF"] = slurmConf->string();
  return env;
}

std::string comment(const JobLabel& label) {
  return "hydra:" + label.raceId + ":" + label.subject + ":" + label.role;
}

// Output a runner appends to a file on the shared file system, read from where
// the last read stopped.
class OutputFollower {
 public:
  explicit OutputFollower(fs::path path) : path_(std::move(path)) {}
  ~OutputFollower() {
    if (fd_ >= 0) ::close(fd_);
  }
  OutputFollower(const OutputFollower&) = delete;
  OutputFollower& operator=(const OutputFollower&) = delete;

  // The lines completed since the last call; with `toEnd`, everything up to
  // the end of the file, its last unterminated line included.
  std::vector<std::string> read(bool toEnd) {
    std::vector<std::string> lines;
    if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0) {
      std::array<char, 64 * 1024> buffer;
      std::size_t taken = 0;
      while (toEnd || taken < kMaxReadPerFollow) {
        ssize_t n = ::pread(fd_, buffer.data(), buffer.size(), offset_);
        if (n <= 0) break;
        offset_ += n;
        taken += static_cast<std::size_t>(n);
        for (auto& line : splitter_.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)))) {
          lines.push_back(std::move(line));
        }
      }
    }
    if (toEnd) {
      for (auto& line : splitter_.finish()) lines.push_back(std::move(line));
    }
    for (auto& line : lines) {
      if (!isValidUtf8(line)) line = makeValidUtf8(line);
    }
    return lines;
  }

 private:
  fs::path path_;
  int fd_ = -1;
  off_t offset_ = 0;
  LineSplitter splitter_;
};

// The last line with something on it of a small text file; empty when there is none.
std::string lastLineOf(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  while (!last.empty() && (last.back() == '\r' || last.back() == ' ')) last.pop_back();
  return clipped(last, 500);
}

}  // namespace

// ---------------------------------------------------------------------------

class SlurmJob final : public Execution, public std::enable_shared_from_this<SlurmJob> {
 public:
  SlurmJob(asio::io_context& io, std::shared_ptr<SlurmExecutor> executor, ProcessSpec spec,
           Executor::LineHandler onLine, Executor::ExitHandler onExit, JobLabel label)
      : io_(io),
        executor_(std::move(executor)),
        spec_(std::move(spec)),
        onLine_(std::move(onLine)),
        onExit_(std::move(onExit)),
        label_(std::move(label)),
        followTimer_(io),
        timeoutTimer_(io) {}

  ~SlurmJob() override {
    // A job nobody follows any more ends: hydra's jobs never outlive it.
    if (!ended_ && !id_.empty()) {
      runCommandSync("scancel", {id_}, executor_->slurmEnvironment(), kSlurmCommandTimeout);
    }
  }

  void submit();

  void cancel() override {
    asio::post(io_, [self = shared_from_this()] { self->stop(true); });
  }
  void terminate() override {
    asio::post(io_, [self = shared_from_this()] { self->stop(false); });
  }
  void write(std::string) override {}
  void closeStdin() override {}
  pid_t pid() const override { return -1; }

  // From the executor's queue poll: the job's state, or nullopt when the
  // queue no longer knows it.
  void onQueueState(std::optional<std::string> state, const std::string& reason);

 private:
  void fail(std::string why);
  void onSubmitted(const CommandOutput& output);
  void followSoon();
  void followNow();
  void onStarted();
  void stop(bool cancelled);
  void scancel();
  void deliver(OutputStream stream, std::vector<std::string> lines);
  // The end, with the runner's result, or without one (`why`).
  void end(std::optional<ProcessResult> result, std::string why);

  asio::io_context& io_;
  std::shared_ptr<SlurmExecutor> executor_;
  ProcessSpec spec_;
  Executor::LineHandler onLine_;
  Executor::ExitHandler onExit_;
  JobLabel label_;
  fs::path dir_;
  std::unique_ptr<OutputFollower> out_, err_;
  asio::steady_timer followTimer_;
  asio::steady_timer timeoutTimer_;
  std::chrono::system_clock::time_point submittedAt_;

  std::string id_;  // once sbatch has answered
  bool started_ = false;
  bool stopRequested_ = false;
  bool cancelRequested_ = false;
  bool timedOut_ = false;
  bool scancelSent_ = false;
  bool ended_ = false;
  std::string queueState_;
  std::string queueReason_;
  std::optional<std::chrono::steady_clock::time_point> finalSince_;  // the queue says it is over
};

void SlurmJob::fail(std::string why) {
  auto self = shared_from_this();
  asio::post(io_, [self, why = std::move(why)] {
    ProcessResult result;
    result.spawnError = why;
    self->end(result, {});
  });
}

void SlurmJob::submit() {
  const SlurmSettings& settings = executor_->settings();
  if (spec_.stdinPipe) {
    fail("the slurm executor cannot write to a job's stdin, which this agent is spoken to over (ACP): run it with "
         "the local executor");
    return;
  }
  if (spec_.cwd.empty()) spec_.cwd = fs::current_path();
  job::JobSpec jobSpec{spec_.program, spec_.args, spec_.cwd, spec_.env, spec_.unsetEnv, spec_.killGrace};
  try {
    fs::path raceDir = settings.jobsDir / (label_.raceId.empty() ? std::string("_") : label_.raceId);
    fs::create_directories(raceDir);
    for (int attempt = 0; dir_.empty(); ++attempt) {
      fs::path candidate = raceDir / (label_.subject + "." + label_.role + "." + randomSuffix());
      if (fs::create_directory(candidate)) dir_ = candidate;
      if (attempt > 100) throw std::runtime_error("no free job directory in " + raceDir.string());
    }
    job::writeJob(dir_, jobSpec, settings.runner);
  } catch (const std::exception& e) {
    fail(std::string("cannot write the job's files: ") + e.what());
    return;
  }
  out_ = std::make_unique<OutputFollower>(dir_ / job::kStdout);
  err_ = std::make_unique<OutputFollower>(dir_ / job::kStderr);

  std::vector<std::string> args = {"--parsable",
                                   "--job-name=hydra-" + label_.subject + "-" + label_.role,
                                   "--comment=" + comment(label_),
                                   "--chdir=" + spec_.cwd.string(),
                                   "--output=" + (dir_ / job::kSchedulerOutput).string(),
                                   "--error=" + (dir_ / job::kSchedulerOutput).string(),
                                   "--nodes=1",
                                   "--ntasks=1",
                                   "--export=ALL",
                                   // A requeued job would run its command a second time
                                   // into the same files: a node that fails is a failed run.
                                   "--no-requeue"};
  if (settings.partition) args.push_back("--partition=" + *settings.partition);
  if (settings.account) args.push_back("--account=" + *settings.account);
  std::string time = settings.timeLimit.value_or(slurmTimeLimit(spec_.timeout, spec_.killGrace));
  if (!time.empty()) args.push_back("--time=" + time);
  args.insert(args.end(), settings.extraArgs.begin(), settings.extraArgs.end());
  args.push_back((dir_ / job::kScript).string());

  submittedAt_ = std::chrono::system_clock::now();
  auto self = shared_from_this();
  runCommand(io_, "sbatch", args, executor_->slurmEnvironment(), kSlurmCommandTimeout,
             [self](CommandOutput output) { self->onSubmitted(output); });
}

void SlurmJob::onSubmitted(const CommandOutput& output) {
  if (!output.succeeded()) {
    ProcessResult result;
    result.spawnError = "sbatch refused the job: " + output.failure();
    end(result, {});
    return;
  }
  // --parsable: "ID" or "ID;CLUSTER".
  std::string id = output.out.substr(0, output.out.find_first_of(";\n"));
  if (id.empty() || !std::all_of(id.begin(), id.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    ProcessResult result;
    result.spawnError = "sbatch said \"" + output.out + "\", not a job id";
    end(result, {});
    return;
  }
  id_ = id;
  spdlog::info("race {}: {} {}: Slurm job {} ({})", label_.raceId, label_.subject, label_.role, id, dir_.string());
  executor_->follow(io_, id, weak_from_this());
  if (stopRequested_) scancel();
  followSoon();
}

void SlurmJob::followSoon() {
  followTimer_.expires_after(executor_->settings().followInterval);
  followTimer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->followNow();
  });
}

void SlurmJob::followNow() {
  if (ended_) return;
  // Held back while the consumer is behind: the output waits on disk.
  const bool mayRead = !spec_.readGate || spec_.readGate();
  if (!started_ && fs::exists(dir_ / job::kStarted)) onStarted();
  if (mayRead && fs::exists(dir_ / job::kResult)) {
    std::optional<job::JobResult> result;
    std::string unreadable;
    try {
      result = job::readResult(dir_);
    } catch (const std::exception& e) {
      unreadable = e.what();
    }
    if (result || !unreadable.empty()) {
      deliver(OutputStream::Stdout, out_->read(true));
      deliver(OutputStream::Stderr, err_->read(true));
      if (result) {
        spdlog::info("race {}: {} {}: Slurm job {} ended on {}", label_.raceId, label_.subject, label_.role, id_,
                     result->host);
        end(result->process, {});
      } else {
        end(std::nullopt, "its result is unreadable: " + unreadable);
      }
      return;
    }
  }
  if (mayRead) {
    deliver(OutputStream::Stdout, out_->read(false));
    deliver(OutputStream::Stderr, err_->read(false));
  }
  if (finalSince_) {
    // Over in the queue without a result: a runner that could not start or
    // was killed outright (a node failure, a job killed at its time limit).
    // Wait a moment for a result a shared file system has not shown yet.
    const auto grace = started_ ? executor_->settings().resultGrace : std::min(executor_->settings().resultGrace, 2000ms);
    if (std::chrono::steady_clock::now() - *finalSince_ >= grace) {
      deliver(OutputStream::Stdout, out_->read(true));
      deliver(OutputStream::Stderr, err_->read(true));
      std::string state = queueState_.empty() ? std::string("gone from the queue") : "ended as " + queueState_;
      if (!queueReason_.empty() && queueReason_ != "None") state += " (" + queueReason_ + ")";
      // The batch script's own last words: a runner that is not where the
      // node looks, a working directory the node cannot see.
      std::string said = lastLineOf(dir_ / job::kSchedulerOutput);
      end(std::nullopt, "Slurm job " + id_ + " " + state + " without its runner's result" +
                            (said.empty() ? std::string() : ": " + said) + " (" +
                            (dir_ / job::kSchedulerOutput).string() + ")");
      return;
    }
  }
  followSoon();
}

void SlurmJob::onStarted() {
  started_ = true;
  if (spec_.timeout.count() <= 0) return;
  // The command's time is its own: counted from its start on the node, not
  // from its submission, which may wait in the queue.
  timeoutTimer_.expires_after(spec_.timeout);
  timeoutTimer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    auto self = weak.lock();
    if (!self || self->ended_ || self->stopRequested_) return;
    spdlog::info("race {}: {} {}: Slurm job {} timed out", self->label_.raceId, self->label_.subject,
                 self->label_.role, self->id_);
    self->timedOut_ = true;
    self->stopRequested_ = true;
    self->scancel();
  });
}

void SlurmJob::onQueueState(std::optional<std::string> state, const std::string& reason) {
  if (ended_) return;
  if (state) {
    if (*state != queueState_ || reason != queueReason_) {
      // Why a job waits (Resources, Priority, a partition that is down) is
      // the first thing to look at when a race does not start.
      spdlog::info("race {}: {} {}: Slurm job {} is {}{}", label_.raceId, label_.subject, label_.role, id_, *state,
                   reason.empty() || reason == "None" ? std::string() : " (" + reason + ")");
    }
    queueState_ = *state;
    queueReason_ = reason;
  }
  if ((!state || slurmStateIsFinal(*state)) && !finalSince_) finalSince_ = std::chrono::steady_clock::now();
}

void SlurmJob::stop(bool cancelled) {
  if (ended_ || stopRequested_) return;
  stopRequested_ = true;
  cancelRequested_ = cancelled;
  if (!id_.empty()) scancel();  // else as soon as sbatch has answered
}

void SlurmJob::scancel() {
  if (scancelSent_) return;
  scancelSent_ = true;
  auto self = shared_from_this();
  runCommand(io_, "scancel", {id_}, executor_->slurmEnvironment(), kSlurmCommandTimeout,
             [self](CommandOutput output) {
               if (!output.succeeded() && !self->ended_) {
                 spdlog::warn("race {}: scancel {} failed: {}", self->label_.raceId, self->id_, output.failure());
               }
             });
}

void SlurmJob::deliver(OutputStream stream, std::vector<std::string> lines) {
  for (auto& line : lines) {
    if (onLine_) onLine_(stream, std::move(line));
  }
}

void SlurmJob::end(std::optional<ProcessResult> result, std::string why) {
  if (ended_) return;
  ended_ = true;
  if (!id_.empty()) executor_->forget(id_);
  followTimer_.cancel();
  timeoutTimer_.cancel();
  ProcessResult r = result.value_or(ProcessResult{});
  if (r.startedAt == std::chrono::system_clock::time_point{}) r.startedAt = submittedAt_;
  if (r.endedAt == std::chrono::system_clock::time_point{}) r.endedAt = std::chrono::system_clock::now();
  if (!result) {
    if (stopRequested_) {
      // Cancelled before the runner reported (still pending, or ended hard).
      r.signal = SIGTERM;
    } else {
      r.spawnError = why;
    }
  }
  if (stopRequested_ && r.spawnError.empty()) {
    r.timedOut = timedOut_;
    r.cancelled = cancelRequested_ && !timedOut_;
  } else if (r.cancelled) {
    // Stopped by Slurm, not by hydra: its time limit, or someone's scancel.
    r.cancelled = false;
    r.timedOut = queueState_ == "TIMEOUT";
    if (!r.exitCode && !r.signal) r.signal = SIGTERM;
  }
  // The job's files served their purpose; those of a job that ended without
  // a result stay, for the scheduler's own words in slurm.out.
  if (result && !dir_.empty()) {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
    fs::remove(dir_.parent_path(), ignored);  // the race's directory, once it is empty
  }
  auto onExit = std::move(onExit_);
  onLine_ = nullptr;
  if (onExit) onExit(r);
}

// ---------------------------------------------------------------------------

std::shared_ptr<SlurmExecutor> SlurmExecutor::create(SlurmSettings settings) {
  return std::shared_ptr<SlurmExecutor>(new SlurmExecutor(std::move(settings)));
}

std::map<std::string, std::string> SlurmExecutor::slurmEnvironment() const { return envFor(settings_.slurmConf); }

std::shared_ptr<Execution> SlurmExecutor::start(asio::io_context& io, ProcessSpec spec, LineHandler onLine,
                                                ExitHandler onExit, const JobLabel& label) {
  auto job = std::make_shared<SlurmJob>(io, shared_from_this(), std::move(spec), std::move(onLine),
                                        std::move(onExit), label);
  job->submit();
  return job;
}

// One squeue per interval for every job an executor follows, on one io_context.
class QueuePoller : public std::enable_shared_from_this<QueuePoller> {
 public:
  QueuePoller(asio::io_context& io, std::weak_ptr<SlurmExecutor> executor)
      : io_(io), executor_(std::move(executor)), timer_(io) {}

  void poll() {
    auto executor = executor_.lock();
    if (!executor) return;
    std::vector<std::string> ids = executor->followedIds();
    if (ids.empty()) return;  // the last handler lets go of the poller
    // All of the user's jobs in one call: asking for ids the queue has
    // forgotten would fail the whole call.
    auto self = shared_from_this();
    runCommand(io_, "squeue", {"--noheader", "--states=all", "--user=" + userName(), "--format=%i|%T|%r"},
               executor->slurmEnvironment(), kSlurmCommandTimeout, [self, ids](CommandOutput output) {
                 if (auto executor = self->executor_.lock()) {
                   if (output.succeeded()) {
                     executor->onQueue(output.out, ids);
                   } else {
                     spdlog::warn("squeue failed: {}", output.failure());
                   }
                   self->timer_.expires_after(executor->settings().queueInterval);
                   self->timer_.async_wait([self](const boost::system::error_code& ec) {
                     if (!ec) self->poll();
                   });
                 }
               });
  }

 private:
  asio::io_context& io_;
  std::weak_ptr<SlurmExecutor> executor_;
  asio::steady_timer timer_;
};

void SlurmExecutor::follow(asio::io_context& io, const std::string& jobId, std::weak_ptr<SlurmJob> job) {
  std::shared_ptr<QueuePoller> poller;
  {
    std::lock_guard lock(mutex_);
    followed_[jobId] = std::move(job);
    if (!poller_.expired()) return;
    poller = std::make_shared<QueuePoller>(io, weak_from_this());
    poller_ = poller;
  }
  asio::post(io, [poller] { poller->poll(); });
}

void SlurmExecutor::forget(const std::string& jobId) {
  std::lock_guard lock(mutex_);
  followed_.erase(jobId);
}

std::vector<std::string> SlurmExecutor::followedIds() {
  std::lock_guard lock(mutex_);
  std::vector<std::string> ids;
  for (auto it = followed_.begin(); it != followed_.end();) {
    if (it->second.expired()) {
      it = followed_.erase(it);
    } else {
      ids.push_back(it->first);
      ++it;
    }
  }
  return ids;
}

void SlurmExecutor::onQueue(const std::string& output, const std::vector<std::string>& asked) {
  std::map<std::string, std::pair<std::string, std::string>> states;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    auto a = line.find('|');
    auto b = line.find('|', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    states[line.substr(0, a)] = {line.substr(a + 1, b - a - 1), line.substr(b + 1)};
  }
  for (const auto& id : asked) {
    std::shared_ptr<SlurmJob> job;
    {
      std::lock_guard lock(mutex_);
      auto it = followed_.find(id);
      if (it != followed_.end()) job = it->second.lock();
    }
    if (!job) continue;
    auto found = states.find(id);
    if (found == states.end()) {
      job->onQueueState(std::nullopt, {});
    } else {
      job->onQueueState(found->second.first, found->second.second);
    }
  }
}

// ---------------------------------------------------------------------------

bool slurmStateIsFinal(std::string_view state) {
  static constexpr std::string_view kLive[] = {"PENDING",  "RUNNING",  "CONFIGURING", "COMPLETING", "SUSPENDED",
                                               "REQUEUED", "RESIZING", "STOPPED",     "SIGNALING",  "STAGE_OUT",
                                               "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SPECIAL_EXIT"};
  return std::find(std::begin(kLive), std::end(kLive), state) == std::end(kLive);
}

bool isReservedSbatchOption(std::string_view arg) {
  static constexpr std::string_view kReserved[] = {
      "--parsable", "--job-name", "-J", "--comment", "--chdir", "-D", "--output", "-o", "--error", "-e",
      "--export", "--wrap", "--array", "-a", "--wait", "-W", "--input", "-i", "--test-only", "--hold", "-H",
      "--requeue", "--no-requeue"};
  for (std::string_view r : kReserved) {
    if (arg == r) return true;
    // --option=value, and short options with their value attached (-Dpath).
    if (r.starts_with("--") && arg.starts_with(std::string(r) + "=")) return true;
    if (!r.starts_with("--") && arg.size() > 2 && arg.starts_with(r)) return true;
  }
  return false;
}

std::string slurmTimeLimit(std::chrono::milliseconds timeout, std::chrono::milliseconds killGrace) {
  if (timeout.count() <= 0) return {};
  // hydra's own scancel comes at the timeout; the limit is only for a job
  // whose hydra is gone. Two minutes past it, so the runner has time to report.
  auto total = timeout + killGrace + 2min;
  auto minutes = (std::chrono::duration_cast<std::chrono::seconds>(total).count() + 59) / 60;
  return std::to_string(minutes);
}

namespace {

struct FileSystemKind {
  long magic;
  const char* name;
};

// File systems a cluster's nodes commonly share.
constexpr FileSystemKind kSharedFileSystems[] = {
    {0x6969, "nfs"},         {0xFF534D42, "cifs"},      {0xFE534D42, "smb2"},   {0x0BD00BD0, "lustre"},
    {0x47504653, "gpfs"},    {0x00C36400, "ceph"},      {0x19830326, "beegfs"}, {0x65735546, "fuse"},
    {0x5346414F, "afs"},     {0x7461636F, "ocfs2"},     {0x01161970, "gfs2"},   {0x01021997, "9p"},
    {0x013111A8, "ibrix"},   {0xAAD7AAEA, "panfs"},     {0x6B414653, "kafs"},
};

std::optional<std::string> sharedFileSystem(fs::path path) {
  // A directory not made yet will be made in the nearest one that exists.
  std::error_code ec;
  while (!fs::exists(path, ec) && path.has_parent_path() && path.parent_path() != path) path = path.parent_path();
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) return std::nullopt;
  for (const auto& kind : kSharedFileSystems) {
    if (static_cast<unsigned long>(info.f_type) == static_cast<unsigned long>(kind.magic)) return kind.name;
  }
  return std::nullopt;
}

}  // namespace

void checkSlurmReady(const SlurmSettings& settings, const std::vector<fs::path>& sharedPaths) {
  // The nodes a job can land on: those of the partition given, else of the
  // cluster's default partition (the one sinfo marks with '*').
  std::vector<std::string> args = {"--noheader", "--Node", "--format=%N|%P"};
  if (settings.partition) args.push_back("--partition=" + *settings.partition);
  CommandOutput nodes = runCommandSync("sinfo", args, envFor(settings.slurmConf), kSlurmCommandTimeout);
  if (!nodes.succeeded()) {
    throw SlurmError("Slurm does not answer (sinfo: " + nodes.failure() + ")" +
                     (settings.slurmConf ? "; [executor] slurm_conf is " + settings.slurmConf->string()
                                         : std::string("; is SLURM_CONF set, or [executor] slurm_conf?")));
  }
  std::vector<std::pair<std::string, std::string>> listed;  // node, partition
  bool anyDefault = false;
  std::istringstream lines(nodes.out);
  for (std::string line; std::getline(lines, line);) {
    auto bar = line.find('|');
    if (line.empty() || bar == std::string::npos) continue;
    listed.emplace_back(line.substr(0, bar), line.substr(bar + 1));
    anyDefault = anyDefault || listed.back().second.ends_with('*');
  }
  std::vector<std::string> names;
  for (const auto& [node, partition] : listed) {
    if (!settings.partition && anyDefault && !partition.ends_with('*')) continue;
    if (std::find(names.begin(), names.end(), node) == names.end()) names.push_back(node);
  }
  if (names.empty()) {
    throw SlurmError(settings.partition ? "Slurm partition '" + *settings.partition + "' has no nodes"
                                        : std::string("Slurm has no nodes"));
  }
  const std::string host = hostName();
  const std::string self = host.substr(0, host.find('.'));
  const bool onlyThisMachine =
      std::all_of(names.begin(), names.end(), [&](const std::string& n) { return n.substr(0, n.find('.')) == self; });
  if (onlyThisMachine) return;
  for (const fs::path& path : sharedPaths) {
    if (!sharedFileSystem(path)) {
      throw SlurmError(path.string() + " is on a file system of this machine, which the Slurm nodes (" + names.front() +
                       (names.size() > 1 ? ", ..." : "") +
                       ") cannot see: worktrees, the repository and hydra must be on a file system they share "
                       "(docs/scaling.md)");
    }
  }
}

std::vector<std::string> cancelRaceJobs(const std::string& raceId, const std::optional<fs::path>& slurmConf) {
  CommandOutput queue = runCommandSync("squeue", {"--noheader", "--user=" + userName(), "--format=%i|%k"},
                                       envFor(slurmConf), kSlurmCommandTimeout);
  if (!queue.succeeded()) throw SlurmError("Slurm does not answer (squeue: " + queue.failure() + ")");
  const std::string prefix = "hydra:" + raceId + ":";
  std::vector<std::string> ids;
  std::istringstream lines(queue.out);
  for (std::string line; std::getline(lines, line);) {
    auto bar = line.find('|');
    if (bar == std::string::npos) continue;
    if (line.compare(bar + 1, prefix.size(), prefix) == 0) ids.push_back(line.substr(0, bar));
  }
  if (ids.empty()) return ids;
  CommandOutput cancelled = runCommandSync("scancel", ids, envFor(slurmConf), kSlurmCommandTimeout);
  if (!cancelled.succeeded()) throw SlurmError("scancel failed: " + cancelled.failure());
  return ids;
}

}  // namespace hydra::core
