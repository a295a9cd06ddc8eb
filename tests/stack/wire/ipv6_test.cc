// IPv6 headers and the extension-header walk (stack/wire/ipv6.hh), read
// like RFC 8200 section 4: each rule with the packet that tests it.

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "stack/wire/ipv6.hh"

namespace affine::stack {
namespace {

// 2001:db8::1 -> 2001:db8::2, hop limit 64, traffic class 0xb8, flow 0x12345.
std::vector<std::byte> packet(std::uint8_t next, std::initializer_list<std::uint8_t> payload,
                              std::uint8_t dst_first = 0x20) {
  std::vector<std::byte> p(40 + payload.size());
  ipv6_header h{.traffic_class = 0xb8, .flow_label = 0x12345, .next = next, .hop_limit = 64,
                .payload_length = std::uint16_t(payload.size())};
  h.src = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  h.dst = {dst_first, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  EXPECT_EQ(emit_ipv6(h, p), 40u);
  std::size_t k = 40;
  for (const std::uint8_t b : payload) p[k++] = std::byte(b);
  return p;
}

std::expected<ipv6_upper, ipv6_chain_error> walk(const std::vector<std::byte>& p, unsigned max_headers = 8) {
  const auto v = ipv6_view::parse(p);
  EXPECT_TRUE(v.has_value());
  return walk_ipv6_chain(*v, max_headers);
}

TEST(ipv6, a_header_reads_back_as_written) {
  const auto p = packet(next_header::tcp, {1, 2, 3, 4});
  const auto v = ipv6_view::parse(p);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->traffic_class(), 0xb8);
  EXPECT_EQ(v->flow_label(), 0x12345u);
  EXPECT_EQ(v->payload_length(), 4);
  EXPECT_EQ(v->next(), next_header::tcp);
  EXPECT_EQ(v->hop_limit(), 64);
  EXPECT_EQ(v->src()[15], 1);
  EXPECT_EQ(v->dst()[15], 2);
  std::vector<std::byte> again(40);
  EXPECT_EQ(emit_ipv6(v->header(), again), 40u);
  EXPECT_TRUE(std::equal(again.begin(), again.end(), p.begin()));
  std::vector<std::byte> small(39);
  EXPECT_EQ(emit_ipv6(v->header(), small).error(), emit_error::buffer_too_small);
}

TEST(ipv6, bad_headers_are_refused_by_reason) {
  auto p = packet(next_header::tcp, {1, 2, 3, 4});
  EXPECT_EQ(ipv6_view::parse(std::span(p).first(39)).error(), parse_error::truncated);
  auto v4 = p;
  v4[0] = std::byte{0x45};
  EXPECT_EQ(ipv6_view::parse(v4).error(), parse_error::bad_version);
  EXPECT_EQ(ipv6_view::parse(std::span(p).first(43)).error(), parse_error::bad_payload_length);
  // Link-layer padding after the payload length is not payload.
  p.push_back(std::byte{0});
  EXPECT_EQ(ipv6_view::parse(p)->payload().size(), 4u);
  // Payload length 0 with a hop-by-hop header and bytes after: a jumbogram.
  auto jumbo = packet(next_header::hop_by_hop, {next_header::tcp, 0, 0xc2, 4, 0, 1, 0, 0});
  jumbo[4] = jumbo[5] = std::byte{0};
  EXPECT_EQ(ipv6_view::parse(jumbo).error(), parse_error::unsupported);
}

TEST(ipv6, the_upper_layer_follows_the_header_or_its_extension_headers) {
  const auto plain = walk(packet(next_header::tcp, {9, 9}));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->protocol, next_header::tcp);
  EXPECT_EQ(plain->protocol_field, 6u);
  EXPECT_EQ(plain->offset, 40u);
  EXPECT_EQ(plain->payload.size(), 2u);
  // Hop-by-hop (PadN of 4), then destination options (Pad1 x 6), then UDP.
  const auto chain = walk(packet(next_header::hop_by_hop, {next_header::destination, 0, 1, 4, 0, 0, 0, 0,  //
                                                           next_header::udp, 0, 0, 0, 0, 0, 0, 0,          //
                                                           7}));
  ASSERT_TRUE(chain.has_value());
  EXPECT_EQ(chain->protocol, next_header::udp);
  EXPECT_EQ(chain->protocol_field, 48u);
  EXPECT_EQ(chain->offset, 56u);
  EXPECT_FALSE(chain->fragment.has_value());
  // No Next Header: nothing follows that the host reads.
  EXPECT_EQ(walk(packet(next_header::none, {}))->protocol, next_header::none);
}

// RFC 8200 4.1: hop-by-hop options only immediately after the IPv6 header;
// elsewhere it is an unrecognized Next Header (code 1) at the field naming it.
TEST(ipv6, hop_by_hop_anywhere_but_first_is_refused) {
  const auto r = walk(packet(next_header::destination, {next_header::hop_by_hop, 0, 1, 4, 0, 0, 0, 0,  //
                                                        next_header::tcp, 0, 1, 4, 0, 0, 0, 0}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, parse_error::bad_extension);
  EXPECT_EQ(r.error().icmp_code, 1);
  EXPECT_EQ(r.error().pointer, 40u);
}

// RFC 8200 4.2: an unrecognized option's two high bits say what to do.
TEST(ipv6, unrecognized_options_are_skipped_or_refused_as_their_type_says) {
  const auto with_option = [](std::uint8_t type, std::uint8_t dst_first = 0x20) {
    return walk(packet(next_header::destination, {next_header::tcp, 0, type, 2, 0, 0, 1, 0}, dst_first));
  };
  EXPECT_TRUE(with_option(0x3e).has_value());  // 00: skip over it
  const auto silent = with_option(0x7e);       // 01: discard
  ASSERT_FALSE(silent.has_value());
  EXPECT_EQ(silent.error().reason, parse_error::bad_option);
  EXPECT_FALSE(silent.error().icmp_code.has_value());
  const auto answer = with_option(0xbe);  // 10: discard, Parameter Problem code 2 at the option
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().icmp_code, 2);
  EXPECT_EQ(answer.error().pointer, 42u);
  EXPECT_EQ(with_option(0xfe).error().icmp_code, 2);                 // 11: answer a unicast packet
  EXPECT_FALSE(with_option(0xfe, 0xff).error().icmp_code.has_value());  // ... and not a multicast one
}

TEST(ipv6, an_option_past_its_header_is_refused) {
  const auto r = walk(packet(next_header::destination, {next_header::tcp, 0, 1, 9, 0, 0, 0, 0}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, parse_error::bad_extension);
  EXPECT_EQ(r.error().icmp_code, 0);
  EXPECT_EQ(r.error().pointer, 43u);
  // A header whose length runs past the packet.
  const auto long_header = walk(packet(next_header::destination, {next_header::tcp, 1, 1, 4, 0, 0, 0, 0}));
  ASSERT_FALSE(long_header.has_value());
  EXPECT_EQ(long_header.error().reason, parse_error::bad_extension);
  // One that does not even have its first 8 bytes.
  EXPECT_EQ(walk(packet(next_header::destination, {next_header::tcp, 0, 1})).error().reason,
            parse_error::bad_extension);
}

// RFC 8200 4.4 and RFC 5095: a host is the final destination only with no
// segments left; then the Routing header is skipped, whatever its type.
TEST(ipv6, routing_headers_with_segments_left_are_refused) {
  const auto done = walk(packet(next_header::routing, {next_header::tcp, 0, 0, 0, 0, 0, 0, 0}));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->protocol, next_header::tcp);
  const auto type0 = walk(packet(next_header::routing, {next_header::tcp, 2, 0, 1, 0, 0, 0, 0,  //
                                                        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  ASSERT_FALSE(type0.has_value());
  EXPECT_EQ(type0.error().icmp_code, 0);
  EXPECT_EQ(type0.error().pointer, 42u);
}

// RFC 8200 4.5 and RFC 6946.
TEST(ipv6, fragments_stop_the_walk_and_atomic_ones_do_not) {
  // Offset 0, more to come, id 0x01020304, 8 bytes of UDP.
  const auto first = walk(packet(next_header::fragment, {next_header::udp, 0, 0, 1, 1, 2, 3, 4,  //
                                                         1, 2, 3, 4, 5, 6, 7, 8}));
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->fragment.has_value());
  EXPECT_EQ(first->fragment->id, 0x01020304u);
  EXPECT_TRUE(first->fragment->more);
  EXPECT_EQ(first->fragment->offset, 0);
  EXPECT_EQ(first->fragment->header_at, 40u);
  EXPECT_EQ(first->protocol, next_header::udp);
  EXPECT_EQ(first->offset, 48u);
  // Offset 8 bytes, the last: not atomic either.
  const auto last = walk(packet(next_header::fragment, {next_header::udp, 0, 0, 8, 0, 0, 0, 9, 1, 2}));
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->fragment->offset, 8);
  EXPECT_FALSE(last->fragment->more);
  // An atomic fragment is the whole datagram: the walk goes on past it.
  const auto atomic = walk(packet(next_header::fragment, {next_header::destination, 0, 0, 0, 0, 0, 0, 9,  //
                                                          next_header::tcp, 0, 1, 4, 0, 0, 0, 0, 5}));
  ASSERT_TRUE(atomic.has_value());
  EXPECT_TRUE(atomic->fragment->atomic());
  EXPECT_EQ(atomic->protocol, next_header::tcp);
  EXPECT_EQ(atomic->offset, 56u);
  // More to come but not a multiple of 8 bytes: code 0 at the Payload Length.
  const auto odd = walk(packet(next_header::fragment, {next_header::udp, 0, 0, 1, 0, 0, 0, 9, 1, 2, 3}));
  ASSERT_FALSE(odd.has_value());
  EXPECT_EQ(odd.error().icmp_code, 0);
  EXPECT_EQ(odd.error().pointer, 4u);
  // A datagram that would pass 65535 bytes: code 0 at the Fragment Offset.
  const auto huge = walk(packet(next_header::fragment, {next_header::udp, 0, 0xff, 0xf8, 0, 0, 0, 9,  //
                                                        1, 2, 3, 4, 5, 6, 7, 8}));
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.error().pointer, 42u);
}

// RFC 8200 4.5 and RFC 7112: a first fragment holds the whole chain, the
// part after its Fragment header too, through the upper layer's header.
// The walk checks it there and ends at the Fragment header all the same:
// the fragments' data is what reassembly joins.
TEST(ipv6, a_first_fragment_is_walked_through_its_whole_chain) {
  // Offset 0, more to come; Destination Options (PadN of 4); UDP's 8 bytes.
  const auto first = walk(packet(next_header::fragment, {next_header::destination, 0, 0, 1, 0, 0, 0, 9,  //
                                                         next_header::udp, 0, 1, 4, 0, 0, 0, 0,          //
                                                         1, 2, 3, 4, 5, 6, 7, 8}));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->protocol, next_header::destination) << "what the fragments carry";
  EXPECT_EQ(first->protocol_field, 40u);
  EXPECT_EQ(first->offset, 48u);
  EXPECT_EQ(first->payload.size(), 16u);
  // Its options are judged there: type 10 asks for code 2 at the option.
  const auto asks = walk(packet(next_header::fragment, {next_header::destination, 0, 0, 1, 0, 0, 0, 9,  //
                                                        next_header::udp, 0, 0xbe, 4, 0, 0, 0, 0,       //
                                                        1, 2, 3, 4, 5, 6, 7, 8}));
  ASSERT_FALSE(asks.has_value());
  EXPECT_EQ(asks.error().reason, parse_error::bad_option);
  EXPECT_EQ(asks.error().icmp_code, 2);
  EXPECT_EQ(asks.error().pointer, 50u);
  // A chain that goes on past it (Destination Options of 16 bytes, 8 here),
  // and upper-layer headers cut short: code 3, pointer 0.
  for (const auto& cut : {packet(next_header::fragment, {next_header::destination, 0, 0, 1, 0, 0, 0, 9,  //
                                                         next_header::udp, 1, 1, 4, 0, 0, 0, 0}),
                          packet(next_header::fragment, {next_header::udp, 0, 0, 1, 0, 0, 0, 9}),
                          packet(next_header::fragment, {next_header::tcp, 0, 0, 1, 0, 0, 0, 9,  //
                                                         0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})}) {
    const auto r = walk(cut);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().reason, parse_error::bad_extension);
    EXPECT_EQ(r.error().icmp_code, 3);
    EXPECT_EQ(r.error().pointer, 0u);
  }
  // A later fragment holds none of it: its data is not walked.
  EXPECT_TRUE(walk(packet(next_header::fragment, {next_header::tcp, 0, 0, 8, 0, 0, 0, 9, 1})).has_value());
  // A Fragment header after a Fragment header: refused, unanswered.
  const auto twice = walk(packet(next_header::fragment, {next_header::fragment, 0, 0, 1, 0, 0, 0, 9,  //
                                                         next_header::udp, 0, 0, 0, 0, 0, 0, 9,       //
                                                         1, 2, 3, 4, 5, 6, 7, 8}));
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().reason, parse_error::bad_extension);
  EXPECT_FALSE(twice.error().icmp_code.has_value());
}

