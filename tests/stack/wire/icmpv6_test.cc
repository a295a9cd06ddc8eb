// ICMPv6 (stack/wire/icmpv6.hh) read like RFC 4443, and the packet an
// error quotes (parse_ipv6_quote), on Linux's captures and on messages
// written here.

#include "stack/wire/icmpv6.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "tests/stack/wire/frames.hh"
#include "tests/stack/wire/ipv6_packets.hh"

namespace affine::stack {
namespace {

using test::a_global;
using test::b_global;
using test::captured_ipv6;
using test::message_builder;

std::string_view text(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

// The 8 bytes of a UDP header and a few of payload after a 40-byte IPv6
// header from b to a: what an error about that datagram quotes.
message_builder quoted_udp(std::uint8_t next = next_header::udp) {
  message_builder q;
  q.u32(0x6000'0000).u16(19).u8(next).u8(64).address(b_global).address(a_global);
  return q;
}

TEST(Icmpv6, ParsesCapturedEchoRequestAndReply_RFC4443_4) {
  const captured_ipv6 request(test::icmpv6_echo_request_hex), reply(test::icmpv6_echo_reply_hex);
  EXPECT_EQ(request.icmp().type(), icmpv6_type::echo_request);
  EXPECT_EQ(reply.icmp().type(), icmpv6_type::echo_reply);
  for (const auto* c : {&request, &reply}) {
    const auto v = c->icmp();
    EXPECT_FALSE(v.is_error());
    EXPECT_EQ(v.code(), 0);
    EXPECT_EQ(v.id(), 0x7adb);
    EXPECT_EQ(v.seq(), 1);
    EXPECT_EQ(v.data().size(), 16u);
    EXPECT_EQ(v.body().size(), 20u);
    EXPECT_FALSE(v.quote());
    const auto m = v.message();
    EXPECT_EQ(m.id, 0x7adb);
    EXPECT_TRUE(std::ranges::equal(m.data, v.data()));
  }
}

// RFC 4443 4.2: the reply carries the request's identifier, sequence
// number and data; built in the request's own buffer it is byte for byte
// the reply Linux sent.
TEST(Icmpv6, EchoReplyBuiltInPlaceMatchesLinux_RFC4443_4_2) {
  const captured_ipv6 request(test::icmpv6_echo_request_hex);
  auto bytes = request.upper_bytes();
  auto m = request.icmp().message();
  m.type = icmpv6_type::echo_reply;
  m.data = std::span(bytes).subspan(icmpv6_view::header_length);
  ASSERT_EQ(emit_icmpv6(m, b_global, a_global, bytes), bytes.size());
  EXPECT_EQ(bytes, captured_ipv6(test::icmpv6_echo_reply_hex).upper_bytes());
}

// RFC 4443 3.1: port unreachable (code 4) quotes the datagram; the quote
// names the datagram's addresses, its protocol and its ports.
TEST(Icmpv6, ParsesCapturedPortUnreachableAndItsQuote_RFC4443_3_1) {
  const captured_ipv6 captured(test::icmpv6_port_unreachable_hex);  // the view below points into it
  const auto v = captured.icmp();
  EXPECT_EQ(v.type(), icmpv6_type::dest_unreachable);
  EXPECT_EQ(v.code(), 4);
  EXPECT_TRUE(v.is_error());
  const auto q = v.quote();
  ASSERT_TRUE(q);
  EXPECT_EQ(q->header.src, b_global);
  EXPECT_EQ(q->header.dst, a_global);
  EXPECT_EQ(q->header.flow_label, 0xf6c42u);
  EXPECT_EQ(q->protocol, next_header::udp);
  ASSERT_EQ(q->transport.size(), 19u);  // the whole datagram: it fitted
  EXPECT_EQ(load_be16(q->transport.data()), 37932);
  EXPECT_EQ(load_be16(q->transport.data() + 2), 9);
  EXPECT_EQ(text(q->transport.subspan(8)), "affine-udp6");
  // Written again from what was read, it is the message Linux sent.
  std::vector<std::byte> again(v.bytes().size());
  ASSERT_EQ(emit_icmpv6(v.message(), a_global, b_global, again), again.size());
  EXPECT_TRUE(std::ranges::equal(again, v.bytes()));
}

// RFC 4443 3.2: the MTU of the next-hop link, all 32 bits of it.
TEST(Icmpv6, PacketTooBigRoundTripCarriesTheMtu_RFC4443_3_2) {
  const auto quote = quoted_udp().zeros(8).bytes();
  std::vector<std::byte> buf(8 + quote.size());
  ASSERT_EQ(emit_icmpv6({.type = icmpv6_type::packet_too_big, .mtu = 0x0001'0500, .data = quote}, a_global, b_global,
                        buf),
            buf.size());
  EXPECT_EQ(load_be32(buf.data() + 4), 0x0001'0500u);
  const auto v = icmpv6_view::parse(buf, a_global, b_global);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->mtu(), 0x0001'0500u);
  EXPECT_EQ(v->message().mtu, 0x0001'0500u);
  EXPECT_EQ(v->quote()->header.dst, a_global);
}

// RFC 4443 3.4: the pointer is the offending byte's offset in the quote.
TEST(Icmpv6, ParameterProblemRoundTripCarriesThePointer_RFC4443_3_4) {
  const auto quote = quoted_udp(0x8f).zeros(8).bytes();
  std::vector<std::byte> buf(8 + quote.size());
  ASSERT_TRUE(emit_icmpv6({.type = icmpv6_type::parameter_problem, .code = 1, .pointer = 6, .data = quote}, a_global,
                          b_global, buf));
  const auto v = icmpv6_view::parse(buf, a_global, b_global);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->code(), 1);
  EXPECT_EQ(v->pointer(), 6u);
  EXPECT_EQ(v->quote()->protocol, 0x8f);  // the unrecognized Next Header
}

// RFC 4443 3.1, 3.3: the word after the checksum is unused, zero on send.
TEST(Icmpv6, UnusedWordIsZeroOnSend_RFC4443_3_3) {
  const auto quote = quoted_udp().zeros(8).bytes();
  std::vector<std::byte> buf(8 + quote.size(), std::byte{0xee});
  ASSERT_TRUE(emit_icmpv6({.type = icmpv6_type::time_exceeded, .id = 1, .seq = 2, .mtu = 3, .pointer = 4,
                           .data = quote},
                          a_global, b_global, buf));
  EXPECT_EQ(load_be32(buf.data() + 4), 0u);
}

// RFC 4443 2.4(c): an error quotes as much as fits in the minimum MTU.
TEST(Icmpv6, ErrorQuotesNoMoreThanFitsTheMinimumMtu_RFC4443_2_4_c) {
  const auto quote = quoted_udp().zeros(1500 - 40).bytes();
  std::vector<std::byte> buf(8 + quote.size());
  const auto n = emit_icmpv6({.type = icmpv6_type::dest_unreachable, .code = 4, .data = quote}, a_global, b_global,
                             buf);
  ASSERT_TRUE(n);
  EXPECT_EQ(ipv6_view::header_length + *n, 1280u);
  const auto v = icmpv6_view::parse(std::span(buf).first(*n), a_global, b_global);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->data().size(), icmpv6_error_quote_max);
  // Echo data is the caller's to size: an echo reply returns all of it.
  EXPECT_EQ(emit_icmpv6({.type = icmpv6_type::echo_reply, .data = quote}, a_global, b_global, buf),
            8 + quote.size());
}

// RFC 4443 2.1 and the lengths RFC 4861 (6.1.1, 6.1.2, 7.1.1, 7.1.2,
// 8.1), RFC 2710 3 and RFC 3810 5.2 give each message's fixed part: a
// message shorter than its type's, its checksum right, is truncated.
TEST(Icmpv6, ShorterThanItsTypesFixedPartIsTruncated_RFC4443_2_1) {
  const struct {
    int type;
    std::size_t fixed;
  } cases[] = {{1, 8},   {2, 8},   {3, 8},   {4, 8},   {127, 8}, {128, 8}, {129, 8},  {130, 24}, {131, 24},
               {132, 24}, {133, 8}, {134, 16}, {135, 24}, {136, 24}, {137, 40}, {143, 8}, {200, 4}};
  for (const auto& c : cases) {
    EXPECT_EQ(icmpv6_view::fixed_length(std::uint8_t(c.type)), c.fixed) << "type " << c.type;
    message_builder m;
    m.u8(unsigned(c.type)).u8(0).u16(0).zeros(c.fixed - 4);
    EXPECT_TRUE(icmpv6_view::parse(m.finish(a_global, b_global), a_global, b_global).has_value() ||
                std::uint8_t(c.type) < 128)  // an error needs its quote too
        << "type " << c.type;
    if (c.fixed == icmpv6_view::min_length) continue;  // shorter has no checksum: below
    auto short_one = m.bytes();
    short_one.pop_back();
    set_icmpv6_checksum(short_one, a_global, b_global);
    EXPECT_EQ(icmpv6_view::parse(short_one, a_global, b_global).error(), parse_error::truncated) << "type " << c.type;
  }
  for (std::size_t n = 0; n < icmpv6_view::min_length; ++n) {
    const std::vector<std::byte> bytes(n);
    EXPECT_EQ(icmpv6_view::parse(bytes, a_global, b_global).error(), parse_error::truncated) << n << " bytes";
  }
}

// RFC 4443 2.3: the checksum covers the pseudo-header (RFC 8200 8.1) and
// the message.
TEST(Icmpv6, CorruptMessageOrOtherAddressesAreBadChecksum_RFC4443_2_3) {
  const captured_ipv6 request(test::icmpv6_echo_request_hex);
  auto bytes = request.upper_bytes();
  EXPECT_TRUE(icmpv6_view::parse(bytes, a_global, b_global));
  EXPECT_EQ(icmpv6_view::parse(bytes, a_global, a_global).error(), parse_error::bad_checksum);
  bytes.back() ^= std::byte{0x01};
  EXPECT_EQ(icmpv6_view::parse(bytes, a_global, b_global).error(), parse_error::bad_checksum);
  EXPECT_TRUE(icmpv6_view::parse(bytes, a_global, b_global, checksum_mode::offload));
}

// RFC 4443 2.4(a), (b): unknown informational messages reach the caller,
// which drops them; unknown errors too, with their quote, for the upper
// layer that sent the packet.
TEST(Icmpv6, UnknownTypesParseForTheCallerToJudge_RFC4443_2_4) {
  const auto informational = message_builder().u8(200).u8(7).u16(0).finish(a_global, b_global);
  const auto i = icmpv6_view::parse(informational, a_global, b_global);
  ASSERT_TRUE(i);
  EXPECT_FALSE(i->is_error());
  EXPECT_EQ(std::uint8_t(i->type()), 200);
  EXPECT_EQ(i->code(), 7);
  EXPECT_TRUE(i->body().empty());
  EXPECT_TRUE(i->data().empty());
  EXPECT_FALSE(i->quote());

  const auto error = message_builder().u8(100).u8(0).u16(0).u32(0).finish(a_global, b_global);
  auto with_quote = message_builder().u8(100).u8(0).u16(0).u32(0);
  for (const auto b : quoted_udp().zeros(8).bytes()) with_quote.u8(unsigned(b));
  const auto bytes = with_quote.finish(a_global, b_global);
  const auto e = icmpv6_view::parse(bytes, a_global, b_global);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->is_error());
  EXPECT_EQ(e->quote()->protocol, next_header::udp);
  // An error must quote an IPv6 header to be passed anywhere.
  EXPECT_EQ(icmpv6_view::parse(error, a_global, b_global).error(), parse_error::truncated);
}

TEST(Icmpv6, ErrorWithoutAnIpv6HeaderQuotedFailsAsTheQuote_RFC4443_3_1) {
  auto emit_with = [](std::span<const std::byte> quote) {
    std::vector<std::byte> buf(8 + quote.size());
    EXPECT_TRUE(emit_icmpv6({.type = icmpv6_type::dest_unreachable, .code = 4, .data = quote}, a_global, b_global, buf));
    return buf;
  };
  auto quote = quoted_udp().zeros(8).bytes();
  EXPECT_EQ(icmpv6_view::parse(emit_with(std::span(quote).first(39)), a_global, b_global).error(),
            parse_error::truncated);
  quote[0] = std::byte{0x45};
  EXPECT_EQ(icmpv6_view::parse(emit_with(quote), a_global, b_global).error(), parse_error::bad_version);
}

TEST(Icmpv6, EmitIntoTooSmallBufferFails) {
  const auto data = test::bytes_of({1, 2, 3});
  std::vector<std::byte> buf(10);
  EXPECT_EQ(emit_icmpv6({.data = data}, a_global, b_global, buf).error(), emit_error::buffer_too_small);
}

// RFC 8200 4: the quote's extension headers are walked by their lengths to
// the upper layer, whose first 8 bytes hold the ports.
TEST(Icmpv6Quote, WalksTheQuotedExtensionHeadersToTheUpperLayer_RFC8200_4) {
  message_builder q;
  q.u32(0x6000'0000).u16(40).u8(next_header::hop_by_hop).u8(64).address(b_global).address(a_global);
  q.u8(next_header::destination).u8(0).u8(1).u8(4).zeros(4);  // hop-by-hop: PadN
  q.u8(next_header::fragment).u8(1).u8(1).u8(12).zeros(12);    // destination options, 16 bytes
  q.u8(next_header::tcp).u8(0).u16(0x0001).u32(7);              // fragment: offset 0, more to come
  q.u16(6033).u16(40112).u32(123456);                          // TCP ports and sequence number
  const auto bytes = q.bytes();
  const auto quote = parse_ipv6_quote(bytes);
  ASSERT_TRUE(quote);
  EXPECT_EQ(quote->header.next, next_header::hop_by_hop);
  EXPECT_EQ(quote->header.payload_length, 40);
  EXPECT_EQ(quote->protocol, next_header::tcp);
  ASSERT_EQ(quote->transport.size(), 8u);
  EXPECT_EQ(load_be16(quote->transport.data()), 6033);
  EXPECT_EQ(load_be32(quote->transport.data() + 4), 123456u);
  // The same chain past a bound of two headers: the protocol is not known.
  EXPECT_FALSE(parse_ipv6_quote(bytes, 2)->protocol);
  EXPECT_EQ(parse_ipv6_quote(bytes, 3)->protocol, next_header::tcp);
}

// RFC 8200 4.5: only the first fragment holds the upper-layer header; a
// later one names the protocol and holds none of its header.
TEST(Icmpv6Quote, LaterFragmentNamesTheProtocolButHoldsNoHeader_RFC8200_4_5) {
  message_builder q;
  q.u32(0x6000'0000).u16(24).u8(next_header::fragment).u8(64).address(b_global).address(a_global);
  q.u8(next_header::udp).u8(0).u16(1448 | 1).u32(7);
  q.zeros(16);
  const auto quote = parse_ipv6_quote(q.bytes());
  ASSERT_TRUE(quote);
  EXPECT_EQ(quote->protocol, next_header::udp);
  EXPECT_TRUE(quote->transport.empty());
}

// RFC 4443 2.4(c): a quote is cut where the error was full; what it does
// not hold is not known, and none of that is an error.
TEST(Icmpv6Quote, CutShortItKnowsLess_RFC4443_2_4_c) {
  message_builder q;
  q.u32(0x6000'0000).u16(1000).u8(next_header::destination).u8(64).address(b_global).address(a_global);
  q.u8(next_header::udp).u8(1).u8(1).u8(12).zeros(12);  // 16 bytes of destination options
  q.u16(5000).u16(53).u16(1000 - 16).u16(0);
  const auto bytes = q.bytes();
  EXPECT_EQ(parse_ipv6_quote(bytes)->transport.size(), 8u);
  // Seven bytes of UDP: the protocol, not the ports.
  const auto in_udp = parse_ipv6_quote(std::span(bytes).first(bytes.size() - 1));
  EXPECT_EQ(in_udp->protocol, next_header::udp);
  EXPECT_TRUE(in_udp->transport.empty());
  // Cut inside the destination options: their Next Header still names UDP.
  for (const std::size_t cut : {48, 55}) {
    const auto in_options = parse_ipv6_quote(std::span(bytes).first(cut));
    EXPECT_EQ(in_options->protocol, next_header::udp) << cut;
    EXPECT_TRUE(in_options->transport.empty()) << cut;
  }
  // Cut before their first 8 bytes: not even that.
  for (const std::size_t cut : {40, 47}) {
    const auto in_chain = parse_ipv6_quote(std::span(bytes).first(cut));
    ASSERT_TRUE(in_chain) << cut;
    EXPECT_FALSE(in_chain->protocol) << cut;
    EXPECT_EQ(in_chain->header.src, b_global);
  }
  EXPECT_EQ(parse_ipv6_quote(std::span(bytes).first(39)).error(), parse_error::truncated);
}

}  // namespace
}  // namespace affine::stack
