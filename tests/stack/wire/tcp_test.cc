#include "stack/wire/tcp.hh"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "stack/wire/endian.hh"
#include "tests/stack/wire/frames.hh"

namespace affine::stack {
namespace {

using test::bytes_of;
using test::loopback_ip;
using test::transport_bytes;

constexpr std::uint32_t src_ip = 0xc0a80001, dst_ip = 0xc0a80002;

std::vector<std::byte> captured_syn_with_full_checksum() {
  auto s = transport_bytes(test::tcp_syn_hex);
  store_be16(s.data() + 16, test::tcp_syn_checksum);
  return s;
}

tcp_segment data_segment(std::span<const std::byte> payload) {
  tcp_segment s;
  s.src_port = 40000;
  s.dst_port = 3306;
  s.psh = true;
  s.seq = seq32(0xfffffff0u);
  s.ack = seq32(77);
  s.window = 501;
  s.options.timestamps = tcp_timestamps{1000, 999};
  s.options.sack_count = 2;
  s.options.sack[0] = {seq32(100), seq32(200)};
  s.options.sack[1] = {seq32(300), seq32(400)};
  s.payload = payload;
  return s;
}

// Checks every field of a parsed segment against the one emitted.
void expect_same(const tcp_segment& a, const tcp_segment& b) {
  EXPECT_EQ(a.src_port, b.src_port);
  EXPECT_EQ(a.dst_port, b.dst_port);
  EXPECT_EQ(a.control, b.control);
  EXPECT_EQ(a.psh, b.psh);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.ack, b.ack);
  EXPECT_EQ(a.window, b.window);
  EXPECT_EQ(a.urg, b.urg);
  EXPECT_EQ(a.urgent_pointer, b.urgent_pointer);
  EXPECT_EQ(a.options, b.options);
  EXPECT_TRUE(std::equal(a.payload.begin(), a.payload.end(), b.payload.begin(), b.payload.end()));
}

TEST(Tcp, ParsesCapturedSynWithItsOptions) {
  const auto s = captured_syn_with_full_checksum();
  const auto v = tcp_view::parse(s, loopback_ip, loopback_ip);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->src_port(), 45248);
  EXPECT_EQ(v->dst_port(), 9);
  EXPECT_EQ(v->seq(), seq32(0x9fe8a940));
  EXPECT_EQ(v->header_length(), 40u);
  EXPECT_TRUE(v->syn());
  EXPECT_FALSE(v->ack());
  EXPECT_EQ(v->control(), tcp_control::syn);
  EXPECT_EQ(v->window(), 65495);
  EXPECT_EQ(v->option_bytes().size(), 20u);
  EXPECT_EQ(v->options().mss, 65495);
  EXPECT_EQ(v->options().window_scale, 10);
  EXPECT_TRUE(v->options().sack_permitted);
  EXPECT_EQ(v->options().timestamps, (tcp_timestamps{0x3d3c6975, 0}));
  EXPECT_TRUE(v->payload().empty());
  const tcp_segment seg = v->segment();
  EXPECT_EQ(seg.seq_len(), 1u);
  EXPECT_FALSE(seg.ack);
}

TEST(Tcp, CapturedSynWithPartialChecksumFailsUnlessOffloaded) {
  const auto s = transport_bytes(test::tcp_syn_hex);
  EXPECT_EQ(tcp_view::parse(s, loopback_ip, loopback_ip).error(), parse_error::bad_checksum);
  EXPECT_TRUE(tcp_view::parse(s, loopback_ip, loopback_ip, checksum_mode::offload));
}

TEST(Tcp, EmitReproducesCapturedSynInBothChecksumModes) {
  const auto full = captured_syn_with_full_checksum();
  const tcp_segment seg = tcp_view::parse(full, loopback_ip, loopback_ip)->segment();
  std::array<std::byte, 40> buf{};
  ASSERT_EQ(emit_tcp(seg, loopback_ip, loopback_ip, buf, checksum_mode::software), 40u);
  EXPECT_EQ(std::vector(buf.begin(), buf.end()), full);
  ASSERT_EQ(emit_tcp(seg, loopback_ip, loopback_ip, buf, checksum_mode::offload), 40u);
  EXPECT_EQ(std::vector(buf.begin(), buf.end()), transport_bytes(test::tcp_syn_hex));
}

