// TIME-WAIT (RFC 9293 3.3.2, 3.10.7.4): both FINs acknowledged; the
// connection lingers 2 MSL so that a lost last ACK can be sent again.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class TimeWait : public tcp_test {
 protected:
  void enter() {
    establish();
    app_close();
    expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
    send({.seq = rn + 1, .ack = iss + 2});
    send({.control = fin, .seq = rn + 1, .ack = iss + 2});
    expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
    ASSERT_EQ(conn().state(), tcp_state::time_wait);
  }
};

TEST_P(TimeWait, LastsTwoMslThenCloses_RFC9293_3_3_2) {
  enter();
  EXPECT_EQ(conn().next_deadline(), now + 60'000 * ms);
  advance(59999);
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
  conn().take_events();
  advance(1);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::orderly);
  EXPECT_FALSE(conn().error());
  EXPECT_TRUE(conn().take_events().has(event::closed));
}

TEST_P(TimeWait, DurationIsConfigurable) {
  config.time_wait_ns = 2'000 * ms;
  enter();
  advance(2000);
  EXPECT_EQ(conn().state(), tcp_state::closed);
}

TEST_P(TimeWait, RetransmittedFinIsAckedAndRestartsTheTimer_RFC9293_3_10_7_4) {
  enter();
  advance(30000);
  EXPECT_EQ(send({.control = fin, .seq = rn + 1, .ack = iss + 2}), drop_reason::out_of_window);
  expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
  advance(59999);
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
  advance(1);
  EXPECT_EQ(conn().state(), tcp_state::closed);
}

TEST_P(TimeWait, RstClosesIt_RFC9293_3_10_7_4) {
  enter();
  send({.control = rst, .seq = rn + 2});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_FALSE(conn().error());
}

TEST_P(TimeWait, SimultaneousCloseEndsHereToo_RFC9293_3_5_Figure13) {
  establish();
  app_close();
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
  send({.control = fin, .seq = rn + 1, .ack = iss + 1});
  expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
  send({.seq = rn + 2, .ack = iss + 2});
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
  advance(60000);
  EXPECT_EQ(conn().state(), tcp_state::closed);
}

TEST_P(TimeWait, HalfClosedSideReadsWhatCameWithTheFin_RFC9293_3_10_7_4) {
  establish();
  app_shutdown();
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
  send({.seq = rn + 1, .ack = iss + 2});
  send({.control = fin, .seq = rn + 1, .ack = iss + 2, .payload = "bye"});
  expect({.seq = iss + 2, .ack = rn + 5, .window = 63996});
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
  EXPECT_EQ(app_read(), "bye");
  EXPECT_TRUE(conn().eof());
}

TCP_IN_BOTH_SEQUENCE_SPACES(TimeWait);

// RFC 9293 3.6.1 MAY-2 (RFC 1122 4.2.2.13) and RFC 6191: a SYN for a
// connection in TIME-WAIT, on a port that listens, opens the next
// incarnation at once when it is surely newer than the last one: its
// sequence number past RCV.NXT, or, when both incarnations timestamp, its
// TSval past TS.Recent. The new ISS lies past everything the last one
// sent (SND.MAX + 65537, as Linux). Anything else is processed as before.
class TimeWaitReopen : public tcp_test {
 protected:
  // Our side closed first, as a server does: TIME-WAIT on the listening
  // port. SND.MAX is ISS + 2, RCV.NXT the peer's ISN + 2.
  void enter(bool timestamps = false) {
    config.timestamps = timestamps;
    const auto ts = [&](std::uint32_t value) {
      return timestamps ? tcp_options{.timestamps = tcp_timestamps{value, tsval()}} : tcp_options{};
    };
    listen();
    tcp_options syn_options{.mss = 1000};
    if (timestamps) syn_options.timestamps = tcp_timestamps{500, 0};
    send({.control = syn, .seq = rn, .options = syn_options});
    ASSERT_EQ(take_emitted().size(), 1u);  // the SYN,ACK
    send({.seq = rn + 1, .ack = iss + 1, .options = ts(501)});
    ASSERT_EQ(accept(), &conn());
    app_close();
    ASSERT_EQ(take_emitted().size(), 1u);  // our FIN
    send({.seq = rn + 1, .ack = iss + 2, .options = ts(502)});
    send({.control = fin, .seq = rn + 1, .ack = iss + 2, .options = ts(503)});
    ASSERT_EQ(take_emitted().size(), 1u);  // the ACK of theirs
    ASSERT_EQ(conn().state(), tcp_state::time_wait);
    conn().take_events();
  }
  // The SYN,ACK of the next incarnation, its ISS past the last one's SND.MAX.
  void expect_reopened(seq32 their_isn) {
    const auto out = take_emitted();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].control, syn);
    EXPECT_EQ(out[0].seq, iss + 2 + 65537);
    EXPECT_EQ(out[0].ack, their_isn + 1);
    EXPECT_EQ(reopened(), 1u);
    EXPECT_EQ(conn().state(), tcp_state::syn_received);
  }
};

TEST_P(TimeWaitReopen, ASynPastRcvNxtOpensTheNextIncarnation_RFC1122_4_2_2_13) {
  enter();
  send({.control = syn, .seq = rn + 100000, .options = {.mss = 1000}});
  expect_reopened(rn + 100000);
  // The handshake completes on the new sequence numbers.
  send({.seq = rn + 100001, .ack = iss + 2 + 65538});
  EXPECT_EQ(conn().state(), tcp_state::established);
  EXPECT_EQ(accept(), &conn());
}

TEST_P(TimeWaitReopen, AnOldSynLeavesTimeWaitAsItWas_RFC9293_3_10_7_4) {
  enter();
  send({.control = syn, .seq = rn + 1, .options = {.mss = 1000}});  // before RCV.NXT: maybe an old duplicate
  expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
  EXPECT_EQ(reopened(), 0u);
}

TEST_P(TimeWaitReopen, WithTimestampsANewerTsvalDecides_RFC6191_2) {
  enter(true);
  // An older TSval with a later sequence number: PAWS's, not a new incarnation.
  send({.control = syn, .seq = rn + 100000, .options = {.mss = 1000, .timestamps = tcp_timestamps{400, 0}}});
  ASSERT_EQ(take_emitted().size(), 1u);  // RFC 7323 5.3 R1: an ACK
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
  // A newer TSval with an earlier sequence number (the client's ISN
  // generator need not be monotonic across incarnations): a new one.
  send({.control = syn, .seq = rn - 100000, .options = {.mss = 1000, .timestamps = tcp_timestamps{600, 0}}});
  expect_reopened(rn - 100000);
  EXPECT_TRUE(conn().timestamps_enabled());
}

TEST_P(TimeWaitReopen, WithoutAListenerTimeWaitStays_RFC9293_3_10_7_4) {
  establish();  // an active open: nothing listens on this port
  app_close();
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
  send({.seq = rn + 1, .ack = iss + 2});
  send({.control = fin, .seq = rn + 1, .ack = iss + 2});
  expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
  send({.control = syn, .seq = rn + 100000, .options = {.mss = 1000}});
  EXPECT_EQ(take_emitted().size(), 1u);  // an ACK, as before
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
  EXPECT_EQ(reopened(), 0u);
}

TCP_IN_BOTH_SEQUENCE_SPACES(TimeWaitReopen);

}  // namespace
}  // namespace affine::stack::tcp::testing
