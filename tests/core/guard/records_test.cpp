// hydra's records under .hydra/ during a race: what counts as tampering
// (a finished race's files rewritten, added or deleted, a forged race folder,
// the record of a race under way rewritten after hydra wrote it) and what
// does not (hydra's own writes, a new race of hydra's, the logs of a race
// under way).

#include "core/guard/records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/core/git/temp_repo.h"

namespace hydra::core::guard {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::TempRepo;
using testing::writeFile;

constexpr const char* kOld = "20261101-090000-0a0a";
constexpr const char* kLive = "20261125-101010-beef";

class RecordsGuardTest : public ::testing::Test {
 protected:
  RecordsGuardTest() {
    writeFile(records() / "races" / kOld / "race.json", "{\"id\":\"old\",\"status\":\"completed\"}\n");
    writeFile(records() / "races" / kOld / "scores.json", "{\"rankings\":[]}\n");
    writeFile(records() / "races" / kOld / "alpha.log", "what alpha said\n");
    writeFile(records() / "races" / kLive / "alpha.log", "");
    writeFile(records() / "cache" / "baseline.json", "{}\n");
    writeFile(records() / "earlier.json", "{\"id\":\"earlier\"}\n");
  }

  fs::path records() const { return repo.root() / ".hydra"; }
  fs::path live(const std::string& name) const { return records() / "races" / kLive / name; }
  fs::path old(const std::string& name) const { return records() / "races" / kOld / name; }

  RecordsSnapshot snapshot() {
    return snapshotRecords(repo.root(), [](const std::string& id) { return id != kLive; });
  }

  // hydra's own write of `file`.
  static void ownWrite(const fs::path& file, const std::string& content) {
    OwnRecordWrite own({file});
    writeFile(file, content);
  }

  TempRepo repo;
};

TEST_F(RecordsGuardTest, NothingChangedIsNothingToTell) {
  auto before = snapshot();
  EXPECT_THAT(compareRecords(before), IsEmpty());
}

TEST_F(RecordsGuardTest, AFinishedRacesFilesRewrittenAddedOrDeletedAreTamperingToldOnce) {
  auto before = snapshot();
  writeFile(old("scores.json"), "{\"rankings\":[{\"agentId\":\"evil\",\"total\":100}]}\n");
  writeFile(old("evil.log"), "planted\n");
  fs::remove(old("alpha.log"));
  writeFile(records() / "earlier.json", "{\"tampered\":true}\n");
  EXPECT_THAT(compareRecords(before),
              ElementsAre("changed hydra's record .hydra/earlier.json",
                          "deleted hydra's record .hydra/races/20261101-090000-0a0a/alpha.log",
                          "added .hydra/races/20261101-090000-0a0a/evil.log to hydra's records",
                          "changed hydra's record .hydra/races/20261101-090000-0a0a/scores.json"));
  EXPECT_THAT(compareRecords(before), IsEmpty()) << "each change is told once";
}

TEST_F(RecordsGuardTest, ASameSizeRewriteIsSeen) {
  auto before = snapshot();
  writeFile(old("scores.json"), "{\"rankings\":[9]}\n");  // as long as before
  EXPECT_THAT(compareRecords(before),
              ElementsAre("changed hydra's record .hydra/races/20261101-090000-0a0a/scores.json"));
}

TEST_F(RecordsGuardTest, HydrasOwnWritesAndRemovalsAreNotTampering) {
  auto before = snapshot();
  ownWrite(old("race.json"), "{\"id\":\"old\",\"status\":\"completed\",\"merged\":true}\n");
  EXPECT_THAT(compareRecords(before), IsEmpty());
  {
    OwnRecordWrite own(filesUnder(records() / "races" / kOld));
    fs::remove_all(records() / "races" / kOld);
  }
  EXPECT_THAT(compareRecords(before), IsEmpty());
  // But a write after hydra's own is not hydra's.
  ownWrite(records() / "earlier.json", "{\"id\":\"earlier\",\"again\":1}\n");
  writeFile(records() / "earlier.json", "{\"id\":\"forged\"}\n");
  EXPECT_THAT(compareRecords(before), ElementsAre("changed hydra's record .hydra/earlier.json"));
}

TEST_F(RecordsGuardTest, AForgedRaceFolderIsTamperingANewRaceOfHydrasIsNot) {
  auto before = snapshot();
  writeFile(records() / "races" / "forged" / "race.json", "{}\n");
  writeFile(records() / "races" / "20261125-111111-cafe" / "race.json", "{\"id\":\"new\"}\n");
  EXPECT_THAT(compareRecords(before), ElementsAre("added .hydra/races/forged/race.json to hydra's records"));
  // The new race is under way: its logs grow freely.
  writeFile(records() / "races" / "20261125-111111-cafe" / "alpha.log", "output\n");
  EXPECT_THAT(compareRecords(before), IsEmpty());
}

TEST_F(RecordsGuardTest, TheRecordOfARaceUnderWayIsWatchedOnceHydraWroteIt) {
  auto before = snapshot();
  writeFile(live("alpha.log"), "its output grows\n");
  writeFile(live("scores.json"), "{\"forged\":true}\n");  // before hydra wrote any: not known
  EXPECT_THAT(compareRecords(before), IsEmpty());
  ownWrite(live("race.json"), "{\"id\":\"live\",\"status\":\"running\"}\n");
  ownWrite(live("race.json"), "{\"id\":\"live\",\"status\":\"running\",\"agents\":[]}\n");
  EXPECT_THAT(compareRecords(before), IsEmpty());
  writeFile(live("race.json"), "{\"id\":\"live\",\"status\":\"completed\"}\n");
  EXPECT_THAT(compareRecords(before),
              ElementsAre("changed hydra's record .hydra/races/20261125-101010-beef/race.json"));
  EXPECT_THAT(compareRecords(before), IsEmpty()) << "told once";
  ownWrite(live("race.json"), "{\"id\":\"live\",\"status\":\"completed\",\"agents\":[]}\n");
  EXPECT_THAT(compareRecords(before), IsEmpty());
}

TEST_F(RecordsGuardTest, EverythingElseUnderHydraIsWatchedLikeARecord) {
  auto before = snapshot();
  ownWrite(records() / "cache" / "new-baseline.json", "{}\n");
  EXPECT_THAT(compareRecords(before), IsEmpty());
  writeFile(records() / "cache" / "baseline.json", "{\"tests\":[]}\n");
  EXPECT_THAT(compareRecords(before), ElementsAre("changed hydra's record .hydra/cache/baseline.json"));
}

}  // namespace
}  // namespace hydra::core::guard
