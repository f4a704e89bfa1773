// A full disk and a read-only .hydra, with the real binary, as root: a small
// tmpfs mounted where hydra writes (docs/reliability.md, "Full disks and a
// read-only .hydra"). hydra says which file it could not write and why, never
// leaves part of a record or of a line behind, keeps the previous records
// whole, and once space is freed the next command recovers and leaks nothing.
//
// The repositories live under the build tree, not /tmp, so that the mounts
// never sit under a directory that other tests or a sandbox replace.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "tests/e2e/cli_run.h"
#include "tests/e2e/rpc_client.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

// A file system mounted for one test, unmounted when the test ends however it
// ends (lazily when something still holds it), so that none is left behind.
class Mount {
 public:
  // `mount ARGS TARGET`; throws when mount fails.
  Mount(const std::string& args, fs::path target) : target_(std::move(target)) {
    const CommandRun r = runShell("mount " + args + " " + shellQuote(target_.string()));
    if (r.code != 0) throw std::runtime_error("mount " + args + " " + target_.string() + " failed: " + r.out);
  }
  ~Mount() {
    const std::string quoted = shellQuote(target_.string());
    if (runShell("umount " + quoted).code != 0) runShell("umount -l " + quoted);
  }
  Mount(const Mount&) = delete;
  Mount& operator=(const Mount&) = delete;

  static std::unique_ptr<Mount> tmpfs(const fs::path& target, const std::string& size) {
    fs::create_directories(target);
    return std::make_unique<Mount>("-t tmpfs -o size=" + size + " tmpfs", target);
  }
  // `dir` seen read-only at itself (root ignores permission bits, not a read-only mount).
  static std::unique_ptr<Mount> readOnly(const fs::path& dir) {
    auto bind = std::make_unique<Mount>("--bind " + shellQuote(dir.string()), dir);
    const CommandRun r = runShell("mount -o remount,ro,bind " + shellQuote(dir.string()));
    if (r.code != 0) throw std::runtime_error("remount read-only failed: " + r.out);
    return bind;
  }

 private:
  fs::path target_;
};

// A `--json` command with its stdout and stderr apart.
struct SplitRun {
  int code = -1;
  std::string out;
  std::string err;
};

SplitRun hydraSplit(const TestRepo& repo, const std::string& args) {
  const fs::path out = repo.scratch() / "out.txt";
  const fs::path err = repo.scratch() / "err.txt";
  // In braces: runShell's own 2>&1 then applies to the group, not to hydra.
  const CommandRun r = runShell("{ cd " + shellQuote(repo.root().string()) + " && " + shellQuote(HYDRA_BINARY) + " " + args +
                                " >" + shellQuote(out.string()) + " 2>" + shellQuote(err.string()) + "; }");
  return {r.code, readFile(out), readFile(err)};
}

// Every record hydra left under .hydra parses: each .json file whole, each
// line of each .jsonl file; no temporary file of a write is left over.
void expectEveryRecordParses(const fs::path& hydraDir) {
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(hydraDir)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    // writeFileAtomic's temporary files are named .<target>.tmp-*.
    EXPECT_FALSE(name.starts_with(".") && name.find(".tmp-") != std::string::npos) << "left over: " << e.path();
    const std::string text = readFile(e.path());
    if (e.path().extension() == ".json") {
      ++files;
      EXPECT_NO_THROW(json::parse(text)) << e.path() << ":\n" << text.substr(0, 500);
    } else if (e.path().extension() == ".jsonl") {
      ++files;
      EXPECT_TRUE(text.empty() || text.back() == '\n') << e.path() << " ends in part of a line";
      std::istringstream lines(text);
      int n = 0;
      for (std::string line; std::getline(lines, line);) {
        ++n;
        EXPECT_NO_THROW(json::parse(line)) << e.path() << " line " << n << ": " << line.substr(0, 300);
      }
    }
  }
  EXPECT_GT(files, 0);
}

