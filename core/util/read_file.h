#pragma once

// Reading a small file that someone else controls (hydra.toml, an eval set's
// files): bounded, and never held up by what stands in its place.

#include <cstddef>
#include <filesystem>
#include <string>

namespace hydra::core {

// The content of `file`, read through any symbolic links, when it is a
// regular file of at most `limit` bytes. Throws std::runtime_error saying
// why not: "is not a regular file" (a FIFO, a device, a socket: opened
// without blocking, never read), "is larger than N bytes", or "cannot read:
// " and the system's reason.
std::string readRegularFile(const std::filesystem::path& file, std::size_t limit);

}  // namespace hydra::core
