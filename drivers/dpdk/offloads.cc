#include "drivers/dpdk/offloads.hh"

#include <rte_ethdev.h>

#include <fmt/format.h>

#include "drivers/dpdk/eal.hh"

namespace affine::drivers::dpdk {

namespace {

bool has(std::uint64_t capa, std::uint64_t bits) { return (capa & bits) == bits; }

}  // namespace

std::expected<offload_choice, std::string> choose_offloads(const rte_eth_dev_info& info, std::uint32_t mtu,
                                                          std::uint32_t data_room, bool rss_hash,
                                                          port_caps& caps) {
  offload_choice c;
  const std::uint64_t rx = info.rx_offload_capa, tx = info.tx_offload_capa;
  // One frame, one mbuf (packet_pool sizes the buffers for the MTU): the
  // stack parses frames in place and builds them in place.
  if (frame_bytes(mtu) > data_room)
    return std::unexpected(
        fmt::format("mtu {} needs frames of {} bytes in {}-byte buffers", mtu, frame_bytes(mtu), data_room));

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