TEST(Tcp, EmitReproducesCapturedRstAck) {
  const auto s = transport_bytes(test::tcp_rst_ack_hex);
  const auto v = tcp_view::parse(s, loopback_ip, loopback_ip);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->control(), tcp_control::rst);
  EXPECT_EQ(v->segment().ack, seq32(0x9fe8a941));
  std::array<std::byte, 20> buf{};
  ASSERT_EQ(emit_tcp(v->segment(), loopback_ip, loopback_ip, buf, checksum_mode::software), 20u);
  EXPECT_EQ(std::vector(buf.begin(), buf.end()), s);
}

TEST(Tcp, DataSegmentRoundTrip) {
  const auto payload = bytes_of({'S', 'E', 'L', 'E', 'C', 'T', ' ', '1'});
  const tcp_segment seg = data_segment(payload);
  std::array<std::byte, 20 + 12 + 20 + 8> buf{};
  ASSERT_EQ(emit_tcp(seg, src_ip, dst_ip, buf, checksum_mode::software), buf.size());
  const auto v = tcp_view::parse(buf, src_ip, dst_ip);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header_length(), 52u);
  EXPECT_TRUE(v->ack());
  EXPECT_TRUE(v->psh());
  expect_same(v->segment(), seg);
  EXPECT_EQ(v->segment().payload.data(), buf.data() + 52);
}

TEST(Tcp, ControlsAndUrgentRoundTrip) {
  for (const auto control : {tcp_control::none, tcp_control::syn, tcp_control::fin, tcp_control::rst}) {
    tcp_segment seg;
    seg.src_port = 1;
    seg.dst_port = 2;
    seg.control = control;
    seg.seq = seq32(5);
    seg.urg = true;
    seg.urgent_pointer = 3;
    std::array<std::byte, 20> buf{};
    ASSERT_TRUE(emit_tcp(seg, src_ip, dst_ip, buf, checksum_mode::software));
    const auto v = tcp_view::parse(buf, src_ip, dst_ip);
    ASSERT_TRUE(v);
    expect_same(v->segment(), seg);
  }
}

TEST(Tcp, HeaderOnlyEmitChecksumsThePayloadTheCallerPlaced) {
  std::array<std::byte, 20 + 32 + 5> buf{};
  const auto payload = std::span(buf).subspan(52);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = std::byte(i + 1);
  tcp_segment seg = data_segment(payload);
  ASSERT_EQ(emit_tcp_header(seg, src_ip, dst_ip, buf, checksum_mode::software), 52u);
  const auto v = tcp_view::parse(buf, src_ip, dst_ip);
  ASSERT_TRUE(v);
  expect_same(v->segment(), seg);
}

