#include "drivers/dpdk/offloads.hh"

#include <rte_ethdev.h>

#include <fmt/format.h>

namespace affine::drivers::dpdk {

namespace {

// Ethernet header, one VLAN tag and the CRC around an MTU-sized payload.
constexpr std::uint32_t frame_overhead = 14 + 4 + 4;

bool has(std::uint64_t capa, std::uint64_t bits) { return (capa & bits) == bits; }

}  // namespace

std::expected<offload_choice, std::string> choose_offloads(const rte_eth_dev_info& info, std::uint32_t mtu,
                                                          std::uint32_t data_room, bool rss_hash,
                                                          port_caps& caps) {
  if (mtu < info.min_mtu || mtu > info.max_mtu)
    return std::unexpected(fmt::format("mtu {} is outside the PMD's range {}..{}", mtu, info.min_mtu, info.max_mtu));

  offload_choice c;
  const std::uint64_t rx = info.rx_offload_capa, tx = info.tx_offload_capa;
  if (mtu + frame_overhead > data_room) {
    if (!has(rx, RTE_ETH_RX_OFFLOAD_SCATTER))
      return std::unexpected(fmt::format("mtu {} needs frames of {} bytes in {}-byte buffers, and the PMD has no "
                                         "scattered RX",
                                         mtu, mtu + frame_overhead, data_room));
    c.rx |= RTE_ETH_RX_OFFLOAD_SCATTER;
  }

  caps.rx_ipv4_checksum = has(rx, RTE_ETH_RX_OFFLOAD_IPV4_CKSUM);
  caps.rx_l4_checksum = has(rx, RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
  if (caps.rx_ipv4_checksum) c.rx |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
  if (caps.rx_l4_checksum) c.rx |= RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
  if (rss_hash && has(rx, RTE_ETH_RX_OFFLOAD_RSS_HASH)) c.rx |= RTE_ETH_RX_OFFLOAD_RSS_HASH;

  caps.tx_ipv4_checksum = has(tx, RTE_ETH_TX_OFFLOAD_IPV4_CKSUM);
  caps.tx_l4_checksum = has(tx, RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
  caps.multi_seg_tx = has(tx, RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
  // TSO hands the NIC chained segments with their checksums to fill in.
  caps.tso = has(tx, RTE_ETH_TX_OFFLOAD_TCP_TSO) && caps.tx_l4_checksum && caps.tx_ipv4_checksum;
  if (caps.tx_ipv4_checksum) c.tx |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
  if (caps.tx_l4_checksum) c.tx |= RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
  if (caps.multi_seg_tx) c.tx |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
  if (caps.tso) c.tx |= RTE_ETH_TX_OFFLOAD_TCP_TSO;
  return c;
}

}  // namespace affine::drivers::dpdk
