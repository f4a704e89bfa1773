#include "core/util/ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <set>
#include <system_error>

namespace hydra::core {

namespace {

std::mutex& leasesMutex() {
  static std::mutex m;
  return m;
}

std::set<int>& leased() {
  static std::set<int> ports;
  return ports;
}

// A port the kernel picks for a socket bound to 127.0.0.1:0.
int offeredPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t length = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) < 0) {
    const int error = errno;
    ::close(fd);
    throw std::system_error(error, std::generic_category(), "bind a port on 127.0.0.1");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

PortLease PortLease::acquire() {
  // The kernel rarely offers a port twice in a row; a few tries are plenty.
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int port = offeredPort();
    std::lock_guard lock(leasesMutex());
    if (leased().insert(port).second) return PortLease(port);
  }
  throw std::system_error(EADDRINUSE, std::generic_category(), "no free port that no agent holds");
}

PortLease::PortLease(PortLease&& other) noexcept : port_(other.port_) { other.port_ = 0; }

PortLease& PortLease::operator=(PortLease&& other) noexcept {
  if (this != &other) {
    release();
    port_ = other.port_;
    other.port_ = 0;
  }
  return *this;
}

PortLease::~PortLease() { release(); }

void PortLease::release() noexcept {
  if (port_ == 0) return;
  std::lock_guard lock(leasesMutex());
  leased().erase(port_);
  port_ = 0;
}

}  // namespace hydra::core
