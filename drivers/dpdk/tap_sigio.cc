#include "drivers/dpdk/tap_sigio.hh"

#include <fcntl.h>
#include <rte_ethdev.h>
#include <signal.h>

#include <cstring>

namespace affine::drivers::dpdk {

tap_trigger_fn quiet_tap_sigio(std::uint16_t port_id, unsigned rx_queues) {
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port_id, &info) != 0 || info.driver_name == nullptr ||
      std::strcmp(info.driver_name, "net_tap") != 0)
    return nullptr;
  struct sigaction current{};
  if (sigaction(SIGIO, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) != 0 ||
      current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN)
    return nullptr;
  // The queue fds are the RX interrupt fds (the tap itself).
  for (unsigned q = 0; q < rx_queues; ++q)
    if (rte_eth_dev_rx_intr_ctl_q_get_fd(port_id, std::uint16_t(q)) < 0) return nullptr;
  for (unsigned q = 0; q < rx_queues; ++q) {
    const int fd = rte_eth_dev_rx_intr_ctl_q_get_fd(port_id, std::uint16_t(q));
    const int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_ASYNC);
  }
  return current.sa_handler;
}

}  // namespace affine::drivers::dpdk
