// Every input kept in tests/fuzz/corpus/ replayed through the fuzz targets'
// checks in the normal build, so that the corpus (and every regression input
// in it) runs with each test run, with or without clang and libFuzzer.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_checks.h"

namespace hydra::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus(const std::string& target) {
  std::vector<fs::path> files;
  for (const auto& entry :
       fs::directory_iterator(fs::path(HYDRA_TEST_DATA_DIR) / "corpus" / target)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(FuzzCorpusTest, ProtocolInputsAreServedWithValidJsonRpc) {
  auto files = corpus("protocol");
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    EXPECT_NO_THROW(protocolSession(contents(file)));
  }
}

TEST(FuzzCorpusTest, TestOutputsGiveSoundCountsAndNames) {
  auto files = corpus("tests");
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    EXPECT_NO_THROW(testOutput(contents(file)));
  }
}

class AdapterCorpusTest : public ::testing::TestWithParam<const char*> {};

TEST_P(AdapterCorpusTest, StreamsGiveWellFormedEventsAndValidJson) {
  auto files = corpus(GetParam());
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    EXPECT_NO_THROW(adapterStream(GetParam(), contents(file)));
  }
}

INSTANTIATE_TEST_SUITE_P(EveryAdapter, AdapterCorpusTest,
                         ::testing::Values("claude", "codex", "cursor", "gemini", "opencode",
                                           "aider", "acp", "command"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace hydra::fuzz
