// SYN-SENT (RFC 9293 3.10.7.3): the active opener's side of the handshake.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class SynSent : public tcp_test {
 protected:
  void SetUp() override {
    open();
    expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  }
};

TEST_P(SynSent, OpenSendsSynWithOurMss_RFC9293_3_10_1) {
  EXPECT_EQ(conn().state(), tcp_state::syn_sent);
  expect_nothing();
}

TEST_P(SynSent, SynAckIsAnsweredWithAckAndEstablishes_RFC9293_3_10_7_3) {
  EXPECT_EQ(send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}}), drop_reason::none);
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::established);
  const event_set ev = conn().take_events();
  EXPECT_TRUE(ev.has(event::connected));
  EXPECT_TRUE(ev.has(event::writable));
  EXPECT_EQ(conn().send_mss(), 1000u);
}

TEST_P(SynSent, SynAckWithAckPastSndNxtIsAnsweredWithReset_RFC9293_3_10_7_3) {
  EXPECT_EQ(send({.control = syn, .seq = rn, .ack = iss + 5}), drop_reason::unacceptable_ack);
  expect({.control = rst, .seq = iss + 5});
  EXPECT_EQ(conn().state(), tcp_state::syn_sent);
}

TEST_P(SynSent, SynAckWithAckOfIssIsAnsweredWithReset_RFC9293_3_10_7_3) {
  EXPECT_EQ(send({.control = syn, .seq = rn, .ack = iss}), drop_reason::unacceptable_ack);
  expect({.control = rst, .seq = iss});
  EXPECT_EQ(conn().state(), tcp_state::syn_sent);
}

TEST_P(SynSent, RstAcknowledgingOurSynRefusesTheConnection_RFC9293_3_10_7_3) {
  EXPECT_EQ(send({.control = rst, .seq = seq32(0), .ack = iss + 1}), drop_reason::none);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::refused);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::connection_refused));
  EXPECT_TRUE(conn().take_events().has(event::closed));
}

TEST_P(SynSent, RstWithoutAckIsDropped_RFC9293_3_10_7_3) {
  EXPECT_EQ(send({.control = rst, .seq = rn}), drop_reason::rst_unacceptable);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::syn_sent);
}

TEST_P(SynSent, RstWithUnacceptableAckIsDroppedWithoutReply_RFC9293_3_10_7_3) {
  EXPECT_EQ(send({.control = rst, .seq = rn, .ack = iss + 9}), drop_reason::unacceptable_ack);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::syn_sent);
}

TEST_P(SynSent, AckWithoutSynIsDropped_RFC9293_3_10_7_3) {
  EXPECT_EQ(send({.seq = rn, .ack = iss + 1}), drop_reason::syn_sent_no_syn);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::syn_sent);
}

TEST_P(SynSent, BareSynIsSimultaneousOpenAnsweredWithSynAck_RFC9293_3_5_Figure7) {
  EXPECT_EQ(send({.control = syn, .seq = rn, .options = {.mss = 1000}}), drop_reason::none);
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
  EXPECT_EQ(conn().state(), tcp_state::syn_received);
}

TEST_P(SynSent, SynIsRetransmittedAfterTheInitialRto_RFC6298_2_1) {
  advance(999);
  expect_nothing();
  advance(1);
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  EXPECT_EQ(conn().stats().retransmitted_segments, 1u);
}

TEST_P(SynSent, SynRetransmissionsBackOffExponentially_RFC6298_5_5) {
  advance(1000);
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  advance(1999);
  expect_nothing();
  advance(1);
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  advance(4000);
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
}

TEST_P(SynSent, GivesUpAfterMaxSynRetransmissionsWithTimedOut_RFC1122_4_2_3_5) {
  conn().abort();
  reap();
  config.max_syn_retransmissions = 2;
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  advance(1000);
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  advance(2000);
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  advance(4000);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::retransmissions);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::timed_out));
}

TEST_P(SynSent, DataQueuedBeforeTheHandshakeRidesOnTheThirdSegment_RFC9293_3_10_2) {
  EXPECT_EQ(app_write("hello"), 5u);
  expect_nothing();
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}});
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "hello", .psh = true});
}

TEST_P(SynSent, CloseDeletesTheConnectionSilently_RFC9293_3_10_4) {
  app_close();
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::orderly);
  EXPECT_FALSE(conn().error());
}

TEST_P(SynSent, ShutdownSendsFinRightAfterTheHandshake_RFC9293_3_10_4) {
  app_shutdown();
  expect_nothing();
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}});
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::fin_wait_1);
}

TEST_P(SynSent, TextInTheSynAckIsDelivered_RFC9293_3_10_7_3) {
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}, .payload = "hi"});
  expect({.seq = iss + 1, .ack = rn + 3, .window = 63998});
  EXPECT_EQ(app_read(), "hi");
}

TEST_P(SynSent, WithoutMssOptionThePeerTakes536_RFC9293_3_7_1) {
  send({.control = syn, .seq = rn, .ack = iss + 1});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().send_mss(), 536u);
}

TEST_P(SynSent, SynRoundTripGivesTheFirstRttSample_RFC6298_2_2) {
  advance(100);
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().rto().srtt_ns(), 100 * ms);
  EXPECT_EQ(conn().rto().rto_ns(), 300 * ms);  // SRTT + 4 * SRTT/2, above the 200 ms floor
}

TEST_P(SynSent, RetransmittedSynLeavesAThreeSecondRto_RFC6298_5_7) {
  advance(1000);
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_FALSE(conn().rto().has_sample());  // Karn: the SYN was sent twice
  EXPECT_EQ(conn().rto().rto_ns(), 3000 * ms);
}

TCP_IN_BOTH_SEQUENCE_SPACES(SynSent);

}  // namespace
}  // namespace affine::stack::tcp::testing
