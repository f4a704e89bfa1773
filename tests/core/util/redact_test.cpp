#include "core/util/redact.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace hydra::core {
namespace {

// Token bodies are built at run time so this file holds no key-shaped literals.
std::string body(std::size_t length, std::string_view alphabet = "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8cF0") {
  std::string out;
  for (std::size_t i = 0; i < length; ++i) out += alphabet[(i * 7 + 3) % alphabet.size()];
  return out;
}

std::string upperBody(std::size_t length) { return body(length, "QWERTY2345ZXCVB67UIOP"); }

struct Case {
  std::string name;
  std::string input;
  std::string expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RedactFormatTest : public ::testing::TestWithParam<Case> {};

TEST_P(RedactFormatTest, MasksTheSecretAndKeepsTheRest) {
  const Case& c = GetParam();
  EXPECT_EQ(Redactor().redact(c.input), c.expected) << "input: " << c.input;
}

const std::string M(Redactor::kMask);

INSTANTIATE_TEST_SUITE_P(
    Secrets, RedactFormatTest,
    ::testing::Values(
        Case{"Anthropic", "key sk-ant-api03-" + body(80) + "AA end", "key " + M + " end"},
        Case{"OpenAI", "using sk-" + body(48) + ".", "using " + M + "."},
        Case{"OpenAIProject", "\"sk-proj-" + body(60) + "\"", "\"" + M + "\""},
        Case{"GitHubPersonal", "token ghp_" + body(36), "token " + M},
        Case{"GitHubOAuth", "gho_" + body(36) + " ok", M + " ok"},
        Case{"GitHubUserToServer", "(ghu_" + body(36) + ")", "(" + M + ")"},
        Case{"GitHubServerToServer", "x-access-token ghs_" + body(36), "x-access-token " + M},
        Case{"GitHubRefresh", "ghr_" + body(36), M},
        Case{"GitHubFineGrained", "github_pat_" + body(22) + "_" + body(59), M},
        Case{"GitLab", "glpat-" + body(20) + " in url", M + " in url"},
        Case{"SlackBot", "xoxb-1234567890-" + body(24), M},
        Case{"SlackUser", "slack xoxp-12-34-" + body(20) + "!", "slack " + M + "!"},
        Case{"AwsAccessKeyId", "aws AKIA" + upperBody(16) + " region", "aws " + M + " region"},
        Case{"GoogleApiKey", "key AIza" + body(35) + "&x", "key " + M + "&x"},
        Case{"JsonWebToken",
             "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + body(43) + " done",
             "jwt " + M + " done"},
        Case{"BearerToken", "sent Bearer " + body(40) + " upstream",
             "sent Bearer " + M + " upstream"},
        Case{"AuthorizationHeader",
             "Authorization: Basic " + body(24) + "==", "Authorization: " + M},
        Case{"AuthorizationInCurl", "curl -H 'Authorization: Bearer " + body(32) + "' https://x",
             "curl -H 'Authorization: " + M + "' https://x"},
        Case{"EnvAssignment", "API_KEY=" + body(12), "API_KEY=" + M},
        Case{"ExportQuoted", "export OPENAI_API_KEY=\"" + body(20) + "\"",
             "export OPENAI_API_KEY=\"" + M + "\""},
        Case{"JsonMember", "{\"api_key\": \"" + body(16) + "\", \"model\": \"gpt\"}",
             "{\"api_key\": \"" + M + "\", \"model\": \"gpt\"}"},
        Case{"EscapedJsonMember", "{\\\"apiKey\\\":\\\"" + body(16) + "\\\"}",
             "{\\\"apiKey\\\":\\\"" + M + "\\\"}"},
        Case{"PasswordAmongOthers", "password=hunter2 user=bob", "password=" + M + " user=bob"},
        Case{"YamlToken", "  token: " + body(20), "  token: " + M},
        Case{"SingleQuotedSecret", "client_secret = 's3cr3t value'", "client_secret = '" + M + "'"},
        Case{"CommandLineFlag", "run --api-key=" + body(20) + " --fast",
             "run --api-key=" + M + " --fast"},
        Case{"Passwd", "DB_PASSWD=correcthorse", "DB_PASSWD=" + M},
        Case{"TestEnvironmentVariable", "TEST_API_KEY=" + body(12), "TEST_API_KEY=" + M},
        Case{"KeyBesideATestName", "test_api_key: OPENAI_API_KEY=" + body(20),
             "test_api_key: OPENAI_API_KEY=" + M},
        Case{"CamelCaseName", "githubToken := \"" + body(10) + "\"",
             "githubToken := \"" + M + "\""},
        Case{"QueryParameter", "GET /cb?access_token=" + body(20) + "&page=2",
             "GET /cb?access_token=" + M + "&page=2"},
        Case{"HeaderInDictionary", "headers[\"x-api-key\"] = \"" + body(20) + "\"",
             "headers[\"x-api-key\"] = \"" + M + "\""},
        Case{"UrlPassword", "cloning https://user:pa55w0rd@example.com/repo.git",
             "cloning https://user:" + M + "@example.com/repo.git"},
        Case{"PrivateKeyBlock",
             "before\n-----BEGIN RSA PRIVATE KEY-----\n" + body(64) + "\n" + body(40) +
                 "\n-----END RSA PRIVATE KEY-----\nafter",
             "before\n" + M + "\nafter"},
        Case{"PrivateKeyWithoutEnd", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + body(70), M}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    NotSecrets, RedactFormatTest,
    ::testing::Values(
        Case{"CommitSha", "commit 3f1a2b4c5d6e7f8091a2b3c4d5e6f708192a3b4c merged",
             "commit 3f1a2b4c5d6e7f8091a2b3c4d5e6f708192a3b4c merged"},
        Case{"Sha256", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
             "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
        Case{"Uuid", "id 123e4567-e89b-12d3-a456-426614174000",
             "id 123e4567-e89b-12d3-a456-426614174000"},
        Case{"Prose", "Added a keyboard shortcut; the bearer of this note has tokens.",
             "Added a keyboard shortcut; the bearer of this note has tokens."},
        Case{"TokenCounts", "max_tokens=4096 inputTokens: 1234 tokenizer=cl100k",
             "max_tokens=4096 inputTokens: 1234 tokenizer=cl100k"},
        Case{"Comparisons", "if (token == expected && key != other) return x => y;",
             "if (token == expected && key != other) return x => y;"},
        Case{"ScopeOperator", "std::string key; hydra::core::token",
             "std::string key; hydra::core::token"},
        Case{"EnvReference", "API_KEY=$OPENAI_API_KEY and TOKEN=${GH_TOKEN}",
             "API_KEY=$OPENAI_API_KEY and TOKEN=${GH_TOKEN}"},
        Case{"EmptyValue", "password=", "password="},
        Case{"PythonKeyError", "E   KeyError: 'api_key'", "E   KeyError: 'api_key'"},
        Case{"TestNames",
             "test_key: ok; test_api_key = 3; testToken: passed; TestPassword: FAIL; self.test_secret=x",
             "test_key: ok; test_api_key = 3; testToken: passed; TestPassword: FAIL; self.test_secret=x"},
        Case{"PlainUrl", "see https://github.com/org/repo and http://localhost:8080/x",
             "see https://github.com/org/repo and http://localhost:8080/x"},
        Case{"PublicKeyAndCertificate", "-----BEGIN PUBLIC KEY-----\n-----BEGIN CERTIFICATE-----",
             "-----BEGIN PUBLIC KEY-----\n-----BEGIN CERTIFICATE-----"},
        Case{"DashedWordsWithoutDigits", "pip install sk-learn-extension-for-ordinary-things",
             "pip install sk-learn-extension-for-ordinary-things"},
        Case{"PrefixInsideAWord", "task-sk-" + body(30) + " myghp_" + body(36),
             "task-sk-" + body(30) + " myghp_" + body(36)},
        Case{"ShortPrefixedWords", "ghp_short AKIAshort eyJhb.x AIzaShort xoxb-1",
             "ghp_short AKIAshort eyJhb.x AIzaShort xoxb-1"},
        Case{"ModelNames", "model claude-sonnet-4-5 and gpt-5-codex",
             "model claude-sonnet-4-5 and gpt-5-codex"},
        Case{"AlreadyMasked", "API_KEY=[REDACTED] Bearer [REDACTED]",
             "API_KEY=[REDACTED] Bearer [REDACTED]"}),
    [](const auto& info) { return info.param.name; });

TEST(RedactorTest, ExactSecretsAreMaskedWhereverTheyAppear) {
  Redactor redactor({"correct-horse-battery", "short"});
  EXPECT_EQ(redactor.redact("pw=correct-horse-battery;x"), "pw=" + M + ";x");
  EXPECT_EQ(redactor.redact("prefixcorrect-horse-batterysuffix"), "prefix" + M + "suffix");
  EXPECT_EQ(redactor.redact("a correct-horse-battery and correct-horse-battery"),
            "a " + M + " and " + M);
  // Values shorter than kMinExactLength would mask ordinary text.
  EXPECT_EQ(redactor.redact("a short line"), "a short line");
}

TEST(RedactorTest, LongerExactSecretIsMaskedWholeWhenItContainsAShorterOne) {
  Redactor redactor({"abcdefgh", "abcdefgh-and-more"});
  EXPECT_EQ(redactor.redact("x abcdefgh-and-more y"), "x " + M + " y");
}

TEST(RedactorTest, PrivateKeyKeepsFollowingLinesMaskedUntilItsEndLine) {
  Redactor redactor;
  Redactor::LineState state;
  EXPECT_EQ(redactor.redactLine("key follows: -----BEGIN EC PRIVATE KEY-----", state),
            "key follows: " + M);
  EXPECT_TRUE(state.inPrivateKey);
  EXPECT_EQ(redactor.redactLine(body(64), state), M);
  EXPECT_EQ(redactor.redactLine("", state), "");
  EXPECT_EQ(redactor.redactLine(body(20) + "==", state), M);
  EXPECT_EQ(redactor.redactLine("-----END EC PRIVATE KEY----- done", state), M + " done");
  EXPECT_FALSE(state.inPrivateKey);
  EXPECT_EQ(redactor.redactLine("ordinary line", state), "ordinary line");
}

TEST(RedactorTest, SecretNamesEndAWordAndTestNamesAreNotSecrets) {
  for (std::string_view name : {"API_KEY", "OPENAI_API_KEY", "apiKey", "api-key", "token",
                                "GITHUB_TOKEN", "authToken", "secret", "CLIENT_SECRET", "password",
                                "db_password", "PASSWD", "passphrase", "key2", "TEST_API_KEY"}) {
    EXPECT_TRUE(Redactor::isSecretName(name)) << name;
  }
  for (std::string_view name : {"keyboard", "max_tokens", "TOKENS", "tokenizer", "inputTokens",
                                "secretary", "passwords_count", "name", "path", "", "apiKeyId",
                                "KeyError", "tokenCount", "test_key", "test_token", "test_password",
                                "test_api_key", "testApiKey", "TestToken", "Test_secret",
                                "self.test_key"}) {
    EXPECT_FALSE(Redactor::isSecretName(name)) << name;
  }
}

TEST(RedactorTest, TextWithoutSecretsComesBackUnchanged) {
  std::string text = "Compiling hydra v0.1.0 (/work/main)\nFinished in 3.2s: 42 tests passed";
  EXPECT_EQ(Redactor().redact(text), text);
}

// Inputs built to make a careless matcher rescan: every prefix repeated with
// nothing that completes it. One linear pass over all of them takes well under
// a second; a quadratic one takes minutes, so the bound only catches that.
TEST(RedactorTest, PathologicalLongLinesAreScannedInLinearTime) {
  Redactor redactor({"exact-secret-value"});
  auto started = std::chrono::steady_clock::now();
  for (std::string_view unit : {"sk-", "ghp_", "eyJ", "-----BEGIN ", "Bearer ", "a=", "x:", "://",
                                "\"key\": \"", "token='$", "AKIA", "exact-secret-valu"}) {
    std::string line;
    while (line.size() < 3 * 1024 * 1024) line += unit;
    std::string out = redactor.redact(line);
    EXPECT_LE(out.size(), line.size() + M.size()) << unit;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  // A secret at the end of a long line is still found.
  std::string line(2 * 1024 * 1024, 'x');
  line += " TOKEN=" + body(20);
  EXPECT_EQ(redactor.redact(line), std::string(2 * 1024 * 1024, 'x') + " TOKEN=" + M);
}

}  // namespace
}  // namespace hydra::core
