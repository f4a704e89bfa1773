// Replays the recorded sessions in tests/e2e/transcripts/ (the base protocol)
// and tests/e2e/transcripts/hydra/ (the hydra/* methods) against the real
// `hydra` binary, in the manner of clangd's lit tests. Each runs in a fresh
// throwaway repository.
//
// Transcript syntax, one directive per line:
//   # comment
//   args: serve --max-message-size 2048    arguments for hydra (default: serve --log-level debug)
//   repo: none                hydra runs in an empty directory, outside any repository
//   file: PATH TEXT           written to PATH in the repository before hydra starts;
//                             \n \t and \\ are escapes in TEXT
//   --> {json}                send one framed message
//   --> raw: text             send bytes as they are; \r \n \t \\ and \xNN are escapes
//   --> repeat: N text        send `text` N times (raw, no escapes)
//   <-- {json}                the next message must contain this (objects match
//                             by subset, arrays element by element, the rest by value)
//   ==> close                 close hydra's stdin
//   ==> exit N                hydra must exit with code N; no message may be left unread
// In messages, $ROOT_URI is the repository's file:// URI and $ROOT its path.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <sstream>

#include "tests/e2e/hydra_process.h"
#include "tests/e2e/json_match.h"
#include "tests/e2e/test_repo.h"

namespace hydra::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

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

void replaceAll(std::string& s, std::string_view from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

std::vector<std::string> splitArgs(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<fs::path> transcripts() {
  std::vector<fs::path> out;
  for (const char* dir : {"transcripts", "transcripts/hydra"}) {
    for (const auto& e : fs::directory_iterator(fs::path(HYDRA_TEST_DATA_DIR) / dir)) {
      if (e.path().extension() == ".rpc") out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool startsWith(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

class TranscriptTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(TranscriptTest, Replays) {
  std::ifstream file(GetParam());
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);

  // Set-up directives first, wherever they stand.
  TestRepo repo;
  fs::path cwd = repo.root();
  std::vector<std::string> args{"serve", "--log-level", "debug"};
  for (const auto& line : lines) {
    if (line == "repo: none") cwd = repo.scratch();
    if (startsWith(line, "args:")) args = splitArgs(line.substr(5));
    if (startsWith(line, "file: ")) {
      std::string rest = line.substr(6);
      auto space = rest.find(' ');
      repo.write(rest.substr(0, space), space == std::string::npos ? "" : unescape(rest.substr(space + 1)));
    }
  }
  auto substitute = [&](std::string text) {
    replaceAll(text, "$ROOT_URI", cwd == repo.root() ? repo.uri() : "file://" + cwd.string());
    replaceAll(text, "$ROOT", cwd.string());
    return text;
  };

  HydraProcess hydra(args, cwd);
  bool exited = false;
  int lineNo = 0;
  for (const auto& line : lines) {
    ++lineNo;
    SCOPED_TRACE(GetParam().filename().string() + ":" + std::to_string(lineNo) + ": " + line.substr(0, 120));
    if (line.empty() || line[0] == '#' || line == "repo: none" || startsWith(line, "args:") ||
        startsWith(line, "file: ")) {
      continue;
    }
    if (startsWith(line, "--> raw: ")) {
      hydra.sendRaw(unescape(line.substr(9)));
    } else if (startsWith(line, "--> repeat: ")) {
      std::istringstream in(line.substr(12));
      std::size_t n = 0;
      std::string text;
      in >> n;
      std::getline(in >> std::ws, text);
      std::string bytes;
      for (std::size_t i = 0; i < n; ++i) bytes += text;
      hydra.sendRaw(bytes);
    } else if (startsWith(line, "--> ")) {
      ASSERT_TRUE(hydra.send(json::parse(substitute(line.substr(4)))));
    } else if (startsWith(line, "<-- ")) {
      json::value expected = json::parse(substitute(line.substr(4)));
      auto got = hydra.receive(std::chrono::seconds(30));
      ASSERT_TRUE(got) << "no message from hydra; its log:\n" << hydra.stderrText();
      std::string diff = mismatch(expected, *got);
      ASSERT_TRUE(diff.empty()) << diff << "\nreceived: " << json::serialize(*got);
    } else if (line == "==> close") {
      hydra.closeStdin();
    } else if (startsWith(line, "==> exit ")) {
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

INSTANTIATE_TEST_SUITE_P(Transcripts, TranscriptTest, ::testing::ValuesIn(transcripts()), [](const auto& info) {
  std::string name = (info.param.parent_path().filename() == "hydra" ? "hydra_" : "") + info.param.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});

}  // namespace
}  // namespace hydra::test
