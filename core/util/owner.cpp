#include "core/util/owner.h"

#include <unistd.h>

#include <charconv>

#include "core/util/host_name.h"
#include "core/util/proc_stat.h"

namespace hydra::core {

namespace {

const std::string& thisHost() {
  static const std::string host = hostName();
  return host;
}

template <class T>
std::optional<T> parseNumber(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

ProcessOwner ProcessOwner::self() {
  const pid_t pid = ::getpid();
  return {static_cast<int>(pid), processStartTime(pid).value_or(0), thisHost()};
}

OwnerLife ownerLife(const ProcessOwner& owner) {
  if (!owner.host.empty() && owner.host != thisHost()) return OwnerLife::Elsewhere;
  if (owner.pid <= 0) return OwnerLife::Dead;
  const auto startTime = processStartTime(owner.pid);
  if (!startTime) return OwnerLife::Dead;
  return owner.startTime == 0 || *startTime == owner.startTime ? OwnerLife::Alive : OwnerLife::Dead;
}

std::string describe(const ProcessOwner& owner) {
  return "pid " + std::to_string(owner.pid) + " on " + (owner.host.empty() ? thisHost() : owner.host);
}

std::string toWord(const ProcessOwner& owner) {
  return std::to_string(owner.pid) + ":" + std::to_string(owner.startTime) + ":" + owner.host;
}

std::optional<ProcessOwner> parseOwnerWord(std::string_view word) {
  const auto first = word.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const auto second = word.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const auto pid = parseNumber<int>(word.substr(0, first));
  const auto start = parseNumber<std::uint64_t>(word.substr(first + 1, second - first - 1));
  const std::string_view host = word.substr(second + 1);
  if (!pid || *pid <= 0 || !start || host.find_first_of(" \t\r\n:") != std::string_view::npos) return std::nullopt;
  return ProcessOwner{*pid, *start, std::string(host)};
}

}  // namespace hydra::core
