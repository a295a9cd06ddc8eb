// Deterministic mutation fuzzing of the whole parse chain (STYLE.md "Fuzz
// the parsers"): seed frames are bit-flipped, overwritten, cut short,
// extended and given lying length fields by a fixed-seed PRNG. Every result
// must be either an error or views whose spans lie inside the input; what
// parses must also emit and parse back to the same values. Each mutated
// frame lives in a heap block of exactly its size, so under ASan (the CI's
// sanitizer build runs suite 'stack') a read one byte past it aborts.

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/xoshiro.hh"
#include "stack/wire/arp.hh"
#include "stack/wire/endian.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmp.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv4.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/ndp.hh"
#include "stack/wire/tcp.hh"
#include "stack/wire/udp.hh"
#include "tests/stack/wire/frames.hh"
#include "tests/stack/wire/ipv6_packets.hh"

namespace affine::stack {
namespace {

constexpr int iterations = 200'000;

// Builds a frame from the emitters: Ethernet (optionally tagged), IPv4
// with `ip_options` bytes of options (a multiple of 4), and `transport`.
std::vector<std::byte> build_frame(std::optional<vlan_tag> vlan, ip_protocol protocol,
                                   std::span<const std::byte> transport, std::size_t ip_options = 0,
                                   std::uint16_t fragment_offset = 0, bool more_fragments = false) {
  const ethernet_header eth{.dst = {2, 0, 0, 0, 0, 1}, .src = {2, 0, 0, 0, 0, 2}, .type = ether_type::ipv4, .vlan = vlan};
  const std::size_t ip_header = 20 + ip_options;
  std::vector<std::byte> f(eth.length() + ip_header + transport.size());
  EXPECT_TRUE(emit_ethernet(eth, f));
  const auto ip = std::span(f).subspan(eth.length());
  EXPECT_TRUE(emit_ipv4({.src = 0x0a000001,
                         .dst = 0x0a000002,
                         .protocol = protocol,
                         .id = 42,
                         .more_fragments = more_fragments,
                         .fragment_offset = fragment_offset,
                         .payload_length = std::uint16_t(transport.size() + ip_options)},
                        ip, checksum_mode::offload));
  // Options: IHL grows, total length stays right (payload_length counted them), all NOPs.
  ip[0] = std::byte(0x40 | ip_header / 4);
  std::memset(ip.data() + 20, 1, ip_options);
  store_be16(ip.data() + 10, internet_checksum(ip.first(ip_header)));  // offload left the field zero
  std::memcpy(ip.data() + ip_header, transport.data(), transport.size());
  return f;
}

// An untagged frame holding an IPv6 packet with hop limit 255 and `icmp`.
std::vector<std::byte> build_frame6(const ipv6_bytes& src, const ipv6_bytes& dst, std::span<const std::byte> icmp) {
  std::vector<std::byte> f(14 + 40 + icmp.size());
  EXPECT_TRUE(emit_ethernet({.dst = multicast_mac(dst), .src = {2, 0, 0, 0, 0, 9}, .type = ether_type::ipv6}, f));
  EXPECT_TRUE(emit_ipv6({.src = src, .dst = dst, .next = next_header::icmpv6, .hop_limit = ndp_hop_limit,
                         .payload_length = std::uint16_t(icmp.size())},
                        std::span(f).subspan(14)));
  std::memcpy(f.data() + 54, icmp.data(), icmp.size());
  return f;
}

std::vector<std::vector<std::byte>> seed_frames() {
  std::vector<std::vector<std::byte>> seeds;
  for (const auto hex : {test::tcp_syn_hex, test::tcp_rst_ack_hex, test::icmp_echo_request_hex,
                         test::icmp_echo_reply_hex, test::udp_hex, test::icmp_port_unreachable_hex})
    seeds.push_back(test::from_hex(hex));

  std::vector<std::byte> arp(14 + 28 + 18);  // padded to 60 bytes
  EXPECT_TRUE(emit_ethernet({.dst = broadcast_mac, .src = {2, 0, 0, 0, 0, 2}, .type = ether_type::arp}, arp));
  EXPECT_TRUE(emit_arp({.op = arp_op::request, .sender_mac = {2, 0, 0, 0, 0, 2}, .sender_ip = 0x0a000001,
                        .target_ip = 0x0a000002},
                       std::span(arp).subspan(14)));
  seeds.push_back(arp);

  // A tagged data segment with timestamps and SACK, over IPv4 with options.
  const auto payload = test::bytes_of({'p', 'a', 'y', 'l', 'o', 'a', 'd'});
  tcp_segment seg;
  seg.src_port = 3306;
  seg.dst_port = 50000;
  seg.seq = seq32(1);
  seg.ack = seq32(2);
  seg.psh = true;
  seg.window = 1000;
  seg.options.timestamps = tcp_timestamps{5, 6};
  seg.options.sack_count = 3;
  seg.options.sack[0] = {seq32(10), seq32(20)};
  seg.options.sack[1] = {seq32(30), seq32(40)};
  seg.options.sack[2] = {seq32(50), seq32(60)};
  seg.payload = payload;
  std::vector<std::byte> tcp(20 + 40 + payload.size());
  EXPECT_TRUE(emit_tcp(seg, 0x0a000001, 0x0a000002, tcp, checksum_mode::software));
  seeds.push_back(build_frame(vlan_tag{.id = 100}, ip_protocol::tcp, tcp, 8));

  // Fragmentation needed, quoting a TCP header.
  std::vector<std::byte> quote(28, std::byte{0});
  quote[0] = std::byte{0x45};
  quote[9] = std::byte{6};
  std::vector<std::byte> icmp(8 + quote.size());
  EXPECT_TRUE(emit_icmp({.type = icmp_type::dest_unreachable, .code = 4, .next_hop_mtu = 1280, .data = quote}, icmp));
  seeds.push_back(build_frame(std::nullopt, ip_protocol::icmp, icmp));

  // A later fragment of a UDP datagram: its payload is no UDP header.
  seeds.push_back(build_frame(std::nullopt, ip_protocol::udp, test::bytes_of({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), 0,
                              1480, true));

  // IPv6: Linux's ICMPv6, Neighbor Discovery and MLD, and a router
  // advertisement and a redirect written here.
  for (const auto hex : {test::mld_report_hex, test::ns_dad_hex, test::rs_hex, test::ns_hex, test::na_hex,
                         test::na_probe_reply_hex, test::icmpv6_echo_request_hex, test::icmpv6_port_unreachable_hex})
    seeds.push_back(test::from_hex(hex));
  const auto router = test::ip6("fe80::1");
  test::message_builder ra;
  ra.icmpv6(icmpv6_type::router_advertisement).u8(64).u8(0xc0).u16(1800).u32(30000).u32(1000);
  ra.u8(ndp_option::source_link_layer).u8(1).mac({2, 0, 0, 0, 0, 9});
  ra.u8(ndp_option::mtu).u8(1).u16(0).u32(1500);
  ra.u8(ndp_option::prefix_information).u8(4).u8(64).u8(0xc0).u32(86400).u32(14400).u32(0).address(
      test::ip6("2001:db8:77::"));
  seeds.push_back(build_frame6(router, all_nodes, ra.finish(router, all_nodes)));
  test::message_builder redirect;
  redirect.icmpv6(icmpv6_type::redirect).u32(0).address(test::ip6("fe80::99")).address(test::ip6("2001:db8:99::1"));
  redirect.u8(ndp_option::target_link_layer).u8(1).mac({2, 0, 0, 0, 0, 0x99});
  redirect.u8(ndp_option::redirected_header).u8(7).zeros(6);
  redirect.u32(0x6000'0000).u16(8).u8(next_header::udp).u8(64).address(test::a_global).address(
      test::ip6("2001:db8:99::1"));
  redirect.u16(5000).u16(53).u16(8).u16(0);
  seeds.push_back(build_frame6(router, test::a_global, redirect.finish(router, test::a_global)));
  return seeds;
}

// The same for IPv6: the payload length, the Hop-by-Hop header's length,
// and the lengths of the Neighbor Discovery options.
std::vector<std::size_t> ipv6_length_fields(const ethernet_view& eth) {
  const std::size_t ip = eth.header_length();
  const auto v = ipv6_view::parse(eth.payload());
  if (!v) return {};
  std::vector<std::size_t> at{ip + 4, ip + 5};
  const auto upper = walk_ipv6_chain(*v);
  if (!upper) return at;
  if (upper->offset > ipv6_view::header_length) at.push_back(ip + ipv6_view::header_length + 1);
  const auto icmp = icmpv6_view::parse(upper->payload, v->src(), v->dst(), checksum_mode::offload);
  if (!icmp || icmp->type() < icmpv6_type::router_solicitation || icmp->type() > icmpv6_type::redirect) return at;
  const std::size_t icmp_at = ip + upper->offset;
  for (std::size_t o = icmpv6_view::fixed_length(std::uint8_t(icmp->type())); o + 1 < icmp->bytes().size();) {
    at.push_back(icmp_at + o + 1);
    const std::size_t length = std::size_t(icmp->bytes()[o + 1]) * 8;
    if (length == 0) break;
    o += length;
  }
  return at;
}

// Byte offsets of the length-like fields in a seed frame, where a lie does
// the most damage: IHL, total length, data offset, UDP length, option
// lengths, the quoted IHL.
std::vector<std::size_t> length_fields(std::span<const std::byte> frame) {
  std::vector<std::size_t> at;
  const auto eth = ethernet_view::parse(frame);
  if (eth && eth->type() == ether_type::ipv6) return ipv6_length_fields(*eth);
  if (!eth || eth->type() != ether_type::ipv4) return at;
  const std::size_t ip = eth->header_length();
  const auto v = ipv4_view::parse(eth->payload(), checksum_mode::offload);
  if (!v) return at;
  at.insert(at.end(), {ip, ip + 2, ip + 3});
  const std::size_t l4 = ip + v->header_length();
  switch (v->protocol()) {
    case ip_protocol::tcp: {
      at.push_back(l4 + 12);
      const auto options = std::span(frame).subspan(l4 + 20, std::size_t(frame[l4 + 12] >> 4) * 4 - 20);
      for (std::size_t i = 0; i < options.size();)
        if (options[i] == std::byte{1}) {
          ++i;
        } else {
          at.push_back(l4 + 20 + i + 1);
          i += std::size_t(options[i + 1]);
        }
      break;
    }
    case ip_protocol::udp: at.insert(at.end(), {l4 + 4, l4 + 5}); break;
    case ip_protocol::icmp: at.push_back(l4 + 8); break;
  }
  return at;
}

class mutator {
 public:
  explicit mutator(std::uint64_t seed) : rng_({mix64(seed), mix64(seed + 1), mix64(seed + 2), mix64(seed + 3)}) {}

  std::vector<std::byte> mutate(std::vector<std::byte> f, std::span<const std::size_t> lengths) {
    const int steps = 1 + int(rng_.below(3));
    for (int i = 0; i < steps; ++i) {
      switch (rng_.below(7)) {
        case 0: flip_bit(f); break;
        case 1: overwrite_byte(f); break;
        case 2: f.resize(rng_.below(f.size() + 1)); break;                           // cut short
        case 3: f.resize(f.size() + 1 + rng_.below(64), std::byte(rng_.next())); break;  // padding or garbage
        case 4:
        case 5:
          if (!lengths.empty()) lie_about_length(f, lengths[rng_.below(lengths.size())]);
          break;
        case 6: lie_about_type(f); break;
      }
    }
    return f;
  }

  bool chance(double p) { return rng_.chance(p); }

 private:
  void flip_bit(std::vector<std::byte>& f) {
    if (!f.empty()) f[rng_.below(f.size())] ^= std::byte(1u << rng_.below(8));
  }
  void overwrite_byte(std::vector<std::byte>& f) {
    if (!f.empty()) f[rng_.below(f.size())] = std::byte(rng_.next());
  }
  void lie_about_length(std::vector<std::byte>& f, std::size_t at) {
    static constexpr std::array<int, 8> extremes{0, 1, 2, 4, 5, 0x0f, 0x7f, 0xff};
    if (at >= f.size()) return;
    switch (rng_.below(3)) {
      case 0: f[at] = std::byte(extremes[rng_.below(extremes.size())]); break;
      case 1: f[at] ^= std::byte(1u << rng_.below(8)); break;
      case 2: f[at] = std::byte(int(f[at]) + int(rng_.below(17)) - 8); break;  // off by a few
    }
  }
  // The EtherType: the outer one, or where a tag's inner one sits.
  void lie_about_type(std::vector<std::byte>& f) {
    static constexpr std::array<std::uint16_t, 5> types{0x0800, 0x0806, 0x8100, 0x88a8, 0x86dd};
    const std::size_t at = rng_.chance(0.5) ? 12 : 16;
    if (at + 1 >= f.size()) return;
    store_be16(f.data() + at, types[rng_.below(types.size())]);
  }

  xoshiro256ss rng_;
};

bool inside(std::span<const std::byte> part, std::span<const std::byte> whole) {
  const std::less_equal<const std::byte*> le;
  return le(whole.data(), part.data()) && le(part.data() + part.size(), whole.data() + whole.size());
}

// What one run saw, so the test can show the fuzzing reached every layer.
struct tally {
  std::map<std::string, int> parsed;
  std::map<std::string, int> errors;  // "protocol: error"
  std::vector<std::string> failures;
  void fail(int iteration, const std::string& what) {
    if (failures.size() < 10) failures.push_back("iteration " + std::to_string(iteration) + ": " + what);
  }
};

// Parses a frame through every layer it reaches, checking each result.
class chain {
 public:
  chain(std::span<const std::byte> frame, checksum_mode mode, tally& t, int iteration)
      : frame_(frame), mode_(mode), t_(t), iteration_(iteration) {}

  void run() {
    const auto eth = ethernet_view::parse(frame_);
    if (!ok("ethernet", eth)) return;
    check(inside(eth->payload(), frame_), "ethernet payload outside the frame");
    std::array<std::byte, 18> buf{};
    const auto n = emit_ethernet(eth->header(), buf);
    check(n && ethernet_view::parse(std::span(buf).first(*n))->header() == eth->header(), "ethernet round trip");
    if (eth->type() == ether_type::arp) arp(eth->payload());
    if (eth->type() == ether_type::ipv4) ipv4(eth->payload());
    if (eth->type() == ether_type::ipv6) ipv6(eth->payload());
  }

 private:
  template <class T>
  bool ok(const char* protocol, const std::expected<T, parse_error>& r) {
    if (r) ++t_.parsed[protocol];
    else ++t_.errors[std::string(protocol) + ": " + std::string(to_string(r.error()))];
    return r.has_value();
  }
  void check(bool good, const std::string& what) {
    if (!good) t_.fail(iteration_, what);
  }

  void arp(std::span<const std::byte> bytes) {
    const auto v = arp_view::parse(bytes);
    if (!ok("arp", v)) return;
    std::array<std::byte, 28> buf{};
    check(emit_arp(v->packet(), buf) && arp_view::parse(buf)->packet() == v->packet(), "arp round trip");
  }

  void ipv4(std::span<const std::byte> bytes) {
    const auto v = ipv4_view::parse(bytes, mode_);
    if (!ok("ipv4", v)) return;
    check(inside(v->packet(), bytes) && inside(v->options(), v->packet()) && inside(v->payload(), v->packet()),
          "ipv4 span outside the packet");
    check(v->header_length() + v->payload().size() == v->total_length(), "ipv4 lengths disagree");
    std::vector<std::byte> buf(v->total_length() - v->options().size());
    check(emit_ipv4(v->header(), buf, checksum_mode::software).has_value(), "ipv4 emit");
    std::memcpy(buf.data() + 20, v->payload().data(), v->payload().size());
    const auto back = ipv4_view::parse(buf);
    check(back && back->header() == v->header(), "ipv4 round trip");
    switch (v->protocol()) {
      case ip_protocol::icmp: icmp(v->payload()); break;
      case ip_protocol::udp: udp(v->payload(), v->src(), v->dst()); break;
      case ip_protocol::tcp: tcp(v->payload(), v->src(), v->dst()); break;
    }
  }

  void icmp(std::span<const std::byte> bytes) {
    const auto v = icmp_view::parse(bytes, mode_);
    if (!ok("icmp", v)) return;
    const icmp_message m = v->message();
    check(inside(m.data, bytes), "icmp data outside the message");
    if (const auto q = v->quote()) check(inside(q->transport, m.data) && q->transport.size() >= 8, "icmp quote");
    std::vector<std::byte> buf(bytes.size());
    check(emit_icmp(m, buf).has_value(), "icmp emit");
    const auto back = icmp_view::parse(buf);
    check(back && back->type() == m.type && back->code() == m.code &&
              std::ranges::equal(back->data(), m.data) &&
              (m.type == icmp_type::dest_unreachable ? back->next_hop_mtu() == m.next_hop_mtu
                                                     : back->id() == m.id && back->seq() == m.seq),
          "icmp round trip");
  }

  void udp(std::span<const std::byte> bytes, std::uint32_t src, std::uint32_t dst) {
    const auto v = udp_view::parse(bytes, src, dst, mode_);
    if (!ok("udp", v)) return;
    check(inside(v->payload(), bytes), "udp payload outside the datagram");
    std::vector<std::byte> buf(v->length());
    check(emit_udp(v->header(), v->payload(), src, dst, buf, checksum_mode::software).has_value(), "udp emit");
    const auto back = udp_view::parse(buf, src, dst);
    check(back && back->header() == v->header() && std::ranges::equal(back->payload(), v->payload()),
          "udp round trip");
  }

  void tcp(std::span<const std::byte> bytes, std::uint32_t src, std::uint32_t dst) {
    const auto v = tcp_view::parse(bytes, src, dst, mode_);
    if (!ok("tcp", v)) return;
    const tcp_segment s = v->segment();
    check(inside(s.payload, bytes) && inside(v->option_bytes(), bytes), "tcp span outside the segment");
    check(s.options.sack_count <= 4 && s.options.window_scale.value_or(0) <= 14, "tcp options out of range");
    std::vector<std::byte> buf(20 + tcp_max_options_length + s.payload.size());
    const auto n = emit_tcp(s, src, dst, buf, checksum_mode::software);
    // Options NOP-aligned can outgrow a tightly packed original (three SACK
    // blocks, timestamps and a window scale); anything else must emit.
    if (!n) {
      check(n.error() == emit_error::options_too_long, "tcp emit");
      return;
    }
    const auto back = tcp_view::parse(std::span(buf).first(*n), src, dst);
    check(back && back->segment().options == s.options && back->segment().seq == s.seq &&
              back->segment().ack == s.ack && back->segment().control == s.control &&
              std::ranges::equal(back->payload(), s.payload),
          "tcp round trip");
  }

  void ipv6(std::span<const std::byte> bytes) {
    const auto v = ipv6_view::parse(bytes);
    if (!ok("ipv6", v)) return;
    check(inside(v->packet(), bytes) && inside(v->payload(), v->packet()), "ipv6 span outside the packet");
    std::vector<std::byte> buf(ipv6_view::header_length + v->payload().size());
    check(emit_ipv6(v->header(), buf).has_value(), "ipv6 emit");
    std::memcpy(buf.data() + ipv6_view::header_length, v->payload().data(), v->payload().size());
    const auto back = ipv6_view::parse(buf);
    check(back && back->header() == v->header(), "ipv6 round trip");
    const auto upper = walk_ipv6_chain(*v);
    if (!upper) {
      ++t_.errors["ipv6 chain: " + std::string(to_string(upper.error().reason))];
      return;
    }
    check(inside(upper->payload, v->packet()), "ipv6 upper layer outside the packet");
    if (upper->protocol == next_header::icmpv6 && !upper->fragment) icmpv6(upper->payload, v->header());
  }

  void icmpv6(std::span<const std::byte> bytes, const ipv6_header& ip) {
    const auto v = icmpv6_view::parse(bytes, ip.src, ip.dst, mode_);
    if (!ok("icmpv6", v)) return;
    check(inside(v->body(), bytes) && inside(v->data(), bytes), "icmpv6 body outside the message");
    if (const auto q = v->quote())
      check(inside(q->transport, v->data()) && (q->transport.empty() || q->transport.size() >= 8), "icmpv6 quote");
    const icmpv6_message m = v->message();
    if (v->is_error() || v->type() == icmpv6_type::echo_request || v->type() == icmpv6_type::echo_reply) {
      std::vector<std::byte> buf(bytes.size());
      const auto n = emit_icmpv6(m, ip.src, ip.dst, buf);
      check(n.has_value(), "icmpv6 emit");
      if (!n) return;
      const auto back = icmpv6_view::parse(std::span(buf).first(*n), ip.src, ip.dst);
      // An error longer than the minimum MTU allows is quoted shorter.
      check(back && back->type() == m.type && back->code() == m.code &&
                std::ranges::equal(back->data(), m.data.first(*n - icmpv6_view::header_length)),
            "icmpv6 round trip");
    }
    std::vector<std::byte> buf(32);
    switch (v->type()) {
      case icmpv6_type::neighbor_solicitation: {
        const auto ns = parse_neighbor_solicitation(*v, ip);
        if (!ok("nd", ns) || !(ns->source_link_layer || is_unspecified(ip.src))) return;
        const auto n = emit_neighbor_solicitation(ns->target, ns->source_link_layer.value_or(mac_address{}), ip.src,
                                                  ip.dst, buf);
        const auto back = parse_neighbor_solicitation(*icmpv6_view::parse(std::span(buf).first(*n), ip.src, ip.dst), ip);
        check(back && back->target == ns->target && back->source_link_layer == ns->source_link_layer, "ns round trip");
        break;
      }
      case icmpv6_type::neighbor_advertisement: {
        const auto na = parse_neighbor_advertisement(*v, ip);
        if (!ok("nd", na)) return;
        const auto n = emit_neighbor_advertisement(*na, ip.src, ip.dst, buf);
        const auto back =
            parse_neighbor_advertisement(*icmpv6_view::parse(std::span(buf).first(*n), ip.src, ip.dst), ip);
        check(back && back->target == na->target && back->target_link_layer == na->target_link_layer &&
                  back->router == na->router && back->solicited == na->solicited && back->override == na->override,
              "na round trip");
        break;
      }
      case icmpv6_type::router_solicitation: ok("nd", parse_router_solicitation(*v, ip)); break;
      case icmpv6_type::router_advertisement: {
        const auto ra = parse_router_advertisement(*v, ip);
        if (!ok("nd", ra)) return;
        for (const prefix_information p : ra->prefixes) check(p.length <= 128, "ra prefix length");
        break;
      }
      case icmpv6_type::redirect: {
        const auto r = parse_redirect(*v, ip);
        if (ok("nd", r)) check(inside(r->redirected, bytes), "redirected header outside the message");
        break;
      }
      default: break;
    }
  }

  std::span<const std::byte> frame_;
  checksum_mode mode_;
  tally& t_;
  int iteration_;
};

TEST(WireFuzz, MutatedFramesParseInsideTheirBuffersOrFail) {
  const auto seeds = seed_frames();
  std::vector<std::vector<std::size_t>> lengths;
  for (const auto& s : seeds) lengths.push_back(length_fields(s));
  mutator m(20261130);
  tally t;
  for (int i = 0; i < iterations; ++i) {
    const std::size_t which = std::size_t(i) % seeds.size();
    const auto mutated = m.mutate(seeds[which], lengths[which]);
    // Exactly the frame's size, so ASan sees a read past its end.
    const auto block = std::make_unique_for_overwrite<std::byte[]>(mutated.size());
    std::memcpy(block.get(), mutated.data(), mutated.size());
    // Mostly skip checksums, as after NIC verification, so mutations reach
    // the checks behind them; sometimes verify, so that path is fuzzed too.
    const auto mode = m.chance(0.25) ? checksum_mode::software : checksum_mode::offload;
    chain({block.get(), mutated.size()}, mode, t, i).run();
  }
  for (const auto& f : t.failures) ADD_FAILURE() << f;
  // The run reached every layer and every refusal.
  for (const char* p : {"ethernet", "arp", "ipv4", "icmp", "udp", "tcp", "ipv6", "icmpv6", "nd"})
    EXPECT_GT(t.parsed[p], 1000) << p;
  for (const char* e : {"ethernet: truncated", "ethernet: unsupported", "arp: truncated", "arp: unsupported",
                        "ipv4: truncated", "ipv4: bad_version", "ipv4: bad_header_length", "ipv4: bad_total_length",
                        "ipv4: bad_checksum", "ipv4: bad_flags", "icmp: truncated", "icmp: bad_checksum",
                        "icmp: unsupported", "icmp: bad_version", "icmp: bad_header_length", "udp: truncated",
                        "udp: bad_length", "udp: bad_checksum", "tcp: truncated", "tcp: bad_header_length",
                        "tcp: bad_checksum", "tcp: bad_flags", "tcp: bad_option", "ipv6: truncated",
                        "ipv6: bad_version", "ipv6: bad_payload_length", "ipv6 chain: bad_extension",
                        "icmpv6: truncated", "icmpv6: bad_checksum", "icmpv6: bad_version", "nd: bad_hop_limit",
                        "nd: bad_code", "nd: bad_option"})
    EXPECT_GT(t.errors[e], 0) << e;
}

}  // namespace
}  // namespace affine::stack