// Nothing of any race is left in git: no worktree but the user's, no branch of hydra's.
void expectNothingLeaked(const TestRepo& repo) {
  EXPECT_THAT(repo.git("worktree list --porcelain"), Not(HasSubstr(".hydra-workspaces")));
  EXPECT_EQ(repo.git("branch --list 'hydra/*'"), "");
  std::error_code ec;
  EXPECT_TRUE(fs::is_empty(repo.root() / ".git" / "worktrees", ec) || ec) << "worktree metadata left";
  EXPECT_EQ(quarantines(repo.root()), std::vector<std::string>{}) << "a race's objects outlived its cleanup";
}

std::string onlyNewRace(const TestRepo& repo, const std::string& other) {
  std::string id;
  for (const auto& e : fs::directory_iterator(repo.root() / ".hydra" / "races")) {
    if (e.path().filename() != other) id = e.path().filename().string();
  }
  return id;
}

class FullDiskTest : public ::testing::Test {
 protected:
  FullDiskTest() : repo_(HYDRA_TEST_WORK_DIR) {}

  void SetUp() override {
    fixer_ = TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()});
  }

  // The race that finishes before the disk fills: its record must survive.
  std::string firstRace() {
    const CommandRun first = hydraIn(repo_.root(), "race 'Fix add() in calc.py' --agents fixer --json");
    EXPECT_EQ(first.code, 0) << first.out;
    return std::string(jsonOf(first).at("race").at("id").as_string());
  }

  // hydra.toml with the fixer and a flooder, which fixes calc.py and then
  // prints 3 MB: more than the 512 KiB tmpfs mounted at `hydraDir` holds.
  std::unique_ptr<Mount> floodOnASmallDisk(const fs::path& hydraDir) {
    const fs::path flooder = repo_.script(
        "flooder.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) +
                          " > calc.py\nyes 'flooding the log with one line after another, until the disk is full' | "
                          "head -c 3000000\n");
    repo_.writeConfig(TestRepo::scoring() + fixer_ + TestRepo::commandAgent("flooder", flooder));
    return Mount::tmpfs(hydraDir, "512k");
  }

  std::string recordFiles(const std::string& id) const {
    const fs::path dir = repo_.root() / ".hydra" / "races" / id;
    return readFile(dir / "race.json") + readFile(dir / "scores.json");
  }

  TestRepo repo_;
  std::string fixer_;
};

// An agent floods its log until the tmpfs that holds .hydra is full: its log,
// then the race's record, events and scores fail to be written.
TEST_F(FullDiskTest, ALogThatFillsHydraSaysWhichFileAndLeavesEveryRecordWhole) {
  const fs::path hydraDir = repo_.root() / ".hydra";
  auto disk = floodOnASmallDisk(hydraDir);

  const std::string before = firstRace();
  const std::string beforeFiles = recordFiles(before);

  const SplitRun full = hydraSplit(repo_, "race 'Fix add() in calc.py' --agents fixer,flooder --json");
  const std::string id = onlyNewRace(repo_, before);
  ASSERT_FALSE(id.empty());
  const std::string raceDir = (hydraDir / "races" / id).string();
  // A clear error naming the file, and a failure (not a crash, not success).
  EXPECT_EQ(full.code, 1) << full.err;
  EXPECT_THAT(full.err, HasSubstr("hydra: race " + id + " could not be recorded in full: "));
  EXPECT_THAT(full.err, HasSubstr("cannot append to " + raceDir + "/flooder.log: No space left on device"));
  EXPECT_THAT(full.err, HasSubstr("cannot write " + raceDir + "/race.json: No space left on device"));
  // Each failure once, not once per line of the flood.
  std::size_t errorLines = 0;
  for (std::size_t at = 0; (at = full.err.find("[error]", at)) != std::string::npos; ++at) ++errorLines;
  EXPECT_LT(errorLines, 20u) << full.err.substr(0, 3000);
  std::cout << "[ measured ] .hydra full: " << errorLines << " error line(s) logged\n";

  // The finished result is not lost: it was printed whole.
  const json::object printed = json::parse(full.out).as_object();
  EXPECT_EQ(printed.at("race").at("status"), "completed") << full.out.substr(0, 2000);
  ASSERT_TRUE(printed.at("scores").is_object());
  EXPECT_EQ(printed.at("scores").at("rankings").as_array().size(), 2u);

  // Nothing half written, and the race before is as it was.
  expectEveryRecordParses(hydraDir);
  EXPECT_EQ(recordFiles(before), beforeFiles);

  // Space freed, the next commands work: a read-only one, then a race that
  // recovers the one the full disk cut short, then a cleanup that leaves nothing.
  fs::remove(raceDir + "/flooder.log");
  const CommandRun status = hydraIn(repo_.root(), "status");
  EXPECT_EQ(status.code, 0) << status.out;
  const CommandRun next = hydraIn(repo_.root(), "race 'Fix add() in calc.py' --agents fixer --json");
  EXPECT_EQ(next.code, 0) << next.out;
  expectEveryRecordParses(hydraDir);
  EXPECT_NE(repo_.raceRecord(id).at("status"), "running") << "recovered: " << json::serialize(repo_.raceRecord(id));
  EXPECT_EQ(recordFiles(before), beforeFiles);
  const CommandRun cleanup = hydraIn(repo_.root(), "cleanup");
  EXPECT_EQ(cleanup.code, 0) << cleanup.out;
  expectNothingLeaked(repo_);
}

