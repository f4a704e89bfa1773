#include "server/cli/agent_probe.h"

#include <boost/asio/io_context.hpp>
#include <cstdlib>

#include "core/adapter/adapter.h"
#include "core/process/process.h"

namespace hydra::cli {

namespace fs = std::filesystem;

namespace {

std::optional<fs::path> locate(const std::string& binary, const fs::path& repoRoot, const std::string& pathEnv) {
  if (binary.find('/') != std::string::npos) {
    fs::path p = fs::path(binary).is_absolute() ? fs::path(binary) : repoRoot / binary;
    if (::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p)) return p.lexically_normal();
    return std::nullopt;
  }
  return core::findExecutable(binary, pathEnv);
}

}  // namespace

std::vector<AgentProbe> probeAgents(const core::Config& config, const fs::path& repoRoot) {
  std::vector<std::string> names;
  for (const auto& [name, _] : config.agents) names.push_back(name);
  for (auto adapter : core::knownAdapters()) {
    if (adapter != "command" && !config.agents.contains(std::string(adapter))) names.emplace_back(adapter);
  }

  const char* pathVar = std::getenv("PATH");
  std::string pathEnv = pathVar ? pathVar : "";
  std::vector<AgentProbe> probes;
  boost::asio::io_context io;
  for (const auto& name : names) {
    auto agent = core::findAgent(config, name);
    if (!agent) continue;
    AgentProbe p;
    p.name = name;
    p.adapter = agent->adapter;
    p.binary = agent->binary;
    p.configured = config.agents.contains(name);
    auto found = locate(agent->binary, repoRoot, pathEnv);
    if (!found) {
      p.problem = agent->binary.find('/') != std::string::npos
                      ? "'" + agent->binary + "' does not exist or is not executable"
                      : "'" + agent->binary + "' not found on PATH (" + pathEnv + ")";
      probes.push_back(std::move(p));
      continue;
    }
    p.available = true;
    p.path = found->string();
    const core::Adapter* adapter = core::findAdapter(agent->adapter);
    if (adapter && agent->adapter != "command") {
      core::ProcessSpec spec;
      spec.program = p.path;
      spec.args = adapter->versionArgs();
      spec.cwd = repoRoot;
      spec.timeout = std::chrono::seconds(5);
      spec.killGrace = std::chrono::milliseconds(500);
      auto index = probes.size();
      probes.push_back(std::move(p));
      core::Process::start(
          io, spec,
          [&probes, index](core::OutputStream stream, std::string line) {
            if (stream == core::OutputStream::Stdout && probes[index].version.empty() && !line.empty()) {
              probes[index].version = line;
            }
          },
          [](const core::ProcessResult&) {});
      continue;
    }
    probes.push_back(std::move(p));
  }
  io.run();  // the version probes, all at once
  return probes;
}

boost::json::object toJson(const AgentProbe& p) {
  boost::json::object o{{"name", p.name},         {"adapter", p.adapter},   {"binary", p.binary},
                        {"configured", p.configured}, {"available", p.available}};
  o["path"] = p.available ? boost::json::value(p.path) : boost::json::value(nullptr);
  o["version"] = p.version.empty() ? boost::json::value(nullptr) : boost::json::value(p.version);
  if (!p.available) o["problem"] = p.problem;
  return o;
}

}  // namespace hydra::cli
