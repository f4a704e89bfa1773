// The output path's throughput: an agent that prints a lot, through process
// supervision, line splitting, the adapter's parser, the complete log on disk
// and the event bus (with one subscriber draining it, and the recorder writing
// the log), as `hydra race` runs it.
//
//   output_bench [--megabytes N] [--repetitions R]

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/config/config.h"
#include "core/events/bus.h"
#include "core/git/git.h"
#include "core/workspace/workspace.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

void run(const std::string& command) {
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Throughput of an agent's output through hydra"};
  int megabytes = 200;
  int repetitions = 5;
  app.add_option("--megabytes", megabytes, "How much the agent prints")->check(CLI::PositiveNumber);
  app.add_option("--repetitions", repetitions, "Runs; the median is reported")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  hydra::core::git::LibGit2 libgit2;
  spdlog::set_level(spdlog::level::warn);
  fs::path dir = fs::temp_directory_path() / ("hydra-output-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  run("cd " + dir.string() + " && git init -q && echo x > x && git add x && git -c user.name=b -c user.email=b@b commit -qm x");

  // 100-byte lines, like a chatty agent's log.
  std::string print = "yes 'the agent is printing one line of output after another, at whatever speed hydra can take "
                      "it.' | head -c " + std::to_string(static_cast<long long>(megabytes) * 1024 * 1024);
  {
    std::ofstream toml(dir / "hydra.toml");
    toml << "[general]\ntimeout_seconds = 600\n\n[agents.printer]\nadapter = \"command\"\nbinary = \"/bin/sh\"\n"
         << "args = [\"-c\", \"" << print << "\"]\n";
  }

  std::vector<double> rates;
  for (int i = 0; i < repetitions; ++i) {
    boost::asio::io_context io;
    hydra::core::Workspace workspace(io, dir);
    std::shared_ptr<hydra::core::Subscription> sub;
    bool finished = false;
    std::uint64_t delivered = 0;
    sub = workspace.bus().subscribe({.maxEvents = 4096, .maxBytes = 4 << 20, .onReady = [&] {
                                       boost::asio::post(io, [&] {
                                         for (auto& e : sub->drain()) {
                                           delivered++;
                                           if (std::holds_alternative<hydra::core::RaceFinished>(e.body)) finished = true;
                                         }
                                         if (finished) io.stop();
                                       });
                                     }});
    std::string raceId;
    auto start = Clock::now();
    workspace.startRace({"print", {"printer"}, std::nullopt}, [&](hydra::core::RaceSummary race) { raceId = race.raceId; },
                        [](hydra::core::WorkspaceError e) { throw e; });
    io.run();
    workspace.flush();  // the whole log is on disk
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    auto log = dir / ".hydra" / "races" / raceId / "printer.log";
    double mb = static_cast<double>(fs::file_size(log)) / (1024.0 * 1024.0);
    rates.push_back(mb / seconds);
    std::printf("run %d: %.0f MiB logged in %.2f s = %.1f MiB/s (%llu events delivered, %llu output lines dropped for the slow reader)\n",
                i + 1, mb, seconds, mb / seconds, static_cast<unsigned long long>(delivered),
                static_cast<unsigned long long>(sub->droppedLines()));
  }
  std::sort(rates.begin(), rates.end());
  std::printf("median: %.1f MiB/s over %d runs of %d MiB\n", rates[rates.size() / 2], repetitions, megabytes);
  fs::remove_all(dir);
  return 0;
}
