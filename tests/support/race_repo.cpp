#include "tests/support/race_repo.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/process/process_table.h"
#include "core/sandbox/bubblewrap.h"
#include "core/sandbox/paths.h"
#include "core/sandbox/probe.h"

namespace hydra::core::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

RaceRepo::RaceRepo() {
  repo_.write("hydra.toml", "[agents.fixer]\nadapter = \"command\"\nbinary = \"fix.sh\"\n");
  repo_.commit("hydra.toml");
  repo_.git("tag v1");
  repo_.git("pack-refs --all");
  repo_.write(".hydra/races/r1/race.json", "{\"id\":\"r1\"}\n");
  repo_.write(".hydra/cache.json", "{\"baseline\":\"ok\"}\n");
  WorktreeManager worktrees(repo_.root(), ".hydra-workspaces");
  agent_ = worktrees.create("hostile", "HEAD", "20261121-120411");
  sibling_ = worktrees.create("sibling", "HEAD", "20261121-120411");
  // Something of the user's own in progress, which must survive untouched.
  repo_.write("src/a.txt", "alpha, being edited\n");
  repo_.write("notes.txt", "untracked notes\n");
}

fs::path RaceRepo::gitMetadata(const Worktree& worktree) const {
  return root() / ".git" / "worktrees" / worktree.name;
}

std::map<std::string, std::string> RaceRepo::userImage() const {
  return treeImage(root(), {agent_.path, gitMetadata(agent_)});
}

std::map<std::string, std::string> treeImage(const fs::path& root,
                                             const std::vector<fs::path>& except) {
  std::map<std::string, std::string> image;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& path = it->path();
    bool skipped = false;
    for (const fs::path& dir : except) skipped = skipped || sandbox::isWithin(path, dir);
    if (skipped) {
      if (it->is_directory() && !it->is_symlink()) it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) throw std::runtime_error("cannot stat " + path.string());
    std::string entry = std::to_string(st.st_mode & 07777) + " ";
    if (S_ISLNK(st.st_mode)) {
      entry += "symlink " + fs::read_symlink(path).string();
    } else if (S_ISDIR(st.st_mode)) {
      entry += "directory";
    } else {
      entry += "file " + readFile(path);
    }
    image[fs::relative(path, root).string()] = entry;
  }
  return image;
}

std::string imageDifferences(const std::map<std::string, std::string>& before,
                             const std::map<std::string, std::string>& after) {
  std::string text;
  auto brief = [](const std::string& s) { return s.size() > 80 ? s.substr(0, 80) + "..." : s; };
  for (const auto& [path, entry] : before) {
    const auto now = after.find(path);
    if (now == after.end()) {
      text += "  gone:    " + path + "\n";
    } else if (now->second != entry) {
      text += "  changed: " + path + " (" + brief(entry) + " -> " + brief(now->second) + ")\n";
    }
  }
  for (const auto& [path, entry] : after) {
    if (before.count(path) == 0) text += "  new:     " + path + " (" + brief(entry) + ")\n";
  }
  return text;
}

fs::path hostileFixture(const std::string& name) {
  return fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "hostile" / name;
}

std::string FixtureRun::transcript() const {
  std::string text;
  for (const auto& line : out) text += "  out: " + line + "\n";
  for (const auto& line : err) text += "  err: " + line + "\n";
  if (result && !result->spawnError.empty()) text += "  spawn error: " + result->spawnError + "\n";
  return text;
}

FixtureRun runFixture(const std::string& script, const RaceRepo& repo, FixtureOptions options) {
  sandbox::SandboxPolicy policy = sandbox::policyForWorktree(repo.agent().path);
  ProcessSpec spec;
  spec.program = hostileFixture(script).string();
  spec.env["HYDRA_WORKTREE"] = repo.agent().path.string();
  spec.env["HYDRA_AGENT_ID"] = repo.agent().agentId;
  spec.env["HYDRA_RACE_ID"] = "20261121-120411";
  spec.timeout = options.timeout;
  spec.killGrace = 500ms;
  if (options.confinement == Confinement::Bubblewrap) {
    // The fixtures themselves must stay visible if this tree lives under /tmp.
    policy.readOnly.push_back(HYDRA_SOURCE_DIR);
    policy.writable.insert(policy.writable.end(), options.writable.begin(), options.writable.end());
    const auto& probe = sandbox::cachedSandboxProbe();
    if (!probe.works()) throw std::runtime_error("the sandbox does not work: " + probe.describe());
    spec = sandbox::confine(std::move(spec), policy, probe.bwrap);
  } else {
    spec = sandbox::unconfined(std::move(spec), policy);
    if (options.reaper) options.reaper->prepare(spec);
  }
  if (options.adjust) options.adjust(spec);

  boost::asio::io_context io;
  FixtureRun run;
  std::shared_ptr<Process> process;
  process = Process::start(
      io, std::move(spec),
      [&](OutputStream stream, std::string line) {
        if (options.cancelOnReady && line == "ready") process->cancel();
        (stream == OutputStream::Stdout ? run.out : run.err).push_back(std::move(line));
      },
      [&](const ProcessResult& result) { run.result = result; });
  run.pid = process->pid();
  if (options.reaper && options.confinement == Confinement::None) {
    options.reaper->attach(process->pid());
    options.reaper->watch(io.get_executor(), 20ms);
  }
  // A generous bound: a hang fails the test instead of stalling the suite.
  const auto deadline = std::chrono::steady_clock::now() + 180s;
  while (!run.result && std::chrono::steady_clock::now() < deadline) io.run_one_for(1s);
  if (!run.result) throw std::runtime_error("the fixture " + script + " never ended");
  return run;
}

std::vector<pid_t> livingDescendants() {
  reapAdoptedZombies();
  const ProcessTree tree(readProcessTable());
  std::vector<pid_t> living;
  for (pid_t pid : tree.descendantsOf(::getpid())) {
    if (!tree.find(pid)->gone()) living.push_back(pid);
  }
  return living;
}

std::vector<pid_t> waitForNoDescendants() {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  for (;;) {
    auto living = livingDescendants();
    if (living.empty() || std::chrono::steady_clock::now() >= deadline) return living;
    std::this_thread::sleep_for(20ms);
  }
}

std::optional<pid_t> readPidFile(const fs::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  if (in >> pid && pid > 0) return pid;
  return std::nullopt;
}

bool pidRunning(pid_t pid) {
  const auto info = readProcessInfo(pid);
  return info && !info->gone();
}

}  // namespace hydra::core::testing
