#include "core/records/store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/core/util/temp_dir.h"

namespace hydra::core {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using test::TempDir;

const std::string M(Redactor::kMask);

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

std::string fakeKey() {
  std::string key = "sk-ant-api03-";
  for (int i = 0; i < 40; ++i) key += "Ab3xY9"[i % 6];
  return key;
}

std::string text(const json::value& value) { return std::string(value.as_string()); }

RaceRecord makeRace(const std::string& id, Timestamp createdAt) {
  RaceRecord race;
  race.id = id;
  race.task = "add a --verbose flag";
  race.baseRef = "main";
  race.baseCommit = "3f1a2b4c5d6e7f8091a2b3c4d5e6f708192a3b4c";
  race.repoRoot = "/repo";
  race.createdAt = createdAt;
  race.status = RaceStatus::Completed;
  race.hydraPid = 1;
  AgentRecord agent;
  agent.agentId = "claude";
  agent.agent = "claude";
  agent.adapter = "claude";
  agent.branch = "hydra/" + id + "/claude";
  agent.worktree = "/repo/.hydra-workspaces/claude";
  agent.status = AgentStatus::Completed;
  race.agents.push_back(agent);
  return race;
}

AgentRecord agentRecord(const std::string& id, AgentStatus status) {
  AgentRecord agent;
  agent.agentId = id;
  agent.agent = id;
  agent.adapter = "command";
  agent.branch = "hydra/x/" + id;
  agent.worktree = "/repo/.hydra-workspaces/" + id;
  agent.status = status;
  return agent;
}

// A pid that belonged to a process which has exited and been reaped.
pid_t deadPid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// A child in a process group of its own, sleeping until it is killed; killed
// and reaped at the latest when the test ends.
class SleepingGroup {
 public:
  SleepingGroup() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      for (;;) ::pause();
    }
    // Both sides set the group, so it exists whichever runs first.
    ::setpgid(pid_, pid_);
  }
  ~SleepingGroup() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  SleepingGroup(const SleepingGroup&) = delete;
  SleepingGroup& operator=(const SleepingGroup&) = delete;

  pid_t pid() const { return pid_; }
  // Reaps the child and returns the signal that ended it (0 if none).
  int reap() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }

 private:
  pid_t pid_ = -1;
};

