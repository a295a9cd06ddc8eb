// LAST-ACK (RFC 9293 3.10.7.4): the peer closed first; our FIN is out.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class LastAck : public tcp_test {
 protected:
  void enter() {
    establish();
    send({.control = fin, .seq = rn + 1, .ack = iss + 1});
    expect({.seq = iss + 1, .ack = rn + 2, .window = 63999});
    app_close();
    expect({.control = fin, .seq = iss + 1, .ack = rn + 2, .window = 63999});
    ASSERT_EQ(conn().state(), tcp_state::last_ack);
  }
};

TEST_P(LastAck, AckOfOurFinClosesTheConnection_RFC9293_3_10_7_4) {
  enter();
  conn().take_events();
  send({.seq = rn + 2, .ack = iss + 2});
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::orderly);
  EXPECT_FALSE(conn().error());
  EXPECT_TRUE(conn().take_events().has(event::closed));
  EXPECT_EQ(conn().next_deadline(), no_deadline);
}

TEST_P(LastAck, AckThatMissesOurFinKeepsLastAck_RFC9293_3_10_7_4) {
  enter();
  send({.seq = rn + 2, .ack = iss + 1});
  EXPECT_EQ(conn().state(), tcp_state::last_ack);
}

TEST_P(LastAck, FinIsRetransmittedAfterTheRto_RFC6298_5_4) {
  enter();
  advance(200);
  expect({.control = fin, .seq = iss + 1, .ack = rn + 2, .window = 63999});
}

TEST_P(LastAck, GivesUpAfterMaxRetransmissions_RFC1122_4_2_3_5) {
  config.max_retransmissions = 1;
  enter();
  advance(200);
  expect({.control = fin, .seq = iss + 1, .ack = rn + 2, .window = 63999});
  advance(400);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::timed_out));
}

TEST_P(LastAck, RstClosesWithoutError_RFC9293_3_10_7_4) {
  enter();
  send({.control = rst, .seq = rn + 2});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_FALSE(conn().error());
}

TEST_P(LastAck, SegmentAfterTheEndIsAnsweredWithReset_RFC9293_3_10_7_1) {
  enter();
  send({.seq = rn + 2, .ack = iss + 2});
  EXPECT_EQ(send({.seq = rn + 2, .ack = iss + 2}), drop_reason::closed);
  expect({.control = rst, .seq = iss + 2});
}

TCP_IN_BOTH_SEQUENCE_SPACES(LastAck);

}  // namespace
}  // namespace affine::stack::tcp::testing
