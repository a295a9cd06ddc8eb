// Fuzz target: a frame as a driver delivers it, through the wire views of
// stack/wire/ in the order the receive path takes them: Ethernet, then ARP
// or IPv4, then ICMP (and the datagram an error quotes), UDP or TCP (and its
// options); or IPv6, its extension headers, then ICMPv6 (and the packet an
// error quotes) and Neighbor Discovery. Every view that checks a checksum
// is parsed twice, checking it (checksum_mode::software) and trusting a NIC
// to have (offload), so that mutated frames reach past the checksums.
// Invariants:
// - a view accepted with its checksum checked is accepted without it; one
//   refused without it is refused with it too, for the same reason unless
//   that reason is the checksum; one refused only with it, for the checksum;
// - every span a view hands out (payload, options, quote) lies within the
//   bytes it was given, and the lengths it reports add up;
// - the value a view reads, written back by the stack's own emitter and
//   parsed again with checksums checked, reads the same. The one refusal
//   allowed: TCP options that Linux's layout (emit_tcp_options) cannot fit
//   in 40 bytes, or a segment that this layout makes too long for IPv4.
//   An ICMPv6 error comes back quoting at most icmpv6_error_quote_max bytes;
//   a Neighbor Discovery message comes back with the options this stack
//   writes, so only what it reads is compared.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <expected>
#include <span>
#include <vector>

#include "stack/wire/arp.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmp.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv4.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/ndp.hh"
#include "stack/wire/tcp.hh"
#include "stack/wire/tcp_options.hh"
#include "stack/wire/udp.hh"
#include "tests/fuzz/check.hh"