// YYYYMMDD-HHMMSS-xxxx, x a lower-case hex digit.
bool hasRaceIdShape(const std::string& id) {
  if (id.size() != 20 || id[8] != '-' || id[15] != '-') return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    if (i == 8 || i == 15) continue;
    bool digit = c >= '0' && c <= '9';
    if (i < 15 ? !digit : !(digit || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

class RaceStoreTest : public ::testing::Test {
 protected:
  TempDir repo;
  RaceStore store{repo.path()};
};

TEST_F(RaceStoreTest, SavedRecordLoadsBackEqual) {
  RaceRecord race = makeRace("20261121-110501-a3f9", recordNow());
  race.agents[0].usage = Usage{10, 20, std::nullopt, 0.5};
  store.save(race);
  EXPECT_TRUE(fs::exists(repo.path() / ".hydra" / "races" / race.id / "race.json"));
  EXPECT_EQ(store.load(race.id), race);
}

TEST_F(RaceStoreTest, LoadOfUnknownRaceIsEmpty) { EXPECT_FALSE(store.load("no-such-race")); }

TEST_F(RaceStoreTest, CorruptRecordThrowsNamingTheFile) {
  fs::create_directories(store.raceDir("broken"));
  std::ofstream(store.raceDir("broken") / "race.json") << "{\"id\": ";
  try {
    store.load("broken");
    FAIL() << "a truncated race.json loaded";
  } catch (const RecordError& e) {
    EXPECT_NE(std::string(e.what()).find("race.json"), std::string::npos) << e.what();
  }
}

TEST_F(RaceStoreTest, NewRaceIdsSortByTimeAreUniqueAndReserveTheirDirectory) {
  std::set<std::string> ids;
  for (int i = 0; i < 50; ++i) {
    std::string id = store.newRaceId();
    EXPECT_TRUE(hasRaceIdShape(id)) << id;
    EXPECT_TRUE(fs::is_directory(store.raceDir(id)));
    EXPECT_TRUE(isValidId(id));
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 50u);
  // The date part is today's (UTC).
  std::string today = formatTimestamp(recordNow()).substr(0, 10);
  today.erase(std::remove(today.begin(), today.end(), '-'), today.end());
  std::string id = store.newRaceId();
  // Midnight may pass between the two readings; either day is right then.
  std::string tomorrowOrToday = formatTimestamp(recordNow()).substr(0, 10);
  tomorrowOrToday.erase(std::remove(tomorrowOrToday.begin(), tomorrowOrToday.end(), '-'),
                        tomorrowOrToday.end());
  EXPECT_TRUE(id.starts_with(today) || id.starts_with(tomorrowOrToday)) << id;
}

// A hydra killed between reserving its race's folder and writing the first
// record leaves a folder that only its `owner` file explains: recovery
// removes it (and a dead owner's claim) once that owner is dead, never while
// it lives.
TEST_F(RaceStoreTest, RemoveAbandonedTakesOnlyWhatADeadHydraLeftWithoutARecord) {
  const std::string live = store.newRaceId();
  EXPECT_EQ(readFile(store.raceDir(live) / "owner"), toWord(ProcessOwner::self()) + "\n");
  const std::string recorded = store.newRaceId();
  store.save(makeRace(recorded, recordNow()));

  const ProcessOwner dead{deadPid(), 1, ProcessOwner::self().host};
  const fs::path deadFolder = store.racesDir() / "20260101-000000-dead";
  fs::create_directories(deadFolder);
  std::ofstream(deadFolder / "owner") << toWord(dead) << "\n";
  const fs::path ownerless = store.racesDir() / "20260101-000000-0000";
  fs::create_directories(ownerless);
  const fs::path deadClaim = store.racesDir() / (".claim-0badcafe-" + toWord(dead));
  const fs::path liveClaim = store.racesDir() / (".claim-0badcafe-" + toWord(ProcessOwner::self()));
  fs::create_directories(deadClaim);
  fs::create_directories(liveClaim);

  EXPECT_EQ(store.removeAbandoned(), 3);
  EXPECT_FALSE(fs::exists(deadFolder));
  EXPECT_FALSE(fs::exists(ownerless));
  EXPECT_FALSE(fs::exists(deadClaim));
  EXPECT_TRUE(fs::exists(liveClaim));
  EXPECT_TRUE(fs::exists(store.raceDir(live))) << "this process is alive";
  EXPECT_TRUE(store.load(recorded).has_value());

  store.abandon(live);
  EXPECT_FALSE(fs::exists(store.raceDir(live)));
  store.abandon(recorded);
  EXPECT_TRUE(store.load(recorded).has_value()) << "a race with a record is never abandoned";
}

TEST_F(RaceStoreTest, ListIsNewestFirstAndSkipsWhatIsNotARace) {
  Timestamp base = recordNow();
  store.save(makeRace("older", base - 2h));
  store.save(makeRace("newest", base));
  store.save(makeRace("middle", base - 1h));
  // Same creation time: the larger id first.
  store.save(makeRace("tie-b", base - 3h));
  store.save(makeRace("tie-a", base - 3h));
  // Not races: a reserved id never saved, a damaged record, a stray file, a bad name.
  store.newRaceId();
  fs::create_directories(store.raceDir("damaged"));
  std::ofstream(store.raceDir("damaged") / "race.json") << "not json";
  std::ofstream(store.racesDir() / "stray.txt") << "x";
  fs::create_directories(store.racesDir() / "bad name");

  std::vector<std::string> ids;
  for (const auto& race : store.list()) ids.push_back(race.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"newest", "middle", "older", "tie-b", "tie-a"}));
}

TEST_F(RaceStoreTest, ListOfAStoreWithNoRacesIsEmpty) { EXPECT_TRUE(store.list().empty()); }

TEST_F(RaceStoreTest, RemoveDeletesTheRaceWithItsLogsAndEvents) {
  store.save(makeRace("gone", recordNow()));
  store.openLog("gone", "claude")->write(OutputStream::Stdout, "hello");
  store.appendEvent("gone", {{"type", "raceStarted"}});
  store.save(makeRace("kept", recordNow()));

  EXPECT_TRUE(store.remove("gone"));
  EXPECT_FALSE(fs::exists(store.raceDir("gone")));
  EXPECT_FALSE(store.load("gone"));
  EXPECT_TRUE(store.load("kept"));
  EXPECT_FALSE(store.remove("gone"));
}

TEST_F(RaceStoreTest, IdsThatCouldLeaveTheRacesDirectoryAreRejected) {
  for (const char* bad :
       {"", ".", "..", "../escape", "a/b", "/abs", "x y", "race.json", "a\\b", "tab\t"}) {
    EXPECT_FALSE(isValidId(bad)) << bad;
    EXPECT_THROW(store.raceDir(bad), std::invalid_argument) << bad;
    EXPECT_THROW(store.openLog("good", bad), std::invalid_argument) << bad;
    EXPECT_THROW(store.appendEvent(bad, {}), std::invalid_argument) << bad;
  }
  EXPECT_FALSE(isValidId(std::string(129, 'a')));
  EXPECT_TRUE(isValidId(std::string(128, 'a')));
  EXPECT_TRUE(isValidId("codex_2-fast"));
  RaceRecord race = makeRace("../../outside", recordNow());
  EXPECT_THROW(store.save(race), std::invalid_argument);
  EXPECT_FALSE(fs::exists(repo.path() / "outside"));
  EXPECT_FALSE(fs::exists(repo.path() / ".hydra" / "outside"));
}

TEST_F(RaceStoreTest, EventsAreAppendedOneRedactedLineEach) {
  std::string id = store.newRaceId();
  std::string key = fakeKey();
  store.appendEvent(id, {{"type", "agentOutput"}, {"line", "export OPENAI_API_KEY=" + key}});
  store.appendEvent(id, {{"type", "scored"},
                         {"testCases", {{"t.py::test_token", "passed"}, {"HOME", "/home/dev"}}}});
  store.appendEvent(id, {{"type", "text"}, {"text", "two\nlines"}, {"n", 3}});

  std::string raw = readFile(store.raceDir(id) / "events.jsonl");
  EXPECT_EQ(std::count(raw.begin(), raw.end(), '\n'), 3);
  EXPECT_EQ(raw.find(key), std::string::npos);

  auto events = store.readEvents(id);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(text(events[0].at("line")), "export OPENAI_API_KEY=" + M);
  // Member names are data here (a test's name): the value beside one is kept.
  EXPECT_EQ(text(events[1].at("testCases").as_object().at("t.py::test_token")), "passed");
  EXPECT_EQ(text(events[1].at("testCases").as_object().at("HOME")), "/home/dev");
  EXPECT_EQ(text(events[2].at("text")), "two\nlines");
  EXPECT_EQ(events[2].at("n"), 3);
}

TEST_F(RaceStoreTest, ReadEventsSkipsALineCutShortByACrash) {
  std::string id = store.newRaceId();
  store.appendEvent(id, {{"seq", 1}});
  store.appendEvent(id, {{"seq", 2}});
  std::ofstream(store.raceDir(id) / "events.jsonl", std::ios::app) << "{\"seq\": 3, \"li";
  auto events = store.readEvents(id);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].at("seq"), 2);
}

