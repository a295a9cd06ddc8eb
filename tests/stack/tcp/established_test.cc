// ESTABLISHED (RFC 9293 3.10.7.4): data both ways, the acceptability test,
// RST and SYN in a synchronized state, the start of a close.

#include "stack/tcp/challenge_budget.hh"
#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Established : public tcp_test {
 protected:
  void SetUp() override { establish(); }
};

TEST_P(Established, DataIsDeliveredAndItsAckDelayed_RFC1122_4_2_3_2) {
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1, .payload = "hello"}), drop_reason::none);
  expect_nothing();
  EXPECT_EQ(conn().readable(), 5u);
  EXPECT_TRUE(conn().take_events().has(event::readable));
  advance(39);
  expect_nothing();
  advance(1);
  expect({.seq = iss + 1, .ack = rn + 6, .window = 63995});
}

TEST_P(Established, EverySecondFullSizedSegmentIsAckedAtOnce_RFC1122_4_2_3_2) {
  send({.seq = rn + 1, .ack = iss + 1, .payload = pattern(0, 1000)});
  expect_nothing();
  send({.seq = rn + 1001, .ack = iss + 1, .payload = pattern(1000, 1000)});
  expect({.seq = iss + 1, .ack = rn + 2001, .window = 62000});
  EXPECT_EQ(app_read(), pattern(0, 2000));
  expect_nothing();
}

TEST_P(Established, OutOfOrderSegmentIsAckedAtOnce_RFC5681_4_2) {
  send({.seq = rn + 1001, .ack = iss + 1, .payload = pattern(1000, 1000)});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().readable(), 0u);
}

TEST_P(Established, SegmentFillingTheHoleIsAckedAtOnceAndJoinsTheQueuedData_RFC5681_4_2) {
  send({.seq = rn + 1001, .ack = iss + 1, .payload = pattern(1000, 1000)});
  expect({.seq = iss + 1, .ack = rn + 1});
  send({.seq = rn + 1, .ack = iss + 1, .payload = pattern(0, 1000)});
  expect({.seq = iss + 1, .ack = rn + 2001, .window = 62000});
  EXPECT_EQ(app_read(), pattern(0, 2000));
}

TEST_P(Established, SegmentPastTheWindowIsAnsweredWithAck_RFC9293_3_10_7_4) {
  EXPECT_EQ(send({.seq = rn + 1 + 64000, .ack = iss + 1, .payload = "x"}), drop_reason::out_of_window);
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().readable(), 0u);
}

TEST_P(Established, DuplicateSegmentIsAnsweredWithAck_RFC9293_3_10_7_4) {
  send({.seq = rn + 1, .ack = iss + 1, .payload = "hello"});
  advance(40);
  expect({.seq = iss + 1, .ack = rn + 6, .window = 63995});
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1, .payload = "hello"}), drop_reason::out_of_window);
  expect({.seq = iss + 1, .ack = rn + 6, .window = 63995});
  EXPECT_EQ(conn().readable(), 5u);
}

TEST_P(Established, OverlappingSegmentDeliversOnlyTheNewBytes_RFC9293_3_10_7_4) {
  send({.seq = rn + 1, .ack = iss + 1, .payload = "hello"});
  send({.seq = rn + 4, .ack = iss + 1, .payload = "loWORLD"});
  EXPECT_EQ(app_read(), "helloWORLD");
}

TEST_P(Established, SendIsCutIntoMssSizedSegments_RFC9293_3_7_1) {
  EXPECT_EQ(app_write(2500), 2500u);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000)});
  expect({.seq = iss + 1001, .ack = rn + 1, .payload = pattern(1000, 1000)});
  expect_nothing();  // Nagle holds the 500-byte tail while data is in flight
  send({.seq = rn + 1, .ack = iss + 2001});
  expect({.seq = iss + 2001, .ack = rn + 1, .payload = pattern(2000, 500), .psh = true});
}

TEST_P(Established, AckOfAllDataStopsTheRetransmissionTimer_RFC6298_5_2) {
  app_write("abc");
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "abc", .psh = true});
  EXPECT_EQ(conn().next_deadline(), now + 200 * ms);  // RFC 6298 2.4 floor after a zero RTT sample
  EXPECT_EQ(conn().writable(), 64000u - 3);
  send({.seq = rn + 1, .ack = iss + 4});
  EXPECT_EQ(conn().next_deadline(), no_deadline);
  EXPECT_EQ(conn().writable(), 64000u);
  EXPECT_TRUE(conn().take_events().has(event::writable));
}

TEST_P(Established, AckOfUnsentDataIsAnsweredWithAck_RFC9293_3_10_7_4) {
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 100}), drop_reason::ack_of_unsent);
  expect({.seq = iss + 1, .ack = rn + 1});
}

TEST_P(Established, OldAckIsIgnoredButTheTextIsTaken_RFC9293_3_10_7_4) {
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss, .payload = "x"}), drop_reason::none);
  EXPECT_EQ(conn().readable(), 1u);
}

