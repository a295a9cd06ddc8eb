// LISTEN (RFC 9293 3.10.7.2) and the listener's bounds: SYN-RECEIVED and
// the accept queue (backlog). tcp::listener is what stack::listen_in runs;
// tests/stack/listen_socket_test.cc drives the same rules through a whole
// stack on the wire.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Listen : public tcp_test {
 protected:
  // A SYN from `peer`, answered by the listener with a SYN,ACK.
  void syn_from(std::uint16_t peer) {
    const seq32 their_iss = iss_for(peer);
    EXPECT_EQ(send({.control = syn, .seq = rn, .options = {.mss = 1000}, .peer = peer}), drop_reason::none);
    expect({.control = syn, .seq = their_iss, .ack = rn + 1, .options = {.mss = 1000}, .peer = peer});
  }
  drop_reason final_ack_from(std::uint16_t peer) {
    return send({.seq = rn + 1, .ack = iss_of(peer) + 1, .peer = peer});
  }
  seq32 iss_of(std::uint16_t peer) { return peer_iss_.at(peer); }
  void handshake(std::uint16_t peer) {
    peer_iss_[peer] = iss_for(peer);
    syn_from(peer);
    EXPECT_EQ(final_ack_from(peer), drop_reason::none);
  }

  std::map<std::uint16_t, seq32> peer_iss_;
};

TEST_P(Listen, RstIsIgnored_RFC9293_3_10_7_2) {
  listen();
  EXPECT_EQ(send({.control = rst, .seq = rn}), drop_reason::listen_rst);
  expect_nothing();
  EXPECT_EQ(lst().syn_received(), 0u);
}

TEST_P(Listen, AckIsAnsweredWithResetAtSegAck_RFC9293_3_10_7_2) {
  listen();
  EXPECT_EQ(send({.seq = rn, .ack = iss + 77}), drop_reason::listen_ack);
  expect({.control = rst, .seq = iss + 77});
  EXPECT_EQ(lst().stats().resets_sent, 1u);
}

TEST_P(Listen, SynMakesAConnectionInSynReceived_RFC9293_3_10_7_2) {
  listen();
  EXPECT_EQ(send({.control = syn, .seq = rn, .options = {.mss = 1000}}), drop_reason::none);
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
  EXPECT_EQ(conn().state(), tcp_state::syn_received);
  EXPECT_EQ(lst().syn_received(), 1u);
  EXPECT_EQ(lst().stats().syns_accepted, 1u);
}

TEST_P(Listen, IssComesFromTheRfc6528Generator_RFC6528_3) {
  listen();
  advance(1);  // 250 ticks of the 4 us clock
  send({.control = syn, .seq = rn, .options = {.mss = 1000}});
  expect({.control = syn, .seq = iss + 250, .ack = rn + 1, .options = {.mss = 1000}});
}

TEST_P(Listen, FinWithoutSynIsDropped_RFC9293_3_10_7_2) {
  listen();
  EXPECT_EQ(send({.control = fin, .seq = rn}), drop_reason::listen_no_syn);
  expect_nothing();
}

TEST_P(Listen, FullSynQueueDropsTheSynWithoutCookies) {
  listen_config.syn_backlog = 2;
  listen_config.cookies = syn_cookie_mode::never;
  listen();
  syn_from(40001);
  syn_from(40002);
  EXPECT_EQ(send({.control = syn, .seq = rn, .peer = 40003}), drop_reason::syn_queue_full);
  expect_nothing();
  EXPECT_EQ(lst().stats().syn_queue_full, 1u);
  EXPECT_FALSE(has_conn(40003));
}

TEST_P(Listen, FullAcceptQueueIgnoresTheFinalAckLikeLinux) {
  listen_config.accept_backlog = 1;
  listen();
  peer_iss_[40001] = iss_for(40001);
  peer_iss_[40002] = iss_for(40002);
  syn_from(40001);
  syn_from(40002);
  EXPECT_EQ(final_ack_from(40001), drop_reason::none);
  EXPECT_EQ(final_ack_from(40002), drop_reason::accept_queue_full);
  expect_nothing();
  EXPECT_EQ(conn(40002).state(), tcp_state::syn_received);
  EXPECT_EQ(lst().stats().accept_queue_full, 1u);
  // Room is made; the SYN,ACK is retransmitted and the next ACK completes it.
  EXPECT_EQ(accept(), &conn(40001));
  advance(1000);
  expect({.control = syn, .seq = iss_of(40002), .ack = rn + 1, .options = {.mss = 1000}, .peer = 40002});
  EXPECT_EQ(final_ack_from(40002), drop_reason::none);
  EXPECT_EQ(conn(40002).state(), tcp_state::established);
  EXPECT_EQ(accept(), &conn(40002));
}

TEST_P(Listen, SynIsDroppedWhileTheAcceptQueueIsFull) {
  listen_config.accept_backlog = 1;
  listen();
  handshake(40001);
  EXPECT_EQ(send({.control = syn, .seq = rn, .peer = 40002}), drop_reason::accept_queue_full);
  expect_nothing();
}

TEST_P(Listen, AChildThatDiesInSynReceivedGivesItsPlaceBack) {
  listen_config.syn_backlog = 1;
  listen_config.cookies = syn_cookie_mode::never;
  listen();
  peer_iss_[40001] = iss_for(40001);
  syn_from(40001);
  EXPECT_EQ(send({.control = syn, .seq = rn, .peer = 40002}), drop_reason::syn_queue_full);
  send({.control = rst, .seq = rn + 1, .peer = 40001});  // RFC 9293 3.10.7.4: back to LISTEN
  reap();
  EXPECT_EQ(lst().syn_received(), 0u);
  syn_from(40002);
}

TEST_P(Listen, AcceptReturnsConnectionsInTheOrderTheyCompleted) {
  listen();
  peer_iss_[40001] = iss_for(40001);
  peer_iss_[40002] = iss_for(40002);
  syn_from(40001);
  syn_from(40002);
  final_ack_from(40002);
  final_ack_from(40001);
  EXPECT_EQ(accept(), &conn(40002));
  EXPECT_EQ(accept(), &conn(40001));
  EXPECT_EQ(accept(), nullptr);
}

TEST_P(Listen, DestroyedConnectionLeavesTheQueues) {
  listen();
  handshake(40001);
  peer_iss_[40002] = iss_for(40002);
  syn_from(40002);
  EXPECT_EQ(lst().accept_queue(), 1u);
  EXPECT_EQ(lst().syn_received(), 1u);
  conn(40001).abort();
  conn(40002).abort();
  run_output();
  expect({.control = rst, .seq = iss_of(40001) + 1, .peer = 40001});
  expect({.control = rst, .seq = iss_of(40002) + 1, .peer = 40002});
  reap();
  EXPECT_EQ(lst().syn_received(), 0u);
  EXPECT_EQ(lst().accept_queue(), 0u);
  EXPECT_EQ(accept(), nullptr);
}

TEST_P(Listen, ConnectionResetBeforeAcceptIsStillHandedOut) {
  listen();
  handshake(40001);
  send({.control = rst, .seq = rn + 1, .peer = 40001});
  connection* c = accept();
  ASSERT_EQ(c, &conn(40001));
  EXPECT_EQ(c->state(), tcp_state::closed);
  EXPECT_EQ(c->error(), std::make_error_code(std::errc::connection_reset));
}

TCP_IN_BOTH_SEQUENCE_SPACES(Listen);

}  // namespace
}  // namespace affine::stack::tcp::testing