TEST_F(RaceStoreTest, SavedRecordIsRedacted) {
  RaceRecord race = makeRace("r1", recordNow());
  race.task = "use key " + fakeKey() + " for the API";
  race.agents[0].error = "401 for Authorization: Bearer abcdefgh12345678";
  store.save(race);
  EXPECT_EQ(readFile(store.raceDir("r1") / "race.json").find(fakeKey()), std::string::npos);
  auto loaded = store.load("r1");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->task, "use key " + M + " for the API");
  EXPECT_EQ(loaded->agents[0].error, "401 for Authorization: " + M);
}

// Tests named like secrets (more-itertools has 26 ending in `key`) round-trip
// through the race record and scores.json, and both stay readable, while a
// real key printed beside them is masked.
TEST_F(RaceStoreTest, TestNamesThatLookSecretRoundTripWhileAKeyBesideThemIsMasked) {
  const std::vector<std::string> names = {"tests/test_more.py::AllUniqueTests::test_key",
                                          "tests/test_auth.py::test_token", "tests/test_auth.py::test_password",
                                          "tests/test_auth.py::test_api_key", "auth_test.go::TestSecret"};
  scoring::CheckResult tests;
  tests.command = "python3 -m pytest -rA";
  tests.exitCode = 1;
  tests.output = "PASSED tests/test_more.py::AllUniqueTests::test_key\nOPENAI_API_KEY=" + fakeKey() + "\n";
  tests.tests = scoring::TestCounts{4, 1, 0};
  for (const auto& name : names) tests.testCases[name] = scoring::TestOutcome::Passed;
  tests.testCases[names[1]] = scoring::TestOutcome::Failed;
  tests.format = "pytest";

  scoring::AgentScore score;
  score.rank = 1;
  score.agentId = "builder@1";
  score.agent = "claude";
  score.checks.tests = tests;
  score.testChanges = scoring::TestChanges{{names[0], names[3]}, {names[1]}, {names[2]}, {}};

  RaceRecord race = makeRace("r1", recordNow());
  race.kind = RunKind::Collab;
  IterationResult iteration;
  iteration.iteration = 1;
  iteration.score = score;
  iteration.review = "test_password: ok; token=" + fakeKey();
  race.iterations.push_back(iteration);
  store.save(race);

  scoring::RaceScores scores;
  scores.raceId = "r1";
  scores.rankings.push_back(score);
  scores.baseline.commit = race.baseCommit;
  scores.baseline.checks.tests = tests;
  store.saveScores("r1", scores);

  for (const char* file : {"race.json", "scores.json"}) {
    const std::string raw = readFile(store.raceDir("r1") / file);
    EXPECT_EQ(raw.find(fakeKey()), std::string::npos) << file;
    for (const auto& name : names) EXPECT_NE(raw.find("\"" + name + "\""), std::string::npos) << file << name;
  }
  auto loaded = store.load("r1");
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->iterations.size(), 1u);
  ASSERT_TRUE(loaded->iterations[0].score);
  EXPECT_EQ(loaded->iterations[0].score->testChanges, score.testChanges);
  EXPECT_EQ(loaded->iterations[0].score->checks.tests->testCases, tests.testCases);
  EXPECT_EQ(loaded->iterations[0].review, "test_password: ok; token=" + M);

  auto reread = store.loadScores("r1");
  ASSERT_TRUE(reread);
  ASSERT_EQ(reread->rankings.size(), 1u);
  EXPECT_EQ(reread->rankings[0].checks.tests->testCases, tests.testCases);
  EXPECT_EQ(reread->baseline.checks.tests->testCases, tests.testCases);
  EXPECT_EQ(reread->rankings[0].testChanges, score.testChanges);
  EXPECT_EQ(reread->rankings[0].checks.tests->output,
            "PASSED tests/test_more.py::AllUniqueTests::test_key\nOPENAI_API_KEY=" + M + "\n");
}

