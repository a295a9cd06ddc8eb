#include "stack/wire/udp.hh"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "stack/wire/endian.hh"
#include "stack/wire/ipv6.hh"
#include "tests/stack/wire/frames.hh"

namespace affine::stack {
namespace {

using test::bytes_of;
using test::loopback_ip;

constexpr std::uint32_t src_ip = 0x0a000201, dst_ip = 0x0a000202;

std::vector<std::byte> captured_datagram() { return test::transport_bytes(test::udp_hex); }

// The captured datagram with the checksum tshark says is right.
std::vector<std::byte> captured_with_full_checksum() {
  auto d = captured_datagram();
  store_be16(d.data() + 6, test::udp_checksum);
  return d;
}

TEST(Udp, ParsesCapturedDatagram) {
  const auto d = captured_with_full_checksum();
  const auto v = udp_view::parse(d, loopback_ip, loopback_ip);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->src_port(), 58334);
  EXPECT_EQ(v->dst_port(), 9);
  EXPECT_EQ(v->length(), 18);
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(v->payload().data()), v->payload().size()),
            "affine-udp");
}

TEST(Udp, EmitReproducesCapturedDatagramInBothChecksumModes) {
  const auto d = captured_datagram();
  const auto payload = std::span(d).subspan(8);
  std::array<std::byte, 18> buf{};
  ASSERT_EQ(emit_udp({58334, 9}, payload, loopback_ip, loopback_ip, buf, checksum_mode::software), 18u);
  EXPECT_EQ(std::vector(buf.begin(), buf.end()), captured_with_full_checksum());
  // Offload: the pseudo-header sum Linux left in the field on loopback.
  ASSERT_EQ(emit_udp({58334, 9}, payload, loopback_ip, loopback_ip, buf, checksum_mode::offload), 18u);
  EXPECT_EQ(std::vector(buf.begin(), buf.end()), d);
}

TEST(Udp, PartialChecksumFailsInSoftwareAndPassesWhenOffloaded) {
  const auto d = captured_datagram();
  EXPECT_EQ(udp_view::parse(d, loopback_ip, loopback_ip).error(), parse_error::bad_checksum);
  EXPECT_TRUE(udp_view::parse(d, loopback_ip, loopback_ip, checksum_mode::offload));
}

TEST(Udp, WrongPseudoHeaderAddressIsBadChecksum) {
  const auto d = captured_with_full_checksum();
  EXPECT_EQ(udp_view::parse(d, loopback_ip, loopback_ip + 1).error(), parse_error::bad_checksum);
}

TEST(Udp, RoundTripWithOddPayload) {
  const auto payload = bytes_of({'h', 'e', 'l', 'l', 'o'});
  std::array<std::byte, 13> buf{};
  ASSERT_EQ(emit_udp({1234, 53}, payload, src_ip, dst_ip, buf, checksum_mode::software), 13u);
  const auto v = udp_view::parse(buf, src_ip, dst_ip);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header(), (udp_header{1234, 53}));
  EXPECT_TRUE(std::equal(v->payload().begin(), v->payload().end(), payload.begin(), payload.end()));
}

TEST(Udp, HeaderOnlyEmitCoversPayloadPlacedByCaller) {
  std::array<std::byte, 8 + 4> buf{};
  const auto payload = std::span(buf).subspan(8);
  payload[0] = std::byte{0xde};
  payload[3] = std::byte{0xad};
  ASSERT_EQ(emit_udp_header({7, 9}, payload, src_ip, dst_ip, buf, checksum_mode::software), 8u);
  const auto v = udp_view::parse(buf, src_ip, dst_ip);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->length(), 12);
  EXPECT_EQ(v->payload()[3], std::byte{0xad});
}

TEST(Udp, ZeroChecksumMeansNone) {
  // RFC 768: a sender that computed no checksum sends zero.
  auto d = captured_datagram();
  d[6] = d[7] = std::byte{0};
  EXPECT_TRUE(udp_view::parse(d, loopback_ip, loopback_ip));
}

