#include "core/util/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hydra::core {

std::string readRegularFile(const std::filesystem::path& file, std::size_t limit) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("cannot read: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::runtime_error(std::string("cannot read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw std::runtime_error("is not a regular file");
  const auto tooLarge = [limit] { return std::runtime_error("is larger than " + std::to_string(limit) + " bytes"); };
  if (static_cast<std::size_t>(st.st_size) > limit) throw tooLarge();
  std::string content;
  char buffer[8192];
  // Up to one byte past the limit: a file that grew since fstat is still refused.
  while (content.size() <= limit) {
    const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, limit + 1 - content.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
  }
  if (content.size() > limit) throw tooLarge();
  return content;
}

}  // namespace hydra::core