// The same through `hydra serve`: the editor hears the results whole in
// hydra/raceFinished, with recordIncomplete naming the file, and a warning.
TEST_F(FullDiskTest, AnEditorIsToldWhenARaceCouldNotBeRecordedInFull) {
  const fs::path hydraDir = repo_.root() / ".hydra";
  auto disk = floodOnASmallDisk(hydraDir);

  RpcClient client(repo_.root());
  client.initialize(repo_.uri());
  const json::value started = client.call(
      "hydra/race", json::object{{"task", "Fix add() in calc.py"}, {"agents", json::array{"fixer", "flooder"}}});
  const std::string id(started.at("raceId").as_string());
  const std::size_t at = client.waitFor("hydra/raceFinished", id, 0, std::chrono::seconds(240));
  const json::object& finished = client.notifications().at(at).at("params").as_object();
  const std::string raceDir = (hydraDir / "races" / id).string();
  // The results are whole: both agents ranked.
  EXPECT_EQ(finished.at("status"), "completed") << json::serialize(finished);
  EXPECT_EQ(finished.at("rankings").as_array().size(), 2u) << json::serialize(finished);
  ASSERT_TRUE(finished.contains("recordIncomplete")) << json::serialize(finished);
  EXPECT_THAT(std::string(finished.at("recordIncomplete").as_string()),
              HasSubstr("cannot append to " + raceDir + "/flooder.log: No space left on device"));
  bool warned = false;
  for (const json::object& m : client.notifications("window/showMessage")) {
    const std::string message(m.at("params").at("message").as_string());
    if (message.find("The record of race " + id + " could not be written in full") == std::string::npos) continue;
    warned = true;
    EXPECT_EQ(m.at("params").at("type"), json::value(2)) << message;
    EXPECT_THAT(message, HasSubstr("No space left on device"));
  }
  EXPECT_TRUE(warned) << "no window/showMessage about the record";
  client.process().closeStdin();
  EXPECT_TRUE(client.process().waitExit(std::chrono::seconds(30)).has_value());
  expectEveryRecordParses(hydraDir);
}