TEST(Udp, OverIpv6AZeroChecksumIsBad) {
  // RFC 8200 8.1: over IPv6 the checksum is not optional, with or without
  // a NIC that checked the rest.
  const ipv6_bytes a{0xfd, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const ipv6_bytes b{0xfd, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  const std::array<std::byte, 4> payload{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  std::array<std::byte, 12> buf{};
  const pseudo_header ph = ipv6_pseudo(a, b, 17);
  ASSERT_TRUE(emit_udp({7, 9}, payload, ph, buf, checksum_mode::software));
  ASSERT_TRUE(udp_view::parse(buf, ph));
  EXPECT_EQ(udp_view::parse(buf, ipv6_pseudo(a, a, 17)).error(), parse_error::bad_checksum) << "another address";
  buf[6] = buf[7] = std::byte{0};
  EXPECT_EQ(udp_view::parse(buf, ph).error(), parse_error::bad_checksum);
  EXPECT_EQ(udp_view::parse(buf, ph, checksum_mode::offload).error(), parse_error::bad_checksum);
}

TEST(Udp, ComputedZeroChecksumIsSentAsAllOnes) {
  // Choose the payload so the checksum comes out zero: its word is the
  // complement of the rest's sum.
  std::array<std::byte, 10> buf{};
  std::array<std::byte, 2> payload{};
  ASSERT_TRUE(emit_udp({1, 2}, payload, src_ip, dst_ip, buf, checksum_mode::software));
  store_be16(payload.data(), load_be16(buf.data() + 6));
  ASSERT_TRUE(emit_udp({1, 2}, payload, src_ip, dst_ip, buf, checksum_mode::software));
  EXPECT_EQ(buf[6], std::byte{0xff});
  EXPECT_EQ(buf[7], std::byte{0xff});
  EXPECT_TRUE(udp_view::parse(buf, src_ip, dst_ip));
}

TEST(Udp, TruncatedAtEveryByteOfTheHeader) {
  const auto d = captured_with_full_checksum();
  for (std::size_t n = 0; n < 8; ++n)
    EXPECT_EQ(udp_view::parse(std::span(d).first(n), loopback_ip, loopback_ip).error(), parse_error::truncated)
        << n << " bytes";
}

TEST(Udp, LengthFieldLiesAreBadLength) {
  auto d = captured_with_full_checksum();
  d[5] = std::byte{19};  // one past the buffer
  EXPECT_EQ(udp_view::parse(d, loopback_ip, loopback_ip).error(), parse_error::bad_length);
  d[5] = std::byte{7};  // under the header
  EXPECT_EQ(udp_view::parse(d, loopback_ip, loopback_ip).error(), parse_error::bad_length);
}

TEST(Udp, BytesPastTheLengthFieldAreNotPayload) {
  auto d = captured_with_full_checksum();
  d.resize(26, std::byte{0});  // Ethernet padding
  const auto v = udp_view::parse(d, loopback_ip, loopback_ip);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->payload().size(), 10u);
}

TEST(Udp, EmitErrors) {
  std::array<std::byte, 9> buf{};
  const auto payload = bytes_of({1, 2});
  EXPECT_EQ(emit_udp({1, 2}, payload, src_ip, dst_ip, buf, checksum_mode::software).error(),
            emit_error::buffer_too_small);
  EXPECT_EQ(emit_udp_header({1, 2}, payload, src_ip, dst_ip, std::span(buf).first(7), checksum_mode::software)
                .error(),
            emit_error::buffer_too_small);
  const std::vector<std::byte> huge(65535 - 20 - 8 + 1);
  EXPECT_EQ(emit_udp_header({1, 2}, huge, src_ip, dst_ip, buf, checksum_mode::software).error(),
            emit_error::too_long);
}

}  // namespace
}  // namespace affine::stack
