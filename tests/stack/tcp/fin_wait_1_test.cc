// FIN-WAIT-1 (RFC 9293 3.10.7.4): our FIN is out, not yet acknowledged.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class FinWait1 : public tcp_test {
 protected:
  void enter() {
    establish();
    app_close();
    expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
    ASSERT_EQ(conn().state(), tcp_state::fin_wait_1);
  }
};

TEST_P(FinWait1, AckOfOurFinGoesToFinWait2_RFC9293_3_10_7_4) {
  enter();
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 2}), drop_reason::none);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::fin_wait_2);
}

TEST_P(FinWait1, FinBeforeOurFinIsAckedGoesToClosing_RFC9293_3_10_7_4) {
  enter();
  send({.control = fin, .seq = rn + 1, .ack = iss + 1});
  expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
  EXPECT_EQ(conn().state(), tcp_state::closing);
}

TEST_P(FinWait1, FinThatAcksOurFinGoesToTimeWait_RFC9293_3_10_7_4) {
  enter();
  send({.control = fin, .seq = rn + 1, .ack = iss + 2});
  expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
}

TEST_P(FinWait1, FinIsRetransmittedAfterTheRto_RFC6298_5_4) {
  enter();
  advance(199);
  expect_nothing();
  advance(1);
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
}

TEST_P(FinWait1, GivesUpAfterMaxRetransmissions_RFC1122_4_2_3_5) {
  config.max_retransmissions = 2;
  enter();
  advance(200);
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
  advance(400);
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
  advance(800);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::retransmissions);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::timed_out));
}

TEST_P(FinWait1, DataAfterCloseIsAnsweredWithReset_RFC1122_4_2_2_13) {
  enter();
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1, .payload = "x"}), drop_reason::data_after_close);
  expect({.control = rst, .seq = iss + 1});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::data_after_close);
}

TEST_P(FinWait1, HalfClosedSideStillReceives_RFC9293_3_10_7_4) {
  establish();
  app_shutdown();
  expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
  send({.seq = rn + 1, .ack = iss + 1, .payload = "x"});
  EXPECT_EQ(conn().state(), tcp_state::fin_wait_1);
  EXPECT_EQ(app_read(), "x");
}

TEST_P(FinWait1, RstResetsTheConnection_RFC9293_3_10_7_4) {
  enter();
  send({.control = rst, .seq = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::connection_reset));
}

TEST_P(FinWait1, SendAfterCloseFailsWithBrokenPipe_RFC9293_3_10_2) {
  enter();
  std::byte b[1]{};
  EXPECT_EQ(conn().send(b).error(), std::make_error_code(std::errc::broken_pipe));
  EXPECT_EQ(conn().writable(), 0u);
}

TEST_P(FinWait1, CloseSendsTheTailNagleHeldWithTheFin_RFC9293_3_10_4) {
  establish();
  app_write(1500);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000)});
  app_close();
  expect({.control = fin, .seq = iss + 1001, .ack = rn + 1, .payload = pattern(1000, 500), .psh = true});
}

TEST_P(FinWait1, AckOfTheDataOnlyKeepsFinWait1_RFC9293_3_10_7_4) {
  establish();
  app_write("abc");
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "abc", .psh = true});
  app_close();
  expect({.control = fin, .seq = iss + 4, .ack = rn + 1});
  send({.seq = rn + 1, .ack = iss + 4});
  EXPECT_EQ(conn().state(), tcp_state::fin_wait_1);
  send({.seq = rn + 1, .ack = iss + 5});
  EXPECT_EQ(conn().state(), tcp_state::fin_wait_2);
}

TCP_IN_BOTH_SEQUENCE_SPACES(FinWait1);

}  // namespace
}  // namespace affine::stack::tcp::testing
