// Packet framing: one-frame packets without a copy, split packets of
// 0xffffff-byte frames with the empty terminator, bytes arriving in any
// pieces, the size bound and sequence-id checks.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "apps/mysql-proxy/packet.hh"
#include "tests/apps/mysql_proxy/bytes.hh"

namespace affine_mysql {
namespace {

using affine_mysql_test::framed;
using affine_mysql_test::from_hex;

std::vector<std::byte> pattern(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::byte((i * 131 + 7) & 0xff);
  return v;
}

struct taken {
  std::vector<std::byte> payload;
  std::uint8_t seq = 0;
  std::uint8_t next_seq = 0;
};

// Feeds `stream` to `f` in pieces of `piece` bytes, as a reader would:
// unconsumed bytes are presented again with the next piece.
std::expected<std::vector<taken>, packet_error> take_all(framer& f, std::span<const std::byte> stream,
                                                         std::size_t piece, std::uint8_t seq) {
  std::vector<taken> out;
  std::vector<std::byte> pending;
  std::size_t fed = 0;
  while (fed < stream.size() || !pending.empty()) {
    const std::size_t n = std::min(piece, stream.size() - fed);
    pending.insert(pending.end(), stream.begin() + std::ptrdiff_t(fed), stream.begin() + std::ptrdiff_t(fed + n));
    fed += n;
    for (;;) {
      auto s = f.take(pending, seq);
      if (!s) return std::unexpected(s.error());
      if (s->packet) {
        out.push_back({{s->packet->payload.begin(), s->packet->payload.end()}, s->packet->seq, s->packet->next_seq});
        seq = s->packet->next_seq;
      }
      pending.erase(pending.begin(), pending.begin() + std::ptrdiff_t(s->consumed));
      if (!s->packet) break;
    }
    if (n == 0) break;  // nothing more to feed
  }
  return out;
}

TEST(mysql_packet, OneFramePacketComesBackWithoutACopy) {
  const auto bytes = from_hex(
      "03000003414243"
      "01000004"
      "0e");
  framer f;
  auto s = f.take(bytes, 3);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->consumed, 7u);
  ASSERT_TRUE(s->packet);
  EXPECT_EQ(s->packet->seq, 3);
  EXPECT_EQ(s->packet->next_seq, 4);
  EXPECT_EQ(s->packet->payload.data(), bytes.data() + 4);
  EXPECT_EQ(s->packet->payload.size(), 3u);
}

TEST(mysql_packet, EmptyPacketIsAPacket) {
  const auto bytes = from_hex("00000003");
  framer f;
  auto s = f.take(bytes, 3);
  ASSERT_TRUE(s && s->packet);
  EXPECT_TRUE(s->packet->payload.empty());
  EXPECT_EQ(s->consumed, 4u);
}

TEST(mysql_packet, IncompleteHeaderIsLeftForLater) {
  const auto bytes = from_hex("030000");
  framer f;
  auto s = f.take(bytes, 0);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->consumed, 0u);
  EXPECT_FALSE(s->packet);
  EXPECT_FALSE(f.mid_packet());
}

TEST(mysql_packet, IncompleteSmallPacketIsHeldUpToTheHoldLimit) {
  const auto bytes = from_hex("0500000041424344");  // 4 of 5 payload bytes
  framer held(default_max_packet, 16);
  auto s = held.take(bytes, 0);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->consumed, 0u);
  framer gathering;
  s = gathering.take(bytes, 0);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->consumed, 8u);
  EXPECT_TRUE(gathering.mid_packet());
}

TEST(mysql_packet, PayloadOfExactly0xffffffBytesEndsWithAnEmptyFrame) {
  const auto payload = pattern(max_frame_payload);
  const auto stream = framed(0, payload);
  ASSERT_EQ(stream.size(), payload.size() + 8);
  EXPECT_EQ(stream.size(), framed_size(payload.size()));
  // First frame: ff ff ff 00; the empty terminator: 00 00 00 01.
  EXPECT_EQ(stream[3], std::byte{0});
  EXPECT_EQ(std::vector<std::byte>(stream.end() - 4, stream.end()), from_hex("00000001"));
  framer f;
  auto got = take_all(f, stream, 1 << 20, 0);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].payload, payload);
  EXPECT_EQ((*got)[0].seq, 0);
  EXPECT_EQ((*got)[0].next_seq, 2);
}

