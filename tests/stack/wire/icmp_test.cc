#include "stack/wire/icmp.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "stack/wire/endian.hh"
#include "tests/stack/wire/frames.hh"

namespace affine::stack {
namespace {

using test::bytes_of;
using test::transport_bytes;

TEST(Icmp, ParsesCapturedEchoRequestAndReply) {
  for (const auto hex : {test::icmp_echo_request_hex, test::icmp_echo_reply_hex}) {
    const auto bytes = transport_bytes(hex);
    const auto v = icmp_view::parse(bytes);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->id(), 0x1234);
    EXPECT_EQ(v->seq(), 1);
    EXPECT_EQ(v->code(), 0);
    EXPECT_FALSE(v->quote());
    const auto m = v->message();
    EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(m.data.data()), m.data.size()), "affine-wire-echo");
  }
  EXPECT_EQ(icmp_view::parse(transport_bytes(test::icmp_echo_request_hex))->type(), icmp_type::echo_request);
  EXPECT_EQ(icmp_view::parse(transport_bytes(test::icmp_echo_reply_hex))->type(), icmp_type::echo_reply);
}

TEST(Icmp, EchoReplyBuiltInPlaceMatchesTheKernels) {
  // Turn the captured request into a reply in its own buffer, as a stack
  // answering a ping does: the bytes equal the reply Linux sent.
  auto bytes = transport_bytes(test::icmp_echo_request_hex);
  auto m = icmp_view::parse(bytes)->message();
  m.type = icmp_type::echo_reply;
  ASSERT_EQ(emit_icmp(m, bytes), bytes.size());
  EXPECT_EQ(bytes, transport_bytes(test::icmp_echo_reply_hex));
  EXPECT_EQ(icmp_view::parse(bytes)->checksum(), test::icmp_echo_reply_checksum);
}

TEST(Icmp, ParsesCapturedPortUnreachableAndItsQuote) {
  const auto bytes = transport_bytes(test::icmp_port_unreachable_hex);
  const auto v = icmp_view::parse(bytes);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->type(), icmp_type::dest_unreachable);
  EXPECT_EQ(v->code(), std::uint8_t(unreachable_code::port));
  const auto q = v->quote();
  ASSERT_TRUE(q);
  EXPECT_EQ(q->src, test::loopback_ip);
  EXPECT_EQ(q->protocol, ip_protocol::udp);
  EXPECT_EQ(q->id, 0x829b);
  // The quoted UDP ports: 58334 -> 9.
  EXPECT_EQ(q->transport[0], std::byte{0xe3});
  EXPECT_EQ(q->transport[3], std::byte{0x09});
}

TEST(Icmp, FragmentationNeededRoundTripCarriesNextHopMtu) {
  // RFC 1191 4: code 4 with the next-hop MTU in the low 16 bits of the
  // second word, quoting a TCP header's first 8 bytes.
  std::vector<std::byte> quote(28, std::byte{0});
  quote[0] = std::byte{0x45};
  quote[9] = std::byte{6};
  const icmp_message m{.type = icmp_type::dest_unreachable,
                       .code = std::uint8_t(unreachable_code::fragmentation_needed),
                       .next_hop_mtu = 1400,
                       .data = quote};
  std::array<std::byte, 36> buf{};
  ASSERT_EQ(emit_icmp(m, buf), 36u);
  EXPECT_EQ(buf[4], std::byte{0});
  EXPECT_EQ(buf[5], std::byte{0});
  EXPECT_EQ(buf[6], std::byte{1400 >> 8});
  EXPECT_EQ(buf[7], std::byte{1400 & 0xff});
  const auto v = icmp_view::parse(buf);
  ASSERT_TRUE(v);
  const auto back = v->message();
  EXPECT_EQ(back.type, icmp_type::dest_unreachable);
  EXPECT_EQ(back.code, 4);
  EXPECT_EQ(back.next_hop_mtu, 1400);
  EXPECT_EQ(back.data.size(), 28u);
  EXPECT_EQ(v->quote()->protocol, ip_protocol::tcp);
}

