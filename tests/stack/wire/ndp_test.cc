// Neighbor Discovery (stack/wire/ndp.hh) read like RFC 4861: Linux's
// messages parse and the emitters write them byte for byte; then each
// rule of "Message Validation" (6.1.1, 6.1.2, 7.1.1, 7.1.2, 8.1) with the
// message it refuses and the reason it gives.

#include "stack/wire/ndp.hh"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/stack/wire/frames.hh"
#include "tests/stack/wire/ipv6_packets.hh"

namespace affine::stack {
namespace {

using test::a_global;
using test::a_link_local;
using test::a_mac;
using test::b_global;
using test::b_link_local;
using test::b_mac;
using test::captured_ipv6;
using test::ip6;
using test::message_builder;

const ipv6_bytes router = ip6("fe80::1");
const ipv6_bytes unspecified{};

ipv6_header header(const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t hop_limit = ndp_hop_limit) {
  return {.src = src, .dst = dst, .next = next_header::icmpv6, .hop_limit = hop_limit};
}

// One ND message as it arrives: the IPv6 header and the ICMPv6 bytes
// before their checksum.
struct nd_case {
  std::string name;
  ipv6_header ip;
  message_builder body;
  std::vector<std::byte> bytes() const { return body.finish(ip.src, ip.dst); }
};

// The receive path: icmpv6_view::parse, then the parse function of the
// message's type. nullopt: accepted.
std::optional<parse_error> refusal(const ipv6_header& ip, std::span<const std::byte> bytes) {
  const auto v = icmpv6_view::parse(bytes, ip.src, ip.dst);
  if (!v) return v.error();
  const auto reason = [](const auto& r) { return r ? std::nullopt : std::optional(r.error()); };
  switch (v->type()) {
    case icmpv6_type::router_solicitation: return reason(parse_router_solicitation(*v, ip));
    case icmpv6_type::router_advertisement: return reason(parse_router_advertisement(*v, ip));
    case icmpv6_type::neighbor_solicitation: return reason(parse_neighbor_solicitation(*v, ip));
    case icmpv6_type::neighbor_advertisement: return reason(parse_neighbor_advertisement(*v, ip));
    case icmpv6_type::redirect: return reason(parse_redirect(*v, ip));
    default: ADD_FAILURE() << "not ND"; return parse_error::unsupported;
  }
}
std::optional<parse_error> refusal(const nd_case& c) { return refusal(c.ip, c.bytes()); }

message_builder router_solicitation_body() {
  message_builder b;
  b.icmpv6(icmpv6_type::router_solicitation).u32(0);
  b.u8(ndp_option::source_link_layer).u8(1).mac(a_mac);
  return b;
}

// RFC 4861 4.2 with the options a router sends: its address, the link MTU,
// two prefixes, and a Recursive DNS Server option (type 25, RFC 8106) this
// stack does not read.
message_builder router_advertisement_body() {
  message_builder b;
  b.icmpv6(icmpv6_type::router_advertisement).u8(64).u8(0xc0).u16(1800).u32(30000).u32(1000);
  b.u8(ndp_option::source_link_layer).u8(1).mac(b_mac);
  b.u8(ndp_option::mtu).u8(1).u16(0).u32(1500);
  b.u8(ndp_option::prefix_information).u8(4).u8(64).u8(0xc0).u32(86400).u32(14400).u32(0).address(ip6("2001:db8:77::"));
  b.u8(25).u8(3).u16(0).u32(600).address(ip6("2001:db8::53"));
  b.u8(ndp_option::prefix_information).u8(4).u8(48).u8(0x80).u32(0xffff'ffff).u32(0xffff'ffff).u32(0).address(
      ip6("2001:db8:78::"));
  return b;
}

message_builder neighbor_solicitation_body(const ipv6_bytes& target = b_global, bool with_address = true) {
  message_builder b;
  b.icmpv6(icmpv6_type::neighbor_solicitation).u32(0).address(target);
  if (with_address) b.u8(ndp_option::source_link_layer).u8(1).mac(a_mac);
  return b;
}

message_builder neighbor_advertisement_body(std::uint32_t flags = 0x6000'0000, const ipv6_bytes& target = b_global) {
  message_builder b;
  b.icmpv6(icmpv6_type::neighbor_advertisement).u32(flags).address(target);
  b.u8(ndp_option::target_link_layer).u8(1).mac(b_mac);
  return b;
}

// RFC 4861 4.5: the router tells a that 2001:db8:99::1 is better reached
// through the router fe80::99, quoting what a sent.
message_builder redirect_body(const ipv6_bytes& target = ip6("fe80::99"),
                              const ipv6_bytes& destination = ip6("2001:db8:99::1")) {
  message_builder b;
  b.icmpv6(icmpv6_type::redirect).u32(0).address(target).address(destination);
  b.u8(ndp_option::target_link_layer).u8(1).mac({2, 0, 0, 0, 0, 0x99});
  b.u8(ndp_option::redirected_header).u8(7).zeros(6);
  b.u32(0x6000'0000).u16(8).u8(next_header::udp).u8(64).address(a_global).address(destination);
  b.u16(5000).u16(53).u16(8).u16(0);
  return b;
}

// One valid message of each type, from the sender the RFC expects.
std::vector<nd_case> valid_messages() {
  return {
      {"router solicitation", header(a_link_local, all_routers), router_solicitation_body()},
      {"router advertisement", header(router, all_nodes), router_advertisement_body()},
      {"neighbor solicitation", header(a_global, solicited_node(b_global)), neighbor_solicitation_body()},
      {"neighbor advertisement", header(b_global, a_global), neighbor_advertisement_body()},
      {"redirect", header(router, a_global), redirect_body()},
  };
}

TEST(Ndp, ValidMessagesOfEachTypeAreAccepted) {
  for (const auto& c : valid_messages()) EXPECT_EQ(refusal(c), std::nullopt) << c.name;
}

// RFC 4291 2.7.1, RFC 2464 7: where a's solicitation for b went.
TEST(Ndp, SolicitedNodeGroupAndItsEthernetAddress_RFC4291_2_7_1) {
  const captured_ipv6 ns(test::ns_hex);
  EXPECT_EQ(solicited_node(b_global), ns.ip().dst());
  EXPECT_EQ(solicited_node(b_global), ip6("ff02::1:ff00:2"));
  EXPECT_EQ(solicited_node(ip6("2001:db8::abcd:ef12:3456")), ip6("ff02::1:ff12:3456"));
  EXPECT_TRUE(is_solicited_node(ip6("ff02::1:ff12:3456")));
  EXPECT_FALSE(is_solicited_node(ip6("ff02::1:fe12:3456")));
  EXPECT_FALSE(is_solicited_node(all_nodes));
  const mac_address dst_mac{0x33, 0x33, 0xff, 0, 0, 2};
  EXPECT_EQ(multicast_mac(ns.ip().dst()), dst_mac);
  EXPECT_TRUE(std::ranges::equal(ns.frame().first(6), std::as_bytes(std::span(dst_mac))));
  EXPECT_EQ(multicast_mac(all_routers), (mac_address{0x33, 0x33, 0, 0, 0, 2}));
}

// RFC 4861 4.3, 7.2.2: a's solicitation for b, to b's solicited-node
// group, with a's link-layer address; written here, it is Linux's.
TEST(Ndp, NeighborSolicitationRoundTripsAndMatchesLinux_RFC4861_4_3) {
  const captured_ipv6 c(test::ns_hex);
  const auto ns = parse_neighbor_solicitation(c.icmp(), c.ip().header());
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->target, b_global);
  EXPECT_EQ(ns->source_link_layer, a_mac);
  std::vector<std::byte> out(32);
  ASSERT_EQ(emit_neighbor_solicitation(b_global, a_mac, a_global, solicited_node(b_global), out), 32u);
  EXPECT_EQ(out, c.upper_bytes());
}

// RFC 4862 5.4.2: Duplicate Address Detection solicits from the
// unspecified address, without a link-layer address. Linux adds a Nonce
// (type 14, RFC 7527), which this stack does not know and skips.
TEST(Ndp, DuplicateAddressDetectionSolicitationHasNoLinkLayerAddress_RFC4862_5_4_2) {
  const captured_ipv6 c(test::ns_dad_hex);
  EXPECT_EQ(c.ip().src(), unspecified);
  const auto ns = parse_neighbor_solicitation(c.icmp(), c.ip().header());
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->target, b_global);
  EXPECT_FALSE(ns->source_link_layer);
  std::vector<std::byte> out(32);
  ASSERT_EQ(emit_neighbor_solicitation(b_global, b_mac, unspecified, solicited_node(b_global), out), 24u);
  EXPECT_TRUE(std::ranges::equal(std::span(out).subspan(4, 20), c.upper().subspan(4, 20)));
  const auto v = icmpv6_view::parse(std::span(out).first(24), unspecified, solicited_node(b_global));
  ASSERT_TRUE(v);
  const auto back = parse_neighbor_solicitation(*v, header(unspecified, solicited_node(b_global)));
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->source_link_layer);
}

