#include "tests/live/scripted_model.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace hydra::test {

namespace fs = std::filesystem;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

// Reads the server's "LISTENING <port>" line; 0 if it died or stayed silent.
int readPort(int fd, std::chrono::seconds limit) {
  std::string got;
  auto deadline = Clock::now() + limit;
  while (got.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return 0;
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return 0;
    char buffer[256];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    got.append(buffer, static_cast<std::size_t>(n));
  }
  constexpr std::string_view kPrefix = "LISTENING ";
  if (got.rfind(kPrefix, 0) != 0) return 0;
  return std::stoi(got.substr(kPrefix.size()));
}

}  // namespace

fs::path ScriptedModel::scenarioPath(const std::string& name) {
  return fs::path(HYDRA_LIVE_DIR) / "scenarios" / name;
}

ScriptedModel::ScriptedModel(const std::string& scenario, const fs::path& dir,
                             const fs::path& cwdWithin, std::map<std::string, std::string> vars)
    : scenario_(scenarioPath(scenario)) {
  if (!fs::exists(scenario_)) throw std::runtime_error("no scenario " + scenario_.string());
  fs::create_directories(dir);
  std::string stem = fs::path(scenario).stem().string();
  log_ = dir / (stem + ".requests.jsonl");
  stderr_ = dir / (stem + ".server.stderr");

  std::vector<std::string> argv{HYDRA_PYTHON3,  fs::path(HYDRA_LIVE_DIR) / "model_server.py",
                                "--scenario",   scenario_,
                                "--log",        log_,
                                "--cwd-within", cwdWithin,
                                "--port",       "0"};
  for (const auto& [name, value] : vars) {
    argv.push_back("--var");
    argv.push_back(name + "=" + value);
  }
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  int err = ::open(stderr_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (err < 0) throw std::runtime_error("cannot write " + stderr_.string());
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, STDIN_FILENO);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err);
  port_ = readPort(out[0], std::chrono::seconds(30));
  ::close(out[0]);
  if (port_ <= 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    throw std::runtime_error("the scripted model server did not start (" + scenario_.string() +
                             "): " + slurp(stderr_));
  }
}

ScriptedModel::~ScriptedModel() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (::waitpid(pid_, nullptr, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::vector<json::object> ScriptedModel::requests() const {
  std::vector<json::object> out;
  std::istringstream lines(slurp(log_));
  for (std::string line; std::getline(lines, line);) {
    // A line being written right now may be incomplete: it is read next time.
    if (line.empty() || line.back() != '}') continue;
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    if (!ec && v.is_object()) out.push_back(v.as_object());
  }
  return out;
}

std::vector<json::object> ScriptedModel::scriptedRequests() const {
  std::vector<json::object> out;
  for (auto& r : requests()) {
    const json::value* turn = r.if_contains("turn");
    if (turn && turn->is_int64()) out.push_back(std::move(r));
  }
  return out;
}

bool ScriptedModel::waitForRequest(const std::function<bool(const json::object&)>& pred,
                                   std::chrono::seconds limit) const {
  auto deadline = Clock::now() + limit;
  for (;;) {
    for (const auto& r : requests()) {
      if (pred(r)) return true;
    }
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

ScriptedModel::Reported ScriptedModel::reported() const {
  json::value scenario = json::parse(slurp(scenario_));
  const json::array& turns = scenario.at("turns").as_array();
  Reported sum;
  for (const auto& r : scriptedRequests()) {
    if (r.at("action").as_string() != "answer") continue;
    std::size_t index = static_cast<std::size_t>(r.at("turn").as_int64());
    // The defaults of model_server.py, and "Done." past the last turn.
    std::int64_t in = 100, out = 20, cached = 0;
    if (index < turns.size()) {
      if (const json::value* usage = turns[index].as_object().if_contains("usage")) {
        const json::object& u = usage->as_object();
        if (u.contains("input_tokens")) in = u.at("input_tokens").as_int64();
        if (u.contains("output_tokens")) out = u.at("output_tokens").as_int64();
        if (u.contains("cached_input_tokens")) cached = u.at("cached_input_tokens").as_int64();
      }
    }
    sum.inputTokens += in;
    sum.outputTokens += out;
    sum.cachedInputTokens += cached;
    ++sum.answers;
  }
  return sum;
}

std::string ScriptedModel::stderrText() const { return slurp(stderr_); }

}  // namespace hydra::test
