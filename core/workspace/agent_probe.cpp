#include "core/workspace/agent_probe.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <exception>
#include <map>

#include "core/adapter/adapter.h"
#include "core/process/process.h"
#include "core/workspace/hydra_config.h"

namespace hydra::core {

namespace fs = std::filesystem;

namespace {

std::string pathVariable() {
  const char* path = std::getenv("PATH");
  return path ? path : "";
}

}  // namespace

std::optional<fs::path> locateAgentBinary(const AgentConfig& agent, const fs::path& repoRoot) {
  if (agent.binary.find('/') != std::string::npos) {
    fs::path p = fs::path(agent.binary).is_absolute() ? fs::path(agent.binary) : repoRoot / agent.binary;
    std::error_code ec;
    if (::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p, ec)) return p.lexically_normal();
    return std::nullopt;
  }
  return findExecutable(agent.binary, pathVariable());
}

std::string searchPath() { return pathVariable(); }

std::optional<std::string> agentProblem(const AgentConfig& agent, const fs::path& repoRoot) {
  if (!locateAgentBinary(agent, repoRoot)) {
    if (agent.binary.find('/') != std::string::npos) {
      return "'" + agent.binary + "' does not exist or is not executable";
    }
    return "'" + agent.binary + "' not found on PATH";
  }
  // What else its adapter needs in its environment (claude-acp: an installed claude).
  if (const Adapter* adapter = findAdapter(agent.adapter)) {
    std::map<std::string, std::string> env(agent.env.begin(), agent.env.end());
    try {
      adapter->completeEnvironment(env);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }
  return std::nullopt;
}

std::vector<AgentInfo> probeAgents(const Config& config, const std::vector<std::string>& names,
                                   const fs::path& repoRoot) {
  std::vector<AgentInfo> infos;
  boost::asio::io_context io;
  for (const auto& name : names) {
    auto agent = findAgent(config, name);
    if (!agent) continue;
    AgentInfo info;
    info.name = name;
    info.adapter = agent->adapter;
    info.binary = agent->binary;
    info.configured = config.agents.contains(name);
    auto found = locateAgentBinary(*agent, repoRoot);
    if (auto problem = agentProblem(*agent, repoRoot)) {
      info.problem = std::move(problem);
      infos.push_back(std::move(info));
      continue;
    }
    info.available = true;
    info.path = found->string();
    const Adapter* adapter = findAdapter(agent->adapter);
    auto versionArgs = adapter ? adapter->versionArgs() : std::vector<std::string>{};
    infos.push_back(std::move(info));
    if (versionArgs.empty()) continue;  // a plain command has no version option to ask
    ProcessSpec spec;
    spec.program = found->string();
    spec.args = versionArgs;
    spec.cwd = repoRoot;
    spec.timeout = std::chrono::seconds(5);
    spec.killGrace = std::chrono::milliseconds(500);
    auto index = infos.size() - 1;
    Process::start(
        io, spec,
        [&infos, index](OutputStream stream, std::string line) {
          if (stream == OutputStream::Stdout && !infos[index].version && !line.empty()) infos[index].version = line;
        },
        [](const ProcessResult&) {});
  }
  io.run();  // the version probes, all at once
  return infos;
}

}  // namespace hydra::core
