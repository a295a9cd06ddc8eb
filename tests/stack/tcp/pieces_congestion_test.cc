#include "stack/tcp/new_reno.hh"

#include <gtest/gtest.h>

#include <limits>

namespace affine::stack::tcp {
namespace {

constexpr std::uint32_t mss = 1000;

ack_sample acked(std::uint32_t bytes, std::uint32_t flight) { return {.bytes_acked = bytes, .flight_size = flight}; }

new_reno started() {
  new_reno cc;
  cc.init(mss, 0);
  return cc;
}

// Three duplicate ACKs with 20 MSS in flight: ssthresh 10 MSS, cwnd 13 MSS.
new_reno in_recovery() {
  new_reno cc = started();
  cc.on_enter_recovery(20 * mss, 0);
  return cc;
}

// cwnd == ssthresh == 10 MSS: the next ACKs are in congestion avoidance.
new_reno in_congestion_avoidance() {
  new_reno cc = in_recovery();
  cc.on_exit_recovery(20 * mss);
  return cc;
}

TEST(new_reno_test, InitialWindowFollowsRfc6928) {
  const auto iw = [](std::uint32_t m) {
    new_reno cc;
    cc.init(m, 0);
    return cc.cwnd();
  };
  EXPECT_EQ(iw(1000), 10'000u);  // 10 * MSS
  EXPECT_EQ(iw(1460), 14'600u);
  EXPECT_EQ(iw(4000), 14'600u);  // the 14600-byte cap
  EXPECT_EQ(iw(9000), 18'000u);  // but never below 2 * MSS
}

TEST(new_reno_test, InitialSsthreshIsArbitrarilyHigh) {
  EXPECT_EQ(started().ssthresh(), std::numeric_limits<std::uint32_t>::max());
  EXPECT_EQ(started().name(), "newreno");
}

TEST(new_reno_test, SlowStartGrowsByBytesAckedUpToTwoSegmentsPerAck) {
  new_reno cc = started();
  cc.on_ack(acked(500, 10 * mss));
  EXPECT_EQ(cc.cwnd(), 10'500u);
  cc.on_ack(acked(mss, 10 * mss));
  EXPECT_EQ(cc.cwnd(), 11'500u);
  cc.on_ack(acked(5 * mss, 10 * mss));  // RFC 3465 L = 2 * SMSS
  EXPECT_EQ(cc.cwnd(), 13'500u);
}

TEST(new_reno_test, SlowStartDoublesCwndPerRoundTrip) {
  new_reno cc = started();
  for (int i = 0; i < 10; ++i) cc.on_ack(acked(mss, 10 * mss));
  EXPECT_EQ(cc.cwnd(), 20 * mss);
}

TEST(new_reno_test, CongestionAvoidanceAddsOneSegmentPerWindowAcked) {
  new_reno cc = in_congestion_avoidance();
  ASSERT_EQ(cc.cwnd(), 10 * mss);
  ASSERT_EQ(cc.ssthresh(), 10 * mss);
  for (int i = 0; i < 9; ++i) cc.on_ack(acked(mss, 10 * mss));
  EXPECT_EQ(cc.cwnd(), 10 * mss);
  cc.on_ack(acked(mss, 10 * mss));
  EXPECT_EQ(cc.cwnd(), 11 * mss);
  for (int i = 0; i < 10; ++i) cc.on_ack(acked(mss, 11 * mss));
  EXPECT_EQ(cc.cwnd(), 11 * mss);
  cc.on_ack(acked(mss, 11 * mss));
  EXPECT_EQ(cc.cwnd(), 12 * mss);
}

TEST(new_reno_test, RecoveryEntryHalvesFlightAndInflatesByThreeSegments) {
  new_reno cc = started();
  cc.on_enter_recovery(20 * mss, 0);
  EXPECT_EQ(cc.ssthresh(), 10 * mss);
  EXPECT_EQ(cc.cwnd(), 13 * mss);
}

TEST(new_reno_test, RecoveryEntryKeepsSsthreshAtLeastTwoSegments) {
  new_reno cc = started();
  cc.on_enter_recovery(3 * mss, 0);
  EXPECT_EQ(cc.ssthresh(), 2 * mss);
  EXPECT_EQ(cc.cwnd(), 5 * mss);
}

TEST(new_reno_test, EachFurtherDuplicateAckInflatesByOneSegment) {
  new_reno cc = in_recovery();
  cc.on_dup_ack_in_recovery();
  EXPECT_EQ(cc.cwnd(), 14 * mss);
  cc.on_dup_ack_in_recovery();
  EXPECT_EQ(cc.cwnd(), 15 * mss);
  EXPECT_EQ(cc.ssthresh(), 10 * mss);
}

TEST(new_reno_test, PartialAckDeflatesByBytesAckedAndAddsBackOneSegment) {
  new_reno cc = in_recovery();
  cc.on_dup_ack_in_recovery();
  cc.on_dup_ack_in_recovery();  // 15 MSS
  cc.on_partial_ack(3 * mss);
  EXPECT_EQ(cc.cwnd(), 13 * mss);  // 15 - 3 + 1
  cc.on_partial_ack(500);          // less than one SMSS: nothing added back
  EXPECT_EQ(cc.cwnd(), 12'500u);
  EXPECT_EQ(cc.ssthresh(), 10 * mss);
}

TEST(new_reno_test, PartialAckNeverDeflatesBelowOneSegment) {
  new_reno cc = started();
  cc.on_enter_recovery(4 * mss, 0);  // cwnd 5 MSS
  cc.on_partial_ack(50 * mss);
  EXPECT_EQ(cc.cwnd(), mss);
}

TEST(new_reno_test, FullAckSetsCwndToSsthreshOrFlightPlusOneSegmentIfLess) {
  const auto exit_with = [](std::uint32_t flight) {
    new_reno cc = in_recovery();
    cc.on_exit_recovery(flight);
    return cc.cwnd();
  };
  EXPECT_EQ(exit_with(20 * mss), 10 * mss);
  EXPECT_EQ(exit_with(3 * mss), 4 * mss);
  EXPECT_EQ(exit_with(0), 2 * mss);  // max(FlightSize, SMSS) + SMSS
}

TEST(new_reno_test, TimeoutCollapsesCwndToOneSegmentAndHalvesFlight) {
  new_reno cc = started();
  cc.on_timeout(30 * mss);
  EXPECT_EQ(cc.cwnd(), mss);
  EXPECT_EQ(cc.ssthresh(), 15 * mss);
  cc.on_ack(acked(mss, mss));  // slow start again from one segment
  EXPECT_EQ(cc.cwnd(), 2 * mss);
}

TEST(new_reno_test, RepeatedTimeoutOfTheSameSegmentHoldsSsthresh) {
  new_reno cc = started();
  cc.on_timeout(30 * mss);
  cc.on_timeout(8 * mss);
  EXPECT_EQ(cc.ssthresh(), 15 * mss);
  EXPECT_EQ(cc.cwnd(), mss);
  cc.on_ack(acked(mss, 8 * mss));  // progress: the next timeout is a new loss
  cc.on_timeout(8 * mss);
  EXPECT_EQ(cc.ssthresh(), 4 * mss);
}

TEST(new_reno_test, TimeoutResetsCongestionAvoidanceByteCount) {
  new_reno cc = in_congestion_avoidance();
  for (int i = 0; i < 9; ++i) cc.on_ack(acked(mss, 10 * mss));
  cc.on_timeout(4 * mss);  // ssthresh 2 MSS, cwnd 1 MSS
  cc.on_ack(acked(mss, mss));  // slow start to 2 MSS
  cc.on_ack(acked(mss, mss));  // congestion avoidance: 1 of 2 MSS counted
  EXPECT_EQ(cc.cwnd(), 2 * mss);
  cc.on_ack(acked(mss, mss));
  EXPECT_EQ(cc.cwnd(), 3 * mss);
}

TEST(new_reno_test, IdleRestartShrinksCwndToTheInitialWindow) {
  new_reno cc = started();
  for (int i = 0; i < 10; ++i) cc.on_ack(acked(2 * mss, 10 * mss));
  ASSERT_EQ(cc.cwnd(), 30 * mss);
  cc.on_idle_restart(0);
  EXPECT_EQ(cc.cwnd(), 10 * mss);
  cc.on_timeout(2 * mss);
  cc.on_idle_restart(0);  // RW = min(IW, cwnd): a smaller cwnd stays
  EXPECT_EQ(cc.cwnd(), mss);
}

TEST(new_reno_test, WindowsSaturateInsteadOfOverflowing) {
  constexpr std::uint32_t max = std::numeric_limits<std::uint32_t>::max();
  new_reno cc;
  cc.init(max / 4, 0);
  EXPECT_EQ(cc.cwnd(), max / 4 * 2);
  cc.on_ack(acked(max, max));
  EXPECT_EQ(cc.cwnd(), max / 4 * 4);
  cc.on_ack(acked(max, max));
  EXPECT_EQ(cc.cwnd(), max);
  cc.on_enter_recovery(max, 0);
  EXPECT_EQ(cc.cwnd(), max);
  cc.on_dup_ack_in_recovery();
  EXPECT_EQ(cc.cwnd(), max);
}

}  // namespace
}  // namespace affine::stack::tcp
