#include "drivers/rss.hh"

#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace affine::drivers {

namespace {

constexpr std::size_t eth_header = 14;
constexpr std::size_t vlan_tag = 4;
constexpr std::uint16_t ethertype_ipv4 = 0x0800;
constexpr std::uint16_t ethertype_ipv6 = 0x86DD;
constexpr std::uint16_t ethertype_vlan = 0x8100;
constexpr std::uint8_t proto_tcp = 6;
constexpr std::uint8_t proto_udp = 17;

std::uint16_t load_be16(std::span<const std::byte> b, std::size_t at) {
  return std::uint16_t(std::uint16_t(b[at]) << 8 | std::uint16_t(b[at + 1]));
}

}  // namespace

std::vector<std::uint8_t> symmetric_rss_key(std::size_t bytes) {
  std::vector<std::uint8_t> key(bytes);
  for (std::size_t i = 0; i < bytes; ++i) key[i] = i % 2 == 0 ? 0x6d : 0x5a;
  return key;
}

std::uint32_t toeplitz_hash(std::span<const std::uint8_t> key, std::span<const std::uint8_t> input) {
  // The 32-bit window of the key slides one bit per input bit; every set
  // input bit XORs the window into the result (Microsoft RSS spec, "Hash
  // calculation"). Key bytes past the end read as zero.
  auto key_byte = [&](std::size_t i) -> std::uint32_t { return i < key.size() ? key[i] : 0; };
  std::uint32_t window = key_byte(0) << 24 | key_byte(1) << 16 | key_byte(2) << 8 | key_byte(3);
  std::uint32_t hash = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const std::uint32_t next = key_byte(i + 4);
    for (int bit = 7; bit >= 0; --bit) {
      if ((input[i] >> bit) & 1u) hash ^= window;
      window = window << 1 | ((next >> bit) & 1u);
    }
  }
  return hash;
}

namespace {

// IPv6 (Microsoft RSS, "IPv6 hash types"): the 16-byte source and
// destination addresses, then the ports for TCP or UDP right after the
// fixed header (extension headers are not walked).
std::optional<std::uint32_t> ipv6_rss_hash(std::span<const std::uint8_t> key, std::span<const std::byte> ip) {
  constexpr std::size_t header = 40;
  if (ip.size() < header || (std::uint8_t(ip[0]) >> 4) != 6) return std::nullopt;
  std::array<std::uint8_t, 36> input{};
  std::memcpy(input.data(), ip.data() + 8, 32);
  const auto next = std::uint8_t(ip[6]);
  std::size_t len = 32;
  if ((next == proto_tcp || next == proto_udp) && ip.size() >= header + 4) {
    std::memcpy(input.data() + 32, ip.data() + header, 4);
    len = 36;
  }
  return toeplitz_hash(key, std::span(input).first(len));
}

}  // namespace

std::optional<std::uint32_t> frame_rss_hash(std::span<const std::uint8_t> key, std::span<const std::byte> frame) {
  std::size_t at = eth_header;
  if (frame.size() < at) return std::nullopt;
  std::uint16_t type = load_be16(frame, 12);
  if (type == ethertype_vlan) {
    if (frame.size() < at + vlan_tag) return std::nullopt;
    type = load_be16(frame, 16);
    at += vlan_tag;
  }
  if (type == ethertype_ipv6) return ipv6_rss_hash(key, frame.subspan(at));
  if (type != ethertype_ipv4 || frame.size() < at + 20) return std::nullopt;
  const auto ip = frame.subspan(at);
  const std::size_t ihl = (std::size_t(ip[0]) & 0x0f) * 4;
  if ((std::uint8_t(ip[0]) >> 4) != 4 || ihl < 20 || ip.size() < ihl) return std::nullopt;

  // Input order of the spec: source address, destination address, source
  // port, destination port.
  std::array<std::uint8_t, 12> input{};
  std::memcpy(input.data(), ip.data() + 12, 8);
  const bool fragment = (load_be16(ip, 6) & 0x3fff) != 0;  // MF flag or an offset
  const auto proto = std::uint8_t(ip[9]);
  std::size_t len = 8;
  if (!fragment && (proto == proto_tcp || proto == proto_udp) && ip.size() >= ihl + 4) {
    std::memcpy(input.data() + 8, ip.data() + ihl, 4);
    len = 12;
  }
  return toeplitz_hash(key, std::span(input).first(len));
}

std::optional<std::uint32_t> flow_hash(const rte_mbuf* m, std::span<const std::uint8_t> key) {
  if (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) return m->hash.rss;
  const auto* data = rte_pktmbuf_mtod(m, const std::byte*);
  return frame_rss_hash(key, std::span(data, m->data_len));
}

std::vector<std::uint16_t> reta_from_plan(std::span<const rxq_assignment> plan, unsigned reta_size) {
  std::vector<core_id> cores;
  std::vector<std::vector<std::uint16_t>> queues_of;
  for (const auto& a : plan) {
    auto it = std::find(cores.begin(), cores.end(), a.core);
    if (it == cores.end()) {
      cores.push_back(a.core);
      queues_of.emplace_back();
      it = cores.end() - 1;
    }
    queues_of[std::size_t(it - cores.begin())].push_back(std::uint16_t(a.queue));
  }
  std::vector<std::uint16_t> entries(reta_size, 0);
  if (cores.empty()) return entries;
  for (unsigned i = 0; i < reta_size; ++i) {
    const auto& qs = queues_of[i % cores.size()];
    entries[i] = qs[(i / cores.size()) % qs.size()];
  }
  return entries;
}

}  // namespace affine::drivers
