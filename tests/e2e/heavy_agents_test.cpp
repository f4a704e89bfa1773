// Heavy agents beside an honest one, with the real binary: an agent that
// writes 200,000 small files, and one that writes a 5 GB file. hydra's own
// memory stays bounded (its peak resident set, VmHWM, as waitpid reports it),
// a result over [general] max_result_files / max_result_bytes ends "result too
// large" with nothing of it in the repository's object store, the honest agent
// is scored all the same, and SIGTERM stops a commit of 5 GB in the middle
// (docs/reliability.md, "Heavy agents").
//
// The 5 GB file is real data on disk (zeros from /dev/zero, which git
// compresses to a few megabytes): hydra reads and hashes every byte of it,
// so it exercises memory honestly while the repository's .git stays small.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>

#include "tests/e2e/hydra_process.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

// The bound on hydra's peak resident memory (docs/reliability.md): several
// times what these races measured (about 30 MiB), far below the size of what
// the agents wrote.
constexpr long kPeakRssBoundKiB = 256 * 1024;

// Bytes under `dir`, as on disk (apparent sizes), not following links.
std::uintmax_t bytesUnder(const fs::path& dir) {
  std::uintmax_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

// What git holds of the repository's objects: its own store and the races'
// quarantines (.git/hydra-objects/<race>), where hydra commits results.
std::uintmax_t objectBytes(const TestRepo& repo) {
  const fs::path quarantines = repo.root() / ".git" / "hydra-objects";
  return bytesUnder(repo.root() / ".git" / "objects") + (fs::exists(quarantines) ? bytesUnder(quarantines) : 0);
}

std::string onlyRaceId(const TestRepo& repo) {
  std::string id;
  for (const auto& e : fs::directory_iterator(repo.root() / ".hydra" / "races")) id = e.path().filename().string();
  return id;
}

const json::object& agentRecord(const json::object& race, const std::string& agentId) {
  for (const auto& a : race.at("agents").as_array()) {
    if (a.at("agentId") == agentId.c_str()) return a.as_object();
  }
  throw std::runtime_error("no agent " + agentId + " in " + json::serialize(race));
}

const json::object& ranking(const json::object& scores, const std::string& agentId) {
  for (const auto& r : scores.at("rankings").as_array()) {
    if (r.at("agentId") == agentId.c_str()) return r.as_object();
  }
  throw std::runtime_error("no ranking of " + agentId + " in " + json::serialize(scores));
}

class HeavyAgentsTest : public ::testing::Test {
 protected:
  // Races `agents` (fixer beside a heavy one) to the end; returns its id.
  std::string race(const std::string& agents, std::optional<long>& peakKiB) {
    HydraProcess hydra({"race", "Fix add() in calc.py", "--agents", agents}, repo_.root(),
                       {"PYTHONDONTWRITEBYTECODE=1"});
    // A hang guard, generous for a disk that other work keeps busy.
    const std::optional<int> code = hydra.waitExit(600s);
    EXPECT_TRUE(code.has_value()) << "hydra did not finish the race\n" << hydra.stderrText();
    peakKiB = hydra.peakRssKiB();
    return onlyRaceId(repo_);
  }

  json::object scoresOf(const std::string& id) {
    return json::parse(readFile(repo_.root() / ".hydra" / "races" / id / "scores.json")).as_object();
  }

  // The honest agent fixed the bug: it is eligible and passes its tests.
  void expectHonestScored(const json::object& scores) {
    const json::object& fixer = ranking(scores, "fixer");
    EXPECT_TRUE(fixer.at("eligible").as_bool()) << json::serialize(fixer);
    EXPECT_EQ(scores.at("winner"), "fixer") << json::serialize(scores);
    EXPECT_GT(fixer.at("total").to_number<double>(), 0) << json::serialize(fixer);
  }

  TestRepo repo_;
  std::string fixer_ = TestRepo::agent("fixer", {"write", "calc.py", TestRepo::fixedCalc()});
};

TEST_F(HeavyAgentsTest, TwoHundredThousandFilesEndTooLargeWithNothingStoredAndTheHonestAgentIsScored) {
  const fs::path sprawler = repo_.script("sprawler.sh",
                                         "/usr/bin/python3 - <<'EOF'\n"
                                         "import os\n"
                                         "for d in range(200):\n"
                                         "    os.makedirs(f'gen/{d}', exist_ok=True)\n"
                                         "for i in range(200000):\n"
                                         "    with open(f'gen/{i % 200}/f{i}.txt', 'w') as f:\n"
                                         "        f.write(f'sprawler file {i}\\n')\n"
                                         "EOF\n");
  repo_.writeConfig(TestRepo::scoring() + fixer_ + TestRepo::commandAgent("sprawler", sprawler));
  const std::uintmax_t objectsBefore = objectBytes(repo_);

  std::optional<long> peakKiB;
  const std::string id = race("fixer,sprawler", peakKiB);
  const json::object record = repo_.raceRecord(id);
  const json::object scores = scoresOf(id);

  const json::object& heavy = ranking(scores, "sprawler");
  EXPECT_FALSE(heavy.at("eligible").as_bool());
  EXPECT_THAT(std::string(heavy.at("ineligible").as_string()),
              StartsWith("result too large: more than 100000 files (max_result_files = 100000); counted 100001 files"));
  EXPECT_THAT(std::string(agentRecord(record, "sprawler").at("error").as_string()), StartsWith("result too large"));
  EXPECT_EQ(agentRecord(record, "sprawler").at("commit"), record.at("baseCommit")) << "nothing of it was committed";
  expectHonestScored(scores);

  // Nothing of it reached the object store: not one of its files' blobs, and
  // the store grew by the honest agent's commit and little else.
  for (const char* sample : {"0", "99999", "199999"}) {
    const std::string blob = sh("printf 'sprawler file %s\\n' " + std::string(sample) + " | git hash-object --stdin");
    EXPECT_NE(std::system(("cd " + shellQuote(repo_.root().string()) + " && git cat-file -e " + blob + " 2>/dev/null").c_str()), 0)
        << "file " << sample << " was stored";
  }
  const std::uintmax_t grown = objectBytes(repo_) - objectsBefore;
  EXPECT_LT(grown, 1u << 20) << "the object store grew by " << grown << " bytes";

  ASSERT_TRUE(peakKiB.has_value());
  std::cout << "[ measured ] 200,000 files: hydra peak RSS " << *peakKiB << " KiB, object store +" << grown << " bytes\n";
  EXPECT_LT(*peakKiB, kPeakRssBoundKiB);
}

// The 5 GB file under a raised max_result_bytes: committed, checked out for
// its checks, diffed and scored, all in bounded memory.
TEST_F(HeavyAgentsTest, AFiveGigabyteFileIsCommittedAndScoredInBoundedMemory) {
  const fs::path writer = repo_.script("writer.sh", "head -c 5G /dev/zero > big.bin\n");
  repo_.writeConfig("[general]\nmax_result_bytes = 8589934592\n\n" + TestRepo::scoring() + fixer_ +
                    TestRepo::commandAgent("writer", writer));

  std::optional<long> peakKiB;
  const std::string id = race("fixer,writer", peakKiB);
  const json::object record = repo_.raceRecord(id);
  const json::object scores = scoresOf(id);

  const json::object& writerRecord = agentRecord(record, "writer");
  EXPECT_EQ(writerRecord.at("status"), "completed") << json::serialize(writerRecord);
  EXPECT_NE(writerRecord.at("commit"), record.at("baseCommit")) << "its 5 GB were committed";
  EXPECT_EQ(repo_.git("cat-file -s " + std::string(writerRecord.at("commit").as_string()) + ":big.bin"), "5368709120");
  const json::object& heavy = ranking(scores, "writer");
  EXPECT_EQ(heavy.at("diff").at("filesChanged"), 1) << json::serialize(heavy);
  expectHonestScored(scores);
  EXPECT_FALSE(fs::exists(repo_.root() / ".hydra-workspaces" / ("_check-writer-" + id))) << "its checks' worktree is removed";

  ASSERT_TRUE(peakKiB.has_value());
  std::cout << "[ measured ] 5 GB file committed and scored: hydra peak RSS " << *peakKiB << " KiB\n";
  EXPECT_LT(*peakKiB, kPeakRssBoundKiB);
}

TEST_F(HeavyAgentsTest, AFiveGigabyteFileOverTheLimitEndsTooLargeWithoutBeingRead) {
  const fs::path writer = repo_.script("writer.sh", "head -c 5G /dev/zero > big.bin\n");
  repo_.writeConfig(TestRepo::scoring() + fixer_ + TestRepo::commandAgent("writer", writer));

  std::optional<long> peakKiB;
  const std::string id = race("fixer,writer", peakKiB);
  const json::object record = repo_.raceRecord(id);
  const json::object scores = scoresOf(id);

  const json::object& heavy = ranking(scores, "writer");
  EXPECT_FALSE(heavy.at("eligible").as_bool());
  EXPECT_THAT(std::string(heavy.at("ineligible").as_string()),
              StartsWith("result too large: more than 2.00 GiB (max_result_bytes = 2147483648); counted 1 file, 5.00 GiB"));
  EXPECT_EQ(agentRecord(record, "writer").at("commit"), record.at("baseCommit"));
  expectHonestScored(scores);
  EXPECT_FALSE(fs::exists(repo_.root() / ".hydra-workspaces" / ("_check-writer-" + id))) << "no checks ran for it";

  ASSERT_TRUE(peakKiB.has_value());
  std::cout << "[ measured ] 5 GB file over the limit: hydra peak RSS " << *peakKiB << " KiB\n";
  EXPECT_LT(*peakKiB, kPeakRssBoundKiB);
}

// SIGTERM while hydra is storing the 5 GB file: the commit stops between two
// megabytes, its temporary object is removed, and hydra exits.
TEST_F(HeavyAgentsTest, SigtermStopsTheCommitOfAFiveGigabyteFile) {
  const fs::path writer = repo_.script("writer.sh", "head -c 5G /dev/zero > big.bin\n");
  repo_.writeConfig("[general]\nmax_result_bytes = 8589934592\n\n" + TestRepo::scoring() + fixer_ +
                    TestRepo::commandAgent("writer", writer));
  // hydra stores a result in its race's quarantine (.git/hydra-objects/<race>).
  const fs::path quarantines = repo_.root() / ".git" / "hydra-objects";
  auto storing = [&] {
    std::error_code ec;
    for (const auto& quarantine : fs::directory_iterator(quarantines, ec)) {
      for (const auto& e : fs::directory_iterator(quarantine.path(), ec)) {
        if (e.path().filename().string().starts_with("tmp_object") && e.file_size(ec) > 0) return true;
      }
    }
    return false;
  };

  HydraProcess hydra({"race", "Fix add() in calc.py", "--agents", "fixer,writer"}, repo_.root(),
                     {"PYTHONDONTWRITEBYTECODE=1"});
  const auto deadline = Clock::now() + 600s;
  while (!storing() && Clock::now() < deadline && !hydra.waitExit(0ms)) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(storing()) << "hydra never started storing the file\n" << hydra.stderrText();
  const auto signalled = Clock::now();
  ASSERT_EQ(::kill(hydra.pid(), SIGTERM), 0);
  // A hang guard, not a measure of speed: unstoppable, storing the rest of
  // the file and checking it would take minutes.
  ASSERT_TRUE(hydra.waitExit(120s).has_value()) << hydra.stderrText();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - signalled);
  std::cout << "[ measured ] SIGTERM during the commit of 5 GB: hydra exited after " << took.count() << " ms\n";

  const std::string id = onlyRaceId(repo_);
  const json::object record = repo_.raceRecord(id);
  const json::object& writerRecord = agentRecord(record, "writer");
  EXPECT_EQ(writerRecord.at("status"), "cancelled") << json::serialize(writerRecord);
  EXPECT_THAT(std::string(writerRecord.at("error").as_string()), HasSubstr("cancelled while committing its work"));
  EXPECT_EQ(writerRecord.at("commit"), record.at("baseCommit")) << "nothing of it was committed";
  EXPECT_FALSE(storing()) << "the half-written object is removed";
  EXPECT_LT(objectBytes(repo_), std::uintmax_t{64} << 20);
}

}  // namespace
}  // namespace hydra::test
