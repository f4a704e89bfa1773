#pragma once

// Masks secrets in agent output and race records before they reach the disk
// or a live view: every agent line passes through here, so it is one linear
// scan with cheap first-character checks, no regular expressions.

#include <string>
#include <string_view>
#include <vector>

namespace hydra::core {

class Redactor {
 public:
  static constexpr std::string_view kMask = "[REDACTED]";

  // Carries a private key block across lines when output arrives line by line.
  struct LineState {
    bool inPrivateKey = false;
  };

  Redactor() = default;
  // `exactSecrets` are masked wherever they occur (e.g. the values hydra puts
  // in an agent's environment under secret-looking names). Values shorter than
  // kMinExactLength are ignored: masking "1234" everywhere would mangle output.
  explicit Redactor(std::vector<std::string> exactSecrets);

  static constexpr std::size_t kMinExactLength = 8;

  // `text` with every secret replaced by kMask:
  //  - the exact secrets given at construction;
  //  - API keys by their prefix: Anthropic `sk-ant-`, OpenAI `sk-`/`sk-proj-`,
  //    GitHub `ghp_ gho_ ghu_ ghs_ ghr_ github_pat_`, GitLab `glpat-`, Slack
  //    `xox[abprs]-`, AWS `AKIA` + 16, Google `AIza` + 35;
  //  - JSON Web Tokens (`eyJ...` `.` `...` `.` `...`);
  //  - `Bearer <token>`, the value of an `Authorization:` header, and the
  //    password in `scheme://user:password@host`;
  //  - the value of an assignment whose name looks secret (see isSecretName):
  //    `API_KEY=v`, `--api-key=v`, `"api_key": "v"`, `token: v`; the name stays;
  //  - PEM private key blocks, BEGIN line through END line (to the end of
  //    `text` when no END follows).
  // Ordinary words and hex ids (a 40-hex commit sha) are left alone.
  std::string redact(std::string_view text) const;

  // The same for one line of a stream: a private key block whose BEGIN line was
  // seen keeps every following line masked until its END line.
  std::string redactLine(std::string_view line, LineState& state) const;

  // True when an assignment to `name` holds a secret: it contains key, token,
  // secret, password, passwd or passphrase (any case) with no letter after it,
  // so `OPENAI_API_KEY`, `githubToken`, `db_password` and `key2` qualify while
  // `keyboard`, `max_tokens`, `tokenizer`, `apiKeyId` and `KeyError` do not.
  // A test's name (`test_key`, `testApiKey`, Go's `TestToken`) never does:
  // it names what is tested. `TEST_API_KEY`, an environment variable, does.
  static bool isSecretName(std::string_view name);

 private:
  std::string redactText(std::string_view text, bool& inPrivateKey) const;
  std::string maskExact(std::string_view text) const;

  std::vector<std::string>
      exact_;  // longest first, so a secret that contains another is masked whole
};

}  // namespace hydra::core