// RFC 4861 4.4, 7.2.4: b's answer, Solicited and Override, with its
// link-layer address; and a's answer to a unicast probe, without one.
TEST(Ndp, NeighborAdvertisementRoundTripsAndMatchesLinux_RFC4861_4_4) {
  const captured_ipv6 c(test::na_hex);
  const auto na = parse_neighbor_advertisement(c.icmp(), c.ip().header());
  ASSERT_TRUE(na);
  EXPECT_FALSE(na->router);
  EXPECT_TRUE(na->solicited);
  EXPECT_TRUE(na->override);
  EXPECT_EQ(na->target, b_global);
  EXPECT_EQ(na->target_link_layer, b_mac);
  std::vector<std::byte> out(32);
  ASSERT_EQ(emit_neighbor_advertisement(*na, b_global, a_global, out), 32u);
  EXPECT_EQ(out, c.upper_bytes());

  const captured_ipv6 probe(test::na_probe_reply_hex);
  const auto reply = parse_neighbor_advertisement(probe.icmp(), probe.ip().header());
  ASSERT_TRUE(reply);
  EXPECT_TRUE(reply->solicited);
  EXPECT_FALSE(reply->override);
  EXPECT_FALSE(reply->target_link_layer);
  ASSERT_EQ(emit_neighbor_advertisement(*reply, a_global, b_link_local, out), 24u);
  EXPECT_TRUE(std::ranges::equal(std::span(out).first(24), probe.upper()));

  // A router's unsolicited advertisement to all nodes.
  const neighbor_advertisement unsolicited{.router = true, .override = true, .target = a_global,
                                           .target_link_layer = a_mac};
  ASSERT_EQ(emit_neighbor_advertisement(unsolicited, a_global, all_nodes, out), 32u);
  const auto v = icmpv6_view::parse(out, a_global, all_nodes);
  ASSERT_TRUE(v);
  const auto back = parse_neighbor_advertisement(*v, header(a_global, all_nodes));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->router);
  EXPECT_FALSE(back->solicited);
  EXPECT_TRUE(back->override);
  EXPECT_EQ(back->target_link_layer, a_mac);
}

