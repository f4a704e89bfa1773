#pragma once

#include <string>
#include <string_view>

namespace hydra::core {

// Standard base64 (RFC 4648) with padding.
std::string base64(std::string_view bytes);

}  // namespace hydra::core