// A collaboration whose builder floods its log until .hydra is full: like a
// race, `hydra collab` prints its result whole and fails, naming the file.
TEST_F(FullDiskTest, ACollaborationThatFillsHydraFailsNamingTheFile) {
  const fs::path builder = repo_.script(
      "builder.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) +
                        " > calc.py\nyes 'flooding the log with one line after another, until the disk is full' | head -c 3000000\n");
  const fs::path reviewer = repo_.script("reviewer.sh", "echo LGTM\n");
  repo_.writeConfig(TestRepo::scoring() + TestRepo::commandAgent("bob", builder) + TestRepo::commandAgent("rita", reviewer));
  const fs::path hydraDir = repo_.root() / ".hydra";
  auto disk = Mount::tmpfs(hydraDir, "512k");

  const SplitRun full = hydraSplit(repo_, "collab 'Fix add() in calc.py' --builder bob --reviewer rita --max-iterations 1 --json");
  const std::string id = onlyNewRace(repo_, "");
  ASSERT_FALSE(id.empty()) << full.err;
  const std::string raceDir = (hydraDir / "races" / id).string();
  EXPECT_EQ(full.code, 1) << full.err;
  EXPECT_THAT(full.err, HasSubstr("hydra: collaboration " + id + " could not be recorded in full: "));
  EXPECT_THAT(full.err, HasSubstr("cannot append to " + raceDir + "/builder.log: No space left on device"));
  // The result is not lost: it was printed whole, the iteration scored.
  const json::object printed = json::parse(full.out).as_object();
  EXPECT_EQ(printed.at("race").at("kind"), "collab");
  ASSERT_EQ(printed.at("race").at("iterations").as_array().size(), 1u) << full.out.substr(0, 2000);
  EXPECT_TRUE(printed.at("race").at("iterations").at(0).at("score").at("total").is_number());
  expectEveryRecordParses(hydraDir);

  // Space freed, the collaboration is cleaned up without a trace.
  fs::remove(raceDir + "/builder.log");
  const CommandRun cleanup = hydraIn(repo_.root(), "cleanup");
  EXPECT_EQ(cleanup.code, 0) << cleanup.out;
  expectNothingLeaked(repo_);
}

// An eval set beside the repository, one case that a fixed calc.py solves.
fs::path evalSet(const TestRepo& repo, const std::string& agent) {
  const fs::path dir = repo.scratch() / "evals";
  fs::create_directories(dir);
  std::ofstream(dir / "set.toml") << "[eval]\nname = \"disk\"\nagents = [\"" << agent
                                  << "\"]\nsamples = 1\npass_k = [1]\n\n[[cases]]\nid = \"add\"\n"
                                     "task = \"Fix add() in calc.py\"\n"
                                     "verify_command = \"/usr/bin/python3 -m pytest -q -p no:cacheprovider test_calc.py\"\n";
  return dir / "set.toml";
}

// `hydra eval run` whose report cannot be written (its folder is read-only):
// every sample still runs, the report is printed whole, and the command
// fails naming the file.
TEST_F(FullDiskTest, AnEvaluationWhoseReportCannotBeWrittenFailsNamingTheFile) {
  repo_.writeConfig(TestRepo::scoring() + fixer_);
  const fs::path set = evalSet(repo_, "fixer");
  const fs::path reports = repo_.scratch() / "reports";
  fs::create_directories(reports);
  auto readOnly = Mount::readOnly(reports);
  const fs::path report = reports / "run.json";

  const SplitRun run = hydraSplit(repo_, "eval run " + shellQuote(set.string()) + " --out " + shellQuote(report.string()) +
                                             " --format json");
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("hydra: evaluation run could not be recorded in full: writing the report failed: "));
  EXPECT_THAT(run.err, HasSubstr(report.string()));
  EXPECT_THAT(run.err, HasSubstr("Read-only file system"));
  EXPECT_FALSE(fs::exists(report));
  // Each of the writes after every sample failed alike: logged once.
  std::size_t errorLines = 0;
  for (std::size_t at = 0; (at = run.err.find("[error]", at)) != std::string::npos; ++at) ++errorLines;
  EXPECT_EQ(errorLines, 1u) << run.err;
  const json::object printed = json::parse(run.out).as_object();
  ASSERT_EQ(printed.at("samples").as_array().size(), 1u) << run.out.substr(0, 2000);
  EXPECT_EQ(printed.at("samples").at(0).at("solved"), true) << run.out.substr(0, 2000);
  expectEveryRecordParses(repo_.root() / ".hydra");
}