// RFC 4861 4.1, 6.3.7: a's solicitation to all routers, with its address;
// from the unspecified address, without.
TEST(Ndp, RouterSolicitationRoundTripsAndMatchesLinux_RFC4861_4_1) {
  const captured_ipv6 c(test::rs_hex);
  const auto rs = parse_router_solicitation(c.icmp(), c.ip().header());
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->source_link_layer, a_mac);
  std::vector<std::byte> out(16);
  ASSERT_EQ(emit_router_solicitation(a_mac, a_link_local, all_routers, out), 16u);
  EXPECT_EQ(out, c.upper_bytes());
  ASSERT_EQ(emit_router_solicitation(a_mac, unspecified, all_routers, out), 8u);
  const auto v = icmpv6_view::parse(std::span(out).first(8), unspecified, all_routers);
  ASSERT_TRUE(v);
  const auto back = parse_router_solicitation(*v, header(unspecified, all_routers));
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->source_link_layer);
}

TEST(Ndp, RouterAdvertisementReadsItsFieldsAndOptions_RFC4861_4_2) {
  const nd_case c{"", header(router, all_nodes), router_advertisement_body()};
  const auto bytes = c.bytes();
  const auto v = icmpv6_view::parse(bytes, router, all_nodes);
  ASSERT_TRUE(v);
  const auto ra = parse_router_advertisement(*v, c.ip);
  ASSERT_TRUE(ra);
  EXPECT_EQ(ra->cur_hop_limit, 64);
  EXPECT_TRUE(ra->managed);
  EXPECT_TRUE(ra->other);
  EXPECT_EQ(ra->router_lifetime, 1800);
  EXPECT_EQ(ra->reachable_time, 30000u);
  EXPECT_EQ(ra->retrans_timer, 1000u);
  EXPECT_EQ(ra->source_link_layer, b_mac);
  EXPECT_EQ(ra->mtu, 1500u);
  // RFC 4861 4.6.2: both prefixes, in order, past the option not known.
  std::vector<prefix_information> prefixes(ra->prefixes.begin(), ra->prefixes.end());
  ASSERT_EQ(prefixes.size(), 2u);
  EXPECT_EQ(prefixes[0], (prefix_information{.length = 64, .on_link = true, .autonomous = true,
                                             .valid_lifetime = 86400, .preferred_lifetime = 14400,
                                             .prefix = ip6("2001:db8:77::")}));
  EXPECT_EQ(prefixes[1], (prefix_information{.length = 48, .on_link = true, .autonomous = false,
                                             .valid_lifetime = 0xffff'ffff, .preferred_lifetime = 0xffff'ffff,
                                             .prefix = ip6("2001:db8:78::")}));
  // With no options: no prefixes, flags clear.
  message_builder bare;
  bare.icmpv6(icmpv6_type::router_advertisement).u8(0).u8(0).u16(0).u32(0).u32(0);
  const auto bare_bytes = bare.finish(router, all_nodes);
  const auto plain = parse_router_advertisement(*icmpv6_view::parse(bare_bytes, router, all_nodes), c.ip);
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->prefixes.empty());
  EXPECT_FALSE(plain->managed);
  EXPECT_FALSE(plain->mtu);
}

