// SACK, the data sender: loss recovery by the scoreboard (RFC 6675) paced
// by Proportional Rate Reduction (RFC 6937). Ten segments of 1000 bytes in
// flight; the peer's ACKs carry SACK blocks (offsets from ISS + 1). The
// controller is NewReno, so ssthresh after a loss is half the flight.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class SackRecovery : public tcp_test {
 protected:
  SackRecovery() { config.sack = true; }
  void establish_sack() {
    open();
    expect({.control = syn, .seq = iss, .options = {.mss = 1000, .sack_permitted = true}});
    send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000, .sack_permitted = true}});
    expect({.seq = iss + 1, .ack = rn + 1});
    ASSERT_TRUE(conn().sack_enabled());
  }
  void enter(std::uint32_t segments = 10) {
    establish_sack();
    write_segments(segments);
  }
  // An ACK of `acked` bytes carrying `blocks` (offsets of our data).
  drop_reason ack(std::uint32_t acked, std::initializer_list<std::pair<std::uint32_t, std::uint32_t>> blocks) {
    seg s{.seq = rn + 1, .ack = iss + 1 + acked};
    for (auto [from, to] : blocks) s.options.sack[s.options.sack_count++] = {iss + 1 + from, iss + 1 + to};
    return send(s);
  }
  void expect_data(std::uint32_t offset, std::uint32_t len = 1000, bool psh = false) {
    expect({.seq = iss + 1 + offset, .ack = rn + 1, .payload = pattern(offset, len), .psh = psh});
  }
  // The data segments output() sent since the last look, by offset.
  std::vector<std::uint32_t> sent_offsets() {
    std::vector<std::uint32_t> out;
    for (const seg& s : take_emitted())
      if (!s.payload.empty()) out.push_back(std::uint32_t(s.seq - (iss + 1)));
    return out;
  }
};

// RFC 6675 5 (3): IsLost(SND.UNA) starts recovery on the first duplicate
// that shows it, without waiting for DupThresh duplicates.
TEST_P(SackRecovery, ThreeSegmentsSackedAboveAHoleStartRecoveryAtOnce_RFC6675_5_3) {
  enter();
  ack(0, {{1000, 4000}});
  expect_data(0);
  expect_nothing();  // nothing else to send, and no rescue yet
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
  EXPECT_EQ(conn().stats().duplicate_acks, 1u);
  EXPECT_EQ(conn().congestion().ssthresh(), 5000u);
}

TEST_P(SackRecovery, TwoSegmentsSackedAreNotYetALoss_RFC6675_4) {
  enter();
  ack(0, {{1000, 2000}});
  ack(0, {{1000, 3000}});
  expect_nothing();
  EXPECT_EQ(conn().stats().sack_recoveries, 0u);
}

TEST_P(SackRecovery, DupThreshDuplicatesStartRecoveryToo_RFC6675_5_3) {
  enter();
  ack(0, {{5000, 5500}});
  ack(0, {{5000, 6000}});
  expect_nothing();
  ack(0, {{5000, 6500}});  // three duplicates, 1500 bytes SACKed: DupAcks decides
  expect_data(0);
}

// What NewReno cannot do: the second hole of the window goes out on the
// duplicates that show it lost, not one round trip later on a partial ACK;
// and a lost hole goes before new data (NextSeg rule 1 before rule 2),
// while one not yet lost waits behind it (rule 3).
TEST_P(SackRecovery, EveryLostHoleIsRetransmittedBeforeNewData_RFC6675_4_NextSeg) {
  enter();
  app_write(20000);
  ack(0, {{1000, 4000}});  // PRR lets two go: the lost [0, 1000), then new data
  ack(0, {{5000, 6000}, {1000, 4000}});
  ack(0, {{5000, 7000}, {1000, 4000}});  // [4000, 5000) not lost yet: new data
  ack(0, {{5000, 8000}, {1000, 4000}});
  ack(0, {{5000, 9000}, {1000, 4000}});  // 4000 bytes above it: lost, and first
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{0, 10000, 11000, 4000}));
  EXPECT_EQ(conn().stats().fast_retransmits, 2u);
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
}

// The first hole's retransmission is lost as well: data sent after it is
// SACKed, more than (DupThresh - 1) * SMSS of it, while SND.UNA stays: it
// goes again instead of waiting for the timer.
TEST_P(SackRecovery, ALostRetransmissionOfTheFirstHoleIsSentAgain) {
  enter();
  app_write(20000);
  ack(0, {{1000, 4000}});
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{0, 10000}));
  for (std::uint32_t k = 4; k < 10; ++k) ack(0, {{1000, 1000 * (k + 1)}});
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{11000, 12000, 13000}));
  ack(0, {{1000, 12000}});  // 10000-12000 went after the retransmission: not yet 3 segments
  EXPECT_EQ(conn().stats().lost_retransmits, 0u);
  take_emitted();
  ack(0, {{1000, 13000}});  // 3000 after it: lost
  const auto sent = sent_offsets();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent.front(), 0u);
  EXPECT_EQ(conn().stats().lost_retransmits, 1u);
  take_emitted();
  ack(14000, {});  // everything: recovery ends
  take_emitted();
}

