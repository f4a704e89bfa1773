#pragma once

// This machine's name: what says where a hydra process ran (process owners,
// core/util/owner.h) and where a job ran (the executors).

#include <string>

namespace hydra::core {

// gethostname(), or "unknown" when the system will not say.
std::string hostName();

}  // namespace hydra::core