TEST(Ndp, RedirectReadsTargetDestinationAndTheRedirectedPacket_RFC4861_4_5) {
  const nd_case c{"", header(router, a_global), redirect_body()};
  const auto bytes = c.bytes();
  const auto r = parse_redirect(*icmpv6_view::parse(bytes, router, a_global), c.ip);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->target, ip6("fe80::99"));
  EXPECT_EQ(r->destination, ip6("2001:db8:99::1"));
  EXPECT_EQ(r->target_link_layer, (mac_address{2, 0, 0, 0, 0, 0x99}));
  // RFC 4861 4.6.3: after six reserved bytes, the packet as quoted.
  const auto quote = parse_ipv6_quote(r->redirected);
  ASSERT_TRUE(quote);
  EXPECT_EQ(quote->header.src, a_global);
  EXPECT_EQ(quote->protocol, next_header::udp);
  EXPECT_EQ(load_be16(quote->transport.data() + 2), 53);
}

// RFC 4861 6.1.1 and its siblings: options of unknown types, and options
// the message does not carry, are ignored; of a repeated one, the first
// counts.
TEST(Ndp, UnknownAndMisplacedOptionsAreSkipped_RFC4861_7_1_1) {
  auto ns = neighbor_solicitation_body(b_global, false);
  ns.u8(200).u8(2).zeros(14);                               // unknown
  ns.u8(ndp_option::mtu).u8(1).u16(0).u32(1280);            // not an NS option
  ns.u8(ndp_option::target_link_layer).u8(1).mac(b_mac);    // nor this
  ns.u8(ndp_option::source_link_layer).u8(1).mac(a_mac);
  ns.u8(ndp_option::source_link_layer).u8(1).mac(b_mac);    // repeated
  const nd_case c{"", header(a_global, solicited_node(b_global)), ns};
  const auto bytes = c.bytes();
  const auto parsed = parse_neighbor_solicitation(*icmpv6_view::parse(bytes, a_global, c.ip.dst), c.ip);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->source_link_layer, a_mac);

  // An advertisement reads the target's address, not a source's.
  auto na = neighbor_advertisement_body();
  na.u8(ndp_option::source_link_layer).u8(1).mac(a_mac);
  EXPECT_EQ(refusal({"", header(b_global, a_global), na}), std::nullopt);
}

