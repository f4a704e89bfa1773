#include "tests/live/processes.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace hydra::test {

namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

// /proc/PID/stat: "pid (comm) state ppid pgrp session ..."; comm may hold spaces
// and parentheses, so the fields are read after the last ')'.
bool readStat(pid_t pid, char& state, pid_t& group, pid_t& session) {
  std::string stat = readAll("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(stat.substr(close + 1));
  pid_t parent = 0;
  return static_cast<bool>(fields >> state >> parent >> group >> session);
}

}  // namespace

std::vector<LiveProcess> processesWithEnvironment(const std::string& entry) {
  std::vector<LiveProcess> out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::string base = "/proc/" + std::string(e->d_name);
    std::string environment = readAll(base + "/environ");
    bool marked = false;
    for (std::size_t at = 0; at < environment.size();) {
      std::size_t nul = environment.find('\0', at);
      if (nul == std::string::npos) nul = environment.size();
      if (environment.compare(at, nul - at, entry) == 0) {
        marked = true;
        break;
      }
      at = nul + 1;
    }
    if (!marked) continue;
    LiveProcess p;
    p.pid = static_cast<pid_t>(pid);
    char state = '?';
    if (!readStat(p.pid, state, p.processGroup, p.session) || state == 'Z' || state == 'X')
      continue;
    std::string cmdline = readAll(base + "/cmdline");
    while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    p.commandLine = cmdline;
    out.push_back(std::move(p));
  }
  ::closedir(proc);
  return out;
}

std::string describe(const std::vector<LiveProcess>& processes) {
  std::string out;
  for (const auto& p : processes) {
    out += "pid " + std::to_string(p.pid) + " (pgid " + std::to_string(p.processGroup) + ", sid " +
           std::to_string(p.session) + "): " + p.commandLine + "\n";
  }
  return out;
}

}  // namespace hydra::test
