// hydra.toml's diagnostics cover the key, value or header a problem is at.

#include "server/config_diagnostics.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>

namespace hydra::server {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

TEST(ConfigDiagnosticsTest, AnItemSpansItsKeyValueOrHeader) {
  EXPECT_EQ(tomlItemLength("max_concurrent_agents = \"two\"", 0), 21u);
  EXPECT_EQ(tomlItemLength("max_concurrent_agents = \"two\"", 24), 5u);
  EXPECT_EQ(tomlItemLength("test_command=\"a \\\" b\" # note", 13), 8u);
  EXPECT_EQ(tomlItemLength("name = 'it''s'", 7), 4u);
  EXPECT_EQ(tomlItemLength("[agents.my-agent]", 0), 17u);
  EXPECT_EQ(tomlItemLength("[[eval.cases]]  # x", 0), 14u);
  EXPECT_EQ(tomlItemLength("list = [1, 22, 3]", 11), 2u);
  EXPECT_EQ(tomlItemLength("auto_merge = 1", 13), 1u);
  EXPECT_EQ(tomlItemLength("unclosed = \"abc", 11), 4u);
  EXPECT_EQ(tomlItemLength("x = 1", 9), 0u);
  // Counted in code points: "é" is one.
  EXPECT_EQ(tomlItemLength("clé = 1", 0), 3u);
}

class ConfigDiagnosticFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "hydra-diagnostics-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& text) {
    const fs::path file = dir_ / "hydra.toml";
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  fs::path dir_;
};

TEST_F(ConfigDiagnosticFileTest, TheRangeCoversTheItemAtTheLineAndColumn) {
  const fs::path file = write("# settings\r\n[general]\r\nmax_concurrent_agents = \"two\"\r\n");
  const json::object d = configDiagnostic(file, 3, 25, kDiagnosticError, "not a number");
  EXPECT_EQ(d.at("range"), json::parse(R"({"start":{"line":2,"character":24},"end":{"line":2,"character":29}})"));
  EXPECT_EQ(d.at("severity"), json::value(1));
  EXPECT_EQ(d.at("source"), json::value("hydra"));
  EXPECT_EQ(d.at("message"), json::value("not a number"));
}

TEST_F(ConfigDiagnosticFileTest, CharactersAreCountedInUtf16CodeUnits) {
  // "😀" is one code point and two UTF-16 units: `"😀 fix"` is 8 of them.
  const fs::path file = write("[agents.x]\nprompt = \"\xF0\x9F\x98\x80 fix\"\n");
  const json::object d = configDiagnostic(file, 2, 10, kDiagnosticWarning, "w");
  EXPECT_EQ(d.at("range"), json::parse(R"({"start":{"line":1,"character":9},"end":{"line":1,"character":17}})"));
}

TEST_F(ConfigDiagnosticFileTest, AnUnknownPlaceOrAnUnreadableFileKeepsTheOldRange) {
  const fs::path file = write("a = 1\n");
  EXPECT_EQ(configDiagnostic(file, 0, 0, kDiagnosticError, "m").at("range"),
            json::parse(R"({"start":{"line":0,"character":0},"end":{"line":0,"character":0}})"));
  EXPECT_EQ(configDiagnostic(dir_ / "missing.toml", 2, 3, kDiagnosticError, "m").at("range"),
            json::parse(R"({"start":{"line":1,"character":2},"end":{"line":1,"character":3}})"));
  // A FIFO is not waited on.
  ASSERT_EQ(::mkfifo((dir_ / "fifo.toml").c_str(), 0600), 0);
  EXPECT_EQ(configDiagnostic(dir_ / "fifo.toml", 1, 1, kDiagnosticError, "m").at("range"),
            json::parse(R"({"start":{"line":0,"character":0},"end":{"line":0,"character":1}})"));
}

}  // namespace
}  // namespace hydra::server