// RFC 4861 6.1.1, 6.1.2, 7.1.1, 7.1.2, 8.1: "The IP Hop Limit field has a
// value of 255, i.e., the packet could not possibly have been forwarded by
// a router."
TEST(NdpValidation, HopLimitUnder255IsRefused_RFC4861_7_1_1) {
  for (auto c : valid_messages()) {
    for (const std::uint8_t hop_limit : {254, 64, 1}) {
      c.ip.hop_limit = hop_limit;
      EXPECT_EQ(refusal(c), parse_error::bad_hop_limit) << c.name << ", hop limit " << int(hop_limit);
    }
  }
}

// The same sections: "ICMP Code is 0."
TEST(NdpValidation, NonzeroCodeIsRefused_RFC4861_7_1_1) {
  for (auto c : valid_messages()) {
    auto bytes = c.body.bytes();
    bytes[1] = std::byte{1};
    set_icmpv6_checksum(bytes, c.ip.src, c.ip.dst);
    EXPECT_EQ(refusal(c.ip, bytes), parse_error::bad_code) << c.name;
  }
}

// The same sections: "ICMP length (derived from the IP length) is N or
// more octets": 8 (RS), 16 (RA), 24 (NS, NA), 40 (Redirect).
TEST(NdpValidation, ShorterThanTheFixedPartIsTruncated_RFC4861_7_1_1) {
  for (const auto& c : valid_messages()) {
    auto bytes = c.body.bytes();
    const std::size_t fixed = icmpv6_view::fixed_length(std::uint8_t(bytes[0]));
    bytes.resize(fixed - 1);
    set_icmpv6_checksum(bytes, c.ip.src, c.ip.dst);
    EXPECT_EQ(refusal(c.ip, bytes), parse_error::truncated) << c.name;
    bytes.resize(fixed);  // the fixed part alone, no options: fine
    set_icmpv6_checksum(bytes, c.ip.src, c.ip.dst);
    EXPECT_NE(refusal(c.ip, bytes), parse_error::truncated) << c.name;
  }
}

// The same sections: "All included options have a length that is greater
// than zero." (RFC 4861 4.6: "Nodes MUST silently discard an ND packet
// that contains an option with length zero.")
TEST(NdpValidation, OptionOfLengthZeroIsRefused_RFC4861_4_6) {
  for (auto c : valid_messages()) {
    c.body.u8(200).u8(0).zeros(6);
    EXPECT_EQ(refusal(c), parse_error::bad_option) << c.name;
  }
}

// RFC 4861 4.6: an option's length counts 8-byte units of the message; one
// that runs past it, or a last byte too short to hold one, is malformed.
TEST(NdpValidation, OptionPastTheMessageIsRefused_RFC4861_4_6) {
  for (auto c : valid_messages()) {
    auto past = c;
    past.body.u8(200).u8(2).zeros(6);
    EXPECT_EQ(refusal(past), parse_error::bad_option) << c.name;
    c.body.u8(200);
    EXPECT_EQ(refusal(c), parse_error::bad_option) << c.name << ", one byte";
  }
}

