// Secrets in the lines an agent's patch adds: found with the line number in
// the agent's version, never in context or removed lines, and bounded per file.

#include "core/checks/added_secrets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/git/git.h"
#include "core/merge/diff.h"
#include "tests/core/git/temp_repo.h"

namespace hydra::core::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class AddedSecretsTest : public ::testing::Test {
 protected:
  // The patch from the repository's first commit to one with `files` written.
  std::string patchWith(const std::vector<std::pair<std::string, std::string>>& files) {
    const std::string base = repo.git("rev-parse HEAD");
    for (const auto& [path, content] : files) repo.write(path, content);
    const std::string agent = repo.commit("agent");
    return merge::unifiedPatch(repo.root(), base, agent);
  }

  git::LibGit2 libgit2;
  testing::TempRepo repo;
  const std::string secret = "foo-live-4f1d9a7c2b8e6035";
  Redactor redactor{{secret}};
};

TEST_F(AddedSecretsTest, AnAddedSecretIsFoundWithItsLine) {
  const std::string patch = patchWith({{"leak.txt", secret + "\n"},
                                       {"src/a.txt", "kept\nAPI_KEY=abcdefgh12345678\n"},
                                       {"notes.md", "nothing to see\n"}});
  EXPECT_THAT(addedSecrets(patch, redactor), ElementsAre("leak.txt:1", "src/a.txt:2"));
}

TEST_F(AddedSecretsTest, LiteralSecretsInSourceAreFoundWhereverTheyStand) {
  const std::string patch = patchWith({{"config.py", "password = \"hunter2-correct\"\n"
                                                     "DB_TOKEN = 'horsebatterystaple'\n"
                                                     "headers = {\"api_key\": \"k3y-0f-the-b0x\"}\n"},
                                       {"deploy.key", "-----BEGIN PRIVATE KEY-----\n"
                                                      "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"
                                                      "-----END PRIVATE KEY-----\n"}});
  EXPECT_THAT(addedSecrets(patch, redactor),
              ElementsAre("config.py:1", "config.py:2", "config.py:3", "deploy.key:1", "deploy.key:2",
                          "deploy.key:3"));
}

// Code that names a key is not a secret: these lines come from real fixes
// (Jinja's xmlattr fix adds the first), and flagging them would keep an honest
// fix from being merged.
TEST_F(AddedSecretsTest, CodeThatAssignsToASecretLookingNameIsNotASecret) {
  const std::string patch = patchWith({{"filters.py", "_attr_key_re = re.compile(r\"[\\s/>=]\", flags=re.ASCII)\n"
                                                      "api_key = os.environ[\"SERVICE_API_KEY\"]\n"
                                                      "token = next_token2(stream)\n"
                                                      "secret_key = settings.SECRET_KEY\n"
                                                      "key = \"name\"\n"
                                                      "error_key: \"Invalid character in key\"\n"}});
  EXPECT_THAT(addedSecrets(patch, redactor), IsEmpty()) << patch;
}

TEST_F(AddedSecretsTest, ASecretTheAgentRemovedOrLeftIsNotItsOwn) {
  repo.write("old.txt", "line\n" + secret + "\nline\n");
  repo.commit("the user's");
  const std::string patch = patchWith({{"old.txt", "line\n" + secret + "\nline\nmore\n"}, {"gone.txt", ""}});
  EXPECT_THAT(addedSecrets(patch, redactor), IsEmpty()) << patch;
  const std::string removed = patchWith({{"old.txt", "line\nline\n"}});
  EXPECT_THAT(addedSecrets(removed, redactor), IsEmpty()) << removed;
}

TEST_F(AddedSecretsTest, OnlyTheFirstBytesOfAFileAreRead) {
  const std::string filler(100, 'x');
  std::string big;
  for (int i = 0; i < 20; ++i) big += filler + "\n";
  const std::string patch = patchWith({{"big.txt", big + secret + "\n"}, {"small.txt", secret + "\n"}});
  EXPECT_THAT(addedSecrets(patch, redactor, 1000), ElementsAre("small.txt:1"));
  EXPECT_THAT(addedSecrets(patch, redactor), ElementsAre("big.txt:21", "small.txt:1"));
}

}  // namespace
}  // namespace hydra::core::checks
