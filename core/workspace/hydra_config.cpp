#include "core/workspace/hydra_config.h"

#include "core/adapter/adapter.h"
#include "core/checks/protected_paths.h"
#include "core/executor/slurm_executor.h"
#include "core/sandbox/network.h"
#include "core/scoring/parsers.h"
#include "core/scoring/test_naming.h"

namespace hydra::core {

const ConfigNames& hydraConfigNames() {
  static const ConfigNames names = [] {
    ConfigNames n;
    n.adapters = adapterNames();
    n.defaultBinary = defaultAgentBinary;
    n.defaultAllowedHosts = [](std::string_view adapter) {
      std::vector<std::string> hosts;
      if (const Adapter* found = findAdapter(adapter)) {
        for (std::string_view host : found->defaultAllowedHosts()) hosts.emplace_back(host);
      }
      return hosts;
    };
    n.networkModes = sandbox::networkModeNames();
    n.hostRuleProblem = [](std::string_view entry) {
      std::string why;
      if (sandbox::parseHostRule(entry, &why)) return std::string();
      return why.empty() ? std::string("not a host rule") : why;
    };
    const auto tests = scoring::testFormatNames();
    n.testFormats.assign(tests.begin(), tests.end());
    const auto lints = scoring::lintFormatNames();
    n.lintFormats.assign(lints.begin(), lints.end());
    n.protectedPatternProblem = [](std::string_view pattern) { return checks::protectedPatternProblem(pattern); };
    n.reservedJobOption = [](std::string_view arg) { return isReservedSbatchOption(arg); };
    n.testsByCountsOnlyReason = [](std::string_view command, std::optional<std::string_view> format, bool junit) {
      return scoring::testsByCountsOnlyReason(command, format, junit);
    };
    return n;
  }();
  return names;
}

Config loadConfig(const std::filesystem::path& repoRoot) { return loadConfig(repoRoot, hydraConfigNames()); }

Config parseConfig(std::string_view text, const std::filesystem::path& file) {
  return parseConfig(text, file, hydraConfigNames());
}

std::span<const std::string_view> knownAdapters() { return hydraConfigNames().adapters; }
std::span<const std::string_view> knownTestFormats() { return scoring::testFormatNames(); }
std::span<const std::string_view> knownLintFormats() { return scoring::lintFormatNames(); }

std::optional<std::string> defaultAgentBinary(std::string_view adapter) {
  const Adapter* found = findAdapter(adapter);
  if (!found || found->defaultBinary().empty()) return std::nullopt;
  return std::string(found->defaultBinary());
}

std::optional<AgentConfig> findAgent(const Config& config, std::string_view name) {
  if (auto it = config.agents.find(std::string(name)); it != config.agents.end()) return it->second;
  auto binary = defaultAgentBinary(name);
  if (!binary) return std::nullopt;
  AgentConfig agent;
  agent.name = std::string(name);
  agent.adapter = std::string(name);
  agent.binary = *binary;
  return agent;
}

}  // namespace hydra::core
