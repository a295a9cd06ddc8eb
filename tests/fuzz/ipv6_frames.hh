#pragma once
// The IPv6 side of the stack fuzz target (tests/fuzz/stack.cc): the stack
// holds an IPv6 address beside its IPv4 one, and a step sends it IPv6 from
// the peer, built from the input (raw behind an IPv6 header; UDP, whole or
// in two fragments, with Destination Options or without; ICMPv6 of any type
// with its checksum right, so that Neighbor Discovery and Redirects reach
// their checks). What the stack sends over IPv6 must parse: its extension
// headers walk, ICMPv6 of the types a host sends with their checksum (an
// error quoting at least an IPv6 header), TCP and UDP with their checksum
// and a flow label (RFC 6437). A Neighbor Solicitation for the peer is
// answered, so that what the stack sends the peer goes out.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "stack/wire/ethernet.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/ndp.hh"
#include "stack/wire/tcp.hh"
#include "stack/wire/udp.hh"
#include "tests/fuzz/check.hh"

namespace affine_fuzz {

using affine::stack::ipv6_bytes;
using affine::stack::mac_address;
namespace next_header = affine::stack::next_header;

struct ipv6_ends {
  ipv6_bytes stack{};       // the stack's global address
  ipv6_bytes peer{};        // the peer's, on the same /64
  ipv6_bytes peer_link{};   // the peer's link-local address
  mac_address stack_mac{};
  mac_address peer_mac{};
  std::uint16_t bound_port = 0;  // the stack's bound UDP port
};

// An Ethernet frame with an IPv6 packet of `next` from `src` to `dst`.
inline std::vector<std::byte> ipv6_frame(const ipv6_ends& e, const ipv6_bytes& src, const ipv6_bytes& dst,
                                         std::uint8_t next, std::uint8_t hop_limit,
                                         std::span<const std::byte> payload) {
  using namespace affine::stack;
  std::vector<std::byte> f(14 + 40 + payload.size());
  const mac_address to = is_multicast(dst) ? multicast_mac(dst) : e.stack_mac;
  (void)emit_ethernet({.dst = to, .src = e.peer_mac, .type = ether_type::ipv6}, f);
  (void)emit_ipv6({.src = src, .dst = dst, .next = next, .hop_limit = hop_limit,
                   .payload_length = std::uint16_t(payload.size())},
                  std::span(f).subspan(14));
  if (!payload.empty()) std::memcpy(f.data() + 54, payload.data(), payload.size());
  return f;
}

// RFC 8200 4.5: `upper` (`next` its first header) from the peer in two
// fragments, each a Fragment header and its part: the first `first` bytes
// (a multiple of 8), the second from `second_at` (before `first`: they
// overlap, which RFC 5722 drops).
inline std::vector<std::vector<std::byte>> ipv6_fragments(const ipv6_ends& e, std::uint8_t next,
                                                          std::span<const std::byte> upper, std::size_t first,
                                                          std::size_t second_at, std::uint32_t id) {
  using namespace affine::stack;
  const auto fragment = [&](std::size_t offset, std::size_t len, bool more) {
    std::vector<std::byte> p(8 + len);
    p[0] = std::byte(next);
    p[2] = std::byte(offset >> 8);
    p[3] = std::byte((offset & 0xf8) | (more ? 1 : 0));
    for (int i = 0; i < 4; ++i) p[4 + i] = std::byte(id >> (24 - 8 * i));
    std::memcpy(p.data() + 8, upper.data() + offset, len);
    return ipv6_frame(e, e.peer, e.stack, next_header::fragment, 64, p);
  };
  return {fragment(0, first, true), fragment(second_at, upper.size() - second_at, false)};
}

// An ICMPv6 error from `src` to the stack quoting `quote`: Destination
// Unreachable with `code`, or Packet Too Big with `mtu` (RFC 4443 3.1, 3.2).
inline std::vector<std::byte> ipv6_error_frame(const ipv6_ends& e, const ipv6_bytes& src,
                                               affine::stack::icmpv6_type type, std::uint8_t code, std::uint32_t mtu,
                                               std::span<const std::byte> quote) {
  using namespace affine::stack;
  std::vector<std::byte> body(icmpv6_view::header_length + quote.size());
  const auto n = emit_icmpv6({.type = type, .code = code, .mtu = mtu, .data = quote}, src, e.stack, body);
  require(n.has_value(), "an ICMPv6 error cannot be written");
  body.resize(*n);
  return ipv6_frame(e, src, e.stack, next_header::icmpv6, 64, body);
}

// The frames of one IPv6 step. `mode`: bits 0-1 what (0: `raw` behind an
// IPv6 header, its first byte the Next Header; 1: a UDP datagram of `raw`
// to the bound port; 2: an ICMPv6 message, type and code the first two
// bytes of `raw`, hop limit 255; 3: a UDP datagram to a port nobody
// bound); bit 2: UDP in two fragments, the first 8, 16 or 24 bytes long
// (one shorter than the headers cuts the chain, RFC 7112); bit 3: a
// Destination Options header before UDP (after the Fragment header), or
// ICMPv6 from the peer's link-local address; bit 4: the fragments in
// reverse order; bit 5: ICMPv6 to all-nodes.
inline std::vector<std::vector<std::byte>> ipv6_step_frames(const ipv6_ends& e, std::uint8_t mode,
                                                            std::span<const std::byte> raw, std::uint32_t id) {
  using namespace affine::stack;
  std::vector<std::vector<std::byte>> out;
  switch (mode & 3) {
    case 0: {
      const std::uint8_t next = raw.empty() ? next_header::none : std::uint8_t(raw[0]);
      out.push_back(ipv6_frame(e, e.peer, e.stack, next, 64, raw.empty() ? raw : raw.subspan(1)));
      return out;
    }
    case 2: {
      std::vector<std::byte> m(std::max<std::size_t>(raw.size(), 2) + 2);
      m[0] = raw.size() > 0 ? raw[0] : std::byte{128};
      m[1] = raw.size() > 1 ? raw[1] : std::byte{0};
      if (raw.size() > 2) std::memcpy(m.data() + 4, raw.data() + 2, raw.size() - 2);
      const ipv6_bytes src = mode & 8 ? e.peer_link : e.peer;
      const ipv6_bytes dst = mode & 32 ? all_nodes : e.stack;
      const std::uint16_t sum = ipv6_transport_checksum(src, dst, next_header::icmpv6, {}, m, checksum_mode::software);
      m[2] = std::byte(sum >> 8);
      m[3] = std::byte(sum & 0xff);
      out.push_back(ipv6_frame(e, src, dst, next_header::icmpv6, ndp_hop_limit, m));
      return out;
    }
    default: break;
  }
  // UDP: the upper layer, behind Destination Options (PadN) where asked.
  std::vector<std::byte> upper;
  if (mode & 8) upper = {std::byte{next_header::udp}, std::byte{0}, std::byte{1}, std::byte{4},
                         std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}};
  const std::size_t at = upper.size();
  upper.resize(at + 8 + raw.size());
  const udp_header h{.src_port = 5353, .dst_port = std::uint16_t((mode & 3) == 1 ? e.bound_port : e.bound_port + 1)};
  if (!emit_udp(h, raw, ipv6_pseudo(e.peer, e.stack, next_header::udp), std::span(upper).subspan(at),
                checksum_mode::software))
    return out;
  const std::uint8_t first_next = mode & 8 ? next_header::destination : next_header::udp;
  const std::size_t first = 8 * (1 + raw.size() % 3);
  if (!(mode & 4) || upper.size() <= first) {
    out.push_back(ipv6_frame(e, e.peer, e.stack, first_next, 64, upper));
    return out;
  }
  out = ipv6_fragments(e, first_next, upper, first, first, id);
  if (mode & 16) std::swap(out[0], out[1]);
  return out;
}