namespace {

using namespace affine::stack;
using affine_fuzz::inside;
using affine_fuzz::require;
using affine_fuzz::touch;
using bytes_view = std::span<const std::byte>;

template <class T>
using parsed = std::expected<T, parse_error>;

// The first invariant above; returns the view parsed without the checksum.
template <class View, class Parse>
parsed<View> parse_both_ways(Parse parse) {
  const parsed<View> checked = parse(checksum_mode::software);
  const parsed<View> trusted = parse(checksum_mode::offload);
  if (checked) require(trusted.has_value(), "accepted with the checksum checked, refused without");
  if (!trusted)
    require(!checked && (checked.error() == trusted.error() || checked.error() == parse_error::bad_checksum),
            "refused without the checksum, and with it accepted or for another reason");
  if (trusted && !checked) require(checked.error() == parse_error::bad_checksum, "refused only with the checksum, "
                                                                                 "but not for the checksum");
  return trusted;
}

// `head` zero bytes, for a header to be written into, then a copy of `tail`.
std::vector<std::byte> room_for(std::size_t head, bytes_view tail) {
  std::vector<std::byte> out(head + tail.size());
  if (!tail.empty()) std::memcpy(out.data() + head, tail.data(), tail.size());
  return out;
}

bool same_segment(const tcp_segment& a, const tcp_segment& b) {
  return a.src_port == b.src_port && a.dst_port == b.dst_port && a.control == b.control && a.psh == b.psh &&
         a.seq == b.seq && a.ack == b.ack && a.window == b.window && a.urg == b.urg &&
         a.urgent_pointer == b.urgent_pointer && a.options == b.options &&
         std::ranges::equal(a.payload, b.payload);
}

bool same_message(const icmp_message& a, const icmp_message& b) {
  return a.type == b.type && a.code == b.code && a.id == b.id && a.seq == b.seq && a.next_hop_mtu == b.next_hop_mtu &&
         std::ranges::equal(a.data, b.data);
}

void check_tcp(bytes_view bytes, std::uint32_t src, std::uint32_t dst) {
  const auto v = parse_both_ways<tcp_view>([&](checksum_mode m) { return tcp_view::parse(bytes, src, dst, m); });
  if (!v) return;
  require(v->header_length() >= tcp_view::min_header_length && v->header_length() <= bytes.size(),
          "TCP header length within the segment");
  require(inside(v->option_bytes(), bytes) && inside(v->payload(), bytes), "TCP spans within the segment");
  require(v->option_bytes().size() + tcp_view::min_header_length + v->payload().size() == bytes.size(),
          "TCP header, options and payload make the segment");
  const tcp_segment seg = v->segment();
  touch(seg.payload);
  require(seg.options == v->options(), "segment() and options() read the same options");
  const auto options = parse_tcp_options(v->option_bytes());
  require(options && *options == seg.options, "parse_tcp_options and read_tcp_options agree");
  require(seg.options.sack_count <= 4 && (!seg.options.window_scale || *seg.options.window_scale <= 14),
          "options within what the emitter accepts");
  require(seg.ack.has_value() == v->ack(), "an acknowledgment number exactly when ACK is set");

  std::vector<std::byte> out(tcp_view::min_header_length + tcp_max_options_length + seg.payload.size());
  const auto n = emit_tcp(seg, src, dst, out, checksum_mode::software);
  if (!n) {
    const std::size_t options_length = tcp_options_length(seg.options);
    require((n.error() == emit_error::options_too_long && options_length > tcp_max_options_length) ||
                (n.error() == emit_error::too_long &&
                 tcp_view::min_header_length + options_length + seg.payload.size() > 0xffff - 20),
            "a parsed TCP segment is emitted again");
    return;
  }
  const auto again = tcp_view::parse(std::span(out).first(*n), src, dst, checksum_mode::software);
  require(again.has_value(), "an emitted TCP segment parses with its checksum checked");
  require(same_segment(again->segment(), seg), "an emitted TCP segment reads the same");
}

void check_udp(bytes_view bytes, std::uint32_t src, std::uint32_t dst) {
  const auto v = parse_both_ways<udp_view>([&](checksum_mode m) { return udp_view::parse(bytes, src, dst, m); });
  if (!v) return;
  require(v->length() >= udp_view::header_length && v->length() <= bytes.size(), "UDP length within the datagram");
  require(inside(v->payload(), bytes) && v->payload().size() + udp_view::header_length == v->length(),
          "UDP payload within the datagram, its length less the header");
  touch(v->payload());
  std::vector<std::byte> out(udp_view::header_length + v->payload().size());
  const auto n = emit_udp(v->header(), v->payload(), src, dst, out, checksum_mode::software);
  require(n.has_value(), "a parsed UDP datagram is emitted again");
  const auto again = udp_view::parse(std::span(out).first(*n), src, dst, checksum_mode::software);
  require(again && again->header() == v->header() && std::ranges::equal(again->payload(), v->payload()),
          "an emitted UDP datagram reads the same");
}

// The datagram an ICMP error quotes, or any bytes parsed as one.
void check_quote(bytes_view bytes) {
  const auto q = parse_ipv4_quote(bytes);
  if (!q) return;
  require(inside(q->transport, bytes) && q->transport.size() >= 8, "a quote's transport within it, 8 bytes or more");
  touch(q->transport);
}

void check_icmp(bytes_view bytes) {
  const auto v = parse_both_ways<icmp_view>([&](checksum_mode m) { return icmp_view::parse(bytes, m); });
  if (!v) return;
  require(inside(v->data(), bytes) && v->data().size() + icmp_view::header_length == bytes.size(),
          "ICMP data within the message, all of it after the header");
  const icmp_message m = v->message();
  const auto quote = v->quote();
  require(quote.has_value() == (m.type == icmp_type::dest_unreachable || m.type == icmp_type::time_exceeded),
          "a quote exactly in the errors: destination unreachable, time exceeded");
  if (quote) {
    require(inside(quote->transport, v->data()) && quote->transport.size() >= 8, "the quote within the ICMP data");
    touch(quote->transport);
  }
  std::vector<std::byte> out(icmp_view::header_length + m.data.size());
  const auto n = emit_icmp(m, out);
  require(n.has_value(), "a parsed ICMP message is emitted again");
  const auto again = icmp_view::parse(std::span(out).first(*n), checksum_mode::software);
  require(again && same_message(again->message(), m), "an emitted ICMP message reads the same");
}

void check_ipv4(bytes_view bytes) {
  check_quote(bytes);
  const auto v = parse_both_ways<ipv4_view>([&](checksum_mode m) { return ipv4_view::parse(bytes, m); });
  if (!v) return;
  const std::size_t header_length = v->header_length();
  require(header_length >= ipv4_view::min_header_length && header_length <= v->total_length() &&
              v->total_length() <= bytes.size(),
          "IPv4 header within the total length, within the buffer");
  require(inside(v->packet(), bytes) && inside(v->options(), v->packet()) && inside(v->payload(), v->packet()),
          "IPv4 spans within the datagram");
  require(header_length + v->payload().size() == v->total_length(), "IPv4 header and payload make the total length");
  const ipv4_header h = v->header();
  require(h.fragment_offset % 8 == 0 && h.payload_length == v->payload().size(), "IPv4 header fields as read");
  touch(v->options());

  auto out = room_for(ipv4_view::min_header_length, v->payload());
  const auto n = emit_ipv4(h, out, checksum_mode::software);
  require(n == ipv4_view::min_header_length, "a parsed IPv4 header is emitted again");
  const auto again = ipv4_view::parse(out, checksum_mode::software);
  require(again && again->header() == h && std::ranges::equal(again->payload(), v->payload()),
          "an emitted IPv4 datagram reads the same");

  switch (v->protocol()) {
    case ip_protocol::icmp: check_icmp(v->payload()); break;
    case ip_protocol::tcp: check_tcp(v->payload(), v->src(), v->dst()); break;
    case ip_protocol::udp: check_udp(v->payload(), v->src(), v->dst()); break;
  }
}

bool same_message(const icmpv6_message& a, const icmpv6_message& b) {
  return a.type == b.type && a.code == b.code && a.id == b.id && a.seq == b.seq && a.mtu == b.mtu &&
         a.pointer == b.pointer && std::ranges::equal(a.data, b.data);
}

// The packet an ICMPv6 error quotes, or any bytes parsed as one.
void check_ipv6_quote(bytes_view bytes) {
  const auto q = parse_ipv6_quote(bytes);
  if (!q) return;
  require(inside(q->transport, bytes) && (q->transport.empty() || q->transport.size() >= 8),
          "a quote's transport within it, none or 8 bytes or more");
  require(q->protocol.has_value() || q->transport.empty(), "an upper layer's bytes only with its protocol");
  touch(q->transport);
}

// Neighbor Discovery: what each message reads comes back from its emitter
// (NS, NA, RS) and reads the same.
void check_ndp(const icmpv6_view& v, const ipv6_header& ip) {
  std::array<std::byte, 32> out{};
  const auto again = [&](std::size_t n) {
    const auto back = icmpv6_view::parse(std::span(out).first(n), ip.src, ip.dst, checksum_mode::software);
    require(back.has_value(), "an emitted ND message parses with its checksum checked");
    return *back;
  };
  switch (v.type()) {
    case icmpv6_type::neighbor_solicitation: {
      const auto ns = parse_neighbor_solicitation(v, ip);
      // The emitter writes the link-layer address exactly when the source
      // is specified.
      if (!ns || ns->source_link_layer.has_value() == is_unspecified(ip.src)) return;
      const auto n = emit_neighbor_solicitation(ns->target, ns->source_link_layer.value_or(mac_address{}), ip.src,
                                                ip.dst, out);
      require(n.has_value(), "a parsed NS is emitted again");
      const auto back = parse_neighbor_solicitation(again(*n), ip);
      require(back && back->target == ns->target && back->source_link_layer == ns->source_link_layer,
              "an emitted NS reads the same");
      break;
    }
    case icmpv6_type::neighbor_advertisement: {
      const auto na = parse_neighbor_advertisement(v, ip);
      if (!na) return;
      const auto n = emit_neighbor_advertisement(*na, ip.src, ip.dst, out);
      require(n.has_value(), "a parsed NA is emitted again");
      const auto back = parse_neighbor_advertisement(again(*n), ip);
      require(back && back->target == na->target && back->target_link_layer == na->target_link_layer &&
                  back->router == na->router && back->solicited == na->solicited && back->override == na->override,
              "an emitted NA reads the same");
      break;
    }
    case icmpv6_type::router_solicitation: {
      const auto rs = parse_router_solicitation(v, ip);
      if (!rs || rs->source_link_layer.has_value() == is_unspecified(ip.src)) return;
      const auto n = emit_router_solicitation(rs->source_link_layer.value_or(mac_address{}), ip.src, ip.dst, out);
      require(n.has_value(), "a parsed RS is emitted again");
      const auto back = parse_router_solicitation(again(*n), ip);
      require(back && back->source_link_layer == rs->source_link_layer, "an emitted RS reads the same");
      break;
    }
    case icmpv6_type::router_advertisement: {
      const auto ra = parse_router_advertisement(v, ip);
      if (!ra) return;
      for (const prefix_information p : ra->prefixes) require(p.length <= 128, "a prefix of 128 bits at most");
      break;
    }
    case icmpv6_type::redirect: {
      const auto r = parse_redirect(v, ip);
      if (!r) return;
      require(inside(r->redirected, v.bytes()), "the redirected packet within the message");
      touch(r->redirected);
      check_ipv6_quote(r->redirected);
      break;
    }
    default: break;
  }
}

void check_icmpv6(bytes_view bytes, const ipv6_header& ip) {
  const auto v = parse_both_ways<icmpv6_view>(
      [&](checksum_mode m) { return icmpv6_view::parse(bytes, ip.src, ip.dst, m); });
  if (!v) return;
  require(v->bytes().size() == bytes.size() && bytes.size() >= icmpv6_view::fixed_length(std::uint8_t(v->type())),
          "an ICMPv6 message is all its bytes, its fixed part at least");
  require(inside(v->body(), bytes) && inside(v->data(), bytes), "ICMPv6 body and data within the message");
  const auto quote = v->quote();
  require(quote.has_value() == v->is_error(), "a quote exactly in an error");
  if (quote) require(inside(quote->transport, v->data()), "the quote within the ICMPv6 data");
  const bool echo = v->type() == icmpv6_type::echo_request || v->type() == icmpv6_type::echo_reply;
  if (echo || v->is_error()) {
    const icmpv6_message m = v->message();
    std::vector<std::byte> out(icmpv6_view::header_length + m.data.size());
    const auto n = emit_icmpv6(m, ip.src, ip.dst, out);
    require(n.has_value(), "a parsed ICMPv6 message is emitted again");
    const auto again = icmpv6_view::parse(std::span(out).first(*n), ip.src, ip.dst, checksum_mode::software);
    icmpv6_message expected = m;
    if (v->is_error()) expected.data = m.data.first(std::min(m.data.size(), icmpv6_error_quote_max));
    require(again && same_message(again->message(), expected), "an emitted ICMPv6 message reads the same");
  }
  check_ndp(*v, ip);
}

void check_ipv6(bytes_view bytes) {
  check_ipv6_quote(bytes);
  const auto v = ipv6_view::parse(bytes);
  if (!v) return;
  require(inside(v->packet(), bytes) && inside(v->payload(), v->packet()) &&
              v->packet().size() == ipv6_view::header_length + v->payload_length(),
          "IPv6 payload within the packet, its length the Payload Length");
  const ipv6_header h = v->header();
  auto out = room_for(ipv6_view::header_length, v->payload());
  require(emit_ipv6(h, out) == ipv6_view::header_length, "a parsed IPv6 header is emitted again");
  const auto again = ipv6_view::parse(out);
  require(again && again->header() == h && std::ranges::equal(again->payload(), v->payload()),
          "an emitted IPv6 packet reads the same");
  const auto upper = walk_ipv6_chain(*v);
  if (!upper) return;
  require(upper->offset >= ipv6_view::header_length && upper->offset <= v->packet().size() &&
              inside(upper->payload, v->packet()) && upper->payload.size() == v->packet().size() - upper->offset,
          "the upper layer within the packet, after the extension headers");
  touch(upper->payload);
  if (upper->protocol == next_header::icmpv6 && (!upper->fragment || upper->fragment->atomic()))
    check_icmpv6(upper->payload, h);
}

void check_arp(bytes_view bytes) {
  const auto v = arp_view::parse(bytes);
  if (!v) return;
  require(bytes.size() >= arp_view::length, "an ARP packet is 28 bytes or more");
  const arp_packet p = v->packet();
  require(p.op == arp_op::request || p.op == arp_op::reply, "an ARP request or reply");
  std::vector<std::byte> out(arp_view::length);
  require(emit_arp(p, out) == arp_view::length, "a parsed ARP packet is emitted again");
  const auto again = arp_view::parse(out);
  require(again && again->packet() == p, "an emitted ARP packet reads the same");
}

void check_frame(bytes_view frame) {
  const auto v = ethernet_view::parse(frame);
  if (!v) return;
  require(v->header_length() == (v->vlan() ? 18u : 14u) && v->header_length() <= frame.size(),
          "Ethernet header 14 bytes, 18 with a tag, within the frame");
  require(inside(v->payload(), frame) && v->payload().size() + v->header_length() == frame.size(),
          "Ethernet payload: the frame after the header");
  const ethernet_header h = v->header();
  require(h.type != ether_type::vlan, "one tag at most");
  auto out = room_for(h.length(), v->payload());
  require(emit_ethernet(h, out) == h.length(), "a parsed Ethernet header is emitted again");
  const auto again = ethernet_view::parse(out);
  require(again && again->header() == h && std::ranges::equal(again->payload(), v->payload()),
          "an emitted Ethernet frame reads the same");

  switch (v->type()) {
    case ether_type::arp: check_arp(v->payload()); break;
    case ether_type::ipv4: check_ipv4(v->payload()); break;
    case ether_type::ipv6: check_ipv6(v->payload()); break;
    default: break;  // the rest: no view
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_frame(std::as_bytes(std::span(data, size)));
  return 0;
}
