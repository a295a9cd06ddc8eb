#include "stack/wire/tcp_options.hh"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "tests/stack/wire/frames.hh"

namespace affine::stack {
namespace {

using test::bytes_of;

TEST(TcpOptions, ParsesLinuxSynOptions) {
  // The captured SYN's options: MSS 65495, SACK-permitted, timestamps, NOP, window scale 10.
  const auto o = parse_tcp_options(bytes_of({0x02, 0x04, 0xff, 0xd7, 0x04, 0x02, 0x08, 0x0a, 0x3d, 0x3c, 0x69,
                                             0x75, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03, 0x03, 0x0a}));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->mss, 65495);
  EXPECT_TRUE(o->sack_permitted);
  EXPECT_EQ(o->timestamps, (tcp_timestamps{0x3d3c6975, 0}));
  EXPECT_EQ(o->window_scale, 10);
  EXPECT_EQ(o->sack_count, 0);
}

TEST(TcpOptions, RoundTripWithEveryOption) {
  tcp_options o;
  o.mss = 1460;
  o.window_scale = 7;
  o.sack_permitted = true;
  o.timestamps = tcp_timestamps{123456789, 987654321};
  o.sack_count = 1;
  o.sack[0] = {seq32(1000), seq32(2000)};
  ASSERT_EQ(tcp_options_length(o), 4u + 12 + 4 + 12);
  std::array<std::byte, 40> buf{};
  ASSERT_EQ(emit_tcp_options(o, buf), 32u);
  const auto back = parse_tcp_options(std::span(buf).first(32));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, o);
}

TEST(TcpOptions, RoundTripOfEachAloneAndNone) {
  std::vector<tcp_options> cases(6);
  cases[1].mss = 536;
  cases[2].window_scale = 14;
  cases[3].sack_permitted = true;
  cases[4].timestamps = tcp_timestamps{1, 0xffffffff};
  cases[5].sack_count = 4;
  for (std::uint8_t i = 0; i < 4; ++i) cases[5].sack[i] = {seq32(0xfffffff0u + i * 100), seq32(i * 100 + 50)};
  for (const auto& o : cases) {
    std::array<std::byte, 40> buf{};
    const auto n = emit_tcp_options(o, buf);
    ASSERT_TRUE(n);
    EXPECT_EQ(*n % 4, 0u);
    const auto back = parse_tcp_options(std::span(buf).first(*n));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, o);
  }
}

TEST(TcpOptions, WindowScaleOver14IsClampedTo14) {
  // RFC 7323 2.3.
  const auto o = parse_tcp_options(bytes_of({0x03, 0x03, 0x0f, 0x01}));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->window_scale, 14);
}

TEST(TcpOptions, UnknownKindsAreSkippedByTheirLength) {
  // Kind 30 (MPTCP) of length 6, then MSS.
  const auto o = parse_tcp_options(bytes_of({30, 6, 0xff, 0xff, 0xff, 0xff, 0x02, 0x04, 0x05, 0xb4}));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->mss, 1460);
}

TEST(TcpOptions, EndOfListStopsParsing) {
  // What follows EOL is padding, even when it looks like a broken option.
  const auto o = parse_tcp_options(bytes_of({0x02, 0x04, 0x05, 0xb4, 0x00, 0x05, 0x01, 0xff}));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->mss, 1460);
  EXPECT_EQ(o->sack_count, 0);
}

// Found by the wire_frame fuzz target: of two SACK options the last counts,
// and none of the first's blocks stays behind its count.
TEST(TcpOptions, ALaterSackOptionReplacesAnEarlierOneWhole) {
  const auto o = parse_tcp_options(bytes_of({0x05, 0x12, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4,  //
                                             0x05, 0x0a, 0, 0, 0, 9, 0, 0, 0, 10}));
  ASSERT_TRUE(o);
  ASSERT_EQ(o->sack_count, 1);
  EXPECT_EQ(o->sack[0], (tcp_sack_block{seq32(9), seq32(10)}));
  EXPECT_EQ(o->sack[1], tcp_sack_block{});
  tcp_options once;
  once.sack_count = 1;
  once.sack[0] = {seq32(9), seq32(10)};
  EXPECT_EQ(*o, once);
}

