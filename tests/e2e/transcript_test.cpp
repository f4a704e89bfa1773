// Replays the recorded sessions in tests/e2e/transcripts/ against the real
// `hydra` binary, in the manner of clangd's lit tests.
//
// Transcript syntax, one directive per line:
//   # comment
//   args: serve --max-message-size 2048    arguments for hydra (default: serve)
//   --> {json}                send one framed message
//   --> raw: text             send bytes as they are; \r \n \t \\ and \xNN are escapes
//   --> repeat: N text        send `text` N times (raw, no escapes)
//   <-- {json}                the next message must contain this (objects match
//                             by subset, arrays element by element, the rest by value)
//   ==> close                 close hydra's stdin
//   ==> exit N                hydra must exit with code N; no message may be left unread

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <sstream>

#include "tests/e2e/hydra_process.h"

namespace hydra::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

// Empty when `actual` contains `expected`; otherwise where they differ.
std::string mismatch(const json::value& expected, const json::value& actual, const std::string& path) {
  if (expected.is_object()) {
    if (!actual.is_object()) return path + ": expected an object";
    for (const auto& [key, value] : expected.get_object()) {
      const json::value* a = actual.get_object().if_contains(key);
      std::string p = path + "." + std::string(key);
      if (!a) return p + ": missing";
      if (auto m = mismatch(value, *a, p); !m.empty()) return m;
    }
    return "";
  }
  if (expected.is_array()) {
    if (!actual.is_array() || actual.get_array().size() != expected.get_array().size()) {
      return path + ": expected an array of " + std::to_string(expected.get_array().size());
    }
    for (std::size_t i = 0; i < expected.get_array().size(); ++i) {
      if (auto m = mismatch(expected.get_array()[i], actual.get_array()[i], path + "[" + std::to_string(i) + "]");
          !m.empty()) {
        return m;
      }
    }
    return "";
  }
  if (expected != actual) return path + ": expected " + json::serialize(expected) + ", got " + json::serialize(actual);
  return "";
}

std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    char c = s[++i];
    switch (c) {
      case 'r': out += '\r'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case '\\': out += '\\'; break;
      case 'x':
        out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
        i += 2;
        break;
      default: out += '\\'; out += c;
    }
  }
  return out;
}

std::vector<std::string> splitArgs(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<fs::path> transcripts() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(HYDRA_TEST_DATA_DIR) / "transcripts")) {
    if (e.path().extension() == ".rpc") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class TranscriptTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(TranscriptTest, Replays) {
  std::ifstream file(GetParam());
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);

  std::vector<std::string> args{"serve", "--log-level", "debug"};
  for (const auto& line : lines) {
    if (line.rfind("args:", 0) == 0) args = splitArgs(line.substr(5));
  }
  HydraProcess hydra(args);
  bool exited = false;

  int lineNo = 0;
  for (const auto& line : lines) {
    ++lineNo;
    SCOPED_TRACE(GetParam().filename().string() + ":" + std::to_string(lineNo) + ": " + line.substr(0, 120));
    if (line.empty() || line[0] == '#' || line.rfind("args:", 0) == 0) continue;
    if (line.rfind("--> raw: ", 0) == 0) {
      hydra.sendRaw(unescape(line.substr(9)));
    } else if (line.rfind("--> repeat: ", 0) == 0) {
      std::istringstream in(line.substr(12));
      std::size_t n = 0;
      std::string text;
      in >> n;
      std::getline(in >> std::ws, text);
      std::string bytes;
      for (std::size_t i = 0; i < n; ++i) bytes += text;
      hydra.sendRaw(bytes);
    } else if (line.rfind("--> ", 0) == 0) {
      ASSERT_TRUE(hydra.send(json::parse(line.substr(4))));
    } else if (line.rfind("<-- ", 0) == 0) {
      json::value expected = json::parse(line.substr(4));
      auto got = hydra.receive();
      ASSERT_TRUE(got) << "no message from hydra; its log:\n" << hydra.stderrText();
      std::string diff = mismatch(expected, *got, "message");
      ASSERT_TRUE(diff.empty()) << diff << "\nreceived: " << json::serialize(*got);
    } else if (line == "==> close") {
      hydra.closeStdin();
    } else if (line.rfind("==> exit ", 0) == 0) {
      auto code = hydra.waitExit(std::chrono::seconds(10));
      ASSERT_TRUE(code) << "hydra did not exit; its log:\n" << hydra.stderrText();
      EXPECT_EQ(*code, std::stoi(line.substr(9))) << hydra.stderrText();
      auto extra = hydra.receive(std::chrono::milliseconds(100));
      EXPECT_FALSE(extra) << "unexpected message: " << json::serialize(*extra);
      exited = true;
    } else {
      FAIL() << "unknown transcript directive";
    }
  }
  EXPECT_TRUE(exited) << "a transcript must end with ==> exit N";
}

INSTANTIATE_TEST_SUITE_P(Transcripts, TranscriptTest, ::testing::ValuesIn(transcripts()),
                         [](const auto& info) {
                           std::string name = info.param.stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace hydra::test
