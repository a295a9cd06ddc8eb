// Retransmission (RFC 6298): the timer, Karn's rule, backoff, giving up
// (RFC 1122 4.2.3.5), and what a timeout does to cwnd (RFC 5681 3.1).
// After the handshake the RTO is at its 200 ms floor (the SYN's RTT sample
// is 0 at virtual time).

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Retransmission : public tcp_test {
 protected:
  // "abc" written and sent once.
  void send_abc() {
    establish();
    app_write("abc");
    expect_abc();
  }
  void expect_abc() { expect({.seq = iss + 1, .ack = rn + 1, .payload = "abc", .psh = true}); }
  // Five segments out; the timer expires and the first goes again, alone.
  void five_segments_and_a_timeout() {
    establish();
    write_segments(5);
    advance(200);
    expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000)});
  }
};

TEST_P(Retransmission, UnacknowledgedDataIsResentAfterTheRto_RFC6298_5_4) {
  send_abc();
  advance(199);
  expect_nothing();
  advance(1);
  expect_abc();
  EXPECT_EQ(conn().stats().retransmission_timeouts, 1u);
  EXPECT_EQ(conn().stats().retransmitted_segments, 1u);
}

// After the timeout SND.NXT is back at SND.UNA; an ACK numbered there could
// lie wholly before the peer's RCV.NXT (the peer has the later segments) and
// be dropped unread, so ACKs carry SND.MAX (see connection::ack_segment).
TEST_P(Retransmission, AckAfterATimeoutCarriesTheHighestSequenceSent) {
  five_segments_and_a_timeout();
  send({.seq = rn + 1, .ack = iss + 1, .payload = "x"});  // in order: ACKed (delayed, then due)
  advance(40);
  expect({.seq = iss + 5001, .ack = rn + 2, .window = 63999});
  send({.seq = rn + 500000, .ack = iss + 1, .payload = "y"});  // out of window: ACKed at once
  expect({.seq = iss + 5001, .ack = rn + 2, .window = 63999});
}

TEST_P(Retransmission, RtoDoublesOnEachExpiry_RFC6298_5_5) {
  send_abc();
  for (std::uint64_t wait : {200, 400, 800, 1600}) {
    advance(wait - 1);
    expect_nothing();
    advance(1);
    expect_abc();
  }
}

TEST_P(Retransmission, BackoffStopsAtTheMaximumRto_RFC6298_2_5) {
  config.rto.max_ns = 500 * ms;
  send_abc();
  for (std::uint64_t wait : {200, 400, 500, 500}) {
    advance(wait);
    expect_abc();
  }
}

TEST_P(Retransmission, GivesUpWithTimedOutAfterMaxRetransmissions_RFC1122_4_2_3_5) {
  config.max_retransmissions = 3;
  send_abc();
  for (std::uint64_t wait : {200, 400, 800}) {
    advance(wait);
    expect_abc();
  }
  conn().take_events();
  advance(1600);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::retransmissions);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::timed_out));
  EXPECT_TRUE(conn().take_events().has(event::closed));
}

TEST_P(Retransmission, KarnTakesNoSampleFromARetransmittedSegment_RFC6298_3) {
  send_abc();
  advance(200);
  expect_abc();
  advance(50);
  send({.seq = rn + 1, .ack = iss + 4});
  EXPECT_EQ(conn().rto().backoff_count(), 1u);
  EXPECT_EQ(conn().rto().rto_ns(), 400 * ms);
}

TEST_P(Retransmission, FreshSampleEndsTheBackoff_RFC6298_5_7) {
  send_abc();
  advance(200);
  expect_abc();
  send({.seq = rn + 1, .ack = iss + 4});
  app_write("d");
  expect({.seq = iss + 4, .ack = rn + 1, .payload = "d", .psh = true});
  advance(100);
  send({.seq = rn + 1, .ack = iss + 5});
  EXPECT_EQ(conn().rto().backoff_count(), 0u);
  EXPECT_EQ(conn().rto().srtt_ns(), 100 * ms / 8);  // RFC 6298 2.3 after the 0 ms SYN sample
}

TEST_P(Retransmission, AckOfNewDataRestartsTheTimer_RFC6298_5_3) {
  establish();
  app_write(2000);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000)});
  expect({.seq = iss + 1001, .ack = rn + 1, .payload = pattern(1000, 1000), .psh = true});
  advance(150);
  send({.seq = rn + 1, .ack = iss + 1001});
  EXPECT_EQ(conn().next_deadline(), now + conn().rto().rto_ns());
  advance(conn().rto().rto_ns() / ms);
  expect({.seq = iss + 1001, .ack = rn + 1, .payload = pattern(1000, 1000), .psh = true});
}

TEST_P(Retransmission, TimeoutShrinksCwndToOneSegment_RFC5681_3_1) {
  five_segments_and_a_timeout();
  expect_nothing();
  EXPECT_EQ(conn().congestion().cwnd(), 1000u);
  EXPECT_EQ(conn().congestion().ssthresh(), 2500u);  // FlightSize / 2
}

TEST_P(Retransmission, AfterATimeoutAcksResendTheRestInSlowStart_RFC5681_3_1) {
  five_segments_and_a_timeout();
  send({.seq = rn + 1, .ack = iss + 1001});
  EXPECT_EQ(conn().congestion().cwnd(), 2000u);
  expect({.seq = iss + 1001, .ack = rn + 1, .payload = pattern(1000, 1000)});
  expect({.seq = iss + 2001, .ack = rn + 1, .payload = pattern(2000, 1000)});
  expect_nothing();
}

TEST_P(Retransmission, IdleLongerThanTheRtoRestartsFromTheInitialWindow_RFC5681_4_1) {
  establish();
  write_segments(10);
  send({.seq = rn + 1, .ack = iss + 10001});
  EXPECT_EQ(conn().congestion().cwnd(), 12000u);  // slow start: + min(acked, 2 * SMSS)
  advance(201);
  app_write(1);
  expect({.seq = iss + 10001, .ack = rn + 1, .payload = pattern(10000, 1), .psh = true});
  EXPECT_EQ(conn().congestion().cwnd(), 10000u);
}

// A caller whose reading of the clock is behind the last send (another
// core's, a moment older; connection.cc: monotone_now) has not been idle:
// the window stays.
TEST_P(Retransmission, ACallersClockBehindTheLastSendIsNoIdlePeriod_RFC5681_4_1) {
  establish();
  write_segments(10);
  send({.seq = rn + 1, .ack = iss + 10001});
  EXPECT_EQ(conn().congestion().cwnd(), 12000u);
  now -= 3'000'000;
  app_write(1);
  expect({.seq = iss + 10001, .ack = rn + 1, .payload = pattern(10000, 1), .psh = true});
  EXPECT_EQ(conn().congestion().cwnd(), 12000u);
}

TCP_IN_BOTH_SEQUENCE_SPACES(Retransmission);

}  // namespace
}  // namespace affine::stack::tcp::testing