TEST(Icmp, EchoRoundTripWithOddLengthData) {
  const auto data = bytes_of({1, 2, 3, 4, 5});
  const icmp_message m{.type = icmp_type::echo_request, .id = 7, .seq = 65535, .data = data};
  std::array<std::byte, 13> buf{};
  ASSERT_EQ(emit_icmp(m, buf), 13u);
  const auto v = icmp_view::parse(buf);
  ASSERT_TRUE(v);
  const auto back = v->message();
  EXPECT_EQ(back.type, icmp_type::echo_request);
  EXPECT_EQ(back.id, 7);
  EXPECT_EQ(back.seq, 65535);
  EXPECT_TRUE(std::equal(back.data.begin(), back.data.end(), data.begin(), data.end()));
}

TEST(Icmp, TruncatedAtEveryByteOfTheHeader) {
  const auto bytes = transport_bytes(test::icmp_echo_reply_hex);
  for (std::size_t n = 0; n < 8; ++n)
    EXPECT_EQ(icmp_view::parse(std::span(bytes).first(n)).error(), parse_error::truncated) << n << " bytes";
}

TEST(Icmp, CorruptMessageIsBadChecksumUnlessSkipped) {
  auto bytes = transport_bytes(test::icmp_echo_reply_hex);
  bytes.back() ^= std::byte{0x01};
  EXPECT_EQ(icmp_view::parse(bytes).error(), parse_error::bad_checksum);
  EXPECT_TRUE(icmp_view::parse(bytes, checksum_mode::offload));
}

// RFC 792: time exceeded is an error as destination unreachable is: four
// unused bytes (zero), then the datagram's IPv4 header and 8 bytes.
TEST(Icmp, TimeExceededRoundTripCarriesItsQuote) {
  std::vector<std::byte> quote(28, std::byte{0});
  quote[0] = std::byte{0x45};
  std::vector<std::byte> buf(8 + quote.size());
  ASSERT_TRUE(emit_icmp({.type = icmp_type::time_exceeded, .code = 1, .next_hop_mtu = 1400, .data = quote}, buf));
  EXPECT_TRUE(std::ranges::all_of(std::span(buf).subspan(4, 4), [](std::byte b) { return b == std::byte{0}; }));
  auto v = icmp_view::parse(buf);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->type(), icmp_type::time_exceeded);
  EXPECT_EQ(v->code(), std::uint8_t(time_exceeded_code::reassembly));
  EXPECT_TRUE(v->quote().has_value());
  EXPECT_TRUE(std::ranges::equal(v->data(), quote));
  std::vector<std::byte> short_quote(8 + 27);
  ASSERT_TRUE(emit_icmp({.type = icmp_type::time_exceeded, .code = 1, .data = std::span(quote).first(27)}, short_quote));
  EXPECT_EQ(icmp_view::parse(short_quote).error(), parse_error::truncated);
}

TEST(Icmp, OtherTypesAreUnsupported) {
  // Redirect (5), timestamp request (13), source quench (4), with valid checksums.
  for (const int type : {13, 5, 4}) {
    auto bytes = bytes_of({type, 0, 0, 0, 0, 0, 0, 0});
    store_be16(bytes.data() + 2, internet_checksum(bytes));
    EXPECT_EQ(icmp_view::parse(bytes).error(), parse_error::unsupported) << "type " << type;
  }
}

TEST(Icmp, UnreachableWithoutAFullQuoteFailsAsTheQuote) {
  // The quote must hold an IPv4 header and 8 bytes: shorten it, then break it.
  std::vector<std::byte> quote(28, std::byte{0});
  quote[0] = std::byte{0x45};
  auto emit_with = [](std::span<const std::byte> q) {
    std::vector<std::byte> buf(8 + q.size());
    EXPECT_TRUE(emit_icmp({.type = icmp_type::dest_unreachable, .code = 3, .data = q}, buf));
    return buf;
  };
  EXPECT_EQ(icmp_view::parse(emit_with(std::span(quote).first(27))).error(), parse_error::truncated);
  quote[0] = std::byte{0x65};
  EXPECT_EQ(icmp_view::parse(emit_with(quote)).error(), parse_error::bad_version);
  quote[0] = std::byte{0x41};
  EXPECT_EQ(icmp_view::parse(emit_with(quote)).error(), parse_error::bad_header_length);
}

TEST(Icmp, EmitIntoTooSmallBufferFails) {
  const auto data = bytes_of({1, 2, 3});
  std::array<std::byte, 10> buf{};
  EXPECT_EQ(emit_icmp({.data = data}, buf).error(), emit_error::buffer_too_small);
}

}  // namespace
}  // namespace affine::stack
