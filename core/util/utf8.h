#pragma once

// Agents print whatever bytes they like; editors and JSON need valid UTF-8.
// core/ uses protocol/'s validator (protocol/utf8.h), the one hydra has.

#include "protocol/utf8.h"

namespace hydra::core {

using protocol::isValidUtf8;
using protocol::makeValidUtf8;

}  // namespace hydra::core
