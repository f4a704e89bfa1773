#pragma once

// A throwaway git repository for end-to-end tests of hydra's protocol: a tiny
// Python project (calc.py with a bug, test_calc.py) committed on `main`, in a
// directory whose name has a space (so rootUri must be percent-decoded).
// Agents are played by tests/fixtures/agents/scripted_agent.sh.

#include <boost/json/object.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace hydra::test {

class TestRepo {
 public:
  // In a fresh folder under `parent`.
  explicit TestRepo(const std::filesystem::path& parent = "/tmp");
  ~TestRepo();
  TestRepo(const TestRepo&) = delete;
  TestRepo& operator=(const TestRepo&) = delete;

  const std::filesystem::path& root() const { return root_; }
  // A directory next to the repository, outside it: for files agents wait on.
  const std::filesystem::path& scratch() const { return scratch_; }
  // file:///...my%20repo
  std::string uri() const;

  // Runs git in the repository; its output without trailing newlines. Throws when git fails.
  std::string git(const std::string& args) const;
  void write(const std::filesystem::path& relative, const std::string& content) const;
  std::string read(const std::filesystem::path& relative) const;
  // Writes hydra.toml. Unless `toml` sets `sandbox`, agents run unconfined:
  // these tests follow the scripted agents' processes by their host pids and
  // hand them files in the scratch folder, which a sandbox hides.
  // Confinement has its own tests (sandbox_test.cpp, hostile_test.cpp).
  void writeConfig(const std::string& toml) const;

  // .hydra/races/<id>/race.json
  boost::json::object raceRecord(const std::string& raceId) const;

  // [agents.NAME] played by scripted_agent.sh carrying out `steps`.
  static std::string agent(const std::string& name, const std::vector<std::string>& steps,
                           const std::string& adapter = "command");
  // [scoring]: a build (the file compiles) and pytest's tests.
  static std::string scoring();
  // calc.py with add() fixed, as an agent writes it.
  static std::string fixedCalc();

  static std::filesystem::path stepsScript();
  // An executable bash script (`set -eu`, then `body`) in the scratch folder,
  // for an agent whose behaviour a test writes out; `body` runs in the agent's checkout.
  std::filesystem::path script(const std::string& name, const std::string& body) const;
  // [agents.NAME] running `binary` with the command adapter.
  static std::string commandAgent(const std::string& name, const std::filesystem::path& binary);

 private:
  std::filesystem::path dir_;
  std::filesystem::path root_;
  std::filesystem::path scratch_;
};

std::string readFile(const std::filesystem::path& path);
// `toml` with `[general] sandbox = "off"` added, unless it sets `sandbox`:
// see TestRepo::writeConfig().
std::string unconfinedUnlessSet(const std::string& toml);
// Everything in the user's checkout that hydra must leave alone: every file
// (outside .git and hydra's own folders) byte for byte, the index, HEAD, the
// refs other than hydra's own branches, and what `git status` says.
std::map<std::string, std::string> checkoutSnapshot(const TestRepo& repo);
std::string shellQuote(const std::string& s);
// Runs a shell command; its output without trailing newlines. Throws when it fails.
std::string sh(const std::string& command);
// True once `pid` no longer runs (a zombie counts as gone).
bool processGone(int pid);

}  // namespace hydra::test
