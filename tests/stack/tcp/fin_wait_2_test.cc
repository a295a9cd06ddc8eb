// FIN-WAIT-2 (RFC 9293 3.10.7.4): our FIN is acknowledged; waiting for the
// peer's.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class FinWait2 : public tcp_test {
 protected:
  // close() (or shutdown_write()) and the ACK of our FIN.
  void enter(bool close = true) {
    establish();
    if (close) {
      app_close();
    } else {
      app_shutdown();
    }
    expect({.control = fin, .seq = iss + 1, .ack = rn + 1});
    send({.seq = rn + 1, .ack = iss + 2});
    ASSERT_EQ(conn().state(), tcp_state::fin_wait_2);
  }
};

TEST_P(FinWait2, FinIsAckedAndGoesToTimeWait_RFC9293_3_10_7_4) {
  enter();
  send({.control = fin, .seq = rn + 1, .ack = iss + 2});
  expect({.seq = iss + 2, .ack = rn + 2, .window = 63999});
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
}

TEST_P(FinWait2, ClosedApplicationsConnectionTimesOutLikeLinuxFinTimeout) {
  enter();
  advance(59999);
  EXPECT_EQ(conn().state(), tcp_state::fin_wait_2);
  advance(1);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::fin_wait_2);
  EXPECT_FALSE(conn().error());
}

TEST_P(FinWait2, HalfClosedConnectionWaitsForThePeerWithoutTimer) {
  enter(false);
  EXPECT_EQ(conn().next_deadline(), no_deadline);
  send({.seq = rn + 1, .ack = iss + 2, .payload = "more"});
  EXPECT_EQ(app_read(), "more");
}

TEST_P(FinWait2, FinWithDataEndsTheStreamAfterTheData_RFC9293_3_10_7_4) {
  enter(false);
  send({.control = fin, .seq = rn + 1, .ack = iss + 2, .payload = "bye"});
  expect({.seq = iss + 2, .ack = rn + 5, .window = 63996});
  EXPECT_EQ(conn().state(), tcp_state::time_wait);
  EXPECT_FALSE(conn().eof());
  EXPECT_EQ(app_read(), "bye");
  EXPECT_TRUE(conn().eof());
}

TEST_P(FinWait2, DataAfterCloseIsAnsweredWithReset_RFC1122_4_2_2_13) {
  enter();
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 2, .payload = "x"}), drop_reason::data_after_close);
  expect({.control = rst, .seq = iss + 2});
  EXPECT_EQ(conn().state(), tcp_state::closed);
}

TEST_P(FinWait2, RstResetsTheConnection_RFC9293_3_10_7_4) {
  enter();
  send({.control = rst, .seq = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::connection_reset));
}

TCP_IN_BOTH_SEQUENCE_SPACES(FinWait2);

}  // namespace
}  // namespace affine::stack::tcp::testing
