// SACK, the data sender: RFC 6675 recovery over RACK's loss marks (RFC
// 8985), paced by Proportional Rate Reduction (RFC 6937). The round trip is
// 10 ms (the handshake's sample); ten segments of 1000 bytes leave at t0,
// and the peer's ACKs for them arrive at t0 + 10 ms carrying SACK blocks
// (offsets from ISS + 1). The controller is NewReno, so ssthresh after a
// loss is half the flight. Losses here are found by RACK with no
// reordering seen: DupThresh SACKed segments close its window (rack_test.cc
// has the window itself).

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

constexpr std::uint64_t rtt_ms = 10;

class SackRecovery : public tcp_test {
 protected:
  SackRecovery() { config.sack = true; }
  // Ten segments out at t0, and one round trip later the first ACKs.
  void enter() { sack_flight_out(10, rtt_ms); }
};

// RFC 8985 6.2: three segments SACKed above a hole, no reordering seen:
// the hole, sent before them a round trip ago, is lost at once.
TEST_P(SackRecovery, ThreeSegmentsSackedAboveAHoleStartRecoveryAtOnce_RFC8985_6_2) {
  enter();
  ack_data(0, {{1000, 4000}});
  expect_data(0);
  expect_nothing();  // nothing else is lost
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
  EXPECT_EQ(conn().stats().duplicate_acks, 1u);
  EXPECT_EQ(conn().congestion().ssthresh(), 5000u);
}

// The same test of `recover` as RFC 6582's (fast_retransmit_test.cc),
// before RACK's loss marks may start recovery (RFC 6675 5 (4.2)): it must
// still hold 2^31 bytes after the handshake.
TEST_P(SackRecovery, LossFoundAfterTwoGibibytesStartsRecovery_RFC6675_5) {
  config.mss = 16000;  // four segments within the peer's 65535
  establish_sack(true, rtt_ms);
  const std::uint32_t far = (1u << 31) + (1u << 20);
  stream_acked(far);
  app_write(64000);
  ASSERT_EQ(take_emitted().size(), 4u);
  // At once: the stream's round trips took no time, and the probe timer
  // (RFC 8985 7.2) would fire within one.
  ack_data(far, {{far + 16000, far + 64000}});
  const auto resent = take_emitted();
  ASSERT_EQ(resent.size(), 1u);
  EXPECT_EQ(resent.front().seq, iss + 1 + far);
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
}

// What NewReno cannot do: the second hole of the window goes out as soon
// as a later segment's SACK shows it lost, not one round trip later on a
// partial ACK; and a lost hole goes before new data (NextSeg rule 1 before
// rule 2), as PRR allows.
TEST_P(SackRecovery, EveryLostHoleIsRetransmittedBeforeNewData_RFC6675_4_NextSeg) {
  enter();
  app_write(20000);
  ack_data(0, {{1000, 4000}});  // PRR lets two go: the lost [0, 1000), then new data
  ack_data(0, {{5000, 6000}, {1000, 4000}});  // [4000, 5000) lost; PRR: nothing due
  ack_data(0, {{5000, 7000}, {1000, 4000}});  // one due: the hole, not new data
  ack_data(0, {{5000, 8000}, {1000, 4000}});
  ack_data(0, {{5000, 9000}, {1000, 4000}});  // and now new data
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{0, 10000, 4000, 11000}));
  EXPECT_EQ(conn().stats().fast_retransmits, 2u);
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
}

// A duplicate report (RFC 2883) is counted and is no sign of loss.
TEST_P(SackRecovery, DsacksAreCountedNotTakenAsLoss_RFC2883) {
  enter();
  ack_data(2000);
  for (int i = 0; i < 4; ++i) ack_data(2000, {{0, 1000}});  // below SND.UNA: duplicates
  expect_nothing();
  EXPECT_EQ(conn().stats().dsacks_received, 4u);
  EXPECT_EQ(conn().stats().duplicate_acks, 0u);
  EXPECT_EQ(conn().stats().sack_recoveries, 0u);
}

TEST_P(SackRecovery, BlocksBeyondWhatWasSentAreRejected) {
  enter();
  ack_data(0, {{9000, 12000}});
  ack_data(0, {{3000, 1000}});
  expect_nothing();
  EXPECT_EQ(conn().stats().sack_blocks_rejected, 2u);
  EXPECT_TRUE(conn().sack_scoreboard().empty());
}

