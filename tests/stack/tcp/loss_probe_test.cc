// The tail loss probe (RFC 8985 7), with SACK: one probe after a PTO of
// silence instead of a retransmission timeout. SRTT is 0 here (the SYN's
// sample), so the PTO is its 2 ms floor; the RTO is 200 ms.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class LossProbe : public tcp_test {
 protected:
  LossProbe() { config.sack = true; }
};

// RFC 8985 7.3: with nothing new to send, the probe is the last segment;
// its SACK shows the rest of the tail lost, and recovery resends it at once.
TEST_P(LossProbe, ATailDropIsRepairedByAProbeNotATimeout_RFC8985_7) {
  establish_sack();
  write_segments(10);
  ack_data(8000);  // the last two segments were lost
  advance(1);
  expect_nothing();
  advance(1);  // PTO = 2 * SRTT, at least 2 ms
  expect_data(9000, 1000, true);
  EXPECT_EQ(conn().stats().loss_probes, 1u);
  advance(1);                       // the probe's round trip
  ack_data(8000, {{9000, 10000}});  // it arrived; [8000, 9000), sent before it, did not
  expect_data(8000);
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
  ack_data(10000);
  expect_nothing();
  EXPECT_EQ(conn().stats().retransmission_timeouts, 0u);
}

// RFC 8985 7.3: new data, when the peer's window allows, probes instead
// (cwnd does not hold a probe back).
TEST_P(LossProbe, TheProbeIsNewDataWhenThereIsSome_RFC8985_7_3) {
  establish_sack();
  write_segments(10);  // cwnd: the initial window, all sent
  app_write(1000);
  expect_nothing();
  advance(2);
  expect_data(10000, 1000, true);
  EXPECT_EQ(conn().stats().loss_probes, 1u);
  advance(2);  // one probe at a time, then the RTO
  expect_nothing();
}

// RFC 8985 7.4: a retransmitted probe that repaired a loss (no D-SACK for
// it) costs the congestion response of one loss. (The peer held back its
// ACK of [8000, 9000); the last segment was lost.)
TEST_P(LossProbe, AProbeThatRepairedALossReducesTheWindow_RFC8985_7_4) {
  establish_sack();
  write_segments(10);
  ack_data(8000);
  advance(2);
  expect_data(9000, 1000, true);
  ack_data(10000);
  EXPECT_EQ(conn().stats().loss_probe_repairs, 1u);
  EXPECT_EQ(conn().congestion().ssthresh(), 2000u);  // NewReno: max(FlightSize / 2, 2 SMSS)
}

// RFC 8985 7.4: a D-SACK for the probe says the original arrived: no loss.
TEST_P(LossProbe, ADsackedProbeWasNotNeeded_RFC8985_7_4) {
  establish_sack();
  write_segments(10);
  ack_data(8000);
  advance(2);
  expect_data(9000, 1000, true);
  ack_data(10000, {{9000, 10000}});
  EXPECT_EQ(conn().stats().loss_probe_repairs, 0u);
  EXPECT_EQ(conn().congestion().ssthresh(), UINT32_MAX);
}

// RFC 8985 7.2: one segment outstanding waits for the peer's delayed ACK
// too (PTO + WCDelAckT, 200 ms): past the RTO, so the RTO alone acts.
TEST_P(LossProbe, OneSegmentOutstandingLeavesItToTheTimeout_RFC8985_7_2) {
  establish_sack();
  write_segments(1);
  advance(199);
  expect_nothing();
  advance(1);
  expect_data(0, 1000, true);
  EXPECT_EQ(conn().stats().loss_probes, 0u);
  EXPECT_EQ(conn().stats().retransmission_timeouts, 1u);
}

TEST_P(LossProbe, NoProbeWithoutSack_RFC8985_3) {
  establish_sack(false);
  write_segments(10);
  advance(199);
  expect_nothing();
  EXPECT_EQ(conn().stats().loss_probes, 0u);
  advance(1);
  expect_data(0);
}

// RFC 8985 7.2: SACKed data means loss detection is under way: no probe;
// RACK's reorder timer repairs the hole (a quarter of the 10 ms round trip
// after the SACK came).
TEST_P(LossProbe, NoProbeWhileSackedDataIsOutstanding_RFC8985_7_2) {
  establish_sack(true, 10);
  write_segments(10);
  advance(10);
  ack_data(0, {{1000, 2000}});
  advance(2);
  expect_nothing();
  advance(1);
  expect_data(0);
  EXPECT_EQ(conn().stats().loss_probes, 0u);
  EXPECT_EQ(conn().stats().reorder_timeouts, 1u);
}

TCP_IN_BOTH_SEQUENCE_SPACES(LossProbe);

}  // namespace
}  // namespace affine::stack::tcp::testing