// A duplicate report (RFC 2883) is counted and is no sign of loss.
TEST_P(SackRecovery, DsacksAreCountedNotTakenAsLoss_RFC2883) {
  enter();
  ack(2000, {});
  for (int i = 0; i < 4; ++i) ack(2000, {{0, 1000}});  // below SND.UNA: duplicates
  expect_nothing();
  EXPECT_EQ(conn().stats().dsacks_received, 4u);
  EXPECT_EQ(conn().stats().duplicate_acks, 0u);
  EXPECT_EQ(conn().stats().sack_recoveries, 0u);
}

TEST_P(SackRecovery, BlocksBeyondWhatWasSentAreRejected) {
  enter();
  ack(0, {{9000, 12000}});
  ack(0, {{3000, 1000}});
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
  ack(0, {{1000, 4000}});
  // 3000 delivered: CEIL(3000 * 5000 / 10000) = 1500: the retransmission and one new segment.
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{0, 10000}));
  for (std::uint32_t k = 4; k < 10; ++k) ack(0, {{1000, 1000 * (k + 1)}});
  // 6000 more: 4500 due in all, 2000 sent: one segment on every second ACK.
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{11000, 12000, 13000}));
  ack(10000, {{11000, 13000}});  // RecoveryPoint acknowledged: the end
  EXPECT_EQ(conn().describe(now).find("recovery=true"), std::string::npos);
  EXPECT_EQ(conn().congestion().cwnd(), 5000u);
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{14000});  // 4000 in flight, cwnd 5000
}

// RFC 6937 PRR-SSRB: after heavy loss the pipe is below ssthresh and
// recovery grows back towards it no faster than slow start: at most
// MAX(prr_delivered - prr_out, DeliveredData) + 1 MSS, and never past
// ssthresh - pipe.
TEST_P(SackRecovery, PrrSlowStartsBackToSsthreshAfterHeavyLoss_RFC6937_3) {
  enter();
  app_write(20000);
  // Only the last three of ten arrived: seven lost, nothing in flight.
  ack(0, {{7000, 10000}});
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{0, 1000, 2000, 3000}));  // 3000 delivered + 1 MSS
  ack(0, {{6000, 10000}});  // 1000 more; the pipe is 4000 retransmitted: ssthresh - pipe = 1000
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{4000});
}

// RescueRxt (RFC 6675 4 NextSeg rule 4): once the first retransmission is
// acknowledged and nothing is left below the highest SACK, the tail above
// it goes out once, before the timer would send it.
TEST_P(SackRecovery, TheTailIsRescuedOncePerRecovery_RFC6675_4_Rule4) {
  enter();
  ack(0, {{1000, 9000}});  // [0, 1000) lost; [9000, 10000) unknown
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{0});  // no rescue before SND.UNA passes RescueRxt
  ack(9000, {});           // the retransmission arrived; the tail did not
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{9000});
  EXPECT_EQ(conn().stats().rescue_retransmits, 1u);
  ack(9000, {});
  ack(9000, {});
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{});
  EXPECT_EQ(conn().stats().rescue_retransmits, 1u);
}

// RFC 2018 8: a receiver may throw away what it SACKed. After a timeout
// the scoreboard starts again, so SACKed data is sent again when the
// cumulative ACK does not cover it.
TEST_P(SackRecovery, ATimeoutForgetsTheScoreboardAgainstReneging_RFC2018_8) {
  enter();
  ack(0, {{1000, 3000}});  // not enough for a loss
  advance(200);            // RTO
  expect_data(0);
  EXPECT_TRUE(conn().sack_scoreboard().empty());
  ack(1000, {});  // the peer reneged: [1000, 3000) must go again
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{1000, 2000}));
}

// RFC 6675 5.1: SACKs that arrive after the timeout spare the go-back-N
// retransmission what they cover.
TEST_P(SackRecovery, GoingBackAfterATimeoutSkipsWhatIsSackedSince_RFC6675_5_1) {
  enter();
  advance(2);
  expect_data(9000, 1000, true);  // the tail loss probe first (loss_probe_test.cc)
  advance(200);
  expect_data(0);
  ack(1000, {{2000, 10000}});
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{1000});
  ack(2000, {{2000, 10000}});
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{});
  ack(10000, {});
  EXPECT_EQ(conn().stats().retransmitted_segments, 3u);  // the probe, the RTO's, [1000, 2000)
}

TCP_IN_BOTH_SEQUENCE_SPACES(SackRecovery);

}  // namespace
}  // namespace affine::stack::tcp::testing