TEST_P(Established, RstAtRcvNxtResetsTheConnection_RFC9293_3_10_7_4) {
  EXPECT_EQ(send({.control = rst, .seq = rn + 1}), drop_reason::none);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::reset_received);
  const std::error_code reset = std::make_error_code(std::errc::connection_reset);
  EXPECT_EQ(conn().error(), reset);
  std::byte b[4];
  EXPECT_EQ(conn().recv(b).error(), reset);
  EXPECT_EQ(conn().send(b).error(), reset);
  const event_set ev = conn().take_events();
  EXPECT_TRUE(ev.has(event::closed));
  EXPECT_TRUE(ev.has(event::readable));
  EXPECT_TRUE(ev.has(event::writable));
}

TEST_P(Established, RstInTheWindowButNotAtRcvNxtDrawsAChallengeAck_RFC5961_3_2) {
  EXPECT_EQ(send({.control = rst, .seq = rn + 100}), drop_reason::rst_challenged);
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::established);
  // The peer that really reset answers it at RCV.NXT.
  EXPECT_EQ(send({.control = rst, .seq = rn + 1}), drop_reason::none);
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::connection_reset));
}

TEST_P(Established, ChallengeAcksAreThrottledPerConnection_RFC5961_7) {
  for (int i = 0; i < 12; ++i) EXPECT_EQ(send({.control = rst, .seq = rn + 100 + i}), drop_reason::rst_challenged);
  for (int i = 0; i < 10; ++i) expect({.seq = iss + 1, .ack = rn + 1});
  expect_nothing();
  EXPECT_EQ(conn().stats().challenge_acks, 10u);
  EXPECT_EQ(conn().stats().challenge_acks_limited, 2u);
  advance(5000);  // the next window
  take_emitted();  // what the timers sent meanwhile, if anything
  EXPECT_EQ(send({.control = syn, .seq = rn + 10}), drop_reason::syn_challenged);
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::established);
}

// The stack's budget over all connections comes after the connection's own
// limit: with that limit out of the way, a budget of about 4 a second (2
// to 6, drawn each second) bounds what this connection gets.
class ChallengeBudget : public tcp_test {
 protected:
  challenge_budget budget{4, 7};
  void SetUp() override {
    config.challenge_ack_limit = 1000;
    config.global_challenge_budget = &budget;
    establish();
  }
};

TEST_P(ChallengeBudget, ChallengeAcksAreAlsoBoundByTheStacksBudget_RFC5961_7) {
  advance(1000 - now / ms % 1000);  // the start of a second
  for (int i = 0; i < 20; ++i) EXPECT_EQ(send({.control = rst, .seq = rn + 100 + i}), drop_reason::rst_challenged);
  const std::size_t sent = take_emitted().size();
  EXPECT_GE(sent, 2u);
  EXPECT_LE(sent, 6u);
  EXPECT_EQ(conn().stats().challenge_acks_limited, 20 - sent);
  EXPECT_EQ(budget.denied(), 20 - sent);
  advance(1000);  // the next second: a budget of its own
  EXPECT_EQ(send({.control = syn, .seq = rn + 10}), drop_reason::syn_challenged);
  expect({.seq = iss + 1, .ack = rn + 1});
}

TCP_IN_BOTH_SEQUENCE_SPACES(ChallengeBudget);

TEST_P(Established, AnAckOlderThanSndUnaLessMaxSndWndIsDroppedWithAnAck_RFC5961_5_2) {
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1 - 65536, .payload = "x"}), drop_reason::ack_too_old);
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().readable(), 0u);
  // At the bound itself (the peer offered 65535): acceptable, and the text is taken.
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1 - 65535, .payload = "x"}), drop_reason::none);
  EXPECT_EQ(conn().readable(), 1u);
}

TEST_P(Established, RstOutsideTheWindowIsDropped_RFC9293_3_10_7_4) {
  EXPECT_EQ(send({.control = rst, .seq = rn + 1 + 64000}), drop_reason::rst_unacceptable);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::established);
}

TEST_P(Established, ASynDrawsAChallengeAckNeverAReset_RFC5961_4_2) {
  EXPECT_EQ(send({.control = syn, .seq = rn + 10}), drop_reason::syn_challenged);
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::established);
  EXPECT_FALSE(conn().error());
}

TEST_P(Established, RetransmittedSynAckIsAnsweredWithAck_RFC9293_3_10_7_4) {
  EXPECT_EQ(send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}}),
            drop_reason::out_of_window);
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::established);
}

TEST_P(Established, SegmentWithoutAckIsDropped_RFC9293_3_10_7_4) {
  EXPECT_EQ(send({.seq = rn + 1, .payload = "x"}), drop_reason::no_ack);
  EXPECT_EQ(conn().readable(), 0u);
}

