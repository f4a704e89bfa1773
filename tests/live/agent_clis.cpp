#include "tests/live/agent_clis.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace hydra::test {

namespace fs = std::filesystem;

namespace {

// Dummy credentials: each CLI refuses to start without one, and the scripted
// model accepts anything.
constexpr const char* kDummyKey = "live-test-dummy-key";

void writeFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// A JSON string literal (the values here are paths and URLs).
std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

const std::vector<std::string>& liveClis() {
  static const std::vector<std::string> clis{"claude", "codex", "gemini", "opencode"};
  return clis;
}

fs::path agentCliBin() { return HYDRA_AGENT_CLI_BIN; }

std::map<std::string, std::string> agentEnvironment(const std::string& cli,
                                                    const std::string& modelUrl,
                                                    const fs::path& home) {
  fs::create_directories(home / "tmp");
  // Every CLI keeps state, caches and temporary files under HOME and TMPDIR:
  // one of each per agent, so runs never share a session or a setting.
  std::map<std::string, std::string> env{{"HOME", home.string()},
                                         {"TMPDIR", (home / "tmp").string()}};
  if (cli == "claude") {
    env["ANTHROPIC_BASE_URL"] = modelUrl;
    env["ANTHROPIC_API_KEY"] = kDummyKey;
    // No telemetry, error reports or update checks: the scripted model is the
    // only host claude may talk to.
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1";
    env["DISABLE_TELEMETRY"] = "1";
    env["DISABLE_ERROR_REPORTING"] = "1";
  } else if (cli == "codex") {
    // codex ignores OPENAI_BASE_URL: another endpoint is a provider of its own,
    // declared in $CODEX_HOME/config.toml. gpt-5.5 is a slug codex knows, so it
    // offers apply_patch (an unknown slug gets only the shell tool).
    fs::path codexHome = home / ".codex";
    std::string config = "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\n";
    config += "[model_providers.scripted]\nname = \"scripted model\"\n";
    config += "base_url = " + tomlString(modelUrl + "/v1") + "\n";
    config += "env_key = \"SCRIPTED_MODEL_API_KEY\"\nwire_api = \"responses\"\n\n";
    config += "[analytics]\nenabled = false\n\n";
    // Plugins and apps look github.com up at start.
    config += "[features]\nplugins = false\napps = false\n";
    writeFile(codexHome / "config.toml", config);
    env["CODEX_HOME"] = codexHome.string();
    env["SCRIPTED_MODEL_API_KEY"] = kDummyKey;
  } else if (cli == "gemini") {
    // With GOOGLE_GEMINI_BASE_URL set, gemini picks the "gateway" sign-in, which
    // a non-interactive run rejects: the API key sign-in is chosen in settings.
    writeFile(home / ".gemini" / "settings.json",
              R"({"security": {"auth": {"selectedType": "gemini-api-key"}},)"
              R"( "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},)"
              R"( "general": {"disableAutoUpdate": true, "disableUpdateNag": true}})"
              "\n");
    env["GEMINI_API_KEY"] = kDummyKey;
    env["GOOGLE_GEMINI_BASE_URL"] = modelUrl;
    // The default model ("auto") first asks a router model for a JSON verdict;
    // a named model goes straight to the conversation.
    env["GEMINI_MODEL"] = "gemini-2.5-pro";
  } else if (cli == "opencode") {
    // A provider of its own (OpenAI Chat Completions) with a price, so the cost
    // opencode reports can be checked to the cent.
    env["OPENCODE_CONFIG_CONTENT"] =
        R"({"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",)"
        R"( "model": "scripted/scripted-model", "small_model": "scripted/scripted-model",)"
        R"( "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},)"
        R"( "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted model",)"
        R"( "options": {"baseURL": )" +
        jsonString(modelUrl + "/v1") + R"(, "apiKey": ")" + kDummyKey +
        R"("}, "models": {"scripted-model": {"name": "Scripted model", "tool_call": true,)"
        R"( "cost": {"input": 3, "output": 15, "cache_read": 0.3},)"
        R"( "limit": {"context": 200000, "output": 8192}}}}}})";
    // At start opencode installs its plugin packages from the npm registry
    // into ~/.config/opencode; pointed at a closed port of 127.0.0.1 that
    // fails at once, and the run goes on without them.
    env["npm_config_registry"] = "http://127.0.0.1:9";
    env["OPENCODE_DISABLE_MODELS_FETCH"] = "1";
    env["OPENCODE_DISABLE_LSP_DOWNLOAD"] = "1";
    env["OPENCODE_DISABLE_DEFAULT_PLUGINS"] = "1";
  } else {
    throw std::invalid_argument("no live setup for the CLI " + cli);
  }
  return env;
}

std::string agentTable(const std::string& name, const std::map<std::string, std::string>& env) {
  std::string out = "[agents." + name + "]\nenv = { ";
  bool first = true;
  for (const auto& [key, value] : env) {
    out += (first ? "" : ", ") + key + " = " + tomlString(value);
    first = false;
  }
  return out + " }\n\n";
}

std::string tomlString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04X", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace hydra::test
