// CLOSE-WAIT (RFC 9293 3.10.7.4): the peer has closed its side; ours is open.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class CloseWait : public tcp_test {
 protected:
  void enter() {
    establish();
    send({.control = fin, .seq = rn + 1, .ack = iss + 1});
    expect({.seq = iss + 1, .ack = rn + 2, .window = 63999});
    ASSERT_EQ(conn().state(), tcp_state::close_wait);
  }
};

TEST_P(CloseWait, CloseSendsFinAndGoesToLastAck_RFC9293_3_10_4) {
  enter();
  app_close();
  expect({.control = fin, .seq = iss + 1, .ack = rn + 2, .window = 63999});
  EXPECT_EQ(conn().state(), tcp_state::last_ack);
}

TEST_P(CloseWait, ShutdownSendsFinAndGoesToLastAck_RFC9293_3_10_4) {
  enter();
  app_shutdown();
  expect({.control = fin, .seq = iss + 1, .ack = rn + 2, .window = 63999});
  EXPECT_EQ(conn().state(), tcp_state::last_ack);
}

TEST_P(CloseWait, DataCanStillBeSent_RFC9293_3_10_2) {
  enter();
  app_write("abc");
  expect({.seq = iss + 1, .ack = rn + 2, .window = 63999, .payload = "abc", .psh = true});
}

TEST_P(CloseWait, TextAfterTheFinIsIgnored_RFC9293_3_10_7_4) {
  enter();
  EXPECT_EQ(send({.seq = rn + 2, .ack = iss + 1, .payload = "x"}), drop_reason::none);
  expect_nothing();
  EXPECT_EQ(conn().readable(), 0u);
}

TEST_P(CloseWait, RetransmittedFinIsAnsweredWithAck_RFC9293_3_10_7_4) {
  enter();
  EXPECT_EQ(send({.control = fin, .seq = rn + 1, .ack = iss + 1}), drop_reason::out_of_window);
  expect({.seq = iss + 1, .ack = rn + 2, .window = 63999});
}

TEST_P(CloseWait, RstResetsTheConnection_RFC9293_3_10_7_4) {
  enter();
  send({.control = rst, .seq = rn + 2});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::reset_received);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::connection_reset));
}

TEST_P(CloseWait, EndOfStreamOnlyAfterTheDataIsRead_RFC9293_3_10_7_4) {
  establish();
  send({.control = fin, .seq = rn + 1, .ack = iss + 1, .payload = "hi"});
  expect({.seq = iss + 1, .ack = rn + 4, .window = 63997});
  EXPECT_FALSE(conn().eof());
  EXPECT_EQ(app_read(), "hi");
  EXPECT_TRUE(conn().eof());
  EXPECT_EQ(app_read(), "");
}

TCP_IN_BOTH_SEQUENCE_SPACES(CloseWait);

}  // namespace
}  // namespace affine::stack::tcp::testing
