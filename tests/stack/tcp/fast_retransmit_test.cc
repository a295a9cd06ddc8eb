// Fast retransmit and NewReno recovery (RFC 5681 3.2, RFC 6582 3.2): the
// connection counts duplicate ACKs and keeps `recover`; the congestion
// controller moves cwnd and ssthresh.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class FastRetransmit : public tcp_test {
 protected:
  // Five segments in flight.
  void enter() {
    establish();
    write_segments(5);
  }
  drop_reason dup_ack(std::optional<std::uint16_t> window = std::nullopt) {
    return send({.seq = rn + 1, .ack = iss + 1, .window = window});
  }
  // Three duplicate ACKs and the retransmission of the first segment.
  void enter_recovery() {
    enter();
    dup_ack();
    dup_ack();
    dup_ack();
    expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000)});
  }
};

TEST_P(FastRetransmit, ThirdDuplicateAckResendsTheMissingSegment_RFC5681_3_2) {
  enter();
  dup_ack();
  dup_ack();
  expect_nothing();
  dup_ack();
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000)});
  EXPECT_EQ(conn().congestion().ssthresh(), 2500u);  // max(FlightSize / 2, 2 * SMSS)
  EXPECT_EQ(conn().congestion().cwnd(), 5500u);      // ssthresh + 3 * SMSS
  EXPECT_EQ(conn().stats().fast_retransmits, 1u);
  EXPECT_EQ(conn().stats().duplicate_acks, 3u);
}

TEST_P(FastRetransmit, FurtherDuplicatesInflateCwndAndReleaseNewData_RFC6582_3_2_Step4) {
  enter_recovery();
  app_write(2000);
  expect_nothing();  // cwnd 5500 with 5000 in flight
  dup_ack();
  expect({.seq = iss + 5001, .ack = rn + 1, .payload = pattern(5000, 1000)});
  dup_ack();
  expect({.seq = iss + 6001, .ack = rn + 1, .payload = pattern(6000, 1000), .psh = true});
  EXPECT_EQ(conn().congestion().cwnd(), 7500u);
}

TEST_P(FastRetransmit, PartialAckResendsTheNextHole_RFC6582_3_2_Step5) {
  enter_recovery();
  send({.seq = rn + 1, .ack = iss + 1001});
  expect({.seq = iss + 1001, .ack = rn + 1, .payload = pattern(1000, 1000)});
  EXPECT_EQ(conn().congestion().cwnd(), 5500u);  // deflated by 1000, plus one SMSS back
  EXPECT_EQ(conn().stats().fast_retransmits, 2u);
}

TEST_P(FastRetransmit, FullAckEndsRecovery_RFC6582_3_2_Step6) {
  enter_recovery();
  send({.seq = rn + 1, .ack = iss + 5001});
  expect_nothing();
  EXPECT_EQ(conn().congestion().cwnd(), 2000u);  // min(ssthresh, max(FlightSize, SMSS) + SMSS)
}

TEST_P(FastRetransmit, NoSecondReductionForLossBeforeATimeout_RFC6582_4) {
  enter();
  advance(200);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000)});
  dup_ack();
  dup_ack();
  dup_ack();
  expect_nothing();
  EXPECT_EQ(conn().congestion().cwnd(), 1000u);
  EXPECT_EQ(conn().stats().fast_retransmits, 0u);
}

// `recover` is compared with SND.UNA modulo 2^32 (RFC 9293 3.4). Left
// where the handshake put it (ISS, RFC 6582 3.2 step 1), or the last
// recovery or timeout, it would read as ahead of SND.UNA again once 2^31
// bytes had gone since, and three duplicate ACKs would start no recovery
// for the next 2^31 bytes: a timeout alone would resend. Once passed, it
// follows SND.UNA.
TEST_P(FastRetransmit, ThirdDuplicateAckResendsAfterTwoGibibytes_RFC6582_3_2_Step2) {
  config.mss = 20000;  // three segments within the peer's 65535
  establish();
  const std::uint32_t far = (1u << 31) + (1u << 20);
  stream_acked(far);
  app_write(60000);
  ASSERT_EQ(take_emitted().size(), 3u);
  for (int i = 0; i < 3; ++i) send({.seq = rn + 1, .ack = iss + 1 + far});
  const auto resent = take_emitted();
  ASSERT_EQ(resent.size(), 1u);
  EXPECT_EQ(resent.front().seq, iss + 1 + far);
  EXPECT_EQ(resent.front().payload.size(), 20000u);
  EXPECT_EQ(conn().stats().fast_retransmits, 1u);
}

TEST_P(FastRetransmit, AckCarryingDataIsNoDuplicate_RFC5681_2) {
  enter();
  send({.seq = rn + 1, .ack = iss + 1, .payload = "x"});
  send({.seq = rn + 2, .ack = iss + 1, .payload = "y"});
  send({.seq = rn + 3, .ack = iss + 1, .payload = "z"});
  expect_nothing();
  EXPECT_EQ(conn().stats().duplicate_acks, 0u);
}

TEST_P(FastRetransmit, AckChangingTheWindowIsNoDuplicate_RFC5681_2) {
  enter();
  dup_ack(60000);
  dup_ack(59000);
  dup_ack(58000);
  expect_nothing();
  EXPECT_EQ(conn().stats().duplicate_acks, 0u);
}

TEST_P(FastRetransmit, AcksWithNothingOutstandingAreNoDuplicates_RFC5681_2) {
  enter();
  send({.seq = rn + 1, .ack = iss + 5001});
  send({.seq = rn + 1, .ack = iss + 5001});
  send({.seq = rn + 1, .ack = iss + 5001});
  send({.seq = rn + 1, .ack = iss + 5001});
  expect_nothing();
  EXPECT_EQ(conn().stats().duplicate_acks, 0u);
}

// The default controller, CUBIC, takes the same recovery path with its own
// reduction: ssthresh = beta_cubic * cwnd (RFC 9438 4.6), cwnd the IW here.
TEST_P(FastRetransmit, CubicReducesToBetaOfCwnd_RFC9438_4_6) {
  config.congestion = connection_config{}.congestion;
  enter_recovery();
  EXPECT_EQ(conn().congestion().name(), "cubic");
  EXPECT_EQ(conn().congestion().ssthresh(), 7000u);  // 0.7 * 10 MSS
  EXPECT_EQ(conn().congestion().cwnd(), 10000u);     // ssthresh + 3 * SMSS
}

// Found by the tcp_pair fuzz target: segments cut short by the peer's
// window were resent a full MSS long, with bytes never sent before and past
// the window, and SND.MAX not moved over them; the peer's ACK of those bytes
// was then beyond SND.MAX, dropped with an ACK, which the peer answered as
// an old segment: an ACK loop for ever. The lost segment is resent as it
// was sent.
TEST_P(FastRetransmit, ResendsNoMoreThanWasSent_RFC5681_3_2_Step3) {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  send({.control = syn, .seq = rn, .ack = iss + 1, .window = 500, .options = {.mss = 1000}});
  expect({.seq = iss + 1, .ack = rn + 1});
  app_write(1500);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 500)});
  expect_nothing();  // the window is full
  dup_ack(500);
  dup_ack(500);
  dup_ack(500);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 500)});
  expect_nothing();
  EXPECT_EQ(conn().stats().fast_retransmits, 1u);
}

TCP_IN_BOTH_SEQUENCE_SPACES(FastRetransmit);

}  // namespace
}  // namespace affine::stack::tcp::testing
