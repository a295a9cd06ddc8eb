#pragma once
// Which offloads a port gets: every RX/TX checksum, TSO and multi-segment TX
// the PMD offers; never scattered RX (a frame is one mbuf: packet_pool sizes
// the buffers for the MTU). The stack reads the result in port_caps and
// takes its software path for the rest.

#include <cstdint>
#include <expected>
#include <string>

#include "drivers/port.hh"

struct rte_eth_dev_info;

namespace affine::drivers::dpdk {

struct offload_choice {
  std::uint64_t rx = 0;  // RTE_ETH_RX_OFFLOAD_* to enable
  std::uint64_t tx = 0;  // RTE_ETH_TX_OFFLOAD_*
};

// The offloads to enable for `mtu` with mbufs of `data_room` bytes, writing
// what they give into `caps` (the checksum, TSO and multi-segment fields).
// `rss_hash` asks for the flow hash in the mbuf. Error when the MTU's
// frames do not fit `data_room` (dpdk_port has checked the PMD's range).
std::expected<offload_choice, std::string> choose_offloads(const rte_eth_dev_info& info, std::uint32_t mtu,
                                                          std::uint32_t data_room, bool rss_hash,
                                                          port_caps& caps);

}  // namespace affine::drivers::dpdk
