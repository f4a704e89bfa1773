#include <array>
#include <functional>

#include "core/adapter/adapter.h"
#include "core/adapter/builtin.h"

namespace hydra::core {

namespace {

// In the order `hydra` lists them: the CLIs, the ACP agents, and "command"
// last as the catch-all.
const std::array<std::reference_wrapper<const Adapter>, 12>& builtinAdapters() {
  static const std::array<std::reference_wrapper<const Adapter>, 12> adapters = {
      adapters::claudeAdapter(),      adapters::codexAdapter(),     adapters::cursorAdapter(),
      adapters::geminiAdapter(),      adapters::opencodeAdapter(),  adapters::aiderAdapter(),
      adapters::claudeAcpAdapter(),   adapters::codexAcpAdapter(),  adapters::geminiAcpAdapter(),
      adapters::opencodeAcpAdapter(), adapters::acpAdapter(),       adapters::commandAdapter(),
  };
  return adapters;
}

}  // namespace

const Adapter* findAdapter(std::string_view name) {
  for (const Adapter& adapter : builtinAdapters()) {
    if (adapter.name() == name) return &adapter;
  }
  return nullptr;
}

std::filesystem::path envPath(const std::map<std::string, std::string>& env, const std::string& name,
                              const std::filesystem::path& fallback) {
  auto it = env.find(name);
  if (it != env.end() && !it->second.empty()) return it->second;
  return fallback;
}

std::vector<std::string_view> adapterNames() {
  std::vector<std::string_view> names;
  for (const Adapter& adapter : builtinAdapters()) names.push_back(adapter.name());
  return names;
}

}  // namespace hydra::core