// RFC 6937: while the pipe is above ssthresh, sending follows delivery in
// the proportion ssthresh / RecoverFS (5000 / 10000 here), counted in
// whole segments as Linux counts them (a positive sndcnt sends one). The
// full ACK ends recovery with cwnd at ssthresh.
TEST_P(SackRecovery, PrrSendsInProportionToDelivery_RFC6937_3) {
  enter();
  app_write(20000);  // new data waiting
  ack_data(0, {{1000, 4000}});
  // 3000 delivered: CEIL(3000 * 5000 / 10000) = 1500: the retransmission and one new segment.
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{0, 10000}));
  for (std::uint32_t k = 4; k < 10; ++k) ack_data(0, {{1000, 1000 * (k + 1)}});
  // 6000 more: 4500 due in all, 2000 sent: one segment on every second ACK.
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{11000, 12000, 13000}));
  advance(rtt_ms);
  ack_data(10000, {{11000, 13000}});  // RecoveryPoint acknowledged: the end
  EXPECT_EQ(conn().describe(now).find("recovery=true"), std::string::npos);
  EXPECT_EQ(conn().congestion().cwnd(), 5000u);
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{14000});  // 4000 in flight, cwnd 5000
}

// RFC 6675 5 (4.3) and RFC 9937 (PRR): recovery retransmits the first
// lost segment as it starts, even when the ACK that starts it delivered
// nothing for PRR to send in proportion to. Here that ACK only repeats the
// SACK block (a segment of the peer's own data would carry it so), and
// arrives once [0, 1000)'s reordering window is over but before the
// reorder timer fires (the timer fiber runs later than the RX path).
TEST_P(SackRecovery, RecoveryStartedByAnAckThatDeliversNothingStillRetransmits_RFC9937) {
  enter();
  ack_data(0, {{1000, 3000}});  // two SACKed: reo_wnd = min_RTT / 4 (rack_test.cc)
  expect_nothing();
  now += 2'500'000;  // the window's end, timers not yet run
  ack_data(0, {{1000, 3000}});
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
  EXPECT_EQ(conn().stats().reorder_timeouts, 0u);
  expect_data(0);
  expect_nothing();
}

// RFC 6937 PRR-SSRB: after heavy loss the pipe is below ssthresh and
// recovery grows back towards it no faster than slow start: at most
// MAX(prr_delivered - prr_out, DeliveredData) + 1 MSS, and never past
// ssthresh - pipe. Lost bytes are out of the pipe (RFC 6675 SetPipe).
TEST_P(SackRecovery, PrrSlowStartsBackToSsthreshAfterHeavyLoss_RFC6937_3) {
  enter();
  app_write(20000);
  // Only the last three of ten arrived: seven lost, nothing in flight.
  ack_data(0, {{7000, 10000}});
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{0, 1000, 2000, 3000}));  // 3000 delivered + 1 MSS
  ack_data(0, {{6000, 10000}});  // 1000 more; the pipe is 4000 retransmitted: ssthresh - pipe = 1000
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{4000});
}

// RFC 2018 8: a receiver may throw away what it SACKed. After a timeout
// the scoreboard starts again, so SACKed data is sent again when the
// cumulative ACK does not cover it.
TEST_P(SackRecovery, ATimeoutForgetsTheScoreboardAgainstReneging_RFC2018_8) {
  enter();
  ack_data(0, {{1000, 3000}});  // two SACKed: RACK waits a quarter round trip
  advance(3);
  expect_data(0);               // the reorder timer: lost (rack_test.cc)
  advance(200);                 // the retransmission is lost too: RTO
  expect_data(0);
  EXPECT_TRUE(conn().sack_scoreboard().empty());
  ack_data(1000);  // the peer reneged: [1000, 3000) must go again
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{1000, 2000}));
}

// RFC 6675 5.1: SACKs that arrive after the timeout spare the go-back-N
// retransmission what they cover.
TEST_P(SackRecovery, GoingBackAfterATimeoutSkipsWhatIsSackedSince_RFC6675_5_1) {
  enter();
  advance(rtt_ms);
  expect_data(9000, 1000, true);  // the tail loss probe first (loss_probe_test.cc)
  advance(200);
  expect_data(0);
  ack_data(1000, {{2000, 10000}});
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{1000});
  ack_data(2000, {{2000, 10000}});
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{});
  ack_data(10000);
  EXPECT_EQ(conn().stats().retransmitted_segments, 3u);  // the probe, the RTO's, [1000, 2000)
}

TCP_IN_BOTH_SEQUENCE_SPACES(SackRecovery);

}  // namespace
}  // namespace affine::stack::tcp::testing
