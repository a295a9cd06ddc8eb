#pragma once
// A TCP or UDP flow as the local side sees it: local first, ports in host
// order. Its addresses are 16 bytes whatever the family: an IPv6 address,
// or an IPv4 one as IPv4-mapped (::ffff:a.b.c.d, RFC 4291 2.5.5.2), a form
// that never appears on the wire (rx_ipv6.cc drops it), so the family of a
// flow is the family of its addresses.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "stack/wire/checksum.hh"
#include "stack/wire/ipv6.hh"

namespace affine::stack {

using flow_address = ipv6_bytes;

constexpr flow_address v4_flow(std::uint32_t a) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, std::uint8_t(a >> 24), std::uint8_t(a >> 16),
          std::uint8_t(a >> 8), std::uint8_t(a)};
}
constexpr bool is_v4(const flow_address& a) {
  for (int i = 0; i < 10; ++i)
    if (a[i] != 0) return false;
  return a[10] == 0xff && a[11] == 0xff;
}
// Precondition: is_v4(a).
constexpr std::uint32_t v4_address(const flow_address& a) {
  return std::uint32_t(a[12]) << 24 | std::uint32_t(a[13]) << 16 | std::uint32_t(a[14]) << 8 | a[15];
}

struct flow_tuple {
  flow_address local_addr{};
  flow_address remote_addr{};
  std::uint16_t local_port = 0;
  std::uint16_t remote_port = 0;
  bool v4() const { return is_v4(remote_addr); }
  friend constexpr auto operator<=>(const flow_tuple&, const flow_tuple&) = default;
};

// The IP header in front of each of the flow's segments (no options, no
// extension headers): what an MTU loses to it.
inline std::uint32_t ip_header_bytes(const flow_tuple& t) { return t.v4() ? 20 : 40; }

// The checksum pseudo-header of the flow's segments as they arrive
// (source: the remote side) or leave (source: this side).
inline pseudo_header inbound_pseudo(const flow_tuple& t, std::uint8_t protocol) {
  if (t.v4()) return pseudo_header::ipv4(v4_address(t.remote_addr), v4_address(t.local_addr), protocol);
  return ipv6_pseudo(t.remote_addr, t.local_addr, protocol);
}
inline pseudo_header outbound_pseudo(const flow_tuple& t, std::uint8_t protocol) {
  if (t.v4()) return pseudo_header::ipv4(v4_address(t.local_addr), v4_address(t.remote_addr), protocol);
  return ipv6_pseudo(t.local_addr, t.remote_addr, protocol);
}

// The address in 32 bits for flow hashes (RPS): IPv4's own, IPv6's words
// folded.
inline std::uint32_t fold32(const flow_address& a) {
  if (is_v4(a)) return v4_address(a);
  std::uint32_t w[4];
  std::memcpy(w, a.data(), sizeof w);
  return w[0] ^ w[1] ^ w[2] ^ w[3];
}

struct flow_tuple_hash {
  std::size_t operator()(const flow_tuple& t) const noexcept {
    std::uint64_t w[4];
    std::memcpy(w, t.local_addr.data(), 16);
    std::memcpy(w + 2, t.remote_addr.data(), 16);
    std::uint64_t x = (w[0] ^ w[2] * 0x9e3779b97f4a7c15ull) ^ (w[1] ^ w[3] * 0xc2b2ae3d27d4eb4full);
    x ^= (std::uint64_t(t.local_port) << 16 | t.remote_port) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return std::size_t(x ^ (x >> 32));
  }
};

}  // namespace affine::stack
