// The user timeout (RFC 9293 3.10.8 USER TIMEOUT; Linux's TCP_USER_TIMEOUT):
// a connection whose data waits too long for its acknowledgment, whose
// queued data waits too long before a shut window, or whose keepalive
// probes go unanswered too long, ends with ETIMEDOUT, on time. After the
// handshake the RTO is at its 200 ms floor.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class UserTimeout : public tcp_test {
 protected:
  UserTimeout() { config.user_timeout_ns = 1000 * ms; }

  void expect_abc() { expect({.seq = iss + 1, .ack = rn + 1, .payload = "abc", .psh = true}); }
  void expect_timed_out(end_reason why = end_reason::user_timeout) {
    EXPECT_EQ(conn().state(), tcp_state::closed);
    EXPECT_EQ(conn().error(), std::make_error_code(std::errc::timed_out));
    EXPECT_EQ(conn().end(), why);
  }
  // The peer's window shut (an ACK with nothing new), as flow_control_test.
  void peer_window(std::uint16_t window) { send({.seq = rn + 1, .ack = iss + 1, .window = window}); }
};

// "If a timeout is specified, the current user timeout for this
// connection is changed to the new one" and "if the user timeout expires,
// flush all queues, signal the user 'error: connection aborted due to user
// timeout'": the timeouts at 200 and 600 ms resend; the next, due at 1400,
// comes at 1000, the timeout's end, and sends nothing.
TEST_P(UserTimeout, UnacknowledgedDataEndsTheConnectionOnTime_RFC9293_3_10_8) {
  establish();
  app_write("abc");
  expect_abc();
  for (std::uint64_t wait : {200, 400}) {
    advance(wait);
    expect_abc();
  }
  advance(399);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::established);
  advance(1);
  expect_nothing();  // no RST: the peer is not answering (Linux's tcp_write_err)
  expect_timed_out();
}

// The wait runs from the last ACK that moved SND.UNA, not from the first
// transmission: data that keeps being acknowledged never times out.
TEST_P(UserTimeout, AnAckThatMovesSndUnaStartsTheWaitAgain_RFC9293_3_10_8) {
  establish();
  app_write("abc");
  expect_abc();
  advance(150);
  send({.seq = rn + 1, .ack = iss + 2});  // "a" acknowledged at 150
  advance(999);                           // resends of "bc" on the way
  take_emitted();
  EXPECT_EQ(conn().state(), tcp_state::established);
  advance(1);
  expect_timed_out();
}

// A user timeout takes the place of R2 (RFC 1122 4.2.3.5), as Linux's:
// past max_retransmissions, the connection resends until the timeout.
TEST_P(UserTimeout, ItTakesThePlaceOfMaxRetransmissions_RFC1122_4_2_3_5) {
  config.max_retransmissions = 2;
  config.user_timeout_ns = 5000 * ms;
  establish();
  app_write("abc");
  expect_abc();
  for (std::uint64_t wait : {200, 400, 800, 1600}) {  // four resends, at 200, 600, 1400, 3000
    advance(wait);
    expect_abc();
  }
  advance(1999);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::established);
  advance(1);
  expect_timed_out();
}

// A handshake ends at the user timeout or at max_syn_retransmissions,
// whichever comes first (Linux's tcp_write_timeout).
TEST_P(UserTimeout, AConnectEndsAtTheUserTimeout_RFC9293_3_10_8) {
  config.user_timeout_ns = 2500 * ms;
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  advance(1000);
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  advance(1499);  // the next SYN is due at 3000
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::syn_sent);
  advance(1);
  expect_nothing();
  expect_timed_out();
}

TEST_P(UserTimeout, AConnectStillEndsAtMaxSynRetransmissions_RFC1122_4_2_3_5) {
  config.user_timeout_ns = 60'000 * ms;
  config.max_syn_retransmissions = 1;
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  advance(1000);
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  advance(2000);
  expect_nothing();
  expect_timed_out(end_reason::retransmissions);
}

// Linux's TCP_USER_TIMEOUT: "buffered data may remain untransmitted (due
// to zero window size)" no longer than the timeout, probes answered or not.
TEST_P(UserTimeout, QueuedDataBeforeAShutWindowEndsOnTime_RFC9293_3_10_8) {
  establish();
  peer_window(0);
  app_write("abc");  // the window shut at 0: the wait starts
  for (std::uint64_t wait : {200, 400}) {
    advance(wait);
    expect({.seq = iss + 1, .ack = rn + 1, .payload = "a"});
    peer_window(0);  // answered
  }
  advance(399);  // the next probe is due at 1400
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::established);
  advance(1);
  expect_nothing();
  expect_timed_out();
}

TEST_P(UserTimeout, AWindowThatOpensStartsTheWaitAgain_RFC9293_3_10_8) {
  establish();
  peer_window(0);
  app_write("abc");
  advance(200);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "a"});
  send({.seq = rn + 1, .ack = iss + 2, .window = 1000});  // at 200: the octet taken, the window open
  expect({.seq = iss + 2, .ack = rn + 1, .payload = "bc", .psh = true});
  send({.seq = rn + 1, .ack = iss + 4, .window = 0});  // all taken, and the window shut again
  app_write("def");                                    // waits from 200
  advance(999);
  take_emitted();
  EXPECT_EQ(conn().state(), tcp_state::established);
  advance(1);
  expect_timed_out();
}

// Keepalive with a user timeout (Linux's tcp_keepalive_timer): the
// connection ends once a probe is out and nothing came for the timeout,
// not after keepalive.count probes.
TEST_P(UserTimeout, KeepaliveEndsAtTheUserTimeoutNotTheCount_RFC1122_4_2_3_6) {
  config.keepalive = {.enabled = true, .idle_ns = 10'000 * ms, .interval_ns = 1'000 * ms, .count = 3};
  config.user_timeout_ns = 20'000 * ms;
  establish();
  for (int k = 0; k < 10; ++k) {  // probes at 10 s, 11 s, ... 19 s: more than `count`
    advance(k == 0 ? 10'000 : 1'000);
    expect({.seq = iss, .ack = rn + 1});
  }
  advance(999);
  expect_nothing();
  advance(1);
  expect({.control = rst, .seq = iss + 1});
  expect_timed_out();
}

// A timeout shorter than the idle time ends the connection at the first
// probe's interval: one probe goes out first.
TEST_P(UserTimeout, KeepaliveSendsOneProbeBeforeAShortTimeout_RFC1122_4_2_3_6) {
  config.keepalive = {.enabled = true, .idle_ns = 10'000 * ms, .interval_ns = 1'000 * ms, .count = 3};
  establish();
  advance(10'000);
  expect({.seq = iss, .ack = rn + 1});
  advance(1000);
  expect({.control = rst, .seq = iss + 1});
  expect_timed_out();
}

TEST_P(UserTimeout, NoneByDefault_RFC9293_3_10_8) {
  config.user_timeout_ns = 0;
  establish();
  app_write("abc");
  expect_abc();
  for (std::uint64_t wait : {200, 400, 800, 1600, 3200}) {
    advance(wait);
    expect_abc();
  }
  EXPECT_EQ(conn().state(), tcp_state::established);
}

TCP_IN_BOTH_SEQUENCE_SPACES(UserTimeout);

}  // namespace
}  // namespace affine::stack::tcp::testing