// RFC 2464 8: on Ethernet a link-layer address option is one unit long.
TEST(NdpValidation, LinkLayerOptionOfAnotherLengthIsRefused_RFC2464_8) {
  auto ns = neighbor_solicitation_body(b_global, false);
  ns.u8(ndp_option::source_link_layer).u8(2).mac(a_mac).zeros(8);
  EXPECT_EQ(refusal({"", header(a_global, solicited_node(b_global)), ns}), parse_error::bad_option);
  auto na = neighbor_advertisement_body();
  na.u8(ndp_option::target_link_layer).u8(2).mac(b_mac).zeros(8);  // even second
  EXPECT_EQ(refusal({"", header(b_global, a_global), na}), parse_error::bad_option);
}

// RFC 4861 6.1.1: "If the IP source address is the unspecified address,
// there is no source link-layer address option in the message."
TEST(NdpValidation, RouterSolicitationFromUnspecifiedWithLinkLayerAddressIsRefused_RFC4861_6_1_1) {
  EXPECT_EQ(refusal({"", header(unspecified, all_routers), router_solicitation_body()}), parse_error::bad_option);
  message_builder without;
  without.icmpv6(icmpv6_type::router_solicitation).u32(0);
  EXPECT_EQ(refusal({"", header(unspecified, all_routers), without}), std::nullopt);
}

// RFC 4861 6.1.2: "IP Source Address is a link-local address. Routers must
// use their link-local address as the source for Router Advertisement".
TEST(NdpValidation, RouterAdvertisementNotFromLinkLocalIsRefused_RFC4861_6_1_2) {
  for (const auto& src : {ip6("2001:db8:77::1"), unspecified, ip6("fec0::1"), ip6("ff02::1")})
    EXPECT_EQ(refusal({"", header(src, all_nodes), router_advertisement_body()}), parse_error::bad_source);
}

// RFC 4861 4.6.2: the prefix option is 32 bytes of fields, and a prefix
// length counts at most 128 bits.
TEST(NdpValidation, PrefixInformationThatCannotBeReadIsRefused_RFC4861_4_6_2) {
  auto short_one = router_advertisement_body();
  short_one.u8(ndp_option::prefix_information).u8(3).u8(64).u8(0xc0).u32(1).u32(1).u32(0).zeros(8);
  EXPECT_EQ(refusal({"", header(router, all_nodes), short_one}), parse_error::bad_option);
  auto too_long = router_advertisement_body();
  too_long.u8(ndp_option::prefix_information).u8(4).u8(129).u8(0xc0).u32(1).u32(1).u32(0).address(
      ip6("2001:db8:79::"));
  EXPECT_EQ(refusal({"", header(router, all_nodes), too_long}), parse_error::bad_option);
  // In a message that does not carry prefixes it is skipped, read or not.
  auto ns = neighbor_solicitation_body();
  ns.u8(ndp_option::prefix_information).u8(1).zeros(6);
  EXPECT_EQ(refusal({"", header(a_global, solicited_node(b_global)), ns}), std::nullopt);
}

// RFC 4861 7.1.1: "Target Address is not a multicast address."
TEST(NdpValidation, SolicitationForAMulticastTargetIsRefused_RFC4861_7_1_1) {
  const nd_case c{"", header(a_global, solicited_node(b_global)), neighbor_solicitation_body(all_nodes)};
  EXPECT_EQ(refusal(c), parse_error::bad_target);
}

// RFC 4861 7.1.1: "If the IP source address is the unspecified address,
// the IP destination address is a solicited-node multicast address."
TEST(NdpValidation, DadSolicitationNotToASolicitedNodeGroupIsRefused_RFC4861_7_1_1) {
  for (const auto& dst : {b_global, all_nodes, ip6("ff02::1:fe00:2")}) {
    const nd_case c{"", header(unspecified, dst), neighbor_solicitation_body(b_global, false)};
    EXPECT_EQ(refusal(c), parse_error::bad_destination);
  }
  // From an address, a solicitation may go unicast (RFC 4861 7.2.2, 7.3.1).
  EXPECT_EQ(refusal({"", header(a_global, b_global), neighbor_solicitation_body()}), std::nullopt);
}