TEST(TcpOptions, ParsesSackBlocks) {
  const auto o = parse_tcp_options(bytes_of({0x01, 0x01, 0x05, 0x12, 0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xff,
                                             0xf0, 0, 0, 0, 0x10}));
  ASSERT_TRUE(o);
  ASSERT_EQ(o->sack_count, 2);
  EXPECT_EQ(o->sack[0], (tcp_sack_block{seq32(1), seq32(2)}));
  EXPECT_EQ(o->sack[1], (tcp_sack_block{seq32(0xfffffff0u), seq32(0x10)}));
}

TEST(TcpOptions, LengthZeroOrOneIsBadOption) {
  EXPECT_EQ(parse_tcp_options(bytes_of({30, 0, 1, 1})).error(), parse_error::bad_option);
  EXPECT_EQ(parse_tcp_options(bytes_of({30, 1, 1, 1})).error(), parse_error::bad_option);
}

TEST(TcpOptions, LengthRunningPastTheHeaderIsBadOption) {
  EXPECT_EQ(parse_tcp_options(bytes_of({0x01, 30, 4, 1})).error(), parse_error::bad_option);
  EXPECT_EQ(parse_tcp_options(bytes_of({0x02, 0x04, 0x05})).error(), parse_error::bad_option);
}

TEST(TcpOptions, KindWithoutRoomForItsLengthIsBadOption) {
  EXPECT_EQ(parse_tcp_options(bytes_of({0x01, 0x01, 0x01, 0x02})).error(), parse_error::bad_option);
}

TEST(TcpOptions, KnownKindWithWrongLengthIsBadOption) {
  const std::vector<std::vector<std::byte>> bad = {
      bytes_of({0x02, 0x03, 0x05, 0x01}),                          // MSS, length 3
      bytes_of({0x02, 0x05, 0x05, 0xb4, 0x00, 0x01, 0x01, 0x01}),  // MSS, length 5
      bytes_of({0x03, 0x04, 0x07, 0x00}),                          // window scale, length 4
      bytes_of({0x03, 0x02, 0x01, 0x01}),                          // window scale, length 2
      bytes_of({0x04, 0x03, 0x00, 0x01}),                          // SACK-permitted, length 3
      bytes_of({0x05, 0x02, 0x01, 0x01}),                          // SACK, no block
      bytes_of({0x05, 0x09, 0, 0, 0, 1, 0, 0, 0, 2, 0x01, 0x01}),  // SACK, not 2 + 8n
      bytes_of({0x08, 0x08, 0, 0, 0, 1, 0, 0}),                    // timestamps, length 8
  };
  for (std::size_t i = 0; i < bad.size(); ++i)
    EXPECT_EQ(parse_tcp_options(bad[i]).error(), parse_error::bad_option) << "case " << i;
}

TEST(TcpOptions, FiveSackBlocksIsBadOption) {
  std::vector<std::byte> o = bytes_of({0x05, 42});
  o.resize(42, std::byte{0});
  EXPECT_EQ(parse_tcp_options(o).error(), parse_error::bad_option);
}

TEST(TcpOptions, EmitRefusesMoreThan40Bytes) {
  tcp_options o;
  o.timestamps = tcp_timestamps{1, 2};
  o.sack_count = 4;  // 12 + 36 bytes
  std::array<std::byte, 60> buf{};
  EXPECT_EQ(emit_tcp_options(o, buf).error(), emit_error::options_too_long);
  o.sack_count = 3;  // 12 + 28 = 40: fits
  EXPECT_EQ(emit_tcp_options(o, buf), 40u);
}

TEST(TcpOptions, EmitIntoTooSmallBufferFails) {
  tcp_options o;
  o.mss = 1460;
  std::array<std::byte, 3> buf{};
  EXPECT_EQ(emit_tcp_options(o, buf).error(), emit_error::buffer_too_small);
}

}  // namespace
}  // namespace affine::stack
