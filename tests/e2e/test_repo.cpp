#include "tests/e2e/test_repo.h"

#include <signal.h>
#include <stdlib.h>

#include <boost/json/parse.hpp>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hydra::test {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr const char* kCalc =
    "def add(a, b):\n"
    "    return a - b\n"
    "\n"
    "\n"
    "def sub(a, b):\n"
    "    return a - b\n";

constexpr const char* kTests =
    "from calc import add, sub\n"
    "\n"
    "\n"
    "def test_add():\n"
    "    assert add(2, 3) == 5\n"
    "\n"
    "\n"
    "def test_sub():\n"
    "    assert sub(5, 3) == 2\n";

}  // namespace

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string sh(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (::pclose(pipe) != 0) throw std::runtime_error("failed: " + command + "\n" + out);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool processGone(int pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close == std::string::npos || (close + 2 < stat.size() && stat[close + 2] == 'Z');
}

TestRepo::TestRepo(const fs::path& parent) {
  std::string pattern = (parent / "hydra-methods-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed under " + parent.string());
  dir_ = fs::canonical(pattern);
  root_ = dir_ / "my repo";
  scratch_ = dir_ / "scratch";
  fs::create_directories(root_);
  fs::create_directories(scratch_);
  git("init -q -b main");
  git("config user.name 'Test User'");
  git("config user.email test@example.com");
  write("README.md", "# calc\n");
  write("calc.py", kCalc);
  write("test_calc.py", kTests);
  write(".gitignore", "__pycache__/\n");
  git("add -A");
  git("commit -q -m initial");
}

TestRepo::~TestRepo() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string TestRepo::uri() const {
  std::string out = "file://";
  for (char c : root_.string()) {
    if (c == ' ') {
      out += "%20";
    } else {
      out += c;
    }
  }
  return out;
}

std::string TestRepo::git(const std::string& args) const {
  return sh("GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -C " +
            shellQuote(root_.string()) + " " + args);
}

void TestRepo::write(const fs::path& relative, const std::string& content) const {
  fs::path path = root_ / relative;
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

std::string TestRepo::read(const fs::path& relative) const { return readFile(root_ / relative); }

json::object TestRepo::raceRecord(const std::string& raceId) const {
  return json::parse(readFile(root_ / ".hydra" / "races" / raceId / "race.json")).as_object();
}

fs::path TestRepo::stepsScript() {
  return fs::path(HYDRA_SOURCE_DIR) / "tests" / "fixtures" / "agents" / "scripted_agent.sh";
}

std::string unconfinedUnlessSet(const std::string& toml) {
  if (toml.find("sandbox =") != std::string::npos) return toml;
  const std::string general = "[general]\n";
  const std::string off = "sandbox = \"off\"\n";
  if (toml.rfind(general, 0) == 0) return general + off + toml.substr(general.size());
  if (auto at = toml.find("\n" + general); at != std::string::npos) {
    return toml.substr(0, at + 1 + general.size()) + off + toml.substr(at + 1 + general.size());
  }
  return general + off + "\n" + toml;
}

void TestRepo::writeConfig(const std::string& toml) const { write("hydra.toml", unconfinedUnlessSet(toml)); }

std::string TestRepo::agent(const std::string& name, const std::vector<std::string>& steps,
                            const std::string& adapter) {
  std::string args;
  for (const auto& s : steps) {
    std::string escaped;
    for (char c : s) {
      if (c == '\n') {
        escaped += "\\n";
        continue;
      }
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    args += (args.empty() ? "\"" : ", \"") + escaped + "\"";
  }
  return "[agents." + name + "]\nadapter = \"" + adapter + "\"\nbinary = \"" +
         stepsScript().string() + "\"\nargs = [" + args + "]\n\n";
}

fs::path TestRepo::script(const std::string& name, const std::string& body) const {
  fs::path path = scratch_ / name;
  std::ofstream(path) << "#!/usr/bin/env bash\nset -eu\n" << body;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  return path;
}

std::string TestRepo::commandAgent(const std::string& name, const fs::path& binary) {
  return "[agents." + name + "]\nadapter = \"command\"\nbinary = \"" + binary.string() + "\"\n\n";
}

std::string TestRepo::scoring() {
  return "[scoring]\n"
         "build_command = \"/usr/bin/python3 -m py_compile calc.py\"\n"
         "test_command = \"/usr/bin/python3 -m pytest -q -p no:cacheprovider\"\n\n";
}

std::string TestRepo::fixedCalc() {
  return "def add(a, b):\n"
         "    return a + b\n"
         "\n"
         "\n"
         "def sub(a, b):\n"
         "    return a - b";
}

std::map<std::string, std::string> checkoutSnapshot(const TestRepo& repo) {
  std::map<std::string, std::string> files;
  const fs::path root = repo.root();
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    fs::path rel = fs::relative(it->path(), root);
    std::string first = rel.begin()->string();
    if (first == ".git" || first == ".hydra" || first == ".hydra-workspaces") {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files["file " + rel.string()] = readFile(it->path());
  }
  files["git index"] = readFile(root / ".git" / "index");
  files["git HEAD"] = repo.git("rev-parse HEAD") + " " + repo.git("symbolic-ref HEAD");
  files["git status"] = repo.git("status --porcelain=v1 --untracked-files=all");
  std::istringstream refs(repo.git("for-each-ref --format='%(refname) %(objectname)'"));
  for (std::string line; std::getline(refs, line);) {
    if (line.rfind("refs/heads/hydra/", 0) != 0) files["git refs"] += line + "\n";
  }
  return files;
}


}  // namespace hydra::test