TEST_F(RaceStoreTest, AgentLogKeepsStreamsApartUnprefixedAndRedacted) {
  std::string id = store.newRaceId();
  auto log = store.openLog(id, "codex");
  // The stdout log exists as soon as the agent starts, stderr's on its first line.
  EXPECT_TRUE(fs::exists(store.raceDir(id) / "codex.log"));
  EXPECT_FALSE(fs::exists(store.raceDir(id) / "codex.stderr.log"));

  log->write(OutputStream::Stdout, R"({"type":"thread.started"})");
  log->write(OutputStream::Stderr, "warning: using " + fakeKey());
  log->write(OutputStream::Stdout, "-----BEGIN RSA PRIVATE KEY-----");
  log->write(OutputStream::Stderr, "still stderr");
  log->write(OutputStream::Stdout, "MIIEowIBAAKCAQEA0123456789abcdef");
  log->write(OutputStream::Stdout, "-----END RSA PRIVATE KEY-----");
  log->write(OutputStream::Stdout, "done");
  log->sync();

  EXPECT_EQ(readFile(store.raceDir(id) / "codex.log"),
            "{\"type\":\"thread.started\"}\n" + M + "\n" + M + "\n" + M + "\ndone\n");
  EXPECT_EQ(readFile(store.raceDir(id) / "codex.stderr.log"),
            "warning: using " + M + "\nstill stderr\n");
}