// RFC 4861 7.1.1: "If the IP source address is the unspecified address,
// there is no source link-layer address option in the message."
TEST(NdpValidation, DadSolicitationWithALinkLayerAddressIsRefused_RFC4861_7_1_1) {
  const nd_case c{"", header(unspecified, solicited_node(b_global)), neighbor_solicitation_body()};
  EXPECT_EQ(refusal(c), parse_error::bad_option);
}

// RFC 4861 7.1.2: "Target Address is not a multicast address."
TEST(NdpValidation, AdvertisementForAMulticastTargetIsRefused_RFC4861_7_1_2) {
  const nd_case c{"", header(b_global, a_global), neighbor_advertisement_body(0x6000'0000, all_nodes)};
  EXPECT_EQ(refusal(c), parse_error::bad_target);
}

// RFC 4861 7.1.2: "If the IP Destination Address is a multicast address
// the Solicited flag is zero."
TEST(NdpValidation, SolicitedAdvertisementToAGroupIsRefused_RFC4861_7_1_2) {
  EXPECT_EQ(refusal({"", header(b_global, all_nodes), neighbor_advertisement_body(0x6000'0000)}),
            parse_error::bad_flags);
  EXPECT_EQ(refusal({"", header(b_global, all_nodes), neighbor_advertisement_body(0x2000'0000)}), std::nullopt);
  EXPECT_EQ(refusal({"", header(b_global, a_global), neighbor_advertisement_body(0x4000'0000)}), std::nullopt);
}

// RFC 4861 8.1: "IP Source Address is a link-local address. Routers must
// use their link-local address as the source for Redirect messages".
TEST(NdpValidation, RedirectNotFromLinkLocalIsRefused_RFC4861_8_1) {
  EXPECT_EQ(refusal({"", header(ip6("2001:db8:77::ff"), a_global), redirect_body()}), parse_error::bad_source);
}

// RFC 4861 8.1: "The ICMP Destination Address field in the redirect
// message does not contain a multicast address."
TEST(NdpValidation, RedirectOfAMulticastDestinationIsRefused_RFC4861_8_1) {
  const nd_case c{"", header(router, a_global), redirect_body(ip6("fe80::99"), ip6("ff0e::101"))};
  EXPECT_EQ(refusal(c), parse_error::bad_destination);
}

// RFC 4861 8.1: "The ICMP Target Address is either a link-local address
// (when redirected to a router) or the same as the ICMP Destination
// Address (when redirected to the on-link destination)."
TEST(NdpValidation, RedirectToNeitherARouterNorTheDestinationIsRefused_RFC4861_8_1) {
  const auto destination = ip6("2001:db8:99::1");
  EXPECT_EQ(refusal({"", header(router, a_global), redirect_body(ip6("2001:db8:99::2"), destination)}),
            parse_error::bad_target);
  EXPECT_EQ(refusal({"", header(router, a_global), redirect_body(destination, destination)}), std::nullopt);
}

TEST(Ndp, EmitIntoTooSmallBufferFails) {
  std::vector<std::byte> out(31);
  EXPECT_EQ(emit_neighbor_solicitation(b_global, a_mac, a_global, solicited_node(b_global), out).error(),
            emit_error::buffer_too_small);
  EXPECT_EQ(emit_neighbor_solicitation(b_global, a_mac, unspecified, solicited_node(b_global), out), 24u);
  EXPECT_EQ(emit_neighbor_advertisement({.target = b_global, .target_link_layer = b_mac}, b_global, a_global, out)
                .error(),
            emit_error::buffer_too_small);
  EXPECT_EQ(emit_router_solicitation(a_mac, a_link_local, all_routers, std::span(out).first(15)).error(),
            emit_error::buffer_too_small);
}

}  // namespace
}  // namespace affine::stack