TEST(mysql_packet, PayloadOf0xffffffPlusOneBytesIsTwoFrames) {
  const auto payload = pattern(max_frame_payload + 1);
  const auto stream = framed(5, payload);
  ASSERT_EQ(stream.size(), payload.size() + 8);
  EXPECT_EQ(std::vector<std::byte>(stream.end() - 5, stream.end() - 1), from_hex("01000006"));
  framer f;
  auto got = take_all(f, stream, 65536, 5);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].payload, payload);
  EXPECT_EQ((*got)[0].next_seq, 7);
}

TEST(mysql_packet, SixteenMibPlusThreeAcrossOddPiecesThenASmallPacket) {
  const auto big = pattern((16u << 20) + 3);
  auto stream = framed(0, big);
  const auto small = framed(2, from_hex("fe00000200"));
  stream.insert(stream.end(), small.begin(), small.end());
  framer f;
  auto got = take_all(f, stream, 99'991, 0);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].payload, big);
  EXPECT_EQ((*got)[0].next_seq, 2);
  EXPECT_EQ((*got)[1].payload, from_hex("fe00000200"));
  EXPECT_EQ((*got)[1].seq, 2);
}

TEST(mysql_packet, SequenceIdsWrapAround) {
  const auto stream = framed(255, pattern(max_frame_payload + 10));
  framer f;
  auto got = take_all(f, stream, 1 << 22, 255);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].next_seq, 1);
}

TEST(mysql_packet, BytesOneAtATimeGiveTheSamePackets) {
  std::vector<std::byte> stream;
  for (std::uint8_t seq = 1; seq < 6; ++seq) {
    const auto p = framed(seq, pattern(seq * 3));
    stream.insert(stream.end(), p.begin(), p.end());
  }
  framer f;
  auto got = take_all(f, stream, 1, 1);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ((*got)[i].payload, pattern((i + 1) * 3));
}

TEST(mysql_packet, WrongFirstSequenceIdIsAnError) {
  const auto bytes = from_hex("0100000201");
  framer f;
  EXPECT_EQ(f.take(bytes, 1), std::unexpected(packet_error::bad_sequence));
}

TEST(mysql_packet, WrongSequenceIdInsideASplitPacketIsAnError) {
  auto stream = framed(0, pattern(max_frame_payload + 1));
  stream[frame_header_size + max_frame_payload + 3] = std::byte{7};  // the second frame's id: 1 -> 7
  framer f;
  auto got = take_all(f, stream, 1 << 20, 0);
  EXPECT_EQ(got, std::unexpected(packet_error::bad_sequence));
}

TEST(mysql_packet, PacketOverTheLimitIsRefusedAtItsHeader) {
  framer f(1000);
  const auto header = from_hex("e9030000");  // 1001 bytes follow
  EXPECT_EQ(f.take(header, 0), std::unexpected(packet_error::too_large));
  framer exact(1000);
  const auto ok = framed(0, pattern(1000));
  auto s = exact.take(ok, 0);
  ASSERT_TRUE(s && s->packet);
  EXPECT_EQ(s->packet->payload.size(), 1000u);
}

TEST(mysql_packet, SplitPacketOverTheLimitIsRefusedAtTheFrameThatCrossesIt) {
  framer f(max_frame_payload + 5);
  const auto stream = framed(0, pattern(max_frame_payload + 6));
  auto got = take_all(f, stream, 1 << 22, 0);
  EXPECT_EQ(got, std::unexpected(packet_error::too_large));
}

TEST(mysql_packet, LengthThatLiesIsAPacketThatNeverCompletes) {
  // A header that claims more than the peer ever sends: the framer waits
  // for the rest (the session's read deadline ends it), reading nothing
  // out of bounds.
  const auto bytes = from_hex("ff000000414243");
  framer f;
  auto s = f.take(bytes, 0);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->packet);
  EXPECT_EQ(s->consumed, bytes.size());
  EXPECT_TRUE(f.mid_packet());
}

}  // namespace
}  // namespace affine_mysql