TEST_P(Established, FinIsAckedAtOnceAndGoesToCloseWait_RFC9293_3_10_7_4) {
  send({.control = fin, .seq = rn + 1, .ack = iss + 1});
  expect({.seq = iss + 1, .ack = rn + 2, .window = 63999});
  EXPECT_EQ(conn().state(), tcp_state::close_wait);
  EXPECT_TRUE(conn().eof());
  EXPECT_TRUE(conn().take_events().has(event::readable));
}

TEST_P(Established, FinPastAHoleWaitsForTheData_RFC9293_3_10_7_4) {
  send({.control = fin, .seq = rn + 1001, .ack = iss + 1, .payload = pattern(1000, 1000)});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::established);
  send({.seq = rn + 1, .ack = iss + 1, .payload = pattern(0, 1000)});
  expect({.seq = iss + 1, .ack = rn + 2002, .window = 61999});
  EXPECT_EQ(conn().state(), tcp_state::close_wait);
  EXPECT_EQ(app_read(), pattern(0, 2000));
  EXPECT_TRUE(conn().eof());
}

TEST_P(Established, CloseSendsFinAndGoesToFinWait1_RFC9293_3_10_4) {
  app_close();
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::fin_wait_1);
}

TEST_P(Established, CloseWithUnreadDataSendsReset_RFC1122_4_2_2_13) {
  send({.seq = rn + 1, .ack = iss + 1, .payload = "hi"});
  app_close();
  expect({.control = rst, .seq = iss + 1});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::unread_data);
}

TEST_P(Established, AbortSendsRstAtSndNxt_RFC9293_3_10_5) {
  app_write("abc");
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "abc", .psh = true});
  app_abort();
  expect({.control = rst, .seq = iss + 4});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::aborted);
  EXPECT_FALSE(conn().error());
}

TEST_P(Established, OlderSegmentDoesNotUpdateTheSendWindow_RFC9293_3_10_7_4) {
  send({.seq = rn + 1, .ack = iss + 1, .window = 30000, .payload = "ab"});
  EXPECT_EQ(conn().send_window(), 30000u);
  send({.seq = rn + 2, .ack = iss + 1, .window = 100, .payload = "bc"});
  EXPECT_EQ(conn().send_window(), 100u);
  send({.seq = rn + 1, .ack = iss + 1, .window = 50000, .payload = "abcd"});
  EXPECT_EQ(conn().send_window(), 100u);
  EXPECT_EQ(app_read(), "abcd");
}

TEST_P(Established, TenSegmentsFitTheInitialWindow_RFC6928_2) {
  app_write(12000);
  for (std::uint32_t k = 0; k < 10; ++k)
    expect({.seq = iss + 1 + 1000 * k, .ack = rn + 1, .payload = pattern(1000 * k, 1000)});
  expect_nothing();
  EXPECT_EQ(conn().congestion().cwnd(), 10000u);
}

TEST_P(Established, SendBufferIsBounded) {
  const std::string big(70000, 'z');
  auto r = conn().send({reinterpret_cast<const std::byte*>(big.data()), big.size()});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 64000u);
  EXPECT_EQ(conn().writable(), 0u);
  run_output();
  for (std::uint32_t k = 0; k < 10; ++k) expect({.seq = iss + 1 + 1000 * k, .ack = rn + 1, .payload = big.substr(0, 1000)});
}

TCP_IN_BOTH_SEQUENCE_SPACES(Established);

// SO_LINGER: close() from ESTABLISHED with a linger time set.
class Linger : public tcp_test {};

TEST_P(Linger, ZeroLingerMakesCloseSendReset) {
  config.linger_ns = 0;
  establish();
  app_close();
  expect({.control = rst, .seq = iss + 1});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::aborted);
}

TEST_P(Linger, LingerResetsACloseThatDoesNotFinishInTime) {
  config.linger_ns = 1000 * ms;
  establish();
  app_write("abc");
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "abc", .psh = true});
  app_close();
  expect({.control = fin, .seq = iss + 4, .ack = rn + 1});
  advance(200);
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1, .payload = "abc", .psh = true});
  advance(400);
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1, .payload = "abc", .psh = true});
  advance(400);
  expect({.control = rst, .seq = iss + 5});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::linger);
}

TCP_IN_BOTH_SEQUENCE_SPACES(Linger);

class EstablishedPassive : public tcp_test {
 protected:
  void SetUp() override { establish_passive(); }
};

TEST_P(EstablishedPassive, DataBothWaysAndTheAckRidesOnData_RFC9293_3_10_7_4) {
  send({.seq = rn + 1, .ack = iss + 1, .payload = "ping"});
  expect_nothing();
  app_write("pong");
  expect({.seq = iss + 1, .ack = rn + 5, .window = 63996, .payload = "pong", .psh = true});
  EXPECT_EQ(app_read(), "ping");
  advance(200);  // RTO: the 200 ms floor (the handshake's RTT sample is 0)
  expect({.seq = iss + 1, .ack = rn + 5, .window = 63996, .payload = "pong", .psh = true});
}

TCP_IN_BOTH_SEQUENCE_SPACES(EstablishedPassive);

}  // namespace
}  // namespace affine::stack::tcp::testing
