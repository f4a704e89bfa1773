#include "core/util/host_name.h"

#include <unistd.h>

namespace hydra::core {

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace hydra::core
