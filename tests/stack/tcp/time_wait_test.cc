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

}  // namespace
}  // namespace affine::stack::tcp::testing
