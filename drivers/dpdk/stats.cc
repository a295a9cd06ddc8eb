// dpdk_port: basic stats, extended stats and link status, read from ethdev.

#include "drivers/dpdk/port.hh"

namespace affine::drivers::dpdk {

port_stats dpdk_port::stats() const {
  rte_eth_stats s{};
  port_stats out;
  if (rte_eth_stats_get(dev_.port_id, &s) != 0) return out;
  out.rx_packets = s.ipackets;
  out.rx_bytes = s.ibytes;
  out.rx_missed = s.imissed;
  out.rx_errors = s.ierrors;
  out.rx_nombuf = s.rx_nombuf;
  out.tx_packets = s.opackets;
  out.tx_bytes = s.obytes;
  out.tx_errors = s.oerrors;
  return out;
}

std::vector<std::pair<std::string, std::uint64_t>> dpdk_port::xstats() const {
  const int n = rte_eth_xstats_get_names(dev_.port_id, nullptr, 0);
  if (n <= 0) return {};
  const auto count = std::size_t(n);
  std::vector<rte_eth_xstat_name> names(count);
  std::vector<rte_eth_xstat> values(count);
  if (rte_eth_xstats_get_names(dev_.port_id, names.data(), unsigned(n)) != n) return {};
  const int got = rte_eth_xstats_get(dev_.port_id, values.data(), unsigned(n));
  if (got != n) return {};
  std::vector<std::pair<std::string, std::uint64_t>> out;
  out.reserve(count);
  for (const auto& v : values)
    if (v.id < names.size()) out.emplace_back(names[v.id].name, v.value);
  return out;
}

link_status dpdk_port::link() const {
  rte_eth_link l{};
  if (rte_eth_link_get_nowait(dev_.port_id, &l) != 0) return {};
  return {.up = l.link_status == RTE_ETH_LINK_UP,
          .speed_mbps = l.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : l.link_speed,
          .full_duplex = l.link_duplex == RTE_ETH_LINK_FULL_DUPLEX};
}

}  // namespace affine::drivers::dpdk
