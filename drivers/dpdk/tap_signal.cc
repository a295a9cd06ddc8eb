#include "drivers/dpdk/tap_signal.hh"

#include <fcntl.h>
#include <rte_ethdev.h>
#include <signal.h>

#include <cstring>

namespace affine::drivers::dpdk {

tap_trigger quiet_tap_signal(std::uint16_t port_id, unsigned rx_queues) {
  rte_eth_dev_info info{};
  if (rx_queues == 0 || rte_eth_dev_info_get(port_id, &info) != 0 || info.driver_name == nullptr ||
      std::strcmp(info.driver_name, "net_tap") != 0)
    return {};
  // The queue fds are the RX interrupt fds (the tap itself); all of them
  // must signal the same way, or the one trigger would not stand for them.
  int signal = -1;
  for (unsigned q = 0; q < rx_queues; ++q) {
    const int fd = rte_eth_dev_rx_intr_ctl_q_get_fd(port_id, std::uint16_t(q));
    if (fd < 0) return {};
    int s = fcntl(fd, F_GETSIG);
    if (s < 0) return {};
    if (s == 0) s = SIGIO;
    if (signal != -1 && s != signal) return {};
    signal = s;
  }
  struct sigaction current{};
  if (sigaction(signal, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) != 0 ||
      current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN)
    return {};
  for (unsigned q = 0; q < rx_queues; ++q) {
    const int fd = rte_eth_dev_rx_intr_ctl_q_get_fd(port_id, std::uint16_t(q));
    const int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_ASYNC);
  }
  return {current.sa_handler, signal};
}

}  // namespace affine::drivers::dpdk