TEST_F(RaceStoreTest, ExactSecretsGivenToTheStoreAreMaskedEverywhere) {
  RaceStore secretive(repo.path(), Redactor({"value-of-MY_SERVICE_CREDENTIAL"}));
  std::string id = secretive.newRaceId();
  secretive.openLog(id, "gemini")
      ->write(OutputStream::Stdout, "got value-of-MY_SERVICE_CREDENTIAL");
  secretive.appendEvent(id, {{"line", "value-of-MY_SERVICE_CREDENTIAL!"}});
  EXPECT_EQ(readFile(secretive.raceDir(id) / "gemini.log"), "got " + M + "\n");
  EXPECT_EQ(text(secretive.readEvents(id).at(0).at("line")), M + "!");
}

TEST_F(RaceStoreTest, ReadLogPagesThroughTheWholeLog) {
  std::string id = store.newRaceId();
  auto log = store.openLog(id, "claude");
  std::string expected;
  for (int i = 0; i < 100; ++i) {
    std::string line = "line " + std::to_string(i) + " " + std::string(i % 7, '*');
    log->write(OutputStream::Stdout, line);
    expected += line + "\n";
  }

  std::string pages;
  std::uint64_t offset = 0;
  for (;;) {
    auto slice = store.readLog(id, "claude", offset, 100);
    ASSERT_TRUE(slice);
    EXPECT_EQ(slice->offset, offset);
    EXPECT_EQ(slice->totalSize, expected.size());
    EXPECT_LE(slice->data.size(), 100u);
    if (slice->data.empty()) break;
    pages += slice->data;
    offset += slice->data.size();
  }
  EXPECT_EQ(pages, expected);

  auto middle = store.readLog(id, "claude", 7, 5);
  ASSERT_TRUE(middle);
  EXPECT_EQ(middle->data, expected.substr(7, 5));
  auto beyond = store.readLog(id, "claude", expected.size() + 10, 100);
  ASSERT_TRUE(beyond);
  EXPECT_TRUE(beyond->data.empty());
  EXPECT_EQ(beyond->totalSize, expected.size());
}

TEST_F(RaceStoreTest, ReadLogOfMissingRaceOrStreamIsEmptyOrAbsent) {
  EXPECT_FALSE(store.readLog("no-such-race", "claude", 0, 100));
  std::string id = store.newRaceId();
  auto stderrSlice = store.readLog(id, "claude", 0, 100, OutputStream::Stderr);
  ASSERT_TRUE(stderrSlice);
  EXPECT_TRUE(stderrSlice->data.empty());
  EXPECT_EQ(stderrSlice->totalSize, 0u);
}