// `hydra eval run` whose sample floods its log until .hydra is full: the
// report (elsewhere) is whole, the sample's race record is not, and the
// command fails naming that race and file.
TEST_F(FullDiskTest, AnEvaluationWhoseSampleFillsHydraFailsNamingTheSampleRace) {
  const fs::path flooder = repo_.script(
      "flooder.sh", "printf '%s\\n' " + shellQuote(TestRepo::fixedCalc()) +
                        " > calc.py\nyes 'flooding the log with one line after another, until the disk is full' | head -c 3000000\n");
  repo_.writeConfig(TestRepo::scoring() + TestRepo::commandAgent("flooder", flooder));
  const fs::path set = evalSet(repo_, "flooder");
  const fs::path report = repo_.scratch() / "run.json";
  const fs::path hydraDir = repo_.root() / ".hydra";
  auto disk = Mount::tmpfs(hydraDir, "512k");

  const SplitRun run = hydraSplit(repo_, "eval run " + shellQuote(set.string()) + " --out " + shellQuote(report.string()) +
                                             " --format json");
  const std::string id = onlyNewRace(repo_, "");
  ASSERT_FALSE(id.empty()) << run.err;
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("hydra: evaluation run could not be recorded in full: sample race " + id + ": recording "));
  EXPECT_THAT(run.err, HasSubstr("cannot append to " + (hydraDir / "races" / id).string() + "/flooder.log: No space left on device"));
  const json::object written = json::parse(readFile(report)).as_object();
  EXPECT_EQ(written.at("samples").as_array().size(), 1u);
  EXPECT_EQ(json::parse(run.out).as_object(), written) << "what was printed is what was written";
  expectEveryRecordParses(hydraDir);
}

// The workspace, where worktrees are checked out, is too small for a checkout.
TEST_F(FullDiskTest, ACheckoutThatFillsTheWorkspaceFailsTheAgentNamingThePath) {
  // A base commit bigger than the workspace's file system.
  sh("head -c 1500000 /dev/urandom > " + shellQuote((repo_.root() / "data.bin").string()));
  repo_.git("add data.bin");
  repo_.git("commit -qm data");
  repo_.writeConfig(TestRepo::scoring() + fixer_);
  auto disk = Mount::tmpfs(repo_.root() / ".hydra-workspaces", "1m");

  const SplitRun full = hydraSplit(repo_, "race 'Fix add() in calc.py' --agents fixer --json");
  EXPECT_NE(full.code, 0) << full.out << full.err;
  EXPECT_LT(full.code, 128) << "hydra crashed\n" << full.err;
  const std::string id = onlyNewRace(repo_, "");
  ASSERT_FALSE(id.empty()) << full.err;
  const json::object record = repo_.raceRecord(id);
  const json::object& agent = record.at("agents").at(0).as_object();
  EXPECT_EQ(agent.at("status"), "failed") << json::serialize(record);
  ASSERT_TRUE(agent.contains("error")) << json::serialize(record);
  const std::string error(agent.at("error").as_string());
  EXPECT_THAT(error, HasSubstr("No space left on device"));
  EXPECT_THAT(error, HasSubstr((repo_.root() / ".hydra-workspaces").string()));
  EXPECT_NE(record.at("status"), "running");
  expectEveryRecordParses(repo_.root() / ".hydra");

  // Nothing of the failed checkout is left on the full disk or in git, and
  // once the race is cleaned up no branch either.
  const CommandRun cleanup = hydraIn(repo_.root(), "cleanup");
  EXPECT_EQ(cleanup.code, 0) << cleanup.out;
  expectNothingLeaked(repo_);
  EXPECT_TRUE(fs::is_empty(repo_.root() / ".hydra-workspaces"));
}

