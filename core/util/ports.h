#pragma once

// A TCP port for each agent's dev servers (HYDRA_PORT): free on the loopback
// interface when handed out, and never handed to two agents of this hydra at
// once. The port is not held open (the agent binds it), so another program
// could take it meanwhile; within hydra, leases are distinct.

namespace hydra::core {

class PortLease {
 public:
  // A port the kernel offered as free and no live lease holds. Throws
  // std::system_error when no socket can be bound.
  static PortLease acquire();

  PortLease(PortLease&& other) noexcept;
  PortLease& operator=(PortLease&& other) noexcept;
  PortLease(const PortLease&) = delete;
  PortLease& operator=(const PortLease&) = delete;
  ~PortLease();

  int port() const { return port_; }

 private:
  explicit PortLease(int port) : port_(port) {}
  void release() noexcept;

  int port_ = 0;  // 0: moved from
};

}  // namespace hydra::core
