#include "core/executor/job_runner.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/executor/job_files.h"
#include "core/process/process.h"
#include "core/process/reaper.h"
#include "core/util/atomic_file.h"
#include "core/util/host_name.h"

namespace hydra::core {

namespace fs = std::filesystem;
namespace asio = boost::asio;

namespace {

std::string readAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool report(const fs::path& dir, const job::JobResult& result) {
  try {
    writeFileAtomic(dir / job::kResult, job::toJson(result));
    return true;
  } catch (const std::exception& e) {
    std::cerr << "hydra run-job: cannot write the result: " << e.what() << '\n';
    return false;
  }
}

}  // namespace

int runJob(const fs::path& dir) {
  job::JobResult result;
  result.host = hostName();
  job::JobSpec spec;
  try {
    spec = job::parseJobSpec(readAll(dir / job::kSpec));
  } catch (const std::exception& e) {
    result.process.spawnError = std::string("the job runner could not read its spec: ") + e.what();
    std::cerr << "hydra run-job: " << result.process.spawnError << '\n';
    report(dir, result);
    return 1;
  }

  ProcessSpec process;
  process.program = spec.program;
  process.args = spec.args;
  process.cwd = spec.cwd;
  process.env = spec.env;
  process.unsetEnv = spec.unsetEnv;
  process.killGrace = spec.killGrace;

  std::shared_ptr<RunReaper> reaper;
  try {
    reaper = RunReaper::create();
    reaper->prepare(process);
  } catch (const std::exception& e) {
    std::cerr << "hydra run-job: processes the command leaves behind cannot be tracked: " << e.what() << '\n';
    reaper.reset();
  }

  std::optional<AppendFile> out, err;
  try {
    out.emplace(dir / job::kStdout);
    err.emplace(dir / job::kStderr);
  } catch (const std::exception& e) {
    result.process.spawnError = std::string("the job runner cannot write its output: ") + e.what();
    report(dir, result);
    return 1;
  }

  asio::io_context io;
  std::shared_ptr<Process> child;
  bool stopRequested = false;
  asio::signal_set stop(io, SIGTERM, SIGINT, SIGHUP);
  std::function<void()> awaitStop = [&] {
    stop.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      stopRequested = true;
      if (child) child->cancel();
      awaitStop();
    });
  };
  awaitStop();

  std::optional<ProcessResult> ended;
  child = Process::start(
      io, std::move(process),
      [&](OutputStream stream, std::string line) {
        line += '\n';
        try {
          (stream == OutputStream::Stdout ? *out : *err).append(line);
        } catch (const std::exception& e) {
          std::cerr << "hydra run-job: lost a line of output: " << e.what() << '\n';
        }
      },
      [&](const ProcessResult& r) {
        ended = r;
        stop.cancel();
        // Nothing the command started outlives it, here as on hydra's machine.
        if (reaper) ended->leftRunningEnded += static_cast<int>(reaper->kill(spec.killGrace).killed.size());
        // All its output is in: the reaper's watch timer need not come round again.
        io.stop();
      });
  if (child->pid() > 0) {
    try {
      writeFileAtomic(dir / job::kStarted, result.host + " " + std::to_string(child->pid()) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "hydra run-job: " << e.what() << '\n';
    }
    if (reaper) {
      reaper->attach(child->pid());
      reaper->watch(io.get_executor(), std::chrono::milliseconds(250));
    }
  }
  if (stopRequested) child->cancel();
  io.run();

  result.process = ended.value_or(ProcessResult{});
  if (!ended) result.process.spawnError = "the job runner lost its command";
  if (stopRequested) result.process.cancelled = true;
  out.reset();
  err.reset();
  return report(dir, result) ? 0 : 1;
}

}  // namespace hydra::core