// A child saves a large record over and over and is killed with SIGKILL at
// varying moments: race.json always parses as a whole record.
TEST_F(RaceStoreTest, WriterKilledMidSaveNeverLeavesAHalfWrittenRaceJson) {
  RaceRecord race = makeRace("20261121-110501-a3f9", recordNow());
  for (int i = 0; i < 300; ++i) {
    AgentRecord agent = agentRecord("agent" + std::to_string(i), AgentStatus::Running);
    agent.error = std::string(400, 'e');
    race.agents.push_back(agent);
  }
  store.save(race);

  for (int round = 0; round < 10; ++round) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(ready[0]);
      try {
        RaceRecord copy = race;
        const AgentRecord filler = race.agents[1];
        for (int i = 0;; ++i) {
          copy.status = i % 2 == 0 ? RaceStatus::Failed : RaceStatus::Running;
          copy.agents.resize(i % 2 == 0 ? 150 : 301, filler);
          store.save(copy);
          if (i == 0 && ::write(ready[1], "x", 1) != 1) ::_exit(2);
        }
      } catch (...) {
        ::_exit(3);
      }
    }
    ::close(ready[1]);
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the writer died before its first save";
    ::close(ready[0]);
    std::this_thread::sleep_for(std::chrono::microseconds(300 * round));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status));

    std::optional<RaceRecord> loaded;
    ASSERT_NO_THROW(loaded = store.load(race.id)) << "round " << round;
    ASSERT_TRUE(loaded);
    EXPECT_TRUE(loaded->agents.size() == 150 || loaded->agents.size() == 301)
        << loaded->agents.size();
  }
  EXPECT_EQ(store.list().size(), 1u);
}

TEST(ProcessStartTimeTest, LiveProcessHasAStableStartTimeAndGoneOnesHaveNone) {
  auto own = processStartTime(::getpid());
  ASSERT_TRUE(own);
  EXPECT_EQ(processStartTime(::getpid()), own);
  EXPECT_FALSE(processStartTime(deadPid()));
  EXPECT_FALSE(processStartTime(0));
  EXPECT_FALSE(processStartTime(-5));
}

TEST(ProcessStartTimeTest, ZombieCountsAsGone) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  // Wait until it has exited without reaping it: it stays a zombie meanwhile.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
  EXPECT_FALSE(processStartTime(pid));
  ::waitpid(pid, nullptr, 0);
}

class RecoverTest : public RaceStoreTest {
 protected:
  RaceRecord runningRace(const std::string& id, pid_t hydraPid, std::uint64_t hydraStartTime) {
    RaceRecord race = makeRace(id, recordNow());
    race.status = RaceStatus::Running;
    race.hydraPid = hydraPid;
    race.hydraStartTime = hydraStartTime;
    race.agents.clear();
    return race;
  }

  std::vector<RaceRecord> recover() { return store.recoverInterrupted(killGroup); }

  std::vector<pid_t> killed;
  std::function<void(pid_t)> killGroup = [this](pid_t group) {
    killed.push_back(group);
    ::kill(-group, SIGKILL);
  };
};

TEST_F(RecoverTest, RaceOfADeadHydraIsInterruptedAndItsLiveGroupsAreKilled) {
  SleepingGroup orphan;
  SleepingGroup leftover;
  RaceRecord race = runningRace("dead-hydra", deadPid(), 12345);
  AgentRecord running = agentRecord("running", AgentStatus::Running);
  running.pid = orphan.pid();
  running.pidStartTime = processStartTime(orphan.pid());
  running.processGroup = orphan.pid();
  AgentRecord exited = agentRecord("gone", AgentStatus::Running);
  exited.processGroup = deadPid();
  // Finished, but something it started still lives in its group.
  AgentRecord done = agentRecord("done", AgentStatus::Completed);
  done.processGroup = leftover.pid();
  race.agents = {running, agentRecord("queued", AgentStatus::Queued), exited, done};
  store.save(race);

  auto changed = recover();

  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(killed, (std::vector<pid_t>{orphan.pid(), leftover.pid()}));
  EXPECT_EQ(orphan.reap(), SIGKILL);
  EXPECT_EQ(leftover.reap(), SIGKILL);
  auto loaded = store.load("dead-hydra");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(*loaded, changed[0]);
  EXPECT_EQ(loaded->status, RaceStatus::Interrupted);
  EXPECT_EQ(loaded->findAgent("running")->status, AgentStatus::Interrupted);
  EXPECT_EQ(loaded->findAgent("queued")->status, AgentStatus::Interrupted);
  EXPECT_EQ(loaded->findAgent("gone")->status, AgentStatus::Interrupted);
  EXPECT_EQ(loaded->findAgent("done")->status, AgentStatus::Completed);
}

