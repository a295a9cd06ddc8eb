// CLOSING (RFC 9293 3.10.7.4): both sides sent FIN at once (Figure 13); ours
// is not yet acknowledged.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Closing : public tcp_test {
 protected:
  void enter() {
    establish();
    app_close();
    expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
    send({.control = fin, .seq = rn + 1, .ack = iss + 1});
    expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
    ASSERT_EQ(conn().state(), tcp_state::closing);
  }
};

TEST_P(Closing, AckOfOurFinGoesToTimeWait_RFC9293_3_10_7_4) {
  enter();
  send({.seq = rn + 2, .ack = iss + 2});
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
}

TEST_P(Closing, AckThatMissesOurFinKeepsClosing_RFC9293_3_10_7_4) {
  enter();
  send({.seq = rn + 2, .ack = iss + 1});
  EXPECT_EQ(conn().state(), tcp_state::closing);
}

TEST_P(Closing, FinIsRetransmittedAfterTheRto_RFC6298_5_4) {
  enter();
  advance(200);
  expect({.control = fin, .seq = iss + 1, .ack = rn + 2, .window = 63999});
}

TEST_P(Closing, RetransmittedFinIsAnsweredWithAck_RFC9293_3_10_7_4) {
  enter();
  EXPECT_EQ(send({.control = fin, .seq = rn + 1, .ack = iss + 1}), drop_reason::out_of_window);
  expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
}

TEST_P(Closing, RstClosesWithoutError_RFC9293_3_10_7_4) {
  enter();
  send({.control = rst, .seq = rn + 2});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::reset_received);
  EXPECT_FALSE(conn().error());
}

TCP_IN_BOTH_SEQUENCE_SPACES(Closing);

}  // namespace
}  // namespace affine::stack::tcp::testing