// Files under an object store (the user's, or a race's quarantine) that are
// not whole objects: libgit2's temporary files (tmp_object_git2_*, *.lock)
// and loose objects that git cannot read back.
std::string brokenObjects(const TestRepo& repo, const fs::path& objects) {
  std::string out;
  for (const auto& e : fs::recursive_directory_iterator(objects)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = e.path().lexically_relative(objects);
    const std::string dir = rel.begin()->string();
    if (dir == "pack" || dir == "info") continue;
    const std::string id = dir + rel.filename().string();
    if (id.size() != 40 || id.find_first_not_of("0123456789abcdef") != std::string::npos ||
        runShell("git -C " + shellQuote(repo.root().string()) + " cat-file -e " + id).code != 0) {
      out += rel.string() + " (" + std::to_string(e.file_size()) + " bytes)\n";
    }
  }
  return out;
}

// Where a race's objects go (.git/hydra-objects, each race's quarantine) is
// a 512 KiB tmpfs: one agent's result is bigger than what is left, so
// committing it fails; the agent beside it writes a small fix later, which
// still fits once the failed object is gone. `bigBytes` of random data
// (incompressible, so its blob is as big as the file); `whereItFails` is what
// the big agent's error names beside the race's quarantine.
void fillTheObjectStore(TestRepo& repo, int bigBytes, const std::string& whereItFails) {
  const fs::path big = repo.script("big.sh", "head -c " + std::to_string(bigBytes) + " /dev/urandom > big.bin\n");
  repo.writeConfig(TestRepo::scoring() + TestRepo::commandAgent("big", big) +
                   TestRepo::agent("fixer", {"sleep", "1.5", "write", "calc.py", TestRepo::fixedCalc()}));
  repo.git("add hydra.toml");
  repo.git("commit -qm config");
  repo.git("config gc.auto 0");
  const fs::path quarantines = repo.root() / ".git" / "hydra-objects";
  auto disk = Mount::tmpfs(quarantines, "512k");
  const std::vector<std::string> before = objectFiles(repo.root());

  const SplitRun full = hydraSplit(repo, "race 'Fix add() in calc.py' --agents big,fixer --json");
  EXPECT_LT(full.code, 128) << "hydra crashed\n" << full.err;
  const std::string id = onlyNewRace(repo, "");
  ASSERT_FALSE(id.empty()) << full.err;
  const fs::path objects = quarantines / id;
  expectEveryRecordParses(repo.root() / ".hydra");
  const json::object record = repo.raceRecord(id);
  EXPECT_EQ(record.at("status"), "completed") << json::serialize(record);
  std::map<std::string, json::object> agents;
  for (const auto& a : record.at("agents").as_array()) agents[std::string(a.at("agentId").as_string())] = a.as_object();
  ASSERT_TRUE(agents.contains("big") && agents.contains("fixer")) << json::serialize(record);

  // The big result: failed, saying where and why, nothing committed.
  const json::object& failed = agents.at("big");
  EXPECT_EQ(failed.at("status"), "failed") << json::serialize(failed);
  ASSERT_TRUE(failed.contains("error")) << json::serialize(failed);
  const std::string error(failed.at("error").as_string());
  EXPECT_THAT(error, HasSubstr("committing its work failed: "));
  EXPECT_THAT(error, HasSubstr(whereItFails + " " + objects.string() + ": "));
  EXPECT_THAT(error, ::testing::EndsWith("No space left on device"));
  EXPECT_FALSE(failed.contains("commit")) << json::serialize(failed);
  std::cout << "[ measured ] " << bigBytes << " bytes into a full object store: " << error << "\n";

  // The small fix beside it was committed, checked and scored.
  const json::object& fixer = agents.at("fixer");
  EXPECT_EQ(fixer.at("status"), "completed") << json::serialize(fixer);
  EXPECT_TRUE(fixer.contains("commit")) << json::serialize(fixer);
  const json::object printed = json::parse(full.out).as_object();
  ASSERT_TRUE(printed.at("scores").is_object()) << full.out.substr(0, 2000);
  bool scored = false;
  for (const auto& r : printed.at("scores").at("rankings").as_array()) {
    if (r.at("agentId") != "fixer") continue;
    scored = true;
    EXPECT_GT(r.at("total").to_number<double>(), 0) << json::serialize(r);
  }
  EXPECT_TRUE(scored) << full.out.substr(0, 3000);

  // No half-written object is left in either store: every file there is a whole object.
  EXPECT_EQ(brokenObjects(repo, objects), "");
  EXPECT_EQ(brokenObjects(repo, repo.root() / ".git" / "objects"), "");
  EXPECT_EQ(runShell("git -C " + shellQuote(repo.root().string()) + " fsck --no-dangling").code, 0);
  EXPECT_EQ(objectFiles(repo.root()), before) << "the race wrote into the user's own store";

  const CommandRun cleanup = hydraIn(repo.root(), "cleanup");
  EXPECT_EQ(cleanup.code, 0) << cleanup.out;
  expectNothingLeaked(repo);
  EXPECT_EQ(objectFiles(repo.root()), before);
  expectEveryRecordParses(repo.root() / ".hydra");
}

