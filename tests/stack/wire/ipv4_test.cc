#include "stack/wire/ipv4.hh"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "stack/wire/endian.hh"
#include "stack/wire/ethernet.hh"
#include "tests/stack/wire/frames.hh"

namespace affine::stack {
namespace {

const ipv4_header sample{.src = 0x0a000201,
                         .dst = 0x0a000202,
                         .protocol = ip_protocol::udp,
                         .ttl = 17,
                         .tos = 0xb8,
                         .id = 0xbeef,
                         .dont_fragment = true,
                         .more_fragments = false,
                         .fragment_offset = 0,
                         .payload_length = 12};

// A datagram of `sample` with a 12-byte payload, emitted by the code under test.
std::vector<std::byte> sample_datagram() {
  std::vector<std::byte> d(32, std::byte{0x5a});
  EXPECT_EQ(emit_ipv4(sample, d, checksum_mode::software), 20u);
  return d;
}

void set_byte(std::vector<std::byte>& d, std::size_t i, int v) { d[i] = std::byte(v); }

// Rewrites the header checksum so a test reaches the check after it.
void fix_checksum(std::vector<std::byte>& d) {
  const std::size_t header_length = std::size_t(d[0] & std::byte{0x0f}) * 4;
  store_be16(d.data() + 10, 0);
  store_be16(d.data() + 10, internet_checksum(std::span(d).first(std::min(header_length, d.size()))));
}

TEST(Ipv4, ParsesCapturedHeader) {
  const auto frame = test::from_hex(test::tcp_syn_hex);
  const auto v = ipv4_view::parse(ethernet_view::parse(frame)->payload());
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header_length(), 20u);
  EXPECT_EQ(v->total_length(), 60);
  EXPECT_EQ(v->id(), 0x02f5);
  EXPECT_TRUE(v->dont_fragment());
  EXPECT_FALSE(v->is_fragment());
  EXPECT_EQ(v->ttl(), 64);
  EXPECT_EQ(v->protocol(), ip_protocol::tcp);
  EXPECT_EQ(v->checksum(), 0x39c5);
  EXPECT_EQ(v->src(), test::loopback_ip);
  EXPECT_EQ(v->dst(), test::loopback_ip);
  EXPECT_EQ(v->payload().size(), 40u);
}

TEST(Ipv4, RoundTripKeepsEveryField) {
  const auto d = sample_datagram();
  const auto v = ipv4_view::parse(d);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header(), sample);
  EXPECT_EQ(v->payload().data(), d.data() + 20);
}

TEST(Ipv4, FragmentFieldsRoundTripWithOffsetInBytes) {
  ipv4_header h = sample;
  h.dont_fragment = false;
  h.more_fragments = true;
  h.fragment_offset = 1480;
  std::array<std::byte, 32> buf{};
  ASSERT_TRUE(emit_ipv4(h, buf, checksum_mode::software));
  EXPECT_EQ(buf[6], std::byte{0x20 | (1480 / 8) >> 8});
  EXPECT_EQ(buf[7], std::byte{(1480 / 8) & 0xff});
  const auto v = ipv4_view::parse(buf);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->is_fragment());
  EXPECT_EQ(v->header(), h);
}

TEST(Ipv4, EthernetPaddingIsTrimmedByTotalLength) {
  auto d = sample_datagram();
  d.resize(46, std::byte{0});  // a 60-byte frame's worth
  const auto v = ipv4_view::parse(d);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->packet().size(), 32u);
  EXPECT_EQ(v->payload().size(), 12u);
}

TEST(Ipv4, OptionsAreSkippedByTheirLength) {
  // IHL 6: one 4-byte option word (a record-route stub) before the payload.
  auto d = sample_datagram();
  d.insert(d.begin() + 20, {std::byte{7}, std::byte{3}, std::byte{4}, std::byte{0}});
  set_byte(d, 0, 0x46);
  set_byte(d, 3, 36);
  fix_checksum(d);
  const auto v = ipv4_view::parse(d);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header_length(), 24u);
  EXPECT_EQ(v->options().size(), 4u);
  EXPECT_EQ(v->options()[0], std::byte{7});
  EXPECT_EQ(v->payload().data(), d.data() + 24);
  EXPECT_EQ(v->payload().size(), 12u);
}

TEST(Ipv4, TruncatedAtEveryByteOfTheFixedHeader) {
  const auto d = sample_datagram();
  for (std::size_t n = 0; n < 20; ++n)
    EXPECT_EQ(ipv4_view::parse(std::span(d).first(n)).error(), parse_error::truncated) << n << " bytes";
}

