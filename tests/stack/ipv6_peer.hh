#pragma once
// The IPv6 peer of the stack's IPv6 tests over the in-process wire
// (tests/stack/ipv6_*_test.cc): frames from fd77::1 to the stack's
// fd77::2, and the ICMPv6 and TCP the stack sends back.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "affine/address.hh"
#include "stack/stack.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/ndp.hh"
#include "stack/wire/tcp.hh"
#include "tests/stack/tcp_peer.hh"

namespace affine::stack::testing {

inline ipv6_bytes v6(std::string_view text) { return net::ipv6_address::parse(text).value().bytes; }

inline const ipv6_bytes ours = v6("fd77::2");
inline const ipv6_bytes peer = v6("fd77::1");

// An Ethernet frame to `dst_mac` carrying IPv6 from the peer: `l4` after
// the 40-byte header, Next Header `next`.
inline frame ipv6_frame(std::uint8_t next, std::span<const std::byte> l4, const ipv6_bytes& dst = ours,
                 std::uint8_t hop_limit = 64, const mac_address& dst_mac = stack_mac) {
  frame f(14 + 40 + l4.size());
  (void)emit_ethernet({.dst = dst_mac, .src = peer_mac, .type = ether_type::ipv6}, f);
  const ipv6_header h{.src = peer, .dst = dst, .next = next, .hop_limit = hop_limit,
                      .payload_length = std::uint16_t(l4.size())};
  (void)emit_ipv6(h, std::span(f).subspan(14));
  std::memcpy(f.data() + 54, l4.data(), l4.size());
  return f;
}

inline std::vector<std::byte> echo_request(const ipv6_bytes& dst = ours) {
  std::vector<std::byte> m(8 + 4);
  const std::array<std::byte, 4> data{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 9, .data = data}, peer, dst, m);
  return m;
}

inline std::vector<std::byte> solicitation(const ipv6_bytes& target, const ipv6_bytes& dst) {
  std::vector<std::byte> m(32);
  (void)emit_neighbor_solicitation(target, peer_mac, peer, dst, m);
  return m;
}

// The IPv6 frames among what the stack sent, as ICMPv6 messages.
struct sent_icmpv6 {
  ipv6_header ip;
  std::vector<std::byte> bytes;
};
inline std::vector<sent_icmpv6> icmpv6_of(const std::vector<frame>& out) {
  std::vector<sent_icmpv6> got;
  for (const frame& f : out) {
    auto eth = ethernet_view::parse(f);
    if (!eth || eth->type() != ether_type::ipv6) continue;
    auto ip = ipv6_view::parse(eth->payload());
    if (!ip || ip->next() != next_header::icmpv6) continue;
    got.push_back({ip->header(), {ip->payload().begin(), ip->payload().end()}});
  }
  return got;
}

class ipv6_input : public testing::tcp_peer {
 protected:
  ipv6_input() : tcp_peer("ipv6_input_") {}

  void with_v6(const std::function<void(stack&)>& body) {
    with_stack(
        [&](stack& st) {
          (void)drain();  // the MLD report of start-up
          body(st);
        },
        [](stack_config& sc) {
          sc.ipv6 = {{ours, 64}};
          sc.dad_transmits = 0;  // preferred at once: DAD has its own tests
        });
  }

  // The peer's solicitation for our address, which teaches the stack the
  // peer's link-layer address (RFC 4861 7.2.3) before anything it must
  // answer; what the stack sent back.
  std::vector<frame> introduce_peer() {
    send(ipv6_frame(next_header::icmpv6, solicitation(ours, solicited_node(ours)), solicited_node(ours), 255,
                    multicast_mac(solicited_node(ours))));
    return drain();
  }
};

// Bytes [offset, offset + len) of `whole` (an ICMPv6 message, or what
// `next` names) behind a Fragment header (RFC 8200 4.5) with
// identification `id`.
inline frame fragment_of(std::span<const std::byte> whole, std::size_t offset, std::size_t len, bool more,
                  std::uint32_t id = 42, std::uint8_t next = next_header::icmpv6) {
  std::vector<std::byte> l4(8);
  l4[0] = std::byte(next);
  l4[2] = std::byte(offset >> 8);
  l4[3] = std::byte((offset & 0xf8) | (more ? 1 : 0));
  for (int i = 0; i < 4; ++i) l4[4 + i] = std::byte(id >> (24 - 8 * i));
  l4.insert(l4.end(), whole.begin() + std::ptrdiff_t(offset), whole.begin() + std::ptrdiff_t(offset + len));
  return ipv6_frame(next_header::fragment, l4);
}


// The peer's TCP segment over IPv6, and the stack's out of a frame it sent.
inline frame tcp6_frame(const tcp_segment& seg) {
  std::vector<std::byte> l4(60 + seg.payload.size());
  const auto n = emit_tcp(seg, ipv6_pseudo(peer, ours, next_header::tcp), l4, checksum_mode::software);
  return ipv6_frame(next_header::tcp, std::span(l4).first(*n));
}
inline std::optional<tcp_view> tcp6_of(const frame& f) {
  auto eth = ethernet_view::parse(f);
  if (!eth || eth->type() != ether_type::ipv6) return std::nullopt;
  auto ip = ipv6_view::parse(eth->payload());
  if (!ip || ip->next() != next_header::tcp) return std::nullopt;
  auto t = tcp_view::parse(ip->payload(), ipv6_pseudo(ip->src(), ip->dst(), next_header::tcp));
  return t ? std::optional(*t) : std::nullopt;
}


}  // namespace affine::stack::testing