// Over 1 MiB: hydra streams the file into the store itself, a megabyte at a time.
TEST_F(FullDiskTest, AStreamedFileThatFillsTheObjectStoreFailsThatAgentAndTheOtherIsScored) {
  fillTheObjectStore(repo_, 3000000, "store big.bin in");
}

// Under 1 MiB: libgit2 stores it while staging the worktree.
TEST_F(FullDiskTest, AStagedFileThatFillsTheObjectStoreFailsThatAgentAndTheOtherIsScored) {
  fillTheObjectStore(repo_, 1000000, "stage big.bin into");
}

// .hydra mounted read-only: a race refuses at once, naming the path; the
// commands that only read work as ever.
TEST_F(FullDiskTest, AReadOnlyHydraRefusesARaceAndStillAnswersStatusAndScores) {
  repo_.writeConfig(TestRepo::scoring() + fixer_);
  const std::string before = firstRace();
  const CommandRun tidy = hydraIn(repo_.root(), "cleanup");
  ASSERT_EQ(tidy.code, 0) << tidy.out;
  const std::string worktrees = repo_.git("worktree list --porcelain");
  const std::string branches = repo_.git("branch --list");
  const std::string beforeFiles = recordFiles(before);

  auto readOnly = Mount::readOnly(repo_.root() / ".hydra");
  const CommandRun race = hydraIn(repo_.root(), "race 'Fix add() in calc.py' --agents fixer");
  EXPECT_EQ(race.code, 1) << race.out;
  EXPECT_THAT(race.out, HasSubstr("the race could not start: cannot create the race folder " +
                                  (repo_.root() / ".hydra" / "races").string()));
  EXPECT_THAT(race.out, HasSubstr("Read-only file system"));
  EXPECT_EQ(repo_.git("worktree list --porcelain"), worktrees) << "nothing was checked out";
  EXPECT_EQ(repo_.git("branch --list"), branches);

  const CommandRun status = hydraIn(repo_.root(), "status");
  EXPECT_EQ(status.code, 0) << status.out;
  EXPECT_THAT(status.out, HasSubstr(before));
  const CommandRun statusJson = hydraIn(repo_.root(), "status --json");
  EXPECT_EQ(statusJson.code, 0) << statusJson.out;
  EXPECT_EQ(jsonOf(statusJson).at("races").at(0).at("raceId"), before.c_str());
  const CommandRun scores = hydraIn(repo_.root(), "scores " + before);
  EXPECT_EQ(scores.code, 0) << scores.out;
  EXPECT_THAT(scores.out, HasSubstr("fixer"));
  EXPECT_EQ(recordFiles(before), beforeFiles);
}

}  // namespace
}  // namespace hydra::test
