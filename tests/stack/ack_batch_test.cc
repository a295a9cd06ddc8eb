// When the stack acknowledges (stack::settle_later, connection::owes_ack_now):
// a flow's in-order segments that arrive in one RX batch are settled once,
// after it, so they get one ACK (as GRO gives Linux one per aggregated
// segment); segments RFC 5681 4.2 wants acknowledged at once (out of order,
// filling a gap) still get one each, so the sender can count duplicates.

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "stack/stack.hh"
#include "tests/stack/tcp_peer.hh"

namespace affine::stack {
namespace {

using testing::frame, testing::tcp_frame, testing::tcp_of;

constexpr std::size_t seg_bytes = 1000;

class ack_batch : public testing::tcp_peer {
 protected:
  ack_batch() : tcp_peer("ack_batch_") {
    for (std::size_t i = 0; i < payload_.size(); ++i) payload_[i] = std::byte(i * 13 + 1);
  }

  // The peer's i-th data segment of seg_bytes after `first` (SEQ = first.seq + i * seg_bytes).
  frame data(const tcp_segment& first, unsigned i) const {
    tcp_segment s = first;
    s.seq = first.seq + std::uint32_t(i * seg_bytes);
    s.payload = std::span(payload_).subspan(i * seg_bytes, seg_bytes);
    return tcp_frame(s);
  }

  // The ACK numbers of the segments the stack sent, in order.
  static std::vector<std::uint32_t> acks_of(const std::vector<frame>& out) {
    std::vector<std::uint32_t> acks;
    for (const frame& f : out) {
      auto t = tcp_of(f);
      EXPECT_TRUE(t.has_value());
      if (t && t->ack()) acks.push_back(t->ack_number().raw());
    }
    return acks;
  }

  std::array<std::byte, 8 * seg_bytes> payload_{};
};

TEST_F(ack_batch, EightInOrderSegmentsInOneBatchGetOneAck) {
  with_stack([&](stack&) {
    tcp_segment first;
    auto conn = establish(41000, first);
    ASSERT_TRUE(conn.is_open());
    for (unsigned i = 0; i < 8; ++i) send(data(first, i));  // no poll between: one RX batch
    const auto acks = acks_of(drain());
    ASSERT_EQ(acks.size(), 1u) << "one ACK for the batch, not one per second segment";
    EXPECT_EQ(acks[0], 1001 + 8 * seg_bytes);
    std::array<std::byte, 8 * seg_bytes> got{};
    ASSERT_TRUE(conn.read_exactly(got, now_ns() + 1'000'000'000).has_value());
    EXPECT_EQ(got, payload_);
    conn.abort();
  });
}

TEST_F(ack_batch, OutOfOrderSegmentsInOneBatchEachGetADuplicateAck) {
  with_stack([&](stack&) {
    tcp_segment first;
    auto conn = establish(41001, first);
    ASSERT_TRUE(conn.is_open());
    for (unsigned i = 1; i < 5; ++i) send(data(first, i));  // the first segment lost
    // RFC 5681 4.2: "a TCP receiver SHOULD send an immediate duplicate ACK
    // when an out-of-order segment arrives".
    EXPECT_EQ(acks_of(drain()), std::vector<std::uint32_t>(4, 1001));
    // "...and an immediate ACK when the segment fills in all or part of a gap".
    send(data(first, 0));
    EXPECT_EQ(acks_of(drain()), std::vector<std::uint32_t>{1001 + 5 * seg_bytes});
    std::array<std::byte, 5 * seg_bytes> got{};
    ASSERT_TRUE(conn.read_exactly(got, now_ns() + 1'000'000'000).has_value());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), payload_.begin()));
    conn.abort();
  });
}

}  // namespace
}  // namespace affine::stack