// What the stack sent over IPv6, for the peer: the packet itself (without
// the Ethernet header or padding), a TCP segment in it, an answer to send
// back where one is due.
struct sent_ipv6 {
  std::span<const std::byte> packet;
  std::optional<affine::stack::tcp_segment> tcp{};  // its payload points into `packet`
  bool udp = false;                                 // a UDP datagram
  std::optional<std::vector<std::byte>> answer{};   // a Neighbor Advertisement for a solicitation naming the peer
};

// A packet the stack sent over IPv6 (after the Ethernet header) must
// parse.
inline sent_ipv6 check_sent_ipv6(const ipv6_ends& e, std::span<const std::byte> packet) {
  using namespace affine::stack;
  const auto ip = ipv6_view::parse(packet);
  require(ip.has_value(), "the stack sent an IPv6 header that does not parse");
  const ipv6_header h = ip->header();
  require(h.src == e.stack || is_link_local(h.src) || is_unspecified(h.src), "the stack sent IPv6 from another address");
  const auto up = walk_ipv6_chain(*ip);
  require(up.has_value() && !up->fragment, "the stack sent an IPv6 chain that does not walk, or a fragment");
  sent_ipv6 sent{.packet = ip->packet()};
  switch (up->protocol) {
    case next_header::tcp: {
      const auto t = tcp_view::parse(up->payload, ipv6_pseudo(h.src, h.dst, next_header::tcp));
      require(t.has_value(), "the stack sent a TCP segment over IPv6 that does not parse");
      require(h.flow_label != 0, "the stack sent a TCP segment over IPv6 without a flow label");
      sent.tcp = t->segment();
      return sent;
    }
    case next_header::udp:
      require(udp_view::parse(up->payload, ipv6_pseudo(h.src, h.dst, next_header::udp)).has_value(),
              "the stack sent a UDP datagram over IPv6 that does not parse");
      require(h.flow_label != 0, "the stack sent a UDP datagram over IPv6 without a flow label");
      sent.udp = true;
      return sent;
    case next_header::icmpv6: break;
    default: require(false, "the stack sent an unknown protocol over IPv6");
  }
  const auto m = icmpv6_view::parse(up->payload, h.src, h.dst);
  require(m.has_value(), "the stack sent an ICMPv6 message that does not parse");
  switch (m->type()) {
    case icmpv6_type::dest_unreachable:
    case icmpv6_type::time_exceeded:
    case icmpv6_type::parameter_problem:
      require(up->payload.size() >= icmpv6_view::header_length + ipv6_view::header_length,
              "the stack's ICMPv6 error quotes less than an IPv6 header");
      return sent;
    case icmpv6_type::echo_reply:
    case icmpv6_type::neighbor_advertisement:
    case icmpv6_type::router_solicitation:
    case icmpv6_type::mldv2_report: return sent;
    case icmpv6_type::neighbor_solicitation: break;
    default: require(false, "the stack sent an ICMPv6 type a host does not send");
  }
  const auto ns = parse_neighbor_solicitation(*m, h);
  require(ns.has_value(), "the stack sent a Neighbor Solicitation that does not validate");
  if ((ns->target != e.peer && ns->target != e.peer_link) || is_unspecified(h.src)) return sent;
  // RFC 4861 7.2.4: solicited, override, to the solicitation's source.
  const neighbor_advertisement na{.solicited = true, .override = true, .target = ns->target,
                                  .target_link_layer = e.peer_mac};
  std::vector<std::byte> body(32);
  const auto n = emit_neighbor_advertisement(na, ns->target, h.src, body);
  require(n.has_value(), "a Neighbor Advertisement cannot be written");
  body.resize(*n);
  sent.answer = ipv6_frame(e, ns->target, h.src, next_header::icmpv6, ndp_hop_limit, body);
  return sent;
}

}  // namespace affine_fuzz