// Extension headers stepped over by their lengths alone: a reassembled
// datagram's chain after its Fragment header, an ICMPv6 error's quote.
TEST(ipv6, a_skip_steps_over_extension_headers_by_their_lengths) {
  const auto first = packet(next_header::fragment, {next_header::destination, 0, 0, 1, 0, 0, 0, 9,  //
                                                    next_header::udp, 0, 0xbe, 4, 0, 0, 0, 0,       //
                                                    1, 2, 3, 4, 5, 6, 7, 8});
  const ipv6_chain_end e = skip_ipv6_chain(first, next_header::destination, 40, 48);
  EXPECT_EQ(e.how, ipv6_chain_end::stop::upper) << "options are not read";
  EXPECT_EQ(e.protocol, next_header::udp);
  EXPECT_EQ(e.protocol_field, 48u);
  EXPECT_EQ(e.at, 56u);
  // From the IPv6 header on: a first fragment's Fragment header is stepped
  // over, a later one's stops it.
  EXPECT_EQ(skip_ipv6_chain(first, next_header::fragment, 6, 40).at, 56u);
  const auto later = packet(next_header::fragment, {next_header::udp, 0, 0, 8, 0, 0, 0, 9, 1, 2});
  const ipv6_chain_end l = skip_ipv6_chain(later, next_header::fragment, 6, 40);
  EXPECT_EQ(l.how, ipv6_chain_end::stop::later_fragment);
  EXPECT_EQ(l.protocol, next_header::udp);
  EXPECT_EQ(l.at, 48u);
  // A header past the bytes, or past the bound.
  const auto long_header = packet(next_header::destination, {next_header::tcp, 1, 1, 4, 0, 0, 0, 0});
  EXPECT_EQ(skip_ipv6_chain(long_header, next_header::destination, 6, 40).how, ipv6_chain_end::stop::upper)
      << "its first 8 bytes name TCP; the length is the caller's to check";
  EXPECT_EQ(skip_ipv6_chain(long_header, next_header::destination, 6, 44).how, ipv6_chain_end::stop::cut);
  EXPECT_EQ(skip_ipv6_chain(first, next_header::fragment, 6, 40, 1).how, ipv6_chain_end::stop::cut);
}

TEST(ipv6, a_chain_past_the_bound_is_refused) {
  std::initializer_list<std::uint8_t> three = {next_header::destination, 0, 1, 4, 0, 0, 0, 0,  //
                                               next_header::destination, 0, 1, 4, 0, 0, 0, 0,  //
                                               next_header::tcp,         0, 1, 4, 0, 0, 0, 0};
  EXPECT_TRUE(walk(packet(next_header::destination, three), 3).has_value());
  const auto r = walk(packet(next_header::destination, three), 2);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, parse_error::bad_extension);
  EXPECT_FALSE(r.error().icmp_code.has_value());
}

}  // namespace
}  // namespace affine::stack
