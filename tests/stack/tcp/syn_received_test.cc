// SYN-RECEIVED (RFC 9293 3.10.7.4): the passive side's half-open
// connection, and the active side after a simultaneous open.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class SynReceived : public tcp_test {
 protected:
  // A listener took our peer's SYN and answered it.
  void receive_syn() {
    listen();
    send({.control = syn, .seq = rn, .options = {.mss = 1000}});
    expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
    ASSERT_EQ(conn().state(), tcp_state::syn_received);
  }
  // Both sides sent a SYN (RFC 9293 3.5 Figure 7).
  void open_simultaneously() {
    open();
    expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
    send({.control = syn, .seq = rn, .options = {.mss = 1000}});
    expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
    ASSERT_EQ(conn().state(), tcp_state::syn_received);
  }
};

TEST_P(SynReceived, FinalAckEstablishesAndQueuesForAccept_RFC9293_3_10_7_4) {
  receive_syn();
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1}), drop_reason::none);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::established);
  const event_set ev = conn().take_events();
  EXPECT_TRUE(ev.has(event::connected));
  EXPECT_TRUE(ev.has(event::accept_ready));
  EXPECT_EQ(lst().syn_received(), 0u);
  EXPECT_EQ(lst().accept_queue(), 1u);
  EXPECT_EQ(accept(), &conn());
  EXPECT_EQ(lst().accept_queue(), 0u);
}

TEST_P(SynReceived, AckOfUnsentIsAnsweredWithReset_RFC9293_3_10_7_4) {
  receive_syn();
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 5}), drop_reason::unacceptable_ack);
  expect({.control = rst, .seq = iss + 5});
  EXPECT_EQ(conn().state(), tcp_state::syn_received);
}

TEST_P(SynReceived, AckOfIssIsAnsweredWithReset_RFC9293_3_10_7_4) {
  receive_syn();
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss}), drop_reason::unacceptable_ack);
  expect({.control = rst, .seq = iss});
  EXPECT_EQ(conn().state(), tcp_state::syn_received);
}

TEST_P(SynReceived, RstReturnsToListenWithoutError_RFC9293_3_10_7_4) {
  receive_syn();
  EXPECT_EQ(send({.control = rst, .seq = rn + 1}), drop_reason::none);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::handshake_failed);
  EXPECT_FALSE(conn().error());
  EXPECT_EQ(lst().syn_received(), 1u);
  reap();
  EXPECT_EQ(lst().syn_received(), 0u);
  // The listener still listens.
  send({.control = syn, .seq = rn + 100, .options = {.mss = 1000}});
  expect({.control = syn, .seq = iss, .ack = rn + 101, .options = {.mss = 1000}});
}

TEST_P(SynReceived, RstOutsideTheWindowIsDropped_RFC9293_3_10_7_4) {
  receive_syn();
  EXPECT_EQ(send({.control = rst, .seq = rn + 1 + 64000}), drop_reason::rst_unacceptable);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::syn_received);
}

TEST_P(SynReceived, RepeatedSynIsAnsweredWithTheSynAckAgain) {
  receive_syn();
  EXPECT_EQ(send({.control = syn, .seq = rn, .options = {.mss = 1000}}), drop_reason::none);
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
  EXPECT_EQ(conn().state(), tcp_state::syn_received);
}

TEST_P(SynReceived, SynAckIsRetransmittedAfterTheInitialRto_RFC6298_2_1) {
  receive_syn();
  advance(999);
  expect_nothing();
  advance(1);
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
}

TEST_P(SynReceived, HandshakeThatNeverCompletesEndsQuietly_RFC1122_4_2_3_5) {
  config.max_synack_retransmissions = 1;
  receive_syn();
  advance(1000);
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
  advance(2000);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_FALSE(conn().error());
}

TEST_P(SynReceived, SegmentWithoutAckIsDropped_RFC9293_3_10_7_4) {
  receive_syn();
  EXPECT_EQ(send({.seq = rn + 1, .payload = "x"}), drop_reason::no_ack);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::syn_received);
}

TEST_P(SynReceived, SegmentOutsideTheWindowIsAnsweredWithAck_RFC9293_3_10_7_4) {
  receive_syn();
  EXPECT_EQ(send({.seq = rn + 1 + 64000, .ack = iss + 1, .payload = "x"}), drop_reason::out_of_window);
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::syn_received);
}

TEST_P(SynReceived, TextOnTheFinalAckIsDelivered_RFC9293_3_10_7_4) {
  receive_syn();
  send({.seq = rn + 1, .ack = iss + 1, .payload = "hi"});
  EXPECT_EQ(conn().state(), tcp_state::established);
  expect_nothing();
  advance(40);  // the delayed ACK
  expect({.seq = iss + 1, .ack = rn + 3, .window = 63998});
  EXPECT_EQ(app_read(), "hi");
}

TEST_P(SynReceived, FinOnTheFinalAckGoesToCloseWait_RFC9293_3_10_7_4) {
  receive_syn();
  send({.control = fin, .seq = rn + 1, .ack = iss + 1});
  expect({.seq = iss + 1, .ack = rn + 2, .window = 63999});
  EXPECT_EQ(conn().state(), tcp_state::close_wait);
  EXPECT_TRUE(conn().eof());
}

TEST_P(SynReceived, NewSynInTheWindowReturnsToListen_RFC9293_3_10_7_4) {
  receive_syn();
  EXPECT_EQ(send({.control = syn, .seq = rn + 5}), drop_reason::syn_in_window);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::handshake_failed);
  EXPECT_FALSE(conn().error());
}

TEST_P(SynReceived, PeersSynAckCompletesSimultaneousOpen_RFC9293_3_5_Figure7) {
  open_simultaneously();
  EXPECT_EQ(send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}}), drop_reason::none);
  expect_nothing();  // our SYN,ACK already acknowledged the peer's SYN
  EXPECT_EQ(conn().state(), tcp_state::established);
  EXPECT_TRUE(conn().take_events().has(event::connected));
}

TEST_P(SynReceived, PeersAckCompletesSimultaneousOpen_RFC9293_3_5_Figure7) {
  open_simultaneously();
  send({.seq = rn + 1, .ack = iss + 1});
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::established);
}

TEST_P(SynReceived, RstInSimultaneousOpenRefusesTheConnection_RFC9293_3_10_7_4) {
  open_simultaneously();
  send({.control = rst, .seq = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::refused);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::connection_refused));
}

TCP_IN_BOTH_SEQUENCE_SPACES(SynReceived);

}  // namespace
}  // namespace affine::stack::tcp::testing
