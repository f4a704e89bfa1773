#include "core/util/proc_stat.h"

#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace hydra::core {

std::optional<std::uint64_t> processStartTime(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat", std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const std::string stat = std::move(text).str();
  // "pid (comm) state ..." where comm may hold spaces and parentheses: the
  // fields that follow start after the last ')'.
  std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  // Field 3 is the state; starttime is field 22, the 20th after the ')'.
  for (int index = 3; index <= 22 && fields >> field; ++index) {
    if (index == 3 && (field == "Z" || field == "X")) return std::nullopt;
    if (index == 22) {
      std::uint64_t ticks = 0;
      auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), ticks);
      if (ec != std::errc() || ptr != field.data() + field.size()) return std::nullopt;
      return ticks;
    }
  }
  return std::nullopt;
}

}  // namespace hydra::core
