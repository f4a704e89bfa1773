#include "core/util/ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace hydra::core {
namespace {

// Whether a listening socket can be bound to the port on 127.0.0.1.
bool bindable(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd, 1) == 0;
  ::close(fd);
  return ok;
}

TEST(PortLeaseTest, LiveLeasesAreDistinctAndFreeWhenHandedOut) {
  std::vector<PortLease> leases;
  std::set<int> ports;
  for (int i = 0; i < 200; ++i) {
    leases.push_back(PortLease::acquire());
    const int port = leases.back().port();
    EXPECT_GT(port, 0);
    EXPECT_LT(port, 65536);
    EXPECT_TRUE(ports.insert(port).second) << "port " << port << " handed out twice";
  }
  EXPECT_TRUE(bindable(leases.back().port())) << "the agent can listen on its port";
}

TEST(PortLeaseTest, AMovedLeaseKeepsItsPortAndTheOneMovedFromHoldsNone) {
  PortLease first = PortLease::acquire();
  const int port = first.port();
  PortLease moved = std::move(first);
  EXPECT_EQ(moved.port(), port);
  EXPECT_EQ(first.port(), 0);  // NOLINT(bugprone-use-after-move): moved from is empty
  PortLease other = PortLease::acquire();
  EXPECT_NE(other.port(), port) << "the moved lease still holds its port";
}

}  // namespace
}  // namespace hydra::core