TEST(Tcp, EmittedChecksumVerifiesForEveryPayloadLength) {
  // emit sums the header from its values, the payload as it copies it
  // (with vectors from 256 bytes) and the options apart; parse sums the
  // bytes as they lie. Odd lengths move the options to the other half of a
  // word if they are joined wrongly.
  std::vector<std::byte> payload(1600);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = std::byte(i * 7 + 3);
  std::vector<std::byte> buf(20 + 32 + payload.size());
  for (std::size_t len = 0; len <= payload.size(); ++len) {
    tcp_segment seg = data_segment(std::span(payload).first(len));
    seg.control = len % 3 == 0 ? tcp_control::fin : tcp_control::none;
    seg.urg = len % 2 == 0;
    seg.urgent_pointer = std::uint16_t(len);
    const auto n = emit_tcp(seg, src_ip, dst_ip, buf, checksum_mode::software);
    ASSERT_EQ(n, 52 + len);
    const auto v = tcp_view::parse(std::span(buf).first(*n), src_ip, dst_ip);
    ASSERT_TRUE(v) << "payload " << len;
    expect_same(v->segment(), seg);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Tcp, OffloadEmitWritesThePseudoHeaderSum) {
  const auto payload = bytes_of({1, 2, 3});
  std::array<std::byte, 20 + 32 + 3> buf{};
  ASSERT_TRUE(emit_tcp(data_segment(payload), src_ip, dst_ip, buf, checksum_mode::offload));
  const std::uint16_t pseudo = ipv4_pseudo_header(src_ip, dst_ip, 6, std::uint16_t(buf.size())).sum();
  EXPECT_EQ(load_be16(buf.data() + 16), pseudo);
  // What a NIC then does: sum the segment from the pseudo sum and store the complement.
  checksum_accumulator nic;
  nic.add(buf);
  store_be16(buf.data() + 16, nic.checksum());
  EXPECT_TRUE(tcp_view::parse(buf, src_ip, dst_ip));
}

TEST(Tcp, TruncatedAtEveryByteOfTheFixedHeader) {
  const auto s = transport_bytes(test::tcp_rst_ack_hex);
  for (std::size_t n = 0; n < 20; ++n)
    EXPECT_EQ(tcp_view::parse(std::span(s).first(n), loopback_ip, loopback_ip).error(), parse_error::truncated)
        << n << " bytes";
}

TEST(Tcp, DataOffsetUnderFiveIsBadHeaderLength) {
  auto s = transport_bytes(test::tcp_rst_ack_hex);
  s[12] = std::byte{0x40};
  EXPECT_EQ(tcp_view::parse(s, loopback_ip, loopback_ip, checksum_mode::offload).error(),
            parse_error::bad_header_length);
}

TEST(Tcp, DataOffsetPastTheSegmentIsBadHeaderLength) {
  auto s = captured_syn_with_full_checksum();
  s[12] = std::byte{0xb0};  // 44 bytes of header in a 40-byte segment
  EXPECT_EQ(tcp_view::parse(s, loopback_ip, loopback_ip, checksum_mode::offload).error(),
            parse_error::bad_header_length);
}

TEST(Tcp, CorruptSegmentIsBadChecksum) {
  auto s = transport_bytes(test::tcp_rst_ack_hex);
  s[4] ^= std::byte{0x80};
  EXPECT_EQ(tcp_view::parse(s, loopback_ip, loopback_ip).error(), parse_error::bad_checksum);
}

TEST(Tcp, IllegalControlCombinationsAreBadFlags) {
  // SYN+FIN, SYN+RST, FIN+RST, all three; with and without ACK.
  for (const int controls : {0x03, 0x06, 0x05, 0x07, 0x13, 0x16, 0x15, 0x17}) {
    auto s = transport_bytes(test::tcp_rst_ack_hex);
    s[13] = std::byte(controls);
    EXPECT_EQ(tcp_view::parse(s, loopback_ip, loopback_ip, checksum_mode::offload).error(), parse_error::bad_flags)
        << "flags " << controls;
  }
}

TEST(Tcp, EceCwrAndReservedBitsAreNotControls) {
  auto s = transport_bytes(test::tcp_rst_ack_hex);
  s[12] = std::byte{0x5f};  // reserved bits set: ignored (RFC 9293 3.1)
  s[13] = std::byte{0xd0};  // CWR, ECE, ACK
  const auto v = tcp_view::parse(s, loopback_ip, loopback_ip, checksum_mode::offload);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->cwr());
  EXPECT_TRUE(v->ece());
  EXPECT_EQ(v->control(), tcp_control::none);
  EXPECT_EQ(v->header_length(), 20u);
}

TEST(Tcp, BadOptionInHeaderIsBadOption) {
  auto s = captured_syn_with_full_checksum();
  s[21] = std::byte{0x05};  // the MSS option's length, now past its place
  EXPECT_EQ(tcp_view::parse(s, loopback_ip, loopback_ip, checksum_mode::offload).error(), parse_error::bad_option);
}

TEST(Tcp, EmitErrors) {
  const auto payload = bytes_of({1, 2, 3});
  tcp_segment seg = data_segment(payload);
  std::array<std::byte, 54> small{};
  EXPECT_EQ(emit_tcp(seg, src_ip, dst_ip, small, checksum_mode::software).error(), emit_error::buffer_too_small);
  EXPECT_EQ(emit_tcp_header(seg, src_ip, dst_ip, std::span(small).first(51), checksum_mode::software).error(),
            emit_error::buffer_too_small);
  EXPECT_EQ(emit_tcp_header(seg, src_ip, dst_ip, small, checksum_mode::software), 52u);
  seg.options.sack_count = 4;  // timestamps and four blocks: 48 bytes of options
  EXPECT_EQ(emit_tcp_header(seg, src_ip, dst_ip, small, checksum_mode::software).error(),
            emit_error::options_too_long);
  const std::vector<std::byte> huge(65535 - 20 - 20 + 1);
  tcp_segment bare;
  bare.payload = huge;
  EXPECT_EQ(emit_tcp_header(bare, src_ip, dst_ip, small, checksum_mode::software).error(), emit_error::too_long);
}

}  // namespace
}  // namespace affine::stack