TEST(Ipv4, VersionOtherThanFourIsBadVersion) {
  auto d = sample_datagram();
  set_byte(d, 0, 0x65);
  EXPECT_EQ(ipv4_view::parse(d).error(), parse_error::bad_version);
}

TEST(Ipv4, IhlUnderFiveIsBadHeaderLength) {
  auto d = sample_datagram();
  set_byte(d, 0, 0x44);
  EXPECT_EQ(ipv4_view::parse(d).error(), parse_error::bad_header_length);
}

TEST(Ipv4, IhlPastTheBufferIsBadHeaderLength) {
  auto d = sample_datagram();
  set_byte(d, 0, 0x4f);  // 60 bytes of header in a 32-byte buffer
  EXPECT_EQ(ipv4_view::parse(d).error(), parse_error::bad_header_length);
}

TEST(Ipv4, TotalLengthPastTheBufferIsBadTotalLength) {
  auto d = sample_datagram();
  set_byte(d, 3, 33);
  fix_checksum(d);
  EXPECT_EQ(ipv4_view::parse(d).error(), parse_error::bad_total_length);
}

TEST(Ipv4, TotalLengthUnderTheHeaderIsBadTotalLength) {
  auto d = sample_datagram();
  set_byte(d, 0, 0x46);
  set_byte(d, 3, 20);  // under IHL * 4 = 24
  fix_checksum(d);
  EXPECT_EQ(ipv4_view::parse(d).error(), parse_error::bad_total_length);
}

TEST(Ipv4, CorruptHeaderIsBadChecksumUnlessTheNicVerifiedIt) {
  auto d = sample_datagram();
  set_byte(d, 8, 16);  // TTL changed without updating the checksum
  EXPECT_EQ(ipv4_view::parse(d).error(), parse_error::bad_checksum);
  const auto v = ipv4_view::parse(d, checksum_mode::offload);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->ttl(), 16);
}

TEST(Ipv4, CorruptPayloadDoesNotFailTheHeaderChecksum) {
  auto d = sample_datagram();
  set_byte(d, 25, 0);
  EXPECT_TRUE(ipv4_view::parse(d));
}

TEST(Ipv4, ReservedFlagIsBadFlags) {
  auto d = sample_datagram();
  set_byte(d, 6, 0x80 | 0x40);
  fix_checksum(d);
  EXPECT_EQ(ipv4_view::parse(d).error(), parse_error::bad_flags);
}

TEST(Ipv4, OffloadEmitLeavesChecksumZero) {
  std::array<std::byte, 20> buf;
  buf.fill(std::byte{0xee});
  ASSERT_TRUE(emit_ipv4(sample, buf, checksum_mode::offload));
  EXPECT_EQ(buf[10], std::byte{0});
  EXPECT_EQ(buf[11], std::byte{0});
}

TEST(Ipv4, EmitErrors) {
  std::array<std::byte, 20> buf{};
  EXPECT_EQ(emit_ipv4(sample, std::span(buf).first(19), checksum_mode::software).error(),
            emit_error::buffer_too_small);
  ipv4_header big = sample;
  big.payload_length = 65535 - 19;
  EXPECT_EQ(emit_ipv4(big, buf, checksum_mode::software).error(), emit_error::too_long);
  big.payload_length = 65535 - 20;
  EXPECT_EQ(emit_ipv4(big, buf, checksum_mode::software), 20u);
}

TEST(Ipv4Quote, ParsesQuotedHeaderAndTransportStart) {
  const auto d = sample_datagram();
  const auto q = parse_ipv4_quote(std::span(d).first(28));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->src, sample.src);
  EXPECT_EQ(q->dst, sample.dst);
  EXPECT_EQ(q->protocol, ip_protocol::udp);
  EXPECT_EQ(q->id, sample.id);
  EXPECT_EQ(q->transport.data(), d.data() + 20);
  EXPECT_EQ(q->transport.size(), 8u);
}

TEST(Ipv4Quote, QuoteErrors) {
  auto d = sample_datagram();
  EXPECT_EQ(parse_ipv4_quote(std::span(d).first(27)).error(), parse_error::truncated);
  EXPECT_EQ(parse_ipv4_quote(std::span(d).first(19)).error(), parse_error::truncated);
  set_byte(d, 0, 0x46);
  EXPECT_EQ(parse_ipv4_quote(std::span(d).first(31)).error(), parse_error::truncated);
  set_byte(d, 0, 0x43);
  EXPECT_EQ(parse_ipv4_quote(d).error(), parse_error::bad_header_length);
  set_byte(d, 0, 0x55);
  EXPECT_EQ(parse_ipv4_quote(d).error(), parse_error::bad_version);
}

}  // namespace
}  // namespace affine::stack