TEST_F(RecoverTest, RaceOfALiveHydraIsLeftRunning) {
  store.save(runningRace("live-hydra", ::getpid(), *processStartTime(::getpid())));
  EXPECT_TRUE(recover().empty());
  EXPECT_EQ(store.load("live-hydra")->status, RaceStatus::Running);
}

TEST_F(RecoverTest, ReusedHydraPidCountsAsDead) {
  // Our pid, but a start time that is not ours: another process took the number.
  store.save(runningRace("reused", ::getpid(), *processStartTime(::getpid()) + 1));
  auto changed = recover();
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].id, "reused");
  EXPECT_EQ(store.load("reused")->status, RaceStatus::Interrupted);
}

// A repository on a shared file system: a race run on another machine cannot
// be tested from here, so it is never taken for dead, whatever its pid.
TEST_F(RecoverTest, RaceOfAHydraOnAnotherHostIsLeftRunning) {
  RaceRecord race = runningRace("elsewhere", deadPid(), 1);
  race.hydraHost = ProcessOwner::self().host + "-elsewhere";
  store.save(race);
  RaceRecord seen = race;
  EXPECT_FALSE(markIfOrphaned(seen));
  EXPECT_EQ(seen, race);
  EXPECT_TRUE(recover().empty());
  EXPECT_EQ(store.load("elsewhere"), race);

  // The same race on this host is dead: shown so by markIfOrphaned, which writes nothing.
  race.hydraHost = ProcessOwner::self().host;
  store.save(race);
  EXPECT_TRUE(markIfOrphaned(seen = race));
  EXPECT_EQ(seen.status, RaceStatus::Interrupted);
  EXPECT_EQ(store.load("elsewhere")->status, RaceStatus::Running);
  EXPECT_EQ(recover().size(), 1u);
}

TEST_F(RecoverTest, FinishedRacesAreLeftAlone) {
  RaceRecord race = runningRace("finished", deadPid(), 1);
  race.status = RaceStatus::Completed;
  race.agents = {agentRecord("a", AgentStatus::Running)};  // inconsistent, but not ours to fix
  store.save(race);
  EXPECT_TRUE(recover().empty());
  EXPECT_EQ(store.load("finished"), race);
}

TEST_F(RecoverTest, GroupsThatAreNotTheAgentsAnyMoreAreNeverSignalled) {
  SleepingGroup stranger;
  RaceRecord race = runningRace("careful", deadPid(), 1);
  // The agent's pid was reused by `stranger`: its start time differs from the record.
  AgentRecord reused = agentRecord("reused", AgentStatus::Running);
  reused.pid = stranger.pid();
  reused.pidStartTime = *processStartTime(stranger.pid()) + 1;
  reused.processGroup = stranger.pid();
  // A record pointing at hydra's own group, or at "every process".
  AgentRecord own = agentRecord("own", AgentStatus::Running);
  own.processGroup = ::getpgrp();
  AgentRecord everyone = agentRecord("everyone", AgentStatus::Running);
  everyone.processGroup = 1;
  race.agents = {reused, own, everyone};
  store.save(race);

  auto changed = recover();

  ASSERT_EQ(changed.size(), 1u);
  EXPECT_TRUE(killed.empty());
  EXPECT_EQ(::kill(stranger.pid(), 0), 0) << "the unrelated process was signalled";
  for (const auto& agent : changed[0].agents) EXPECT_EQ(agent.status, AgentStatus::Interrupted);
}

TEST_F(RecoverTest, RecoveringTwiceChangesNothingTheSecondTime) {
  store.save(runningRace("once", deadPid(), 1));
  EXPECT_EQ(recover().size(), 1u);
  EXPECT_TRUE(recover().empty());
}

}  // namespace
}  // namespace hydra::core
